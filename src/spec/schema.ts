import { z } from "zod";
import { parseGranularity } from "../core/granularity.js";
import { parseInterval } from "../core/interval.js";

/**
 * The structural shape of the Druid tasks segops submits (api-contract §5), as zod schemas. Objects whose
 * fields we know are strict, so unknown keys surface (as warnings: Druid ignores them, api-contract §0);
 * extension-defined objects (input sources, formats, aggregators, filters) are loose. Cross-field rules
 * live in `rules.ts`; fields whose absence has an exact Druid message are optional here and checked there.
 */

const granularity = z.unknown().superRefine((value, ctx) => {
  try {
    parseGranularity(value);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: (e as Error).message, input: value });
  }
});

const intervalText = z.string().superRefine((value, ctx) => {
  try {
    parseInterval(value);
  } catch (e) {
    ctx.addIssue({ code: "custom", message: (e as Error).message, input: value });
  }
});

const posInt = z.number().int().positive();
const nonNegInt = z.number().int().nonnegative();
/** Druid `long` sizes accept -1 / 0 as "default" in several places; only the type is checked. */
const long = z.number().int();

/** Dimension types (`DimensionSchema.java`). */
export const DIMENSION_TYPES = ["string", "long", "float", "double", "spatial", "json", "auto"] as const;

const dimensionObject = z.strictObject({
  type: z.enum(DIMENSION_TYPES).optional(),
  name: z.string(),
  multiValueHandling: z
    .enum(["SORTED_ARRAY", "SORTED_SET", "ARRAY", "sorted_array", "sorted_set", "array"])
    .optional(),
  createBitmapIndex: z.boolean().optional(),
  dims: z.array(z.string()).optional(),
  formatSpec: z.unknown().optional(),
  castToType: z.string().optional(),
});

const dimensionsSpec = z.strictObject({
  dimensions: z.array(z.union([z.string(), dimensionObject])).optional(),
  dimensionExclusions: z.array(z.string()).optional(),
  spatialDimensions: z.array(z.unknown()).optional(),
  useSchemaDiscovery: z.boolean().optional(),
  includeAllDimensions: z.boolean().optional(),
  forceSegmentSortByTime: z.boolean().optional(),
});

const timestampSpec = z.strictObject({
  column: z.string().optional(),
  format: z.string().optional(),
  missingValue: z.unknown().optional(),
});

const metric = z.looseObject({ type: z.string(), name: z.string().optional() });

const granularitySpec = z.strictObject({
  type: z.enum(["uniform", "arbitrary"]).optional(),
  segmentGranularity: granularity.optional(),
  queryGranularity: granularity.optional(),
  rollup: z.boolean().optional(),
  intervals: z.array(intervalText).nullable().optional(),
});

const transformSpec = z.strictObject({
  filter: z.unknown().optional(),
  transforms: z.array(z.looseObject({ type: z.string(), name: z.string() })).optional(),
});

const dataSchema = z.strictObject({
  dataSource: z.string(),
  timestampSpec: timestampSpec.optional(),
  dimensionsSpec: dimensionsSpec.optional(),
  metricsSpec: z.array(metric).optional(),
  granularitySpec: granularitySpec.optional(),
  transformSpec: transformSpec.optional(),
  projections: z.array(z.unknown()).optional(),
  parser: z.unknown().optional(),
});

const typed = z.looseObject({ type: z.string() });

const ioConfig = (type: string) =>
  z.strictObject({
    type: z.literal(type).optional(),
    inputSource: typed.optional(),
    inputFormat: typed.optional(),
    appendToExisting: z.boolean().optional(),
    dropExisting: z.boolean().optional(),
  });

const rowsTargets = {
  targetRowsPerSegment: posInt.nullable().optional(),
  maxRowsPerSegment: posInt.nullable().optional(),
};

