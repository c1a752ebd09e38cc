import { backoffDelay } from "../core/backoff.js";
import type { Clock } from "../core/clock.js";
import { parseGranularity } from "../core/granularity.js";
import { formatInterval, parseInterval } from "../core/interval.js";
import { deriveTaskId } from "../core/task-id.js";
import { TaskAbort, TaskProgress, TaskRetry } from "../driver/signals.js";
import type { RunnerSpec, TaskContext } from "../driver/spec.js";
import type { CallOptions, DruidClient, TaskSpec } from "../druid/client.js";
import { type DruidError, isDruidError } from "../druid/errors.js";
import type { JsonObject, TaskRow } from "../ledger/types.js";
import type { AdmissionTracker } from "./admission-tracker.js";
import { type AuditReport, auditTimeline, DEFAULT_SIZE_BAND, type SizeBand } from "./audit.js";
import { type AttemptFailure, classifyTaskFailure, isPoisoned } from "./failure.js";
import { checkDataGates, type DataGates, DEFAULT_GATES, firstParseErrors } from "./gates.js";
import {
  type Baseline,
  type HandoffChecker,
  type OwnershipProof,
  proveSoleTask,
  readBaseline,
} from "./handoff.js";
import { ingestPayloadSchema, ingestProgressSchema } from "./schemas.js";
import { toTimelineSegment } from "./segments.js";
import type { StatusBatcher } from "./status-batcher.js";

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

export const INGEST_KIND = "ingest";

/** What a partition's ledger task carries; written once when the job is planned (already validated). */
export interface IngestPayload {
  datasource: string;
  /** Canonical interval string of the partition. */
  interval: string;
  /** The rendered, validated spec without `id`. */
  spec: JsonObject;
  specVersion: string;
  idPrefix: string;
  mode: "replace" | "append";
  /** As the spec writes it: a name, an ISO period or a `{type: "period"}` object. */
  segmentGranularity: string | JsonObject;
  /** Worker slots one attempt occupies (k+1). */
  slots: number;
  /** Row-count gates; absent in partitions planned before gates existed (then the defaults apply). */
  gates?: DataGates;
}

export type IngestStep = "submit" | "running" | "handoff" | "audit" | "done";

export interface IngestSummary {
  taskIds: string[];
  druidTaskId: string;
  version: string | null;
  /** Rows stored in the live segments (Druid ≥ 37 reports them in segment metadata; null before). */
  rows: number | null;
  /** Rows the task ingested per its report (before rollup): processed + processed with error. */
  rowsIngested: number | null;
  segments: number;
  bytes: number;
  druidDurationMs: number | null;
  handoffMs: number | null;
  compactionCandidates: number;
  attempts: number;
}

/** The ledger task's `progress` (a JSON object). */
export interface IngestProgress {
  step?: IngestStep;
  taskId?: string;
  attempt?: number;
  baseline?: Baseline;
  /**
   * False when Druid already knew this attempt's id before the baseline was read (the same spec was
   * submitted by another job or ledger): the baseline then holds the task's own segments.
   */
  baselineTrusted?: boolean;
  /** Resubmits answered "duplicate" while the status endpoint does not know the task, in a row. */
  forgotten?: number;
  submittedAt?: number;
  reattached?: boolean;
  succeededAt?: number;
  druidDurationMs?: number;
  /** Druid's `createdTime` of the successful attempt: our version cannot be older. */
  druidCreatedTime?: string | null;
  /** Row counters of the successful attempt's report (`buildSegments`). */
  rowStats?: {
    processed: number;
    unparseable: number;
    thrownAway: number;
    processedWithError: number;
  } | null;
  /** The first parse-error messages of the latest attempt's report. */
  parseErrors?: string[];
  /** Druid's last reported state of the current attempt (null before it is known). */
  druidState?: string | null;
  version?: string | null;
  /** How `version` was tied to this attempt (see `OwnershipProof`). */
  versionProof?: OwnershipProof | null;
  /** When the current handoff wait began (a `retry` after a handoff timeout starts a new window). */
  handoffSince?: number;
  /** Set when the handoff wait timed out; a later run of this step is a retry and waits afresh. */
  handoffTimedOut?: boolean;
  /** Why the partition ended without being done, when segops (not Druid) decided it. */
  outcome?:
    | "superseded"
    | "lost"
    | "unproven"
    | "never-loaded"
    | "handoff-timeout"
    | "audit-failed"
    | "forgotten"
    | null;
  handedOffAt?: number;
  failures?: AttemptFailure[];
  taskIds?: string[];
  missing?: string[];
  /** The audit's evidence: violations, totals, and rows/bytes/version per time chunk. */
  audit?: Pick<AuditReport, "ok" | "violations" | "totals" | "chunks"> & { compactionCandidates: number };
  summary?: IngestSummary;
}

