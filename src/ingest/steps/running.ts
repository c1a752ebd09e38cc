import { TaskAbort, TaskProgress } from "../../driver/signals.js";
import { createdSince } from "../../druid/task-window.js";
import { classifyTaskFailure } from "../../work/failure.js";
import { checkDataGates, checkRowDrop, DEFAULT_GATES, firstParseErrors } from "../gates.js";
import { msqEvidence, statementEvidence } from "../msq.js";
import type { IngestProgress } from "../types.js";
import { type Attempt, AttemptFailed, buildSegmentsStats, rowsIngestedOf, type StepIO } from "./attempt.js";

/** Resubmits answered "duplicate" for a task the status endpoint does not know before we give up. */
export const FORGOTTEN_LIMIT = 5;

/**
 * Waits for the attempt to end, through the process's one status batcher. RUNNING, the first time: record
 * it (checkpoint and a progress transition, so status and the event log show it) and come back next tick;
 * RUNNING once recorded: wait inside this handler run for the first answer that is not RUNNING, writing
 * nothing, so a partition in flight costs the ledger no write per tick (only its lease heartbeat; a cancel
 * is seen by the heartbeat, within `leaseMs / 6`). Unknown to Druid: submit the same id again (bounded when Druid keeps answering
 * "duplicate"). FAILED: a new attempt, with Druid's errorMsg, its failure class and the row counters.
 * SUCCESS: the data gates decide on Druid's counters; passing, the partition moves to the handoff step.
 */
export async function awaitTerminal(a: Attempt, io: StepIO): Promise<void> {
  io.admission?.track(a.task.id, a.payload.slots, a.taskId);
  io.createdTimes?.watch(a.payload.datasource, a.taskId, a.call.signal);
  // Each round waits for the batcher (the next bulk lookup; once RUNNING is recorded, the first answer that
  // is not RUNNING): the loop is paced by the batcher.
  try {
    while (await pollOnce(a, io)) {}
  } catch (error) {
    // Back next tick (RUNNING just recorded): still watched. Anything else ends this task's wait (a failed
    // attempt, a resubmission under the same id, a cancel): what a list said of it no longer holds.
    if (!(error instanceof TaskProgress)) io.createdTimes?.forget(a.taskId);
    throw error;
  }
}

/** One status answer; true when the task is still RUNNING (already recorded) and worth asking again. */
async function pollOnce(a: Attempt, io: StepIO): Promise<boolean> {
  const p = a.progress();
  const { taskId } = a;
  // RUNNING already recorded: nothing to do until that changes, so wait for the first other answer (one
  // waiter for the whole run, not one a tick).
  const status =
    p.druidState === "RUNNING"
      ? await io.batcher.getEnded(taskId, a.call.signal)
      : await io.batcher.get(taskId, a.call.signal);
  if (status.state === "UNKNOWN") return resubmitForgotten(a, p);
  if (p.forgotten) await a.save({ forgotten: 0 });
  if (status.state === "RUNNING") {
    if (p.druidState === "RUNNING") return true;
    await a.save({ druidState: "RUNNING" });
    throw new TaskProgress(`Druid task ${taskId} RUNNING`, io.settings.tickMs);
  }
  io.admission?.untrack(a.task.id);
  if (status.state === "FAILED") return recordFailed(a, io, p, status.errorMsg);
  await recordSucceeded(a, io, p, status.duration);
  return false;
}

/**
 * Druid forgot (or never stored) a task we submitted: submit the same id again (docs/druid-api.md,
 * "Task status"). If Druid keeps answering "duplicate" for an id its status endpoint does not know,
 * resubmitting cannot help: stop with the evidence instead of looping.
 */
async function resubmitForgotten(a: Attempt, p: IngestProgress): Promise<never> {
  const forgotten = p.reattached ? (p.forgotten ?? 0) + 1 : 0;
  if (forgotten >= FORGOTTEN_LIMIT) {
    await a.save({ outcome: "forgotten", forgotten });
    throw new TaskAbort(
      `Druid answers "duplicate" to ${a.taskId} but its status endpoint does not know the task (${forgotten} times in a row): the Overlord's task storage disagrees with itself; check the Overlord (leader change, metadata store) before retrying`,
    );
  }
  await a.save({ step: "submit", forgotten });
  throw new TaskProgress(`Druid does not know ${a.taskId}; resubmitting`, 0);
}

/** What a task's reports say about how it went: its counters, first parse errors and error message. */
interface Evidence {
  errorMsg: string | null;
  rowStats: IngestProgress["rowStats"];
  parseErrors: string[];
}

