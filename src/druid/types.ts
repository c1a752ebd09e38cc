/**
 * Druid's wire types, as docs/druid-api.md §2–§3 records them. Fields Druid may omit are optional; unknown
 * extra fields are kept (newer Druid versions add some, §8), so these are open shapes.
 */

/** `TaskState`: persisted, the only states a task ends in. There is no INTERRUPTED (§2.3). */
export type TaskState = "RUNNING" | "SUCCESS" | "FAILED";
/** `RunnerTaskState`: not persisted; WAITING also covers completed tasks the runner forgot (§2.3). */
export type RunnerTaskState = "WAITING" | "PENDING" | "RUNNING" | "NONE";

export interface TaskLocation {
  host: string | null;
  port: number;
  tlsPort: number;
  k8sPodName?: string;
}

/** `TaskStatus`: the bulk endpoint's per-id value (§2.4). */
export interface TaskStatus {
  id: string;
  status: TaskState;
  /** -1 while running, milliseconds when complete. */
  duration: number;
  errorMsg: string | null;
  location?: TaskLocation;
  [extra: string]: unknown;
}

/** `TaskStatusPlus`: `/task/{id}/status`'s `status` and the items of `/tasks` (§2.3, §2.5). */
export interface TaskStatusPlus {
  id: string;
  groupId?: string;
  type?: string;
  createdTime: string;
  queueInsertionTime?: string;
  statusCode: TaskState;
  /** Deprecated duplicate of `statusCode`. */
  status?: TaskState;
  runnerStatusCode?: RunnerTaskState;
  duration: number;
  location?: TaskLocation;
  dataSource?: string;
  errorMsg: string | null;
  [extra: string]: unknown;
}

/** `GET /task/{id}/status` (§2.3). `status` is null only in a storage race. */
export interface TaskStatusResponse {
  task: string;
  status: TaskStatusPlus | null;
}

/** One id's answer from `bulkTaskStatus`. `found: false` means Druid does not know the id — not failed. */
export type BulkStatusEntry =
  | { id: string; found: true; status: TaskStatus; runnerStatusCode?: RunnerTaskState }
  | { id: string; found: false };

export type TaskStateFilter = "pending" | "waiting" | "running" | "complete";

/** Filters of `GET /druid/indexer/v1/tasks` (§2.5). */
export interface TaskListFilter {
  /** Only tasks in this state (all states when omitted). */
  state?: TaskStateFilter;
  /** Only tasks writing to this datasource. */
  datasource?: string;
  /** Limit on **complete** tasks only (newest first); 0 means no complete tasks. */
  max?: number;
  /** Only tasks of this type, e.g. `index_parallel`. */
  type?: string;
  /**
   * Window for complete tasks, `start/end` or `start_end`. Druid uses only its length, counted back from
   * now (§2.5 quirk); the default window is 24 hours.
   */
  createdTimeInterval?: string;
}

/** Row counters of an ingestion report (§2.7). */
export interface RowIngestionMeters {
  processed: number;
  processedBytes?: number;
  processedWithError: number;
  thrownAway: number;
  thrownAwayByReason?: Record<string, number>;
  unparseable: number;
  [extra: string]: unknown;
}

export type IngestionState =
  | "NOT_STARTED"
  | "DETERMINE_PARTITIONS"
  | "BUILD_SEGMENTS"
  | "SEGMENT_AVAILABILITY_WAIT"
  | "COMPLETED";

export interface IngestionStatsAndErrorsPayload {
  /** An `IngestionState`; the docs' live example also shows "RUNNING", so any string is accepted. */
  ingestionState: IngestionState | (string & {});
  unparseableEvents: Record<string, unknown>;
  /**
   * Sequential: `{determinePartitions, buildSegments}`; parallel: `{totals: {buildSegments}}`;
   * live reports add `movingAverages`.
   */
  rowStats: Record<string, unknown>;
  errorMsg: string | null;
  segmentAvailabilityConfirmed?: boolean;
  segmentAvailabilityWaitTimeMs?: number;
  recordsProcessed?: Record<string, number> | null;
  segmentsRead?: number;
  segmentsPublished?: number;
  [extra: string]: unknown;
}

