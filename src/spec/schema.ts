import { z } from "zod";
import { parseGranularity } from "../core/granularity.js";
import { parseInterval } from "../core/interval.js";

/**
 * The structural shape of the Druid tasks segops submits, as zod schemas, field for field from the
 * `@JsonCreator` constructors Druid deserialises them with (class names in the comments). Objects whose
 * fields we know are strict, so unknown keys surface (as warnings: Druid ignores them, docs/druid-api.md §0);
 * extension-defined objects (input sources, formats, aggregators, filters) are loose. The schemas are applied
 * to the task *as Druid reads it* (`druid-view.ts`: nulls dropped, scalars coerced, defaults resolved), so a
 * field is only refused for what Jackson refuses too. Value rules with Druid's messages live in `rules.ts`.
 */

const granularity = z.unknown().superRefine((value, ctx) => {
  try {
    // Granularity.fromString: a plain string is a GranularityType name only ("P1D" is refused).
    parseGranularity(value, { druidJson: true });
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

/** A Java `Integer`/`int` (Jackson refuses values outside 32 bits). */
const int = z.number().int().min(-2147483648).max(2147483647);
/** A Java `Long`/`long`. */
const long = z.number().int();
const bool = z.boolean();
const str = z.string();
const strings = z.array(z.string());
/** A Joda `Duration`: milliseconds, or an ISO `PT…S` string (checked in rules). */
const duration = z.union([long, z.string()]);
const anyObject = z.record(z.string(), z.unknown());
const typed = z.looseObject({ type: z.string() });

/** Dimension types (`DimensionSchema`'s subtypes). */
export const DIMENSION_TYPES = ["string", "long", "float", "double", "spatial", "json", "auto"] as const;

const MULTI_VALUE_HANDLING = ["SORTED_ARRAY", "SORTED_SET", "ARRAY"];
/** `DimensionSchema.MultiValueHandling.fromString` upper-cases the name. */
const multiValueHandling = z.string().superRefine((value, ctx) => {
  if (!MULTI_VALUE_HANDLING.includes(value.toUpperCase())) {
    ctx.addIssue({
      code: "custom",
      message: `expected one of ${MULTI_VALUE_HANDLING.map((v) => JSON.stringify(v)).join(", ")} (any case), found string ${JSON.stringify(value)}`,
      input: value,
    });
  }
});

/** One strict object per `DimensionSchema` subtype (the view gives a type-less dimension Druid's default, string). */
const dimensionObject = z.discriminatedUnion("type", [
  // StringDimensionSchema
  z.strictObject({
    type: z.literal("string"),
    name: str,
    multiValueHandling: multiValueHandling.optional(),
    createBitmapIndex: bool.optional(),
  }),
  // LongDimensionSchema, FloatDimensionSchema, DoubleDimensionSchema
  z.strictObject({ type: z.literal("long"), name: str }),
  z.strictObject({ type: z.literal("float"), name: str }),
  z.strictObject({ type: z.literal("double"), name: str }),
  // NewSpatialDimensionSchema
  z.strictObject({ type: z.literal("spatial"), name: str, dims: strings.optional() }),
  // NestedDataColumnSchema
  z.strictObject({
    type: z.literal("json"),
    name: str,
    formatVersion: int.optional(),
    columnFormatSpec: anyObject.optional(),
  }),
  // AutoTypeColumnSchema
  z.strictObject({
    type: z.literal("auto"),
    name: str,
    castToType: str.optional(),
    columnFormatSpec: anyObject.optional(),
  }),
]);

// DimensionsSpec
const dimensionsSpec = z.strictObject({
  dimensions: z.array(z.union([z.string(), dimensionObject])).optional(),
  dimensionExclusions: strings.optional(),
  spatialDimensions: z.array(z.looseObject({ dimName: str, dims: strings.optional() })).optional(),
  includeAllDimensions: bool.optional(),
  useSchemaDiscovery: bool.optional(),
  forceSegmentSortByTime: bool.optional(),
});

// TimestampSpec (format and missingValue are checked in rules, with Druid's messages)
const timestampSpec = z.strictObject({
  column: str.optional(),
  format: str.optional(),
  missingValue: z.union([long, z.string()]).optional(),
});

const metric = z.looseObject({ type: z.string(), name: z.string().optional() });

// UniformGranularitySpec / ArbitraryGranularitySpec (the view gives a type-less spec Druid's default, uniform)
const granularitySpec = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("uniform"),
    segmentGranularity: granularity.optional(),
    queryGranularity: granularity.optional(),
    rollup: bool.optional(),
    intervals: z.array(intervalText).optional(),
  }),
  z.strictObject({
    type: z.literal("arbitrary"),
    queryGranularity: granularity.optional(),
    rollup: bool.optional(),
    intervals: z.array(intervalText).optional(),
  }),
]);

