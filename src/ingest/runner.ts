import { backoffDelay } from "../core/backoff.js";
import { DEFAULTS } from "../core/defaults.js";
import { type Interval, parseInterval } from "../core/interval.js";
import { deriveTaskId } from "../core/task-id.js";
import { decodedForHandler, type KindEncoding } from "../driver/kind.js";
import type { Runner, TaskContext } from "../driver/runner.js";
import { TaskAbort, TaskRetry } from "../driver/signals.js";
import type { JsonObject, TaskRow } from "../ledger/types.js";
import { SQL_VOLATILE_PATHS } from "../spec/msq.js";
import { DEFAULT_SIZE_BAND } from "../work/audit.js";
import { isPoisoned } from "../work/failure.js";
import { type DruidServices, handlerConcurrency } from "../work/services.js";
import { type CompactionConfigClient, CompactionGuard } from "./compaction-guard.js";
import { heldInLedger, sweepLeftoverSkips } from "./compaction-leftovers.js";
import { CreatedTimes } from "./created-times.js";
import { ingestPayloadSchema, ingestProgressSchema } from "./schemas.js";
import { type Attempt, AttemptFailed, type Step, type StepIO } from "./steps/attempt.js";
import { auditPartition } from "./steps/audit.js";
import { awaitHandoff } from "./steps/handoff.js";
import { prepareAttempt } from "./steps/prepare.js";
import { awaitTerminal } from "./steps/running.js";
import { submitNative } from "./steps/submit.js";
import { submitMsq } from "./steps/submit-msq.js";
import { undoReplace } from "./steps/undo.js";
import { INGEST_KIND, type IngestPayload, type IngestProgress, type IngestStep } from "./types.js";

/**
 * The ingestion handler (architecture doc, "One ingestion, step by step"): one ledger task = one
 * partition. Every step is checkpointed before the next, so a crash anywhere resumes at the right step on
 * any host, and the Druid task id is recorded *before* it is submitted, so a resubmit after a crash is a
 * duplicate that reattaches, never a second ingestion.
 *
 *   submit ──► running ──► handoff ──► audit ──► done
 *     ▲           │ FAILED (new attempt, new id) or poison → dead letter
 *     └───────────┘
 */

/** What the ingest runner takes: the services every kind gets, and two of its own for tests and MSQ. */
export interface IngestRunnerOptions extends DruidServices {
  /**
   * Sample a replace's input through Druid before it may replace live data (steps/preflight.ts).
   * @default true
   */
  preflight?: boolean;
  /** How an attempt is submitted. @default submitNative (`POST /druid/indexer/v1/task`) */
  submit?: Step;
  /**
   * Keeps auto-compaction out of the intervals being written (compaction-guard.ts; Druid 39's skipIntervals);
   * false: never touch the compaction config. @default one guard over `client`, warning on stderr
   */
  compactionGuard?: CompactionGuard | false;
}

export { AttemptFailed, buildSegmentsStats, rowsIngestedOf } from "./steps/attempt.js";
export { FORGOTTEN_LIMIT } from "./steps/running.js";

/** The task's progress, checked against the ingest kind's schema: a malformed row aborts with the field. */
const ENCODING: KindEncoding = {
  name: INGEST_KIND,
  payload: ingestPayloadSchema,
  progress: ingestProgressSchema,
};

const progressOf = (task: TaskRow) => decodedForHandler<IngestProgress>(ENCODING, task, "progress");
const payloadOf = (task: TaskRow) => decodedForHandler<IngestPayload>(ENCODING, task, "payload");

/**
 * An attempt that is over: FAILED in Druid, or failed at a data gate after SUCCESS. Its Druid task runs no
 * more, and its successor waits for admission.
 */
export function attemptOver(p: IngestProgress): boolean {
  return p.druidState === "FAILED" || p.failures?.some((f) => f.taskId === p.taskId) === true;
}

