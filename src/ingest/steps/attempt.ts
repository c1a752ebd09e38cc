import type { Clock } from "../../core/clock.js";
import type { Interval } from "../../core/interval.js";
import { TaskRetry } from "../../driver/signals.js";
import type { CallOptions, DruidClient } from "../../druid/client.js";
import { type DruidError, isDruidError } from "../../druid/errors.js";
import type { TaskRow } from "../../ledger/types.js";
import type { AdmissionTracker } from "../../work/admission-tracker.js";
import type { SizeBand } from "../../work/audit.js";
import type { AttemptFailure } from "../../work/failure.js";
import type { HandoffChecker } from "../../work/handoff.js";
import type { StatusBatcher } from "../../work/status-batcher.js";
import type { TimelineSegment } from "../../work/timeline.js";
import type { CreatedTimes } from "../created-times.js";
import type { IngestPayload, IngestProgress } from "../types.js";

/**
 * What the pre-flight keeps across partitions of one process: a sampler Druid does not offer (an older
 * Druid, a Router without the management proxy) or does not let segops use (no permission) is said once,
 * and every replace then relies on the data gates alone.
 */
export interface PreflightState {
  unavailable: string | null;
}

/**
 * What each step of the ingestion handler works on: one partition's current attempt. A step reads the
 * latest checkpointed progress, does one thing against Druid, and either checkpoints the next step
 * (`save({ step })`) or throws a signal (`TaskProgress` to come back later, `TaskRetry`/`AttemptFailed`,
 * `TaskAbort`). Steps never write task state themselves.
 */
export interface Attempt {
  readonly task: TaskRow;
  readonly payload: IngestPayload;
  readonly interval: Interval;
  /** This attempt's Druid task id (derived, never random). */
  readonly taskId: string;
  readonly call: CallOptions;
  /** The latest checkpointed progress. */
  progress(): IngestProgress;
  /** Checkpoints a patch; throws when refused (canceled or taken over): a step must then stop. */
  save(patch: IngestProgress): Promise<void>;
  /** Tells the progress display and logs. */
  note(step: string, detail: string): void;
  /**
   * The segments the handoff gate passed on in this handler run (never checkpointed): the audit step reads
   * these instead of asking the Coordinator again; a resumed audit reads afresh.
   */
  handoffSeen?: readonly TimelineSegment[];
}

/** The I/O a step may use, injected (tests pass fakes). */
export interface StepIO {
  readonly client: DruidClient;
  readonly clock: Clock;
  readonly batcher: StatusBatcher;
  readonly handoff: HandoffChecker;
  readonly admission?: AdmissionTracker | undefined;
  /** Druid's `createdTime` of running tasks, a list for many (absent: a status GET per task at SUCCESS). */
  readonly createdTimes?: CreatedTimes | undefined;
  /** The pre-flight's state in this process (absent: no pre-flight). */
  readonly preflight?: PreflightState | undefined;
  readonly settings: {
    /** Cadence of status polls and handoff checks for one partition. */
    readonly tickMs: number;
    /** Give up on handoff this long after SUCCESS. */
    readonly handoffTimeoutMs: number;
    readonly sizeBand: SizeBand;
  };
}

/** One step of the handler. */
export type Step = (attempt: Attempt, io: StepIO) => Promise<void>;

/** A failed Druid attempt, carrying the failure history so the poison rule can see it. */
export class AttemptFailed extends TaskRetry {
  constructor(
    reason: string,
    readonly failures: AttemptFailure[],
  ) {
    super(reason, { newAttempt: true });
  }
}

/** Druid errors that retrying cannot fix: abort with Druid's own words. */
export function isFatal(error: unknown): error is DruidError {
  return isDruidError(error) && !error.retryable && error.code !== "NotFound";
}

export function describeError(error: unknown): string {
  if (isDruidError(error)) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The `buildSegments` row counters of a completion report: `{totals: {buildSegments}}` in parallel mode,
 * `{buildSegments}` in sequential mode (docs/druid-api.md §2.7).
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

/**
 * Rows an attempt ingested (before rollup): Druid's counters are disjoint — `processed` rows parsed
 * cleanly, `processedWithError` were ingested with a bad column, `unparseable` and `thrownAway` were not.
 */
export function rowsIngestedOf(rowStats: IngestProgress["rowStats"]): number | null {
  return rowStats ? rowStats.processed + rowStats.processedWithError : null;
}
