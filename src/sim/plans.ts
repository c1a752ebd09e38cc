import type { Granularity } from "../core/granularity.js";
import type { Interval } from "../core/interval.js";
import type { MsqProgram } from "./msq-sql.js";

/**
 * What the emulator reads off a submitted task (spec.ts): the parsed facts its scheduler and ingestion
 * model need, per kind of task. The parts that plan each kind (compact.ts, msq.ts) and the spec parser
 * share these shapes from here.
 */

export type IngestionMode = "APPEND" | "REPLACE" | "REPLACE_LEGACY";

export interface DimensionSpec {
  name: string;
  type: "string" | "long" | "float" | "double" | "json" | "auto" | "spatial";
}

export interface MetricSpec {
  name: string;
  type: string;
  fieldName: string | null;
  /** A sketch metric MSQ writes finalized (its count, a LONG): APPROX_COUNT_DISTINCT_DS_* under finalizeAggregations. */
  finalize?: boolean;
}

export interface PartitionsPlan {
  type: "dynamic" | "hashed" | "range" | "single_dim";
  /** Rows per segment before a chunk is split into another partition. */
  maxRowsPerSegment: number;
  numShards: number | null;
  partitionDimensions: string[];
}

export interface TimestampPlan {
  column: string;
  format: string;
  missingValue: string | null;
}

/** Emulator knobs read from the task `context` (never sent by segops in production). */
export interface SimKnobs {
  /** Run time in sim ms, replacing the duration model. */
  durationMs: number | null;
  /** When set the task FAILs with this errorMsg after running. */
  fail: string | null;
  /** Fail only the first N tasks sharing `failKey` (retry tests). */
  failAttempts: number | null;
  failKey: string | null;
  /** Row count for sources the emulator does not read (s3, http…). */
  rows: number | null;
  /** The published segments never load on a Historical (handoff-timeout tests). */
  neverHandoff: boolean;
}

export interface IngestPlan {
  dataSchema: {
    timestamp: TimestampPlan;
    /** null = schemaless discovery. */
    dimensions: DimensionSpec[] | null;
    dimensionExclusions: string[];
    metrics: MetricSpec[];
    segmentGranularity: Granularity;
    queryGranularity: Granularity;
    rollup: boolean;
    intervals: Interval[] | null;
  };
  inputSource: Record<string, unknown>;
  inputFormat: Record<string, unknown> | null;
  mode: IngestionMode;
  forceGuaranteedRollup: boolean;
  partitions: PartitionsPlan;
  /** k = maxNumConcurrentSubTasks (1 = sequential). */
  maxNumConcurrentSubTasks: number;
  parallel: boolean;
  maxParseExceptions: number;
  maxSavedParseExceptions: number;
}

export interface TaskPlan {
  id: string | null;
  type: string;
  groupId: string | null;
  dataSource: string;
  priority: number;
  context: Record<string, unknown>;
  /** Worker slots the task occupies while running (architecture doc, "One ingestion, step by step": k+1 in parallel mode). */
  slots: number;
  /** Set for ingestion tasks (index, index_parallel). */
  ingest: IngestPlan | null;
  /** Interval a kill task deletes unused segments in. */
  killInterval: Interval | null;
  /**
   * A kill task's filters (`KillUnusedSegmentsTask`): only these versions, at most `limit` segments, only
   * segments marked unused no later than `maxUsedStatusLastUpdatedTime` (ms).
   */
  kill?: { versions: string[] | null; limit: number | null; maxUsedStatusLastUpdatedTime: number | null };
  /** Set for `compact` tasks: the interval whose segments it rewrites, and how it partitions them. */
  compact?: CompactPlan;
  /** Set for MSQ `query_controller` tasks (msq.ts). */
  msq?: MsqPlan | undefined;
  /** Set for MSQ `query_worker` tasks: the controller they live and end with. */
  controller?: string;
  sim: SimKnobs;
}

export interface CompactPlan {
  interval: Interval;
  partitions: PartitionsPlan;
}

/** What a controller task carries besides its `IngestPlan`. */
export interface MsqPlan {
  sqlQueryId: string;
  query: string;
  verb: "INSERT" | "REPLACE";
  /** `maxNumTasks − 1`: the controller takes one slot, each worker one (`MultiStageQueryContext`). */
  workers: number;
  /** `maxParseExceptions` (default 0; -1 = unlimited). */
  maxParseExceptions: number;
  clusteredBy: string[];
  /** The OVERWRITE WHERE window (REPLACE), or null for OVERWRITE ALL and INSERT. */
  overwrite: Interval | null;
  signature: Array<{ name: string; type: string }>;
  /** The planned query (msq-query.ts) the controller runs; absent in state files from before it. */
  program?: MsqProgram;
  /**
   * What running the query on acceptance found besides its rows (msq.ts `materialize`): null `__time`s
   * (`InsertTimeNull`), the first chunk outside the OVERWRITE window, the rows WHERE dropped.
   */
  findings?: { nullTimes: number; outside: Interval | null; dropped: number };
  /** The query context as Druid stores it with the task (`sqlQueryContext`). */
  context: Record<string, unknown>;
}