export function ingestRunner(options: IngestRunnerOptions): Runner {
  const tickMs = options.tickMs ?? DEFAULTS.tickMs;
  const poisonAfter = options.poisonAfter ?? DEFAULTS.poisonAfter;
  const io = stepIo(options, tickMs);
  const steps = stepTable(options);
  const guard =
    options.compactionGuard === false ? undefined : (options.compactionGuard ?? defaultGuard(options));

  async function handler(task: TaskRow, ctx: TaskContext): Promise<void> {
    const payload = payloadOf(task);
    const interval = parseInterval(payload.interval);
    const progress = progressOf(task);
    const taskId = attemptTaskId(payload, interval, task.attempt);
    refuseSpentAttempt(progress, taskId, task.attempt);
    const attempt = checkpointedAttempt({ task, ctx, payload, interval, taskId, progress }, options);
    await prepareAttempt(attempt, io);
    if (guard && attempt.progress().step === "submit") await holdCompaction(attempt, guard);
    for (const [name, step] of steps) if (attempt.progress().step === name) await step(attempt, io);
  }

  return {
    kind: INGEST_KIND,
    handler,
    concurrency: handlerConcurrency(options.concurrency ?? DEFAULTS.maxConcurrency, options.admission),
    maxRetry: options.maxRetry ?? DEFAULTS.maxRetry,
    progressDelayMs: tickMs,
    backoff: (retry) => {
      const baseMs = options.retryBaseMs ?? tickMs * DEFAULTS.retryBaseTicks;
      return backoffDelay(retry - 1, { baseMs, capMs: baseMs * 60 });
    },
    isEligible: (task) => admitted(options, task),
    ...eligibilityEpochOf(options.admission),
    isPoison: (task, error) =>
      error instanceof AttemptFailed &&
      isPoisoned(error.failures, options.jobSettings?.(task.jobId)?.poisonAfter ?? poisonAfter),
    // An admission reservation for a partition another host claimed would hold our slots forever.
    release: (taskId) => options.admission?.release(taskId),
    onFinish: async (task) => {
      options.admission?.untrack(task.id);
      // Done (after its audit), failed, dead or canceled: auto-compaction may have the interval again.
      const recorded = (task.progress as IngestProgress).compactionSkip;
      const datasource = task.payload.datasource;
      const partition = task.payload.interval;
      if (guard && typeof recorded === "string" && typeof datasource === "string")
        await guard.release(
          datasource,
          recorded,
          task.id,
          {},
          typeof partition === "string" ? partition : undefined,
        );
    },
    // The driver stopped: the createdTime lists end (one may be waiting out a Druid outage).
    close: () => io.createdTimes?.close(),
    // Taken over by another host, or handed back: its slots are no longer ours to count.
    abandon: (taskId) => {
      options.admission?.untrack(taskId);
      guard?.forget(taskId);
    },
    onCycle: async () => {
      await options.admission?.refresh();
      if (guard && options.ledger) await sweep(guard, options, options.ledger);
    },
  };
}

/** How often a process looks for compaction skip leftovers after its first look. */
export const LEFTOVER_SWEEP_MS = 10 * 60_000;
/** Jobs (newest first) the first look reads, and the later ones: leftovers of older jobs were taken before. */
const LEFTOVER_FIRST_JOBS = 1000;
const LEFTOVER_SWEEP_JOBS = 100;

const sweeps = new WeakMap<CompactionGuard, { next: number; first: boolean }>();

/**
 * Takes out the skip intervals the ledger says no unfinished partition holds any more (compaction-leftovers.ts):
 * the newest {@link LEFTOVER_FIRST_JOBS} jobs when the process starts running ingestion, then the newest
 * {@link LEFTOVER_SWEEP_JOBS} every {@link LEFTOVER_SWEEP_MS}; only on a Druid with skip intervals (39), where segops
 * adds them. What fails to go (Druid down) stays recorded for the next look.
 */