/** FAILED: a new attempt, recorded with Druid's errorMsg, its failure class and the row counters. */
async function recordFailed(
  a: Attempt,
  io: StepIO,
  p: IngestProgress,
  statusError: string | null,
): Promise<never> {
  const { taskId } = a;
  const { errorMsg, rowStats, parseErrors } = await failureEvidence(a, io, statusError);
  const cls = classifyTaskFailure(errorMsg);
  const failures = [
    ...(p.failures ?? []),
    { attempt: a.task.attempt, taskId, failureClass: cls.name, deterministic: cls.deterministic, errorMsg },
  ];
  await a.save({ failures, druidState: "FAILED", rowStats, parseErrors });
  a.note("failed", `${taskId}: ${errorMsg ?? "no message"}`);
  throw new AttemptFailed(`Druid task ${taskId} FAILED: ${errorMsg ?? "no message"}`, failures);
}

/**
 * A failed task's evidence, from wherever it is kept: its report (an MSQ controller's in
 * `multiStageQuery`), the statements API for SQL, or a parallel supervisor's sub-tasks.
 */
async function failureEvidence(a: Attempt, io: StepIO, statusError: string | null): Promise<Evidence> {
  const { taskId } = a;
  let errorMsg = statusError;
  let rowStats: IngestProgress["rowStats"] = null;
  let parseErrors: string[] = [];
  try {
    const reports = await io.client.taskReports(taskId, a.call);
    const report = reports?.ingestionStatsAndErrors?.payload;
    errorMsg = report?.errorMsg ?? errorMsg;
    rowStats = buildSegmentsStats(report?.rowStats);
    parseErrors = firstParseErrors(report?.unparseableEvents);
    // An MSQ controller reports counters, warnings and its fault in `multiStageQuery` (docs/druid-api.md §6).
    const msq = msqEvidence(reports);
    if (msq) {
      errorMsg = errorMsg ?? msq.errorMsg;
      rowStats = msq.rowStats;
      parseErrors = msq.parseErrors;
    }
  } catch {
    // The status's errorMsg is enough when the report is gone.
  }
  if (a.payload.kind === "sql" && !rowStats) {
    // No MSQ report (gone, or not written): the statements API has the same counters and the fault.
    const st = await statementEvidence(io.client, taskId, a.call);
    if (st) {
      errorMsg = errorMsg ?? st.errorMsg;
      rowStats = st.rowStats;
      parseErrors = st.parseErrors;
    }
  }
  if (a.payload.kind !== "sql" && (!rowStats || isEmpty(rowStats))) {
    // A parallel supervisor that failed reports "Failed in phase[…]" and zero counters (seen on Druid 33):
    // the evidence is in its sub-tasks' reports.
    const sub = await subTaskEvidence(a, io).catch(() => null);
    if (sub) {
      rowStats = sub.rowStats;
      parseErrors = sub.parseErrors.length > 0 ? sub.parseErrors : parseErrors;
      errorMsg = sub.errorMsg ? `${errorMsg ?? "FAILED"} (sub-task: ${sub.errorMsg})` : errorMsg;
    }
  }
  return { errorMsg, rowStats, parseErrors };
}

/**
 * SUCCESS: the data gates decide on Druid's counters; passing, the partition moves to the handoff step.
 * A failing replace is undone, any other failing attempt fails (throws).
 */
async function recordSucceeded(a: Attempt, io: StepIO, p: IngestProgress, duration: number): Promise<void> {
  const { taskId } = a;
  a.note("succeeded", taskId);
  const { rowStats, parseErrors, createdTime } = await successEvidence(a, io);
  const gate = gateFailure(a, p, rowStats, parseErrors);
  if (gate && a.payload.mode === "replace" && p.baselineTrusted !== false) {
    // Druid published a replace that fails the gates: it is undone (steps/undo.ts), the interval back to
    // what it served before, and the partition ends rolled back. The failure is recorded when the undo
    // ends, so a crash in between resumes the undo rather than starting a new attempt.
    await a.save({
      step: "undo",
      undo: { reason: gate, phase: "unmark" },
      succeededAt: io.clock.now(),
      druidState: "SUCCESS",
      druidDurationMs: duration,
      druidCreatedTime: createdTime,
      rowStats,
      parseErrors,
    });
    a.note("failed", `${taskId}: ${gate}; undoing the replace`);
    return;
  }
  if (gate) {
    // SUCCESS on bad data is a failed attempt, and a deterministic one: the poison rule applies.
    const failures = [
      ...(p.failures ?? []),
      { attempt: a.task.attempt, taskId, failureClass: "data-gate", deterministic: true, errorMsg: gate },
    ];
    await a.save({ failures, druidState: "SUCCESS", rowStats, parseErrors });
    a.note("failed", `${taskId}: ${gate}`);
    throw new AttemptFailed(`data gate: ${taskId} SUCCEEDED but ${gate}`, failures);
  }
  const now = io.clock.now();
  await a.save({
    step: "handoff",
    succeededAt: now,
    handoffSince: now,
    handoffTimedOut: false,
    druidDurationMs: duration,
    druidState: "SUCCESS",
    druidCreatedTime: createdTime,
    rowStats,
    parseErrors,
  });
}

