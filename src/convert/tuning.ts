import { ConvertError, isObject, type JsonObject, type Notes } from "./notes.js";

/**
 * Hadoop's `tuningConfig` → an `index_parallel` one. Pure. What both task types read is kept; the partitionsSpec
 * is mapped (Hadoop's `targetPartitionSize`/`maxPartitionSize` are the native `targetRowsPerSegment`/
 * `maxRowsPerSegment`); everything that only steers a MapReduce job is dropped with a note each.
 */

/** tuningConfig fields `index_parallel` reads the same way (docs/ingestion/native-batch.md, tuningConfig). */
const KEPT = new Set([
  "maxRowsInMemory",
  "maxBytesInMemory",
  "indexSpec",
  "indexSpecForIntermediatePersists",
  "maxPendingPersists",
  "maxParseExceptions",
  "maxSavedParseExceptions",
  "logParseExceptions",
  "awaitSegmentAvailabilityTimeoutMillis",
  "maxColumnsToMerge",
]);

/** Why each Hadoop-only field has no native counterpart. */
const HADOOP_ONLY: Record<string, string> = {
  jobProperties: "Hadoop job configuration: the native task runs in Druid's own workers",
  workingPath: "the MapReduce working directory",
  version: "segment versions are the task lock's",
  useExplicitVersion: "segment versions are the task lock's",
  leaveIntermediate: "MapReduce intermediate files",
  cleanupOnFailure: "MapReduce intermediate files",
  overwriteFiles: "MapReduce output files",
  combineText: "Hadoop input splits (the native splitHintSpec sizes splits)",
  useCombiner: "the MapReduce combiner",
  forceExtendableShardSpecs: "native shard specs are chosen by the partitionsSpec",
  rowFlushBoundary: "Hadoop's persist boundary (maxRowsInMemory bounds persists)",
  numBackgroundPersistThreads: "Hadoop's persist threads",
  buildV9Directly: "always on in native tasks",
  persistInHeap: "Hadoop's persist mode",
  ingestOffheap: "Hadoop's persist mode",
  bufferSize: "Hadoop's persist buffer",
  aggregationBufferRatio: "Hadoop's persist buffer",
  useYarnRMJobStatusFallback: "YARN job status",
  determineIntervals: "segops renders each partition's interval",
  partitionsSpec: "",
  type: "",
  ignoreInvalidRows:
    "deprecated; segops renders maxParseExceptions from --max-unparseable (0 by default), so a partition with bad rows is not marked done",
  reportParseExceptions: "deprecated; use maxParseExceptions (segops renders it from --max-unparseable)",
};

function partitions(spec: unknown, notes: Notes): { spec: JsonObject | null; perfectRollup: boolean } {
  const at = "spec.tuningConfig.partitionsSpec";
  if (spec === undefined || spec === null) {
    notes.mapped(
      at,
      "absent: Hadoop's default is hashed partitioning; the native default is dynamic (best-effort rollup). Set a hashed partitionsSpec for perfect rollup",
    );
    return { spec: null, perfectRollup: false };
  }
  if (!isObject(spec)) throw new ConvertError(at, "expected an object");
  const type = typeof spec.type === "string" ? spec.type : "hashed";
  const target = spec.targetRowsPerSegment ?? spec.targetPartitionSize;
  const max = spec.maxRowsPerSegment ?? spec.maxPartitionSize;
  if (spec.targetPartitionSize !== undefined)
    notes.mapped(`${at}.targetPartitionSize`, "→ targetRowsPerSegment");
  if (spec.assumeGrouped !== undefined)
    notes.dropped(`${at}.assumeGrouped`, "Hadoop-only (skips the group-by job)");
  if (type === "hashed" || type === "hadoop_hashed_partitions") {
    if (spec.maxPartitionSize !== undefined)
      notes.dropped(
        `${at}.maxPartitionSize`,
        "hashed native partitions take a target (targetRowsPerSegment) or numShards",
      );
    const out: JsonObject = { type: "hashed" };
    if (spec.numShards !== undefined && spec.numShards !== -1) out.numShards = spec.numShards;
    else if (target !== undefined && target !== -1) out.targetRowsPerSegment = target;
    if (spec.partitionDimensions !== undefined) out.partitionDimensions = spec.partitionDimensions;
    if (spec.partitionFunction !== undefined) out.partitionFunction = spec.partitionFunction;
    return { spec: out, perfectRollup: true };
  }
  const singleDim = type === "single_dim" || type === "dimension" || type === "hadoop_single_dim_partitions";
  if (singleDim && typeof spec.partitionDimension !== "string") {
    // Hadoop picks the dimension itself; native single_dim partitioning needs it named.
    const out: JsonObject = { type: "hashed" };
    if (target !== undefined && target !== -1) out.targetRowsPerSegment = target;
    notes.check(
      `${at}.partitionDimension`,
      "absent: Hadoop chose the dimension itself, native single_dim needs it named; hashed partitioning instead (name partitionDimension in a single_dim partitionsSpec to keep range partitioning)",
    );
    if (spec.maxPartitionSize !== undefined)
      notes.dropped(`${at}.maxPartitionSize`, "hashed partitions take a target");
    return { spec: out, perfectRollup: true };
  }
  if (singleDim || type === "range") {
    const out: JsonObject = { type: type === "range" ? "range" : "single_dim" };
    if (type === "range") out.partitionDimensions = spec.partitionDimensions;
    else out.partitionDimension = spec.partitionDimension;
    if (target !== undefined) out.targetRowsPerSegment = target;
    else if (max !== undefined) out.maxRowsPerSegment = max;
    if (target !== undefined && max !== undefined)
      notes.dropped(
        `${at}.maxPartitionSize`,
        "native range partitions take a target or a maximum, not both: the target is kept",
      );
    if (spec.assumeGrouped === undefined && type === "dimension")
      notes.mapped(`${at}.type`, "dimension → single_dim");
    return { spec: out, perfectRollup: true };
  }
  if (type === "dynamic") return { spec, perfectRollup: false };
  throw new ConvertError(
    `${at}.type`,
    `expected hashed (hadoop_hashed_partitions), single_dim (dimension, hadoop_single_dim_partitions) or range, found "${type}"`,
  );
}

export function convertTuning(tuning: unknown, notes: Notes): JsonObject {
  const at = "spec.tuningConfig";
  const t = isObject(tuning) ? tuning : {};
  const out: JsonObject = { type: "index_parallel" };
  const { spec, perfectRollup } = partitions(t.partitionsSpec, notes);
  if (spec) out.partitionsSpec = spec;
  // Native hashed and range partitioning need it; Hadoop's always ran with perfect rollup.
  if (perfectRollup) {
    out.forceGuaranteedRollup = true;
    notes.mapped(
      `${at}.partitionsSpec`,
      `${String(spec?.type)} partitions need forceGuaranteedRollup: true in index_parallel (set)`,
    );
  }
  for (const [key, value] of Object.entries(t)) {
    if (KEPT.has(key)) out[key] = value;
    else if (key === "partitionsSpec" || key === "type") continue;
    else notes.dropped(`${at}.${key}`, HADOOP_ONLY[key] || "not read by index_parallel");
  }
  return out;
}