export interface TaskReport<P = Record<string, unknown>> {
  type: string;
  taskId: string;
  payload: P;
}

/** `GET /task/{id}/reports`: report key → report (§2.7). */
export interface TaskReports {
  ingestionStatsAndErrors?: TaskReport<IngestionStatsAndErrorsPayload>;
  taskContext?: TaskReport;
  multiStageQuery?: TaskReport;
  killUnusedSegments?: TaskReport;
  [key: string]: TaskReport<unknown> | undefined;
}

/** `GET /task/{id}` (§2.6): the stored spec, passwords redacted by Druid. */
export interface TaskPayloadResponse {
  task: string;
  payload: Record<string, unknown>;
}

/** An item of `GET /workers` (§2.9). */
export interface WorkerInfo {
  worker: {
    scheme: string;
    host: string;
    ip: string;
    capacity: number;
    version: string;
    category?: string;
    disabled?: boolean;
  };
  currCapacityUsed: number;
  currParallelIndexCapacityUsed?: number;
  currCapacityUsedByTaskType?: Record<string, number>;
  availabilityGroups: string[];
  runningTasks: string[];
  lastCompletedTaskTime: string;
  blacklistedUntil?: string | null;
  [extra: string]: unknown;
}

/** `GET /totalWorkerCapacity` (§2.9): each figure is -1 when unknown. */
export interface TotalWorkerCapacity {
  currentClusterCapacity: number;
  maximumCapacityWithAutoScale: number;
  usedClusterCapacity: number;
}

export interface ShardSpec {
  type: string;
  partitionNum?: number;
  partitions?: number;
  [extra: string]: unknown;
}

/** `DataSegment` (§3.5). `dimensions`/`metrics`/`projections` are comma-joined strings on the wire, arrays accepted. */
export interface DataSegment {
  dataSource: string;
  /** `start/end`, ISO. */
  interval: string;
  version: string;
  loadSpec: Record<string, unknown>;
  dimensions: string | string[];
  metrics: string | string[];
  shardSpec: ShardSpec;
  binaryVersion?: number;
  size: number;
  /** The segment id (read-only on Druid's side, "for backward compatibility"). */
  identifier?: string;
  projections?: string | string[];
  totalRows?: number;
  lastCompactionState?: Record<string, unknown>;
  clusterGroups?: unknown;
  indexingStateFingerprint?: string;
  [extra: string]: unknown;
}

/** Splits a `DataSegment` comma list (or passes an array through); empty string → []. */
export function commaList(value: string | readonly string[] | undefined | null): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return [...value];
  return (value as string) === "" ? [] : (value as string).split(",");
}

/** `loadstatus` forms (§3.1, §3.3). */
export type LoadStatusForm = "default" | "simple" | "full";
/** datasource → percent loaded. */
export type LoadStatusPercent = Record<string, number>;
/** datasource → segments left to load. */
export type LoadStatusSimple = Record<string, number>;
/** tier → datasource → under-replicated count. */
export type LoadStatusFull = Record<string, Record<string, number>>;
export interface LoadStatusByForm {
  default: LoadStatusPercent;
  simple: LoadStatusSimple;
  full: LoadStatusFull;
}

/** Druid SQL dynamic parameter (§3.6). */
export interface SqlParameter {
  type: string;
  value: string | number | boolean | null;
}

export type SqlResultFormat = "object" | "array" | "objectLines" | "arrayLines" | "csv";

/** `POST /druid/v2/sql/task` 2xx answer (§6). */
export interface SqlTaskResponse {
  taskId: string;
  state: TaskState;
}