// TransformSpec; Transform is polymorphic without a default type (ExpressionTransform: "expression")
const transformSpec = z.strictObject({
  filter: z.unknown().optional(),
  transforms: z
    .array(z.looseObject({ type: z.string(), name: z.string(), expression: z.string() }))
    .optional(),
});

// DataSchema
const dataSchema = z.strictObject({
  dataSource: z.string(),
  timestampSpec: timestampSpec.optional(),
  dimensionsSpec: dimensionsSpec.optional(),
  metricsSpec: z.array(metric).optional(),
  granularitySpec: granularitySpec.optional(),
  segmentGranularitySpec: z.unknown().optional(),
  transformSpec: transformSpec.optional(),
  projections: z.array(z.unknown()).optional(),
  baseTable: z.unknown().optional(),
  parser: z.unknown().optional(),
});

// IndexIOConfig / ParallelIndexIOConfig
const ioConfig = (type: string) =>
  z.strictObject({
    type: z.literal(type).optional(),
    inputSource: typed.optional(),
    inputFormat: typed.optional(),
    appendToExisting: bool.optional(),
    dropExisting: bool.optional(),
  });

/**
 * Partitions spec types (`PartitionsSpec`'s subtypes; `dimension` is the old name of `single_dim`). Sizes are
 * plain Integers here: -1 means "not set" (`PartitionsSpec.HISTORICAL_NULL`) and the size rules are in rules.ts.
 * The view gives a type-less partitionsSpec Druid's default implementation, hashed.
 */
export const partitionsSpec = z.discriminatedUnion("type", [
  // DynamicPartitionsSpec
  z.strictObject({
    type: z.literal("dynamic"),
    maxRowsPerSegment: int.optional(),
    maxTotalRows: long.optional(),
  }),
  // HashedPartitionsSpec
  z.strictObject({
    type: z.literal("hashed"),
    targetRowsPerSegment: int.optional(),
    numShards: int.optional(),
    partitionDimensions: strings.optional(),
    partitionFunction: z.string().optional(),
    targetPartitionSize: int.optional(),
    maxRowsPerSegment: int.optional(),
  }),
  // SingleDimensionPartitionsSpec
  z.strictObject({
    type: z.literal(["single_dim", "dimension"]),
    targetRowsPerSegment: int.optional(),
    maxRowsPerSegment: int.optional(),
    partitionDimension: z.string().optional(),
    assumeGrouped: bool.optional(),
    targetPartitionSize: int.optional(),
    maxPartitionSize: int.optional(),
  }),
  // DimensionRangePartitionsSpec
  z.strictObject({
    type: z.literal("range"),
    targetRowsPerSegment: int.optional(),
    maxRowsPerSegment: int.optional(),
    partitionDimensions: strings.optional(),
    assumeGrouped: bool.optional(),
  }),
]);

/** `IndexTask.IndexTuningConfig`'s creator; `ParallelIndexTuningConfig` passes most of them on. */
const baseTuning = {
  targetPartitionSize: int.optional(),
  maxRowsPerSegment: int.optional(),
  appendableIndexSpec: typed.optional(),
  maxRowsInMemory: int.optional(),
  maxBytesInMemory: long.optional(),
  skipBytesInMemoryOverheadCheck: bool.optional(),
  maxTotalRows: long.optional(),
  numShards: int.optional(),
  partitionsSpec: partitionsSpec.optional(),
  indexSpec: anyObject.optional(),
  indexSpecForIntermediatePersists: anyObject.optional(),
  maxPendingPersists: int.optional(),
  forceGuaranteedRollup: bool.optional(),
  reportParseExceptions: bool.optional(),
  pushTimeout: long.optional(),
  segmentWriteOutMediumFactory: typed.optional(),
  logParseExceptions: bool.optional(),
  maxParseExceptions: int.optional(),
  maxSavedParseExceptions: int.optional(),
  maxColumnsToMerge: int.optional(),
  awaitSegmentAvailabilityTimeoutMillis: long.optional(),
  numPersistThreads: int.optional(),
};

