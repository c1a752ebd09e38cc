import type { JsonObject } from "../ledger/types.js";
import type { AuditReport } from "../work/audit.js";
import type { AttemptFailure } from "../work/failure.js";
import type { Baseline, OwnershipProof } from "../work/handoff.js";
import type { LiveData } from "../work/timeline.js";
import type { DataGates } from "./gates.js";
import type { PreflightEvidence } from "./preflight.js";
import type { SourceVersion } from "./source.js";

/**
 * The ingest kind's own shapes: what a partition's ledger task carries (payload) and what its runner
 * records as it goes (progress). The runner and its steps both read them; they live apart from the runner
 * so the steps need not import the module that assembles them.
 */

export const INGEST_KIND = "ingest";

/** What a partition's ledger task carries; written once when the job is planned (already validated). */
export interface IngestPayload {
  /** `sql`: an MSQ query (`spec` is `{query, context}`), submitted to `/druid/v2/sql/task`; absent: a native task. */
  kind?: "sql";
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
  /** The pre-flight lets an empty input replace live data (`--allow-empty`). */
  allowEmpty?: boolean;
  /** The version of the input (given or fingerprinted): part of the Druid task id. */
  source?: SourceVersion;
  /**
   * 2: the gates are part of the Druid task id (what decides whether a result is kept: a result undone
   * under some gates is never reattached as done under others). Absent in partitions planned before,
   * whose ids stay as they were.
   */
  idScheme?: 2;
}

export type IngestStep = "submit" | "running" | "handoff" | "audit" | "undo" | "done";

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
    | "refused-empty"
    | "rolled-back"
    | "undo-timeout"
    | "undo-failed"
    | null;
  /** What the interval served before this attempt (read with the baseline): what an undo restores. */
  liveBefore?: LiveData;
  /** The undo of a replace that failed its data gates after Druid published it (steps/undo.ts). */
  undo?: {
    /** The gate that failed. */
    reason: string;
    phase: "unmark" | "mark" | "served" | "done";
    /** Our versions, marked unused. */
    unmarked?: string[];
    markedAt?: number;
    restoredAt?: number;
    /** The version live before was gone (killed): nothing could be restored. */
    killed?: boolean;
    timedOut?: boolean;
  };
  /** What the pre-flight read of the input (absent: none ran for this attempt). */
  preflight?: PreflightEvidence;
  handedOffAt?: number;
  /**
   * The interval segops put in the datasource's compaction skipIntervals for this partition (compaction-guard.ts),
   * taken out when the partition is over; absent: none of segops' (no auto-compaction, Druid before 39).
   */
  compactionSkip?: string;
  /**
   * Done although a newer version is live over ours: Druid's own compaction wrote it from ours after our task
   * SUCCEEDED (steps/compacted.ts): the note, and which compaction task published which version.
   */
  compactedBy?: { note: string; by: Array<{ taskId: string; version: string }> };
  failures?: AttemptFailure[];
  taskIds?: string[];
  missing?: string[];
  /** The audit's evidence: violations, totals, and rows/bytes/version per time chunk. */
  audit?: Pick<AuditReport, "ok" | "violations" | "totals" | "chunks"> & { compactionCandidates: number };
  summary?: IngestSummary;
}
