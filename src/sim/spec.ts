import { type Granularity, parseGranularity } from "../core/granularity.js";
import { type Interval, parseInterval } from "../core/interval.js";
import { validateId } from "./ids.js";
import type {
  CompactPlan,
  DimensionSpec,
  IngestionMode,
  IngestPlan,
  MetricSpec,
  PartitionsPlan,
  SimKnobs,
  TaskPlan,
  TimestampPlan,
} from "./plans.js";
import { constructError, json, type Reply } from "./reply.js";
import { type VersionTraits, versionTraits } from "./versions.js";

/**
 * Submit-time validation of task specs, as Druid's Jackson `@JsonCreator` constructors do it (docs/druid-api.md §5),
 * producing either Druid's exact 400 body or a `TaskPlan`: the parsed facts the scheduler and the ingestion
 * model need. Unknown fields are ignored, as Druid's mapper does (`FAIL_ON_UNKNOWN_PROPERTIES=false`, §0).
 */

const PKG = "org.apache.druid.indexing.common.task";
const CLASS = {
  parallelTask: `${PKG}.batch.parallel.ParallelIndexSupervisorTask`,
  indexTask: `${PKG}.IndexTask`,
  dataSchema: "org.apache.druid.segment.indexing.DataSchema",
  parallelTuning: `${PKG}.batch.parallel.ParallelIndexTuningConfig`,
  indexTuning: `${PKG}.IndexTask$IndexTuningConfig`,
  parallelSpec: `${PKG}.batch.parallel.ParallelIndexIngestionSpec`,
  indexSpec: `${PKG}.IndexTask$IndexIngestionSpec`,
  granularitySpec: "org.apache.druid.indexer.granularity.UniformGranularitySpec",
  csv: "org.apache.druid.data.input.impl.CsvInputFormat",
  parallelIoConfig: `${PKG}.batch.parallel.ParallelIndexIOConfig`,
  indexIoConfig: `${PKG}.IndexTask$IndexIOConfig`,
} as const;

/** Task types a stock Druid (no extensions) knows; anything else gets the "load all extensions" 400. */
export const KNOWN_TASK_TYPES = [
  "archive",
  "compact",
  "index",
  "index_parallel",
  "kill",
  "move",
  "noop",
  "partial_dimension_cardinality",
  "partial_dimension_distribution",
  "partial_index_generate",
  "partial_index_generic_merge",
  "partial_range_index_generate",
  "restore",
  "single_phase_sub_task",
] as const;

/** Input sources Druid can split across sub-tasks (parallel mode needs one, §5 "Parallel vs sequential"). */
const SPLITTABLE_SOURCES = new Set([
  "local",
  "s3",
  "gs",
  "google",
  "azure",
  "azureStorage",
  "hdfs",
  "http",
  "druid",
]);

export type PlanResult = { ok: true; plan: TaskPlan } | { ok: false; reply: Reply };

class SpecError extends Error {
  constructor(readonly reply: Reply) {
    super("spec error");
  }
}