/** A succeeded task's counters and first parse errors (MSQ's or the classic report's) and its created time. */
async function successEvidence(
  a: Attempt,
  io: StepIO,
): Promise<Omit<Evidence, "errorMsg"> & { createdTime: string | null }> {
  const { taskId } = a;
  const [reports, createdTime] = await Promise.all([
    io.client.taskReports(taskId, a.call).catch(() => null),
    io.createdTimes
      ? io.createdTimes.take(taskId, a.call)
      : io.client
          .taskStatus(taskId, a.call)
          .then((s) => s.status?.createdTime ?? null)
          .catch(() => null),
  ]);
  const msq =
    msqEvidence(reports) ??
    (a.payload.kind === "sql" ? await statementEvidence(io.client, taskId, a.call) : null);
  const rowStats = msq
    ? msq.rowStats
    : buildSegmentsStats(reports?.ingestionStatsAndErrors?.payload.rowStats);
  const parseErrors = msq
    ? msq.parseErrors
    : firstParseErrors(reports?.ingestionStatsAndErrors?.payload.unparseableEvents);
  return { rowStats, parseErrors, createdTime };
}

/** The first data gate a succeeded task fails (its counters, an emptied interval, a row drop), or null. */
function gateFailure(
  a: Attempt,
  p: IngestProgress,
  rowStats: IngestProgress["rowStats"],
  parseErrors: string[],
): string | null {
  return (
    (rowStats ? checkDataGates(rowStats, a.payload.gates ?? DEFAULT_GATES, parseErrors) : null) ??
    emptiedLiveData(a, rowStats) ??
    (a.payload.mode === "replace"
      ? checkRowDrop(rowsIngestedOf(rowStats), p.liveBefore?.rows ?? null, a.payload.gates?.maxRowDrop)
      : null)
  );
}

/**
 * The gate every replace has: a task that ingested no rows may not leave empty an interval that served
 * data before it (unless the user allowed it), whatever the pre-flight could tell.
 */
function emptiedLiveData(a: Attempt, rowStats: IngestProgress["rowStats"]): string | null {
  const before = a.progress().liveBefore;
  if (a.payload.mode !== "replace" || a.payload.allowEmpty === true || !before || before.segments === 0)
    return null;
  const ingested = rowsIngestedOf(rowStats);
  if (ingested !== 0) return null;
  const rows = before.rows !== null ? `${before.rows} row(s) in ` : "";
  return `the task ingested no rows, while ${rows}${before.segments} segment(s) of version ${before.versions.join(", ")} were live: the replace would leave ${a.payload.interval} empty (--allow-empty allows it)`;
}

function isEmpty(s: NonNullable<IngestProgress["rowStats"]>): boolean {
  return s.processed + s.processedWithError + s.unparseable + s.thrownAway === 0;
}

/**
 * The counters, first parse errors and first error message of a parallel task's sub-tasks (their group
 * id is the supervisor's id, docs/druid-api.md §2.5): where a failed supervisor keeps its evidence.
 */
async function subTaskEvidence(
  a: Attempt,
  io: StepIO,
): Promise<{
  rowStats: NonNullable<IngestProgress["rowStats"]>;
  parseErrors: string[];
  errorMsg: string | null;
} | null> {
  // Sub-tasks are created after their supervisor was submitted: a window from then keeps the list to this
  // run's tasks instead of a day of the datasource's history (task-window.ts).
  const since = a.progress().submittedAt;
  const window = since !== undefined ? { createdTimeInterval: createdSince(since, io.clock.now()) } : {};
  const subs = (await io.client.tasks({ datasource: a.payload.datasource, ...window }, a.call))
    .filter((t) => t.groupId === a.taskId && t.id !== a.taskId)
    .slice(0, 20);
  if (subs.length === 0) return null;
  const total = { processed: 0, processedWithError: 0, unparseable: 0, thrownAway: 0 };
  const parseErrors: string[] = [];
  for (const sub of subs) {
    const report = (await io.client.taskReports(sub.id, a.call).catch(() => null))?.ingestionStatsAndErrors
      ?.payload;
    const stats = buildSegmentsStats(report?.rowStats);
    if (stats) for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += stats[k];
    parseErrors.push(...firstParseErrors(report?.unparseableEvents));
  }
  const failed = subs.find((t) => t.statusCode === "FAILED" && t.errorMsg);
  return { rowStats: total, parseErrors: parseErrors.slice(0, 5), errorMsg: failed?.errorMsg ?? null };
}