async function sweep(
  guard: CompactionGuard,
  options: IngestRunnerOptions,
  ledger: NonNullable<IngestRunnerOptions["ledger"]>,
): Promise<void> {
  const state = sweeps.get(guard) ?? { next: 0, first: true };
  const now = options.clock.now();
  if (now < state.next) return;
  sweeps.set(guard, { next: now + LEFTOVER_SWEEP_MS, first: false });
  const client = options.client as Partial<CompactionConfigClient>;
  if (client.capabilities && !(await client.capabilities()).compactionSkipIntervals) return;
  await sweepLeftoverSkips(ledger, (datasource, interval) => guard.clear(datasource, interval), {
    maxJobs: state.first ? LEFTOVER_FIRST_JOBS : LEFTOVER_SWEEP_JOBS,
  });
}

/** A guard over the runner's client, when the client can change the compaction config (a test double may not). */
function defaultGuard(options: IngestRunnerOptions): CompactionGuard | undefined {
  const client = options.client as Partial<CompactionConfigClient>;
  if (
    typeof client.compactionConfig !== "function" ||
    typeof client.setDatasourceCompactionConfig !== "function"
  )
    return undefined;
  const ledger = options.ledger;
  return new CompactionGuard({
    client: options.client,
    warn: (message) => process.emitWarning(message, { code: "SEGOPS_COMPACTION_RACE" }),
    ...(ledger
      ? {
          heldElsewhere: (datasource: string, interval: string, holder: string) =>
            heldInLedger(ledger, datasource, interval, holder),
        }
      : {}),
  });
}

/**
 * Before a partition's attempt is submitted: its interval out of auto-compaction's reach, recorded with the
 * partition when segops added it. A failure here costs the partition nothing but the guard (said in its log):
 * the backfill is what was asked for.
 */