function fail(className: string, message: string): never {
  throw new SpecError(constructError(className, message));
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const bool = (v: unknown, dflt: boolean): boolean => (typeof v === "boolean" ? v : dflt);

/** Default task priorities (docs/druid-api.md §4.4). */
function defaultPriority(type: string): number {
  if (type === "index" || type === "index_parallel") return 50;
  if (type === "compact") return 25;
  return 0;
}

/** Plans a submitted task body, with the messages of `druidVersion` (see versions.ts). */
export function planTask(body: unknown, druidVersion = 38): PlanResult {
  try {
    return { ok: true, plan: plan(body, druidVersion) };
  } catch (error) {
    if (error instanceof SpecError) return { ok: false, reply: error.reply };
    throw error;
  }
}

/** Type ids a stock Druid lists in the unknown-type 400: Hadoop's were removed in 37 (§8). */
function knownTypeIds(druidVersion: number): string[] {
  const ids: string[] = [...KNOWN_TASK_TYPES];
  if (druidVersion < 37) ids.push("index_hadoop", "index_sub");
  return ids.sort();
}

/** The class whose constructor checks the task id (Druid 33 answers a bad id with its Jackson error). */
function taskClass(type: string): string {
  if (type === "index_parallel") return CLASS.parallelTask;
  if (type === "index") return CLASS.indexTask;
  return `${PKG}.AbstractTask`;
}

function plan(body: unknown, druidVersion: number): TaskPlan {
  const traits = versionTraits(druidVersion);
  if (!isObj(body)) {
    throw new SpecError(
      json(400, {
        error: `Cannot deserialize value of type \`org.apache.druid.indexing.common.task.Task\` from ${Array.isArray(body) ? "Array" : "non-object"} value`,
      }),
    );
  }
  const type = body.type;
  if (typeof type !== "string") {
    throw new SpecError(
      json(400, {
        error:
          "Could not resolve subtype of [simple type, class org.apache.druid.indexing.common.task.Task]: missing type id property 'type'",
      }),
    );
  }
  if (!(KNOWN_TASK_TYPES as readonly string[]).includes(type)) {
    // docs/druid-api.md §2.2 "Unknown task type".
    throw new SpecError(
      json(400, {
        // The Overlord's mapper has a service name (§2.2); a real Druid 33 named its Coordinator-Overlord JVM.
        error: `Please make sure to load all the necessary extensions and jars with type '${type}' on 'druid/coordinator' service. Could not resolve type id '${type}' as a subtype of \`org.apache.druid.indexing.common.task.Task\` known type ids = [${knownTypeIds(druidVersion).join(", ")}]`,
      }),
    );
  }
  const context = obj(body.context);
  const id = body.id === undefined || body.id === null ? null : String(body.id);
  if (id !== null && traits.taskIdCheckedByConstructor) {
    const problem = validateId("task ID", id);
    if (problem) fail(taskClass(type), problem);
  }
  const groupId = typeof body.groupId === "string" ? body.groupId : null;
  const priority = num(context.priority) ?? defaultPriority(type);
  const sim = simKnobs(context);
  if (type === "index" || type === "index_parallel") {
    const ingest = planIngest(type, obj(body.spec ?? body.ingestionSpec), traits);
    const k = ingest.maxNumConcurrentSubTasks;
    return {
      id,
      type,
      groupId,
      dataSource: String(obj(obj(body.spec ?? body.ingestionSpec).dataSchema).dataSource),
      priority,
      context,
      slots: ingest.parallel ? k + 1 : 1,
      ingest,
      killInterval: null,
      sim,
    };
  }
  const dataSource = typeof body.dataSource === "string" ? body.dataSource : "none";
  if (type !== "noop") {
    const problem = validateId("dataSource", body.dataSource);
    if (problem) fail(`${PKG}.AbstractTask`, problem);
  }
  // One-slot tasks that ingest nothing themselves: compact, kill and the rest.
  const oneSlot = { id, type, groupId, dataSource, priority, context, slots: 1, ingest: null, sim };
  if (type === "compact") return { ...oneSlot, killInterval: null, compact: planCompact(body) };
  let killInterval: Interval | null = null;
  let kill: TaskPlan["kill"];
  if (type === "kill" && typeof body.interval === "string") {
    try {
      killInterval = parseInterval(body.interval);
    } catch {
      fail(`${PKG}.KillUnusedSegmentsTask`, `Invalid format: "${body.interval}"`);
    }
    const limit = body.limit === undefined || body.limit === null ? null : Number(body.limit);
    if (limit !== null && !(limit > 0))
      fail(`${PKG}.KillUnusedSegmentsTask`, `limit[${String(body.limit)}] must be a positive integer.`);
    let maxUsed: number | null = null;
    if (body.maxUsedStatusLastUpdatedTime !== undefined && body.maxUsedStatusLastUpdatedTime !== null) {
      maxUsed = Date.parse(String(body.maxUsedStatusLastUpdatedTime));
      if (Number.isNaN(maxUsed))
        fail(
          `${PKG}.KillUnusedSegmentsTask`,
          `Invalid format: "${String(body.maxUsedStatusLastUpdatedTime)}"`,
        );
    }
    kill = {
      versions: Array.isArray(body.versions) ? body.versions.map(String) : null,
      limit,
      maxUsedStatusLastUpdatedTime: maxUsed,
    };
  }
  return { ...oneSlot, killInterval, ...(kill ? { kill } : {}) };
}

/**
 * A `compact` task body (docs/druid-api.md §3.9): `ioConfig.inputSpec` of type `interval` (or the legacy
 * top-level `interval`), and an `index_parallel` tuningConfig whose partitionsSpec splits the output
 * (dynamic, 5,000,000 rows per segment, by default). One slot: the emulator runs no sub-tasks for it.
 */
function planCompact(body: Obj): CompactPlan {
  const C = `${PKG}.CompactionTask`;
  const inputSpec = obj(obj(body.ioConfig).inputSpec);
  const text = typeof inputSpec.interval === "string" ? inputSpec.interval : body.interval;
  if (typeof text !== "string")
    fail(C, "ioConfig.inputSpec.interval is required (inputSpec type 'interval')");
  if (inputSpec.type !== undefined && inputSpec.type !== "interval")
    fail(C, `the emulator compacts by interval only, not inputSpec type [${String(inputSpec.type)}]`);
  let interval: Interval;
  try {
    interval = parseInterval(text);
  } catch {
    fail(C, `Invalid format: "${text}"`);
  }
  if (obj(body.compactionRunner).type === "msq") {
    // `ClientCompactionRunnerInfo.validateMaxNumTasksForMSQ`: a controller and at least one worker (the workers it
    // launches: compact-workers.ts).
    const raw = obj(body.context).maxNumTasks;
    const maxNumTasks = raw === undefined || raw === null ? 2 : Number(raw);
    if (!Number.isInteger(maxNumTasks) || maxNumTasks < 2)
      fail(C, `MSQ: Context maxNumTasks[${String(raw)}] must be at least 2 (1 controller + 1 worker)`);
  }
  return { interval, partitions: planTuning(true, obj(body.tuningConfig)).partitions };
}

export function simKnobs(context: Obj): SimKnobs {
  return {
    durationMs: num(context.simDurationMs),
    fail: typeof context.simFail === "string" ? context.simFail : null,
    failAttempts: num(context.simFailAttempts),
    failKey: typeof context.simFailKey === "string" ? context.simFailKey : null,
    rows: num(context.simRows),
    neverHandoff: context.simNeverHandoff === true,
  };
}

function planIngest(type: "index" | "index_parallel", spec: Obj, traits: VersionTraits): IngestPlan {
  const parallelType = type === "index_parallel";
  const parser = obj(spec.dataSchema).parser;
  if (
    !traits.parserRemoved &&
    parser !== undefined &&
    parser !== null &&
    isObj(obj(spec.ioConfig).inputSource)
  )
    fail(
      parallelType ? CLASS.parallelSpec : CLASS.indexSpec,
      "Cannot use parser and inputSource together. Try using inputFormat instead of parser.",
    );
  const dataSchema = planDataSchema(obj(spec.dataSchema), traits);
  const ioConfig = obj(spec.ioConfig);
  if (isObj(spec.ioConfig) && typeof ioConfig.type !== "string") {
    // ioConfig is polymorphic: without `type` Jackson cannot pick a subtype (settles docs/druid-api.md §10; Druid 33).
    throw new SpecError(
      json(400, {
        error: `Could not resolve subtype of [simple type, class ${parallelType ? CLASS.parallelIoConfig : CLASS.indexIoConfig}]: missing type id property 'type' (for POJO property 'ioConfig')`,
      }),
    );
  }
  const tuning = planTuning(parallelType, obj(spec.tuningConfig));
  const specClass = parallelType ? CLASS.parallelSpec : CLASS.indexSpec;
  const taskClass = parallelType ? CLASS.parallelTask : CLASS.indexTask;
  const inputSource = ioConfig.inputSource;
  if (!isObj(inputSource)) {
    // Druid 33: the supervisor task's own checkNotNull fires first, with the bare field name.
    if (traits.bareNullMessages) fail(taskClass, "inputSource");
    fail(specClass, "inputSource must not be null");
  }
  const sourceType = String(inputSource.type ?? "");
  const inputFormat = isObj(ioConfig.inputFormat) ? ioConfig.inputFormat : null;
  if (inputFormat === null && sourceType !== "druid") fail(specClass, "inputFormat must not be null");
  if (
    inputFormat?.type === "csv" &&
    !Array.isArray(inputFormat.columns) &&
    inputFormat.findColumnsFromHeader !== true
  ) {
    fail(CLASS.csv, "If [columns] is not set, [findColumnsFromHeader] must be set.");
  }
  const append = bool(ioConfig.appendToExisting, false);
  const drop = bool(ioConfig.dropExisting, false);
  if (append && drop) {
    fail(
      taskClass,
      "Cannot simultaneously replace and append to existing segments. Either dropExisting or appendToExisting should be set to false",
    );
  }
  const mode: IngestionMode = append ? "APPEND" : drop ? "REPLACE" : "REPLACE_LEGACY";
  if (tuning.forceGuaranteedRollup && append) {
    fail(taskClass, "Perfect rollup cannot be guaranteed when appending to existing dataSources");
  }
  if (mode === "REPLACE" && dataSchema.intervals === null) {
    fail(
      taskClass,
      parallelType
        ? "GranularitySpec's intervals cannot be empty when using replace."
        : "GranularitySpec's intervals cannot be empty for replace.",
    );
  }
  if (parallelType && tuning.forceGuaranteedRollup && tuning.partitions.type === "single_dim") {
    if (tuning.partitions.partitionDimensions.length === 0) {
      fail(
        taskClass,
        "forceGuaranteedRollup is incompatible with partitionsSpec: partitionDimension must be specified",
      );
    }
  }
  const k = tuning.maxNumConcurrentSubTasks;
  return {
    dataSchema,
    inputSource,
    inputFormat,
    mode,
    forceGuaranteedRollup: tuning.forceGuaranteedRollup,
    partitions: tuning.partitions,
    maxNumConcurrentSubTasks: k,
    parallel: parallelType && k > 1 && SPLITTABLE_SOURCES.has(sourceType),
    maxParseExceptions: tuning.maxParseExceptions,
    maxSavedParseExceptions: tuning.maxSavedParseExceptions,
  };
}

function planDataSchema(ds: Obj, traits: VersionTraits): IngestPlan["dataSchema"] {
  const C = CLASS.dataSchema;
  if (traits.parserRemoved && ds.parser !== undefined && ds.parser !== null) {
    fail(
      C,
      "parser was removed in Druid 37, define the timestampSpec and dimensionsSpec on the schema directly instead of nested inside the parser definition",
    );
  }
  const idProblem = validateId("dataSource", ds.dataSource);
  if (idProblem) fail(C, idProblem);
  if (!isObj(ds.timestampSpec))
    fail(C, traits.bareNullMessages ? "timestampSpec" : "timestampSpec must not be null");
  const ts = ds.timestampSpec;
  const timestamp: TimestampPlan = {
    column: typeof ts.column === "string" ? ts.column : "timestamp",
    format: typeof ts.format === "string" ? ts.format : "auto",
    missingValue: typeof ts.missingValue === "string" ? ts.missingValue : null,
  };
  const dimsSpec = obj(ds.dimensionsSpec);
  const rawDims = Array.isArray(dimsSpec.dimensions) ? dimsSpec.dimensions : [];
  const dims: DimensionSpec[] = rawDims.map((d, position) => {
    const name = typeof d === "string" ? d : isObj(d) && typeof d.name === "string" ? d.name : "";
    if (name === "") fail(C, `Encountered dimension with null or empty name at position[${position}]`);
    const type = (isObj(d) && typeof d.type === "string" ? d.type : "string") as DimensionSpec["type"];
    if (name === "__time" && type !== "long") {
      fail(C, `Encountered dimension[__time] with incorrect type[${type}]. Type must be 'long'.`);
    }
    return { name, type };
  });
  const rawMetrics = Array.isArray(ds.metricsSpec) ? ds.metricsSpec : [];
  const metrics: MetricSpec[] = rawMetrics.map((m, position) => {
    const o = obj(m);
    if (typeof o.name !== "string" || o.name === "") {
      fail(C, `Encountered metric with null or empty name at position ${position}`);
    }
    return {
      name: o.name,
      type: String(o.type ?? "count"),
      fieldName: typeof o.fieldName === "string" ? o.fieldName : null,
    };
  });
  checkDuplicateColumns(dims, metrics);
  const gs = obj(ds.granularitySpec);
  let segmentGranularity: Granularity;
  let queryGranularity: Granularity;
  let intervals: Interval[] | null = null;
  try {
    segmentGranularity = parseGranularity(gs.segmentGranularity ?? "day");
    queryGranularity = parseGranularity(gs.queryGranularity ?? "none");
  } catch (error) {
    fail(CLASS.granularitySpec, (error as Error).message);
  }
  if (Array.isArray(gs.intervals) && gs.intervals.length > 0) {
    intervals = gs.intervals.map((text) => {
      try {
        return parseInterval(String(text));
      } catch {
        return fail(CLASS.granularitySpec, `Invalid format: "${String(text)}"`);
      }
    });
  }
  const useDiscovery = dimsSpec.useSchemaDiscovery === true || dims.length === 0;
  return {
    timestamp,
    dimensions: useDiscovery ? null : dims,
    dimensionExclusions: Array.isArray(dimsSpec.dimensionExclusions)
      ? dimsSpec.dimensionExclusions.map(String)
      : [],
    metrics,
    segmentGranularity,
    queryGranularity,
    rollup: bool(gs.rollup, true),
    intervals,
  };
}

/** `DataSchema`'s duplicate check: "[x] seen in dimensions list, metricsSpec list" (docs/druid-api.md §5). */
function checkDuplicateColumns(dims: DimensionSpec[], metrics: MetricSpec[]): void {
  const seen = new Map<string, string[]>();
  const note = (name: string, where: string) => seen.set(name, [...(seen.get(name) ?? []), where]);
  for (const d of dims) if (d.name !== "__time") note(d.name, "dimensions list");
  for (const m of metrics) note(m.name, "metricsSpec list");
  const problems: string[] = [];
  for (const [name, places] of seen) {
    if (places.length < 2) continue;
    const counts = new Map<string, number>();
    for (const p of places) counts.set(p, (counts.get(p) ?? 0) + 1);
    const where = [...counts].map(([p, n]) => (n === 1 ? p : `${p} (${n} occurrences)`)).join(", ");
    problems.push(`[${name}] seen in ${where}`);
  }
  if (problems.length > 0)
    fail(CLASS.dataSchema, `Cannot specify a column more than once: ${problems.join("; ")}`);
}

interface TuningPlan {
  forceGuaranteedRollup: boolean;
  partitions: PartitionsPlan;
  maxNumConcurrentSubTasks: number;
  maxParseExceptions: number;
  maxSavedParseExceptions: number;
}

const DEFAULT_MAX_ROWS_PER_SEGMENT = 5_000_000;

function planTuning(parallelType: boolean, t: Obj): TuningPlan {
  const C = parallelType ? CLASS.parallelTuning : CLASS.indexTuning;
  if (parallelType) {
    if (t.maxNumSubTasks !== undefined && t.maxNumConcurrentSubTasks !== undefined) {
      fail(
        C,
        "Can't use both maxNumSubTasks and maxNumConcurrentSubTasks. Use maxNumConcurrentSubTasks instead",
      );
    }
    for (const field of ["maxNumConcurrentSubTasks", "maxNumSegmentsToMerge", "totalNumMergeTasks"]) {
      const v = num(t[field]);
      if (v !== null && v <= 0) fail(C, `${field} must be positive`);
    }
  }
  const ps = obj(t.partitionsSpec);
  const fgr = bool(t.forceGuaranteedRollup, false);
  let psType = typeof ps.type === "string" ? ps.type : fgr ? "hashed" : "dynamic";
  if (psType === "dimension") psType = "single_dim";
  if (!["dynamic", "hashed", "range", "single_dim"].includes(psType)) {
    fail(C, `Could not resolve type id '${psType}' as a subtype of partitionsSpec`);
  }
  const partitionDimensions =
    psType === "single_dim"
      ? typeof ps.partitionDimension === "string"
        ? [ps.partitionDimension]
        : []
      : Array.isArray(ps.partitionDimensions)
        ? ps.partitionDimensions.map(String)
        : [];
  if (parallelType && psType === "range" && partitionDimensions.length === 0) {
    fail(C, "partitionDimensions must be specified");
  }
  if (
    num(t.targetPartitionSize) !== null &&
    (num(t.maxRowsPerSegment) !== null || num(ps.maxRowsPerSegment) !== null)
  ) {
    fail(C, "Can't use targetPartitionSize and maxRowsPerSegment together");
  }
  if (!fgr && psType !== "dynamic") fail(C, "DynamicPartitionsSpec must be used for best-effort rollup");
  if (fgr && psType === "dynamic") fail(C, "DynamicPartitionsSpec cannot be used for perfect rollup");
  const maxRows =
    num(ps.maxRowsPerSegment) ??
    num(ps.targetRowsPerSegment) ??
    num(t.maxRowsPerSegment) ??
    num(t.targetPartitionSize) ??
    DEFAULT_MAX_ROWS_PER_SEGMENT;
  const k = num(t.maxNumConcurrentSubTasks) ?? num(t.maxNumSubTasks) ?? 1;
  return {
    forceGuaranteedRollup: fgr,
    partitions: {
      type: psType as PartitionsPlan["type"],
      maxRowsPerSegment: Math.max(1, maxRows),
      numShards: num(ps.numShards),
      partitionDimensions,
    },
    maxNumConcurrentSubTasks: parallelType ? Math.max(1, Math.floor(k)) : 1,
    // TuningConfig.DEFAULT_MAX_PARSE_EXCEPTIONS is Integer.MAX_VALUE: unlimited unless set.
    maxParseExceptions: num(t.maxParseExceptions) ?? Number.MAX_SAFE_INTEGER,
    maxSavedParseExceptions: num(t.maxSavedParseExceptions) ?? 0,
  };
}