/** Partitions spec types (`PartitionsSpec.java`); `dimension` is the old alias of `single_dim`. */
export const partitionsSpec = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("dynamic"),
    maxRowsPerSegment: posInt.nullable().optional(),
    maxTotalRows: long.nullable().optional(),
  }),
  z.strictObject({
    type: z.literal("hashed"),
    ...rowsTargets,
    numShards: posInt.nullable().optional(),
    partitionDimensions: z.array(z.string()).optional(),
    partitionFunction: z.string().optional(),
  }),
  z.strictObject({
    type: z.literal(["single_dim", "dimension"]),
    ...rowsTargets,
    partitionDimension: z.string().optional(),
    assumeGrouped: z.boolean().optional(),
  }),
  z.strictObject({
    type: z.literal("range"),
    ...rowsTargets,
    partitionDimensions: z.array(z.string()).optional(),
    assumeGrouped: z.boolean().optional(),
  }),
]);

const tuningConfig = (type: string) =>
  z.strictObject({
    type: z.literal(type).optional(),
    maxRowsInMemory: posInt.optional(),
    maxBytesInMemory: long.optional(),
    skipBytesInMemoryOverheadCheck: z.boolean().optional(),
    maxColumnsToMerge: long.optional(),
    maxTotalRows: long.nullable().optional(),
    numShards: long.nullable().optional(),
    targetPartitionSize: long.nullable().optional(),
    maxRowsPerSegment: long.nullable().optional(),
    partitionDimensions: z.array(z.string()).optional(),
    splitHintSpec: typed.optional(),
    partitionsSpec: partitionsSpec.optional(),
    indexSpec: z.record(z.string(), z.unknown()).optional(),
    indexSpecForIntermediatePersists: z.record(z.string(), z.unknown()).optional(),
    maxPendingPersists: nonNegInt.optional(),
    forceGuaranteedRollup: z.boolean().optional(),
    reportParseExceptions: z.boolean().optional(),
    pushTimeout: nonNegInt.optional(),
    segmentWriteOutMediumFactory: typed.nullable().optional(),
    maxNumConcurrentSubTasks: z.number().int().optional(),
    maxNumSubTasks: z.number().int().optional(),
    maxRetry: nonNegInt.optional(),
    taskStatusCheckPeriodMs: posInt.optional(),
    chatHandlerTimeout: z.string().optional(),
    chatHandlerNumRetries: nonNegInt.optional(),
    maxNumSegmentsToMerge: z.number().int().optional(),
    totalNumMergeTasks: z.number().int().optional(),
    logParseExceptions: z.boolean().optional(),
    maxParseExceptions: long.optional(),
    maxSavedParseExceptions: long.optional(),
    awaitSegmentAvailabilityTimeoutMillis: long.optional(),
    maxAllowedLockCount: long.optional(),
    numPersistThreads: posInt.optional(),
  });

const common = {
  id: z.string().optional(),
  groupId: z.string().optional(),
  resource: z.looseObject({}).optional(),
  context: z.record(z.string(), z.unknown()).optional(),
};

const ingestionTask = (type: "index_parallel" | "index") =>
  z.strictObject({
    type: z.literal(type),
    ...common,
    spec: z.strictObject({
      dataSchema,
      ioConfig: ioConfig(type),
      tuningConfig: tuningConfig(type).optional(),
    }),
  });

export const indexParallelTask = ingestionTask("index_parallel");
export const indexTask = ingestionTask("index");

export const compactTask = z.strictObject({
  type: z.literal("compact"),
  ...common,
  dataSource: z.string(),
  ioConfig: z
    .strictObject({
      type: z.literal("compact").optional(),
      inputSpec: z.strictObject({ type: z.literal("interval"), interval: intervalText }),
      dropExisting: z.boolean().optional(),
      allowNonAlignedInterval: z.boolean().optional(),
    })
    .optional(),
  interval: intervalText.optional(),
  dimensionsSpec: dimensionsSpec.optional(),
  transformSpec: transformSpec.optional(),
  metricsSpec: z.array(metric).optional(),
  granularitySpec: z
    .strictObject({
      segmentGranularity: granularity.optional(),
      queryGranularity: granularity.optional(),
      rollup: z.boolean().optional(),
    })
    .optional(),
  projections: z.array(z.unknown()).optional(),
  tuningConfig: z.looseObject({ type: z.string().optional() }).optional(),
});

/** The task types segops validates, by `type`. */
export const TASK_SCHEMAS = {
  index_parallel: indexParallelTask,
  index: indexTask,
  compact: compactTask,
} as const;