async function holdCompaction(a: Attempt, guard: CompactionGuard): Promise<void> {
  const owned = a.progress().compactionSkip;
  let held: string | null;
  try {
    held = await guard.hold(a.payload.datasource, a.interval, a.task.id, owned, a.call);
  } catch (error) {
    if (a.call.signal?.aborted) throw error;
    a.note(
      "compaction-skip",
      `could not keep auto-compaction out of ${a.payload.interval}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return;
  }
  if (held === null || held === owned) return;
  await a.save({ compactionSkip: held });
  a.note("compaction-skip", `${held} is in ${a.payload.datasource}'s compaction skipIntervals while written`);
}

/** The I/O every step gets, shared by all the handler's runs. */
function stepIo(options: IngestRunnerOptions, tickMs: number): StepIO {
  const { client, clock, batcher, handoff } = options;
  return {
    client,
    clock,
    batcher,
    handoff,
    admission: options.admission,
    createdTimes: new CreatedTimes({ source: client, clock }),
    preflight: options.preflight === false ? undefined : { unavailable: null },
    settings: {
      tickMs,
      handoffTimeoutMs: options.handoffTimeoutMs ?? DEFAULTS.handoffTimeoutMs,
      sizeBand: options.sizeBand ?? DEFAULT_SIZE_BAND,
    },
  };
}

/** The task list keyed by step (graphile-worker style): each step is one function over injected I/O. */
function stepTable(options: IngestRunnerOptions): ReadonlyArray<readonly [IngestStep, Step]> {
  return [
    [
      "submit",
      options.submit ?? ((a, stepIo) => (a.payload.kind === "sql" ? submitMsq : submitNative)(a, stepIo)),
    ],
    ["running", awaitTerminal],
    ["handoff", awaitHandoff],
    ["audit", auditPartition],
    ["undo", undoReplace],
  ];
}

/** The Druid task id of an attempt, derived from what it ingests (so a resubmit is a duplicate). */
function attemptTaskId(payload: IngestPayload, interval: Interval, attempt: number): string {
  const derived = deriveTaskId({
    spec: payload.spec,
    interval,
    specVersion: payload.specVersion,
    attempt,
    prefix: payload.idPrefix,
    datasource: payload.datasource,
    ...(payload.kind === "sql" ? { volatilePaths: SQL_VOLATILE_PATHS } : {}),
    ...(payload.source ? { sourceVersion: payload.source.version } : {}),
    ...(payload.idScheme === 2 ? { terms: { gates: (payload.gates ?? null) as never } } : {}),
  });
  // An MSQ controller is named `query-<sqlQueryId>` (MSQTasks.controllerTaskId, docs/specs.md "id").
  return payload.kind === "sql" ? `query-${derived}` : derived;
}

/** Throws when this attempt must not run: its replace was rolled back, or its id already failed in Druid. */
function refuseSpentAttempt(p: IngestProgress, taskId: string, attempt: number): void {
  if (p.outcome === "rolled-back") {
    // Sent back as it was (a retry): the same input under the same gates would be published over the
    // good data and undone again. Changed input is planned anew (with a fresh progress) instead.
    throw new TaskAbort(
      `not run again: this partition's replace was rolled back, and the same input under the same gates would fail the same way (${p.undo?.reason ?? "its data gate"}); fix the input and rerun the job's command (changed input is new work)`,
    );
  }
  if (p.failures?.some((f) => f.taskId === taskId)) {
    // This attempt's id already FAILED in Druid (e.g. a dead letter sent back by `dlq retry`): Druid
    // would reject it as a duplicate forever, so move to a fresh attempt.
    throw new TaskRetry(`attempt ${attempt} already failed; starting a new attempt`, {
      newAttempt: true,
    });
  }
}

/** An attempt whose progress is the ledger row's, updated by each checkpoint it saves. */
function checkpointedAttempt(
  at: {
    task: TaskRow;
    ctx: TaskContext;
    payload: IngestPayload;
    interval: Interval;
    taskId: string;
    progress: IngestProgress;
  },
  options: Pick<IngestRunnerOptions, "onStep">,
): Attempt {
  const { task, ctx } = at;
  let p = at.progress;
  return {
    task,
    payload: at.payload,
    interval: at.interval,
    taskId: at.taskId,
    call: { signal: ctx.signal },
    progress: () => p,
    // A refused checkpoint means the task was canceled or taken over: stop by throwing, never by
    // returning — a return is "done", and the driver may still commit a terminal outcome on a canceled row.
    save: async (patch) => {
      const row = await ctx.checkpoint(patch as unknown as JsonObject);
      if (!row)
        throw ctx.signal.reason ?? new Error("checkpoint refused: the task was canceled or taken over");
      p = progressOf(row);
    },
    note: (step, detail) => options.onStep?.(task, step, detail),
  };
}

/**
 * Only partitions not yet submitted wait for admission; anything already at Druid must be watched.
 * A pre-filter over up to 100 due rows per cycle, on the claim path: read the fields it needs without
 * validating the rows (the handler decodes and checks them before anything is submitted).
 */
function admitted(options: IngestRunnerOptions, task: TaskRow): boolean {
  const p = task.progress as IngestProgress;
  // An attempt with a recorded id may already be at Druid: watch it (or reattach) without waiting.
  if (p.taskId && !attemptOver(p)) return true;
  const slots = typeof task.payload.slots === "number" ? task.payload.slots : 1;
  const cap = options.jobSettings?.(task.jobId)?.maxConcurrency;
  return options.admission
    ? options.admission.admit(
        task.id,
        slots,
        cap !== undefined ? { id: task.jobId, cap } : undefined,
        druidTaskType(task.payload),
      )
    : true;
}

/** Admission's epoch for the driver: while it stands, partitions refused stay refused (driver.ts). */
function eligibilityEpochOf(admission: IngestRunnerOptions["admission"]): {
  eligibilityEpoch?: () => number;
} {
  return admission ? { eligibilityEpoch: () => admission.epoch } : {};
}

/**
 * The Druid task type a partition submits, for Druid's per-type slot limits: an SQL partition's controller
 * (`query_controller`), else the spec's own type (`index_parallel`, `index`); unknown when unreadable.
 */
function druidTaskType(payload: TaskRow["payload"]): string | undefined {
  if (payload.kind === "sql") return "query_controller";
  const spec = payload.spec;
  const type = spec !== null && typeof spec === "object" && !Array.isArray(spec) ? spec.type : undefined;
  return typeof type === "string" ? type : undefined;
}