export interface IngestRunnerOptions {
  client: DruidClient;
  clock: Clock;
  batcher: StatusBatcher;
  handoff: HandoffChecker;
  admission?: AdmissionTracker;
  /** Handlers in flight in this process (= Druid tasks this process watches). @default 64 */
  concurrency?: number;
  /** Cadence of status polls for one task. @default 1000 */
  tickMs?: number;
  /** Give up on handoff this long after SUCCESS. @default 15 min */
  handoffTimeoutMs?: number;
  /** Dead-letter after this many same-class deterministic failures. @default 3 */
  poisonAfter?: number;
  /** Retry ceiling for transient failures (Druid unreachable, failed attempts). @default 10 */
  maxRetry?: number;
  sizeBand?: SizeBand;
  /** First retry delay after a failed attempt or an unreachable Druid; grows to 60× with full jitter. @default 5000 */
  retryBaseMs?: number;
  /** Told about each step a partition finishes (progress display, logs). */
  onStep?: (task: TaskRow, step: string, detail: string) => void;
}

/** A failed Druid attempt, carrying the failure history so the poison rule can see it. */
export class AttemptFailed extends TaskRetry {
  constructor(
    reason: string,
    readonly failures: AttemptFailure[],
  ) {
    super(reason, { newAttempt: true });
  }
}

/**
 * The `buildSegments` row counters of a completion report: `{totals: {buildSegments}}` in parallel mode,
 * `{buildSegments}` in sequential mode (api-contract §2.7).
 */
export function buildSegmentsStats(
  rowStats: Record<string, unknown> | undefined,
): IngestProgress["rowStats"] {
  const totals = (rowStats?.totals as Record<string, unknown> | undefined) ?? rowStats;
  const b = totals?.buildSegments as Record<string, unknown> | undefined;
  if (!b || typeof b.processed !== "number") return null;
  const n = (v: unknown) => (typeof v === "number" ? v : 0);
  return {
    processed: b.processed,
    unparseable: n(b.unparseable),
    thrownAway: n(b.thrownAway),
    processedWithError: n(b.processedWithError),
  };
}

/** The task's progress, checked against the ingest kind's schema: a malformed row aborts with the field. */
function progressOf(task: TaskRow): IngestProgress {
  const parsed = ingestProgressSchema.safeParse(task.progress);
  if (!parsed.success) throw new TaskAbort(`progress of ${task.id} is malformed: ${issues(parsed.error)}`);
  return parsed.data as IngestProgress;
}

function payloadOf(task: TaskRow): IngestPayload {
  const parsed = ingestPayloadSchema.safeParse(task.payload);
  if (!parsed.success) throw new TaskAbort(`payload of ${task.id} is malformed: ${issues(parsed.error)}`);
  return parsed.data as IngestPayload;
}

function issues(error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues.map((i) => `${i.path.map(String).join(".") || "(root)"}: ${i.message}`).join("; ");
}

/**
 * Rows an attempt ingested (before rollup): Druid's counters are disjoint — `processed` rows parsed
 * cleanly, `processedWithError` were ingested with a bad column, `unparseable` and `thrownAway` were not.
 */