/**
 * `GET /druid/v2/sql/statements/{queryId}` (§6.2): the query id is the controller task id. `stages`, `counters`
 * and `warnings` only with `detail=true`.
 */
export interface SqlStatementStatus {
  queryId: string;
  state: "ACCEPTED" | "RUNNING" | "SUCCESS" | "FAILED" | string;
  createdAt?: string;
  durationMs?: number;
  errorDetails?: { errorCode?: string; errorMessage?: string; [key: string]: unknown };
  counters?: Record<string, unknown>;
  warnings?: unknown[];
  [key: string]: unknown;
}

/** Counts of the §3.6 handoff query (Druid's own `SegmentLoadStatusFetcher.LOAD_QUERY`). */
export interface SegmentLoadCounts {
  usedSegments: number;
  precachedSegments: number;
  onDemandSegments: number;
  pendingSegments: number;
  unknownSegments: number;
}

/**
 * `SamplerConfig` (`indexing-service/…/overlord/sampler/SamplerConfig.java`): how much the sampler reads.
 * Druid's defaults: 200 rows (at most 5,000, more is a 400), a 10 s read budget (`TimedShutoffInputSourceReader`;
 * 0 reads until `numRows` or the end), no memory cap, no response cap.
 */
export interface SamplerConfig {
  numRows?: number;
  timeoutMs?: number;
  maxBytesInMemory?: number;
  maxClientResponseBytes?: number;
}

/**
 * `IndexTaskSamplerSpec`, the body of `POST /druid/indexer/v1/sampler` (docs/druid-api.md §2.12): an ingestion
 * spec read as `IndexTask.IndexIngestionSpec` (its ioConfig an `index` one). Druid's SamplerModule registers
 * `index` only; `index_parallel` is refused with Jackson's unknown-type 400 (seen on Druid 33).
 */
export interface SamplerSpec {
  type: "index";
  spec: {
    dataSchema?: Record<string, unknown>;
    ioConfig: {
      type: string;
      inputSource: { type: string } & Record<string, unknown>;
      inputFormat?: { type: string } & Record<string, unknown>;
      [extra: string]: unknown;
    };
    tuningConfig?: Record<string, unknown>;
  };
  samplerConfig?: SamplerConfig;
}

/**
 * One row of a sample (`SamplerResponse.SamplerResponseRow`, serialized without null fields): `input` is the
 * raw record, `parsed` the indexed row (`__time` in epoch ms, then dimensions and metrics); an unparseable row
 * has `unparseable: true` and `error`, and `input` when the record itself could be read.
 */
export interface SamplerResponseRow {
  input?: Record<string, unknown> | null;
  parsed?: Record<string, unknown> | null;
  unparseable?: boolean | null;
  error?: string | null;
}

/** A `DimensionSchema` as Druid serializes it (`{"type","name","multiValueHandling","createBitmapIndex"}`). */
export type SamplerDimensionSchema = { type: string; name: string } & Record<string, unknown>;

/**
 * `SamplerResponse` (`server/…/client/indexing/SamplerResponse.java`). `numRowsRead` counts the rows the
 * sampler took from the input (parsed, unparseable, and rows rolled up into an earlier one; not rows the
 * transformSpec filter dropped), `numRowsIndexed` those that indexed without a parse error. `data` has a row
 * per indexed row (rolled-up rows merge into the first of their group) and per unparseable row.
 */
export interface SamplerResponse {
  numRowsRead: number;
  numRowsIndexed: number;
  /** The dimensions as the dataSchema (or discovery) declares them. */
  logicalDimensions?: SamplerDimensionSchema[];
  /** The dimensions as they would be stored. */
  physicalDimensions?: SamplerDimensionSchema[];
  /** `__time`, dimensions and metrics with their column types (`LONG`, `STRING`, …). */
  logicalSegmentSchema?: Array<{ name: string; type?: string }>;
  data: SamplerResponseRow[];
  [extra: string]: unknown;
}