/** Read by `IndexTuningConfig` only (the parallel task passes null for them). */
const indexOnlyTuning = {
  rowFlushBoundary: int.optional(),
  partitionDimensions: strings.optional(),
  publishTimeout: long.optional(),
};

/** `ParallelIndexTuningConfig`'s own fields. */
const parallelTuning = {
  splitHintSpec: typed.optional(),
  maxNumSubTasks: int.optional(),
  maxNumConcurrentSubTasks: int.optional(),
  maxRetry: int.optional(),
  taskStatusCheckPeriodMs: long.optional(),
  chatHandlerTimeout: duration.optional(),
  chatHandlerNumRetries: int.optional(),
  maxNumSegmentsToMerge: int.optional(),
  totalNumMergeTasks: int.optional(),
  maxAllowedLockCount: int.optional(),
};

const indexTuning = z.strictObject({
  type: z.literal("index").optional(),
  ...baseTuning,
  ...indexOnlyTuning,
});
const parallelIndexTuning = z.strictObject({
  type: z.literal("index_parallel").optional(),
  ...baseTuning,
  ...parallelTuning,
});
/** A compact task's tuningConfig: `CompactionTuningConfig` ("compaction") or a ParallelIndexTuningConfig. */
const compactionTuning = z.strictObject({
  type: z.literal(["index_parallel", "compaction"]).optional(),
  ...baseTuning,
  ...parallelTuning,
});

const taskCommon = {
  id: z.string().optional(),
  resource: z.looseObject({}).optional(),
  context: anyObject.optional(),
};

// IndexTask (no groupId) and ParallelIndexSupervisorTask
export const indexTask = z.strictObject({
  type: z.literal("index"),
  ...taskCommon,
  spec: z.strictObject({
    dataSchema,
    ioConfig: ioConfig("index"),
    tuningConfig: indexTuning.optional(),
  }),
});

export const indexParallelTask = z.strictObject({
  type: z.literal("index_parallel"),
  ...taskCommon,
  groupId: z.string().optional(),
  spec: z.strictObject({
    dataSchema,
    ioConfig: ioConfig("index_parallel"),
    tuningConfig: parallelIndexTuning.optional(),
  }),
});

// CompactionTask; its inputSpec is CompactionIntervalSpec ("interval") or SpecificSegmentsSpec ("segments")
export const compactTask = z.strictObject({
  type: z.literal("compact"),
  ...taskCommon,
  dataSource: z.string(),
  ioConfig: z
    .strictObject({
      type: z.literal("compact").optional(),
      inputSpec: z.discriminatedUnion("type", [
        z.strictObject({
          type: z.literal("interval"),
          interval: intervalText,
          sha256OfSortedSegmentIds: z.string().optional(),
        }),
        z.strictObject({ type: z.literal("segments"), segments: strings }),
      ]),
      dropExisting: bool.optional(),
      allowNonAlignedInterval: bool.optional(),
    })
    .optional(),
  interval: intervalText.optional(),
  segments: z.array(z.unknown()).optional(),
  dimensions: dimensionsSpec.optional(),
  dimensionsSpec: dimensionsSpec.optional(),
  transformSpec: z.strictObject({ filter: z.unknown().optional() }).optional(),
  metricsSpec: z.array(metric).optional(),
  segmentGranularity: granularity.optional(),
  granularitySpec: z
    .strictObject({
      segmentGranularity: granularity.optional(),
      queryGranularity: granularity.optional(),
      rollup: bool.optional(),
    })
    .optional(),
  projections: z.array(z.unknown()).optional(),
  tuningConfig: compactionTuning.optional(),
  compactionRunner: typed.optional(),
});

/** The task types segops validates, by `type`. */
export const TASK_SCHEMAS = {
  index_parallel: indexParallelTask,
  index: indexTask,
  compact: compactTask,
} as const;