export function rowsIngestedOf(rowStats: IngestProgress["rowStats"]): number | null {
  return rowStats ? rowStats.processed + rowStats.processedWithError : null;
}

/** Resubmits answered "duplicate" for a task the status endpoint does not know before we give up. */
export const FORGOTTEN_LIMIT = 5;

/** Druid errors that retrying cannot fix: abort with Druid's own words. */
function isFatal(error: unknown): error is DruidError {
  return isDruidError(error) && !error.retryable && error.code !== "NotFound";
}

function describe(error: unknown): string {
  if (isDruidError(error)) return error.message;
  return error instanceof Error ? error.message : String(error);
}

export function ingestRunner(options: IngestRunnerOptions): RunnerSpec {
  const tickMs = options.tickMs ?? 1000;
  const handoffTimeoutMs = options.handoffTimeoutMs ?? 15 * 60_000;
  const poisonAfter = options.poisonAfter ?? 3;
  const { client, clock, batcher, handoff } = options;
  const note = (task: TaskRow, step: string, detail: string) => options.onStep?.(task, step, detail);

  /** `proveSoleTask` with a fatal Druid error turned into the reason it could not be proven. */
  async function soleTask(
    datasource: string,
    taskId: string,
    createdTime: string,
    version: string,
    call: CallOptions,
  ): Promise<true | string> {
    try {
      return await proveSoleTask(
        client,
        { datasource, taskId, createdTime, version, now: clock.now() },
        call.signal,
      );
    } catch (error) {
      if (isFatal(error)) return `the task list could not be read: ${describe(error)}`;
      throw error;
    }
  }

  async function handler(task: TaskRow, ctx: TaskContext): Promise<void> {
    const payload = payloadOf(task);
    const interval = parseInterval(payload.interval);
    const call: CallOptions = { signal: ctx.signal };
    let p = progressOf(task);
    let row: TaskRow | null = task;

    // A refused checkpoint means the task was canceled or taken over: stop by throwing, never by
    // returning — a return is "done", and the driver may still commit a terminal outcome on a canceled row.
    const save = async (patch: IngestProgress): Promise<void> => {
      row = await ctx.checkpoint(patch as unknown as JsonObject);
      if (!row)
        throw ctx.signal.reason ?? new Error("checkpoint refused: the task was canceled or taken over");
      p = progressOf(row);
    };

    // Step 2: derive this attempt's id and record it (with the baseline) before anything is submitted.
    const taskId = deriveTaskId({
      spec: payload.spec,
      interval,
      specVersion: payload.specVersion,
      attempt: task.attempt,
      prefix: payload.idPrefix,
      datasource: payload.datasource,
    });
    if (p.failures?.some((f) => f.taskId === taskId)) {
      // This attempt's id already FAILED in Druid (e.g. a dead letter sent back by `dlq retry`): Druid
      // would reject it as a duplicate forever, so move to a fresh attempt.
      throw new TaskRetry(`attempt ${task.attempt} already failed; starting a new attempt`, {
        newAttempt: true,
      });
    }
    if (p.taskId !== taskId) {
      // A baseline proves what is ours only if it was read before the task existed. Ask Druid first: a
      // known id was submitted by someone else with the same spec (another job or ledger).
      const known = await batcher.get(taskId, ctx.signal);
      let baseline: Baseline;
      try {
        baseline = await readBaseline(client, payload.datasource, interval, ctx.signal);
      } catch (error) {
        if (isFatal(error)) throw new TaskAbort(`cannot read existing segments: ${describe(error)}`);
        throw error;
      }
      const taskIds = [...(p.taskIds ?? []), taskId];
      await save({
        step: "submit",
        taskId,
        attempt: task.attempt,
        baseline,
        baselineTrusted: known.state === "UNKNOWN",
        taskIds,
        version: null,
        versionProof: null,
        reattached: false,
        druidState: null,
        forgotten: 0,
      });
    }

    if (p.step === "submit") {
      options.admission?.track(task.id, payload.slots, taskId);
      try {
        const result = await client.submitTask({ ...(payload.spec as TaskSpec), id: taskId }, call);
        note(task, "submitted", `${taskId}${result.outcome === "duplicate" ? " (reattached)" : ""}`);
        await save({
          step: "running",
          submittedAt: clock.now(),
          reattached: result.outcome === "duplicate",
          ...(result.outcome === "accepted" ? { forgotten: 0 } : {}),
        });
      } catch (error) {
        if (isFatal(error)) throw new TaskAbort(`Druid rejected ${taskId}: ${describe(error)}`);
        throw error;
      }
    }

    if (p.step === "running") {
      options.admission?.track(task.id, payload.slots, taskId);
      const status = await batcher.get(taskId, ctx.signal);
      if (status.state === "UNKNOWN") {
        // Druid forgot (or never stored) a task we submitted: submit the same id again (docs/druid-api.md,
        // "Task status"). If Druid keeps answering "duplicate" for an id its status endpoint does not know,
        // resubmitting cannot help: stop with the evidence instead of looping.
        const forgotten = p.reattached ? (p.forgotten ?? 0) + 1 : 0;
        if (forgotten >= FORGOTTEN_LIMIT) {
          await save({ outcome: "forgotten", forgotten });
          throw new TaskAbort(
            `Druid answers "duplicate" to ${taskId} but its status endpoint does not know the task (${forgotten} times in a row): the Overlord's task storage disagrees with itself; check the Overlord (leader change, metadata store) before retrying`,
          );
        }
        await save({ step: "submit", forgotten });
        throw new TaskProgress(`Druid does not know ${taskId}; resubmitting`, 0);
      }
      if (p.forgotten) await save({ forgotten: 0 });
      if (status.state === "RUNNING") {
        if (p.druidState !== "RUNNING") await save({ druidState: "RUNNING" });
        throw new TaskProgress(`Druid task ${taskId} RUNNING`, tickMs);
      }
      if (status.state === "FAILED") {
        options.admission?.untrack(task.id);
        let errorMsg = status.errorMsg;
        let rowStats: IngestProgress["rowStats"] = null;
        let parseErrors: string[] = [];
        try {
          const payloadOfReport = (await client.taskReports(taskId, call))?.ingestionStatsAndErrors?.payload;
          errorMsg = payloadOfReport?.errorMsg ?? errorMsg;
          rowStats = buildSegmentsStats(payloadOfReport?.rowStats);
          parseErrors = firstParseErrors(payloadOfReport?.unparseableEvents);
        } catch {
          // The status's errorMsg is enough when the report is gone.
        }
        const cls = classifyTaskFailure(errorMsg);
        const failures = [
          ...(p.failures ?? []),
          {
            attempt: task.attempt,
            taskId,
            failureClass: cls.name,
            deterministic: cls.deterministic,
            errorMsg,
          },
        ];
        await save({ failures, druidState: "FAILED", rowStats, parseErrors });
        note(task, "failed", `${taskId}: ${errorMsg ?? "no message"}`);
        throw new AttemptFailed(`Druid task ${taskId} FAILED: ${errorMsg ?? "no message"}`, failures);
      }
      options.admission?.untrack(task.id);
      note(task, "succeeded", taskId);
      const [reports, plus] = await Promise.all([
        client.taskReports(taskId, call).catch(() => null),
        client.taskStatus(taskId, call).catch(() => null),
      ]);
      const rowStats = buildSegmentsStats(reports?.ingestionStatsAndErrors?.payload.rowStats);
      const parseErrors = firstParseErrors(reports?.ingestionStatsAndErrors?.payload.unparseableEvents);
      const gate = rowStats ? checkDataGates(rowStats, payload.gates ?? DEFAULT_GATES, parseErrors) : null;
      if (gate) {
        // SUCCESS on bad data is a failed attempt, and a deterministic one: the poison rule applies.
        const failures = [
          ...(p.failures ?? []),
          { attempt: task.attempt, taskId, failureClass: "data-gate", deterministic: true, errorMsg: gate },
        ];
        await save({ failures, druidState: "SUCCESS", rowStats, parseErrors });
        note(task, "failed", `${taskId}: ${gate}`);
        throw new AttemptFailed(`data gate: ${taskId} SUCCEEDED but ${gate}`, failures);
      }
      await save({
        step: "handoff",
        succeededAt: clock.now(),
        handoffSince: clock.now(),
        handoffTimedOut: false,
        druidDurationMs: status.duration,
        druidState: "SUCCESS",
        druidCreatedTime: plus?.status?.createdTime ?? null,
        rowStats,
        parseErrors,
      });
    }

    if (p.step === "handoff") {
      // Reached again after a handoff timeout: only `segops retry` brings a task back from that, and it
      // means "wait again", so the window starts now.
      if (p.handoffTimedOut) await save({ handoffTimedOut: false, handoffSince: clock.now(), outcome: null });
      const created = p.druidCreatedTime ? Date.parse(p.druidCreatedTime) : Number.NaN;
      const lifetimeEnd =
        Number.isFinite(created) && typeof p.druidDurationMs === "number" && p.druidDurationMs >= 0
          ? new Date(created + p.druidDurationMs).toISOString()
          : null;
      const verdict = await handoff.check(
        payload.datasource,
        {
          interval,
          mode: payload.mode,
          baseline: p.baseline ?? { versions: [], segmentIds: [] },
          baselineTrusted: p.baselineTrusted !== false,
          version: p.version ?? null,
          notBefore: p.druidCreatedTime ?? null,
          notAfter: lifetimeEnd,
          rowsIngested: rowsIngestedOf(p.rowStats),
        },
        ctx.signal,
      );
      if (verdict.state === "superseded") {
        await save({ outcome: "superseded" });
        throw new TaskAbort(
          `superseded: a newer version (${verdict.liveVersions.join(", ")}) replaced ours (${verdict.version}) in ${payload.interval}`,
        );
      }
      if (verdict.state === "never-loaded") {
        await save({ outcome: "never-loaded", version: verdict.version });
        throw new TaskAbort(
          `never queryable under the load rules: ${taskId} SUCCEEDED but ${verdict.reason}; change the datasource's rules (Coordinator /druid/coordinator/v1/rules/${payload.datasource}) and retry`,
        );
      }
      if (verdict.state === "lost") {
        await save({ outcome: "lost" });
        throw new TaskAbort(`not done: ${taskId} SUCCEEDED but its data is gone: ${verdict.reason}`);
      }
      if (verdict.state === "unproven") {
        const proven =
          verdict.candidate !== null && p.druidCreatedTime
            ? await soleTask(payload.datasource, taskId, p.druidCreatedTime, verdict.candidate, call)
            : null;
        if (proven === true && verdict.candidate) {
          // Nothing else could have locked in between: the version is ours. Record it, then check handoff.
          await save({ version: verdict.candidate, versionProof: "sole-task" });
          throw new TaskProgress(`version ${verdict.candidate} of ${payload.interval} proven ours`, 0);
        }
        await save({ outcome: "unproven" });
        throw new TaskAbort(
          `not done: cannot prove that the data in ${payload.interval} came from ${taskId}: ${verdict.reason}${typeof proven === "string" ? `; ${proven}` : ""}. Check it with \`segops audit ${payload.datasource} --interval ${payload.interval}\``,
        );
      }
      if (verdict.state === "waiting") {
        if (verdict.version && !p.version)
          await save({ version: verdict.version, versionProof: verdict.proof });
        const since = p.handoffSince ?? p.succeededAt ?? clock.now();
        const waited = clock.now() - since;
        if (waited >= handoffTimeoutMs) {
          await save({ handoffTimedOut: true, outcome: "handoff-timeout" });
          throw new TaskAbort(
            `SUCCESS but never queryable: ${taskId} succeeded and ${payload.interval} is still not served after ${Math.round(waited / 1000)}s; missing: ${verdict.missing.slice(0, 5).join("; ")}${verdict.missing.length > 5 ? ` (+${verdict.missing.length - 5} more)` : ""}`,
          );
        }
        if (JSON.stringify(p.missing) !== JSON.stringify(verdict.missing))
          await save({ missing: verdict.missing });
        throw new TaskProgress(`waiting for handoff of ${payload.interval}`, tickMs);
      }
      note(task, "handed-off", payload.interval);
      await save({
        step: "audit",
        version: verdict.version,
        versionProof: verdict.proof,
        handedOffAt: clock.now(),
        missing: [],
      });
    }

    if (p.step === "audit") {
      const [used, served] = await Promise.all([
        client.metadataSegments(payload.datasource, [formatInterval(interval)], call),
        client.servedSegments(payload.datasource, call),
      ]);
      const servedIds = new Set(served);
      const report = auditTimeline({
        datasource: payload.datasource,
        interval,
        segments: used.map((s) => toTimelineSegment(s, servedIds)),
        granularity: parseGranularity(payload.segmentGranularity),
        expect: { ...(p.version ? { version: p.version } : {}), mode: payload.mode },
        sizeBand: options.sizeBand ?? DEFAULT_SIZE_BAND,
      });
      const audit = {
        ok: report.ok,
        violations: report.violations,
        totals: report.totals,
        chunks: report.chunks,
        compactionCandidates: report.compactionCandidates.length,
      };
      if (!report.ok) {
        await save({ audit, outcome: "audit-failed" });
        throw new TaskAbort(
          `audit failed for ${payload.interval}: ${report.violations.map((v) => `${v.chunk} ${v.kind}: ${v.message}`).join("; ")}`,
        );
      }
      const summary: IngestSummary = {
        taskIds: p.taskIds ?? [taskId],
        druidTaskId: taskId,
        version: p.version ?? null,
        rows: report.totals.rows,
        rowsIngested: rowsIngestedOf(p.rowStats),
        segments: report.totals.segments,
        bytes: report.totals.bytes,
        druidDurationMs: p.druidDurationMs ?? null,
        handoffMs: p.handedOffAt && p.succeededAt ? p.handedOffAt - p.succeededAt : null,
        compactionCandidates: report.compactionCandidates.length,
        attempts: task.attempt,
      };
      await save({ step: "done", audit, summary });
      note(task, "done", `${summary.rows ?? "?"} rows in ${summary.segments} segment(s)`);
    }
  }

  return {
    kind: INGEST_KIND,
    handler,
    concurrency: options.concurrency ?? 64,
    maxRetry: options.maxRetry ?? 10,
    progressDelayMs: tickMs,
    backoff: (retry) => {
      const baseMs = options.retryBaseMs ?? 5000;
      return backoffDelay(retry - 1, { baseMs, capMs: baseMs * 60 });
    },
    // Only partitions not yet submitted wait for admission; anything already at Druid must be watched.
    isEligible: (task) => {
      const p = progressOf(task);
      // An attempt with a recorded id may already be at Druid: watch it (or reattach) without waiting.
      // One that failed (in Druid, or at a data gate) is over: its successor waits for admission.
      const over = p.druidState === "FAILED" || p.failures?.some((f) => f.taskId === p.taskId);
      if (p.taskId && !over) return true;
      return options.admission ? options.admission.admit(task.id, payloadOf(task).slots) : true;
    },
    isPoison: (_task, error) => error instanceof AttemptFailed && isPoisoned(error.failures, poisonAfter),
    onFinish: (task) => {
      options.admission?.untrack(task.id);
    },
    onCycle: () => options.admission?.refresh(),
  };
}
