import { DateTime } from "luxon";
import { type Granularity, granularityLabel, isAligned, parseGranularity } from "../core/granularity.js";
import {
  formatInstant,
  formatInterval,
  type Interval,
  parseInterval,
  sameInterval,
} from "../core/interval.js";
import { alignedBounds } from "../core/partition.js";
import { druidIdProblem } from "../core/task-id.js";
import type { SpecIssue } from "./issues.js";
import { DEFAULT_DRUID_VERSION, type RuleContext, type RuleScope } from "./rule-context.js";
import { checkFilter } from "./rules-filters.js";
import { checkInputFormat, checkInputSource } from "./rules-io.js";

/**
 * Cross-field rules: Druid's own submit-time checks (each with the Druid class and rule it models; messages
 * quoted where Druid has one) and segops' rules for safe, idempotent partitions. Rules read the task as Druid
 * reads it (`druid-view.ts`: nulls absent, scalars coerced), with defensive accessors, so each runs even when
 * the structural schema found problems elsewhere.
 */

type Obj = Record<string, unknown>;

export { DEFAULT_DRUID_VERSION, type RuleContext, type RuleScope } from "./rule-context.js";

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
}

function arr(v: unknown): unknown[] | undefined {
  return Array.isArray(v) ? v : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" ? v : undefined;
}

function tryGranularity(v: unknown): Granularity | undefined {
  try {
    return parseGranularity(v);
  } catch {
    return undefined;
  }
}

function tryInterval(v: unknown): Interval | undefined {
  if (typeof v !== "string") return undefined;
  try {
    return parseInterval(v);
  } catch {
    return undefined;
  }
}

/** Whether two granularities are equal (Druid's `Granularity.equals`): same kind, period, zone and origin. */
function sameBuckets(a: Granularity, b: Granularity | undefined): boolean {
  const key = (g: Granularity) => {
    const p = g as { kind: string; period?: unknown; timeZone?: unknown; origin?: unknown; type?: unknown };
    return JSON.stringify([p.kind, p.type, p.period, p.timeZone, p.origin]);
  };
  return b !== undefined && key(a) === key(b);
}

function granName(g: Granularity): string {
  return granularityLabel(g);
}

/** `AggregatorsModule`: the aggregators of Druid core. */
const CORE_AGGREGATORS = [
  "count",
  "longSum",
  "doubleSum",
  "floatSum",
  "doubleMax",
  "floatMin",
  "floatMax",
  "doubleMin",
  "longMax",
  "longMin",
  "javascript",
  "histogram",
  "hyperUnique",
  "cardinality",
  "filtered",
  "longFirst",
  "doubleFirst",
  "floatFirst",
  "stringFirst",
  "stringFirstFold",
  "longLast",
  "doubleLast",
  "doubleMean",
  "floatLast",
  "stringLast",
  "stringLastFold",
  "longAny",
  "floatAny",
  "doubleAny",
  "stringAny",
  "grouping",
  "expression",
  "singleValue",
];

/** The druid-datasketches aggregators; each reads one input column. */
const SKETCH_AGGREGATORS = [
  "thetaSketch",
  "sketchBuild",
  "sketchMerge",
  "HLLSketch",
  "HLLSketchBuild",
  "HLLSketchMerge",
  "quantilesDoublesSketch",
  "quantilesDoublesSketchMerge",
  "KllDoublesSketch",
  "KllDoublesSketchMerge",
  "KllFloatsSketch",
  "KllFloatsSketchMerge",
  "arrayOfDoublesSketch",
];

/**
 * Aggregators registered by Druid's bundled (`extensions-core`) extensions: datasketches (`SketchModule`,
 * `OldApiSketchModule`, `HllSketchModule`, `DoublesSketchModule`, `KllSketchModule`,
 * `ArrayOfDoublesSketchModule`), histogram, stats and bloom-filter.
 */
const BUNDLED_AGGREGATORS = [
  ...SKETCH_AGGREGATORS,
  "approxHistogram",
  "approxHistogramFold",
  "fixedBucketsHistogram",
  "variance",
  "varianceFold",
  "bloom",
];

/** Aggregators of the community extensions in Druid's repository (`extensions-contrib`), by extension. */
const CONTRIB_AGGREGATORS: Readonly<Record<string, string>> = {
  compressedBigDecimalSum: "druid-compressed-bigdecimal",
  compressedBigDecimalMax: "druid-compressed-bigdecimal",
  compressedBigDecimalMin: "druid-compressed-bigdecimal",
  ddSketch: "druid-ddsketch",
  distinctCount: "druid-distinctcount",
  Bitmap64ExactCountBuild: "druid-exact-count-bitmap",
  Bitmap64ExactCountMerge: "druid-exact-count-bitmap",
  momentSketch: "druid-momentsketch",
  momentSketchMerge: "druid-momentsketch",
  spectatorHistogram: "druid-spectator-histogram",
  spectatorHistogramTimer: "druid-spectator-histogram",
  spectatorHistogramDistribution: "druid-spectator-histogram",
  tDigestSketch: "druid-tdigestsketch",
  timeMin: "druid-time-min-max",
  timeMax: "druid-time-min-max",
};

const KNOWN_AGGREGATORS = new Set([...CORE_AGGREGATORS, ...BUNDLED_AGGREGATORS]);

/** Aggregators that read one input column: `fieldName` (or, for sums/min/max, `expression`) is required. */
const SIMPLE_AGGREGATORS = /^(long|double|float)(Sum|Min|Max)$/;
const FIELD_AGGREGATORS = /^(long|double|float|string)(First|Last|Any)$/;

const PARTITION_TYPES = new Set(["dynamic", "hashed", "single_dim", "dimension", "range"]);

/**
 * Input sources whose `needsFormat()` is false: `DruidInputSource` ("druid"), `SqlInputSource` ("sql"),
 * `DeltaInputSource` ("delta"), `GeneratorInputSource` ("generator"). `CombiningInputSource` needs one when
 * any delegate does; every other source (local, http, inline, s3, iceberg, …) needs one.
 */
const FORMATLESS_SOURCES = new Set(["druid", "sql", "delta", "generator"]);

function needsFormat(source: Obj | undefined): boolean {
  if (!source) return true;
  if (source.type === "combining") {
    const delegates = arr(source.delegates) ?? [];
    return delegates.some((d) => needsFormat(obj(d)));
  }
  return !(typeof source.type === "string" && FORMATLESS_SOURCES.has(source.type));
}

/** Joda-Time `DateTimeFormat` pattern letters; any other letter outside quotes is "Illegal pattern component". */
const JODA_LETTERS = new Set("GCYyxweEDMdaKhHkmsSzZ".split(""));
/** `TimestampParser`'s named formats (compared ignoring case). */
const TIMESTAMP_FORMATS = new Set(["auto", "iso", "posix", "millis", "micro", "nano", "ruby"]);

/** Why Joda's `DateTimeFormat.forPattern` refuses a pattern, or undefined when it accepts it. */
export function jodaPatternProblem(pattern: string): string | undefined {
  if (pattern === "") return "Invalid pattern specification";
  let quoted = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "'") {
      if (pattern[i + 1] === "'") i++;
      else quoted = !quoted;
      continue;
    }
    if (!quoted && /[A-Za-z]/.test(c) && !JODA_LETTERS.has(c)) return `Illegal pattern component: ${c}`;
  }
  return undefined;
}

/** Jackson's Joda `DateTimeDeserializer`: epoch milliseconds, or an ISO-8601 date-time string. */
function dateTimeProblem(value: unknown): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : `Invalid format: ${value}`;
  if (typeof value !== "string")
    return `expected an ISO-8601 date-time or epoch milliseconds, found ${typeof value}`;
  if (value.trim() === "") return undefined;
  return DateTime.fromISO(value.trim(), { zone: "utc" }).isValid ? undefined : `Invalid format: "${value}"`;
}

/** Jackson's Joda `DurationDeserializer`: milliseconds (a number or numeric string) or `PT<seconds>S`. */
function durationProblem(value: unknown): string | undefined {
  if (typeof value === "number") return undefined;
  if (typeof value !== "string") return undefined; // the schema reports the type
  const t = value.trim();
  if (/^[+-]?\d+$/.test(t) || /^PT-?\d+(\.\d{1,3})?S$/i.test(t)) return undefined;
  return `Invalid format: "${value}": a Joda Duration is milliseconds or "PT<seconds>S" (e.g. "PT10S")`;
}

/** The `-1`-means-null convention of `PartitionsSpec.isEffectivelyNull`. */
function effective(v: unknown): number | undefined {
  return typeof v === "number" && v !== -1 ? v : undefined;
}

export function checkIds(ctx: RuleContext, dataSourcePath: string, dataSource: unknown): void {
  const { task } = ctx;
  if (typeof task.id === "string") {
    const p = druidIdProblem("Task ID", task.id);
    if (p) ctx.error("id", p);
  }
  if (dataSource === "") {
    // IdUtils.validateId: Druid says "must not be null" for an empty name too.
    ctx.error(
      dataSourcePath,
      'must not be empty: name the datasource (Druid reports an empty one as "must not be null")',
    );
  } else if (typeof dataSource === "string") {
    const p = druidIdProblem("dataSource", dataSource);
    if (p) ctx.error(dataSourcePath, p);
  }
}

/** `TimestampSpec`'s creator: the format must make a `TimestampParser`; `missingValue` is a Joda DateTime. */
function checkTimestampSpec(ctx: RuleContext, path: string, spec: unknown): void {
  const ts = obj(spec);
  if (!ts) return;
  if (typeof ts.format === "string" && !TIMESTAMP_FORMATS.has(ts.format.toLowerCase())) {
    const problem = jodaPatternProblem(ts.format);
    if (problem) {
      ctx.error(`${path}.format`, `Unable to parse timestamps with format [${ts.format}]: ${problem}`);
    }
  }
  if (ts.missingValue !== undefined) {
    const problem = dateTimeProblem(ts.missingValue);
    if (problem) ctx.error(`${path}.missingValue`, `cannot read missingValue as a date-time: ${problem}`);
  }
}

/**
 * Dimension and metric rules: `DataSchema.computeAndValidateOutputFieldNames` (names not empty, every output
 * column once, `__time` reserved for the primary timestamp except as one long dimension, first unless
 * `forceSegmentSortByTime` is false), `DimensionsSpec.verify` (dimensions and exclusions do not overlap) and
 * the aggregators' constructors.
 */
export function checkColumns(
  ctx: RuleContext,
  base: string,
  dimensionsSpec: unknown,
  metricsSpec: unknown,
  dimensionsKey = "dimensionsSpec",
): void {
  const at = (suffix: string) => (base === "" ? suffix : `${base}.${suffix}`);
  const TIME = "the primary timestamp (__time cannot appear elsewhere except as long-typed dimension)";
  const seen = new Map<string, string>([["__time", TIME]]);
  const ds = obj(dimensionsSpec);
  const dims = arr(ds?.dimensions) ?? [];
  const sortByTime = ds?.forceSegmentSortByTime !== false;
  let sawTime = false;
  const names = new Set<string>();
  dims.forEach((d, i) => {
    const path = at(`${dimensionsKey}.dimensions[${i}]`);
    const name = typeof d === "string" ? d : obj(d)?.name;
    if (typeof name !== "string") return; // structural problem, reported by the schema
    const namePath = typeof d === "string" ? path : `${path}.name`;
    if (name === "") {
      ctx.error(namePath, `Encountered dimension with null or empty name at position[${i}]`);
      return;
    }
    names.add(name);
    if (name === "__time") {
      const type = typeof d === "string" ? "string" : (obj(d)?.type ?? "string");
      if (i > 0 && sortByTime) {
        ctx.error(
          path,
          `Encountered dimension[__time] at position[${i}]: __time can only come first unless dimensionsSpec.forceSegmentSortByTime is false`,
        );
        return;
      }
      if (type !== "long") {
        ctx.error(
          typeof d === "string" ? path : `${path}.type`,
          `Encountered dimension[__time] with incorrect type[${String(type)}]. Type must be 'long'.`,
        );
        return;
      }
      if (!sawTime) {
        sawTime = true;
        return;
      }
    }
    const first = seen.get(name);
    if (first !== undefined) {
      ctx.error(namePath, `Cannot specify a column more than once: [${name}] already at ${first}`);
    } else seen.set(name, path);
  });
  (arr(ds?.dimensionExclusions) ?? []).forEach((x, j) => {
    if (typeof x === "string" && names.has(x)) {
      ctx.error(
        at(`${dimensionsKey}.dimensionExclusions[${j}]`),
        `dimensions and dimensions exclusions cannot overlap: [${x}] is also a dimension`,
      );
    }
  });
  (arr(metricsSpec) ?? []).forEach((m, i) => {
    const path = at(`metricsSpec[${i}]`);
    const agg = obj(m);
    if (!agg) return;
    const { type } = agg;
    // FilteredAggregatorFactory takes its delegate's name when it has none of its own.
    const name = type === "filtered" && agg.name === undefined ? obj(agg.aggregator)?.name : agg.name;
    if (name === undefined || name === "") {
      ctx.error(`${path}.name`, `Encountered metric with null or empty name at position ${i}`);
    } else if (typeof name === "string") {
      const first = seen.get(name);
      if (first !== undefined)
        ctx.error(`${path}.name`, `Cannot specify a column more than once: [${name}] already at ${first}`);
      else seen.set(name, `${path}.name`);
    }
    if (typeof type !== "string") return;
    checkAggregator(ctx, path, type, agg);
  });
}

/** The aggregator's type must resolve (Jackson's subtype resolution) and its constructor accept the fields. */
function checkAggregator(ctx: RuleContext, path: string, type: string, agg: Obj): void {
  const contrib = CONTRIB_AGGREGATORS[type];
  if (contrib !== undefined) {
    ctx.warn(
      `${path}.type`,
      `"${type}" comes from the community extension ${contrib}: Druid refuses it unless that extension is loaded`,
    );
    return;
  }
  if (!KNOWN_AGGREGATORS.has(type)) {
    const near = [...KNOWN_AGGREGATORS].find((k) => k.toLowerCase() === type.toLowerCase());
    ctx.error(
      `${path}.type`,
      `Could not resolve type id '${type}' as a subtype of AggregatorFactory: not an aggregator of Druid or of any extension in Druid's repository${near ? ` (type ids are case-sensitive: "${near}")` : ""}`,
    );
    return;
  }
  const hasField = typeof agg.fieldName === "string";
  const hasExpression = typeof agg.expression === "string";
  if (SIMPLE_AGGREGATORS.test(type)) {
    // SimpleLongAggregatorFactory & co.: exactly one of fieldName and expression.
    if (!hasField && !hasExpression) {
      ctx.error(
        `${path}.fieldName`,
        `a ${type} aggregator needs fieldName (the input column), found nothing`,
      );
    } else if (hasField && hasExpression) {
      ctx.error(
        `${path}.expression`,
        `Must have a valid, non-null fieldName or expression: a ${type} aggregator takes one of them, found both`,
      );
    }
  } else if (
    (FIELD_AGGREGATORS.test(type) || ONE_FIELD_AGGREGATORS.has(type)) &&
    agg.fieldName === undefined
  ) {
    ctx.error(`${path}.fieldName`, `a ${type} aggregator needs fieldName (the input column), found nothing`);
  }
  checkAggregatorArguments(ctx, path, type, agg);
}

/**
 * Aggregators of Druid core and druid-datasketches that read one input column: their constructors refuse a
 * null fieldName (`HyperUniquesAggregatorFactory`, `DoubleMeanAggregatorFactory`, `HistogramAggregatorFactory`,
 * `SketchAggregatorFactory`, `HllSketchAggregatorFactory`, `DoublesSketchAggregatorFactory`,
 * `KllSketchAggregatorFactory`, `ArrayOfDoublesSketchAggregatorFactory`).
 */
const ONE_FIELD_AGGREGATORS = new Set(["hyperUnique", "doubleMean", "histogram", ...SKETCH_AGGREGATORS]);

const HLL_TYPES = new Set(["HLL_4", "HLL_6", "HLL_8"]);

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

/** The other arguments aggregator constructors check (each class named at its rule). */
function checkAggregatorArguments(ctx: RuleContext, path: string, type: string, agg: Obj): void {
  switch (type) {
    case "cardinality": // CardinalityAggregatorFactory
      if (agg.fields === undefined && agg.fieldNames === undefined) {
        ctx.error(`${path}.fields`, "Must provide 'fieldNames' if 'fields' is null: list the input columns");
      }
      return;
    case "javascript": // JavaScriptAggregatorFactory
      for (const key of ["fnAggregate", "fnReset", "fnCombine"]) {
        if (agg[key] === undefined) ctx.error(`${path}.${key}`, `Must have a valid, non-null ${key}`);
      }
      return;
    case "expression": // ExpressionLambdaAggregatorFactory
      if (agg.fold === undefined)
        ctx.error(`${path}.fold`, "an expression aggregator needs fold (the expression that accumulates)");
      if (agg.combine === undefined && (!Array.isArray(agg.fields) || agg.fields.length !== 1)) {
        ctx.error(`${path}.fields`, "Must have a single input field if no combine expression is supplied");
      }
      return;
    case "filtered": // FilteredAggregatorFactory
      if (agg.aggregator === undefined) ctx.error(`${path}.aggregator`, "aggregator must not be null");
      if (agg.filter === undefined) ctx.error(`${path}.filter`, "filter must not be null");
      else checkFilter(ctx, `${path}.filter`, agg.filter);
      {
        const inner = obj(agg.aggregator);
        if (inner && typeof inner.type === "string")
          checkAggregator(ctx, `${path}.aggregator`, inner.type, inner);
      }
      return;
    case "thetaSketch": // SketchAggregatorFactory: Util.checkIfPowerOf2(size)
    case "sketchBuild":
    case "sketchMerge":
      if (typeof agg.size === "number" && !isPowerOfTwo(agg.size)) {
        ctx.error(
          `${path}.size`,
          `The value of the int argument "size" must be a positive integer-power of 2, found ${agg.size}`,
        );
      }
      return;
    case "quantilesDoublesSketch": // DoublesSketchAggregatorFactory: DoublesSketch's k
    case "quantilesDoublesSketchMerge":
      if (typeof agg.k === "number" && !isPowerOfTwo(agg.k)) {
        ctx.error(
          `${path}.k`,
          `The value of the int argument "k" must be a positive integer-power of 2, found ${agg.k}`,
        );
      }
      return;
    case "HLLSketch": // HllSketchAggregatorFactory: TgtHllType.valueOf
    case "HLLSketchBuild":
    case "HLLSketchMerge":
      if (agg.tgtHllType !== undefined && !HLL_TYPES.has(String(agg.tgtHllType))) {
        ctx.error(
          `${path}.tgtHllType`,
          `No enum constant TgtHllType.${String(agg.tgtHllType)}: expected "HLL_4", "HLL_6" or "HLL_8"`,
        );
      }
      return;
    default:
  }
}

/**
 * `TransformSpec`'s creator ("Transform name '%s' cannot be used twice"), `ExpressionTransform`'s (a name and
 * an expression) and its filter's (`DimFilter` subtypes, rules-filters.ts).
 */
function checkTransforms(ctx: RuleContext, path: string, transformSpec: unknown): void {
  const seen = new Set<string>();
  if (obj(transformSpec)?.filter !== undefined)
    checkFilter(ctx, `${path}.filter`, obj(transformSpec)?.filter);
  (arr(obj(transformSpec)?.transforms) ?? []).forEach((t, i) => {
    const tr = obj(t);
    if (tr?.type === "expression") {
      for (const key of ["name", "expression"]) {
        if (tr[key] === undefined)
          ctx.error(`${path}.transforms[${i}].${key}`, `${key} must not be null (ExpressionTransform)`);
      }
    }
    const name = tr?.name;
    if (typeof name !== "string") return;
    if (seen.has(name))
      ctx.error(`${path}.transforms[${i}].name`, `Transform name '${name}' cannot be used twice`);
    seen.add(name);
  });
}

/** `ArbitraryGranularitySpec`'s creator: "Overlapping intervals" (abutting is fine). */
function checkArbitrary(ctx: RuleContext, path: string, g: Obj): void {
  if (g.type !== "arbitrary") return;
  const list = (arr(g.intervals) ?? [])
    .map((text, i) => ({ i, iv: tryInterval(text) }))
    .filter((x): x is { i: number; iv: Interval } => x.iv !== undefined)
    .sort((a, b) => a.iv.start - b.iv.start || a.iv.end - b.iv.end);
  for (let k = 1; k < list.length; k++) {
    const a = list[k - 1] as { i: number; iv: Interval };
    const b = list[k] as { i: number; iv: Interval };
    if (b.iv.start < a.iv.end) {
      ctx.error(
        `${path}.intervals[${Math.max(a.i, b.i)}]`,
        `Overlapping intervals: ${formatInterval(a.iv)}, ${formatInterval(b.iv)}`,
      );
    }
  }
}

/** The rules of an `index_parallel` / `index` task. */
export function checkIngestion(ctx: RuleContext, type: "index_parallel" | "index"): void {
  const spec = obj(ctx.task.spec);
  if (!spec) return;
  const schema = obj(spec.dataSchema);
  const io = obj(spec.ioConfig);
  const tuning = obj(spec.tuningConfig);
  if (schema) {
    checkIds(ctx, "spec.dataSchema.dataSource", schema.dataSource);
    // DataSchema: before Druid 37 a parser cannot be used with an inputSource ((Parallel)IndexIngestionSpec);
    // from 37 it is gone. Either way the timestampSpec is required.
    if (schema.parser !== undefined) {
      ctx.error(
        "spec.dataSchema.parser",
        ctx.druidVersion >= 37
          ? "parser was removed in Druid 37, define the timestampSpec and dimensionsSpec on the schema directly instead of nested inside the parser definition"
          : `Cannot use parser and inputSource together (Druid ${ctx.druidVersion}): define the timestampSpec and dimensionsSpec on the dataSchema and the format as ioConfig.inputFormat (Druid 37 removes parser entirely)`,
      );
    }
    if (schema.timestampSpec === undefined) {
      ctx.error("spec.dataSchema.timestampSpec", "timestampSpec must not be null");
    }
    checkTimestampSpec(ctx, "spec.dataSchema.timestampSpec", schema.timestampSpec);
    checkColumns(ctx, "spec.dataSchema", schema.dimensionsSpec, schema.metricsSpec);
    checkTransforms(ctx, "spec.dataSchema.transformSpec", schema.transformSpec);
    const g = obj(schema.granularitySpec);
    if (g) checkArbitrary(ctx, "spec.dataSchema.granularitySpec", g);
  }
  if (io) {
    if (io.type === undefined) {
      ctx.warn("spec.ioConfig.type", `Druid's docs require type "${type}" here; add it`);
    }
    const source = obj(io.inputSource);
    if (!source) ctx.error("spec.ioConfig.inputSource", "inputSource must not be null");
    checkInputSource(ctx, "spec.ioConfig.inputSource", source);
    checkInputFormat(ctx, "spec.ioConfig.inputFormat", io.inputFormat);
    // (Parallel)IndexIngestionSpec: a source whose needsFormat() is true needs an inputFormat.
    if (io.inputFormat === undefined && needsFormat(source)) {
      ctx.error(
        "spec.ioConfig.inputFormat",
        `inputFormat must not be null (input source ${JSON.stringify(source?.type ?? null)} needs one)`,
      );
    }
    if (io.appendToExisting === true && io.dropExisting === true) {
      ctx.error(
        "spec.ioConfig.dropExisting",
        "Cannot simultaneously replace and append to existing segments. Either dropExisting or appendToExisting should be set to false",
      );
    }
  }
  if (tuning) checkTuning(ctx, "spec.tuningConfig", tuning, io, type);
  checkIntervals(ctx, schema, io);
}

/**
 * Tuning rules: `IndexTuningConfig` (partitions spec for the rollup mode, the deprecated tuning-level
 * partition fields, targetPartitionSize vs maxRowsPerSegment), `ParallelIndexTuningConfig` (sub-task counts)
 * and the partitions specs' constructors.
 */
function checkTuning(
  ctx: RuleContext,
  base: string,
  tuning: Obj,
  io: Obj | undefined,
  type: "index_parallel" | "index" | "compact",
): void {
  if (tuning.type === undefined && type !== "compact") {
    ctx.warn(`${base}.type`, "Druid's docs require the task type here; add it");
  }
  const perfect = tuning.forceGuaranteedRollup === true;
  const ps = obj(tuning.partitionsSpec);
  const psType = typeof ps?.type === "string" ? ps.type : undefined;
  if (perfect && io?.appendToExisting === true) {
    ctx.error(
      `${base}.forceGuaranteedRollup`,
      "Perfect rollup cannot be guaranteed when appending to existing dataSources",
    );
  }
  if (ps && psType !== undefined && PARTITION_TYPES.has(psType)) {
    if (perfect && psType === "dynamic") {
      ctx.error(
        `${base}.partitionsSpec.type`,
        'DynamicPartitionsSpec cannot be used for perfect rollup: expected "hashed", "single_dim" or "range" with forceGuaranteedRollup',
      );
    } else if (!perfect && psType !== "dynamic") {
      ctx.error(
        `${base}.partitionsSpec.type`,
        `DynamicPartitionsSpec must be used for best-effort rollup: found "${psType}", which needs tuningConfig.forceGuaranteedRollup: true`,
      );
    }
    checkPartitionsSpec(ctx, `${base}.partitionsSpec`, psType, ps);
    if (
      perfect &&
      (psType === "single_dim" || psType === "dimension") &&
      typeof ps.partitionDimension !== "string"
    ) {
      ctx.error(
        `${base}.partitionsSpec.partitionDimension`,
        "forceGuaranteedRollup is incompatible with partitionsSpec: partitionDimension must be specified",
      );
    }
  } else if (!ps) {
    checkLegacyPartitioning(ctx, base, tuning, perfect);
  }
  if (tuning.maxNumSubTasks !== undefined && tuning.maxNumConcurrentSubTasks !== undefined) {
    ctx.error(
      `${base}.maxNumSubTasks`,
      "Can't use both maxNumSubTasks and maxNumConcurrentSubTasks. Use maxNumConcurrentSubTasks instead",
    );
  }
  for (const key of [
    "maxNumConcurrentSubTasks",
    "maxNumSubTasks",
    "maxNumSegmentsToMerge",
    "totalNumMergeTasks",
  ]) {
    const v = tuning[key];
    if (typeof v === "number" && v <= 0) ctx.error(`${base}.${key}`, `${key} must be positive, found ${v}`);
  }
  if (tuning.targetPartitionSize !== undefined && tuning.maxRowsPerSegment !== undefined) {
    ctx.error(`${base}.targetPartitionSize`, "Can't use targetPartitionSize and maxRowsPerSegment together");
  }
  if (tuning.chatHandlerTimeout !== undefined) {
    const problem = durationProblem(tuning.chatHandlerTimeout);
    if (problem) ctx.error(`${base}.chatHandlerTimeout`, problem);
  }
  const rows = num(tuning.maxRowsInMemory);
  if (rows !== undefined && rows <= 0) {
    ctx.warn(
      `${base}.maxRowsInMemory`,
      `maxRowsInMemory ${rows}: Druid accepts it, but then persists to disk after every row; leave it out for the default`,
    );
  }
}

/**
 * The size rules of the partitions specs' constructors (-1 is "not set"): `DynamicPartitionsSpec` (positive),
 * `HashedPartitionsSpec` (at most one of targetRowsPerSegment, targetPartitionSize and maxRowsPerSegment, not
 * together with numShards, positive), `SingleDimensionPartitionsSpec` (aliases targetPartitionSize and
 * maxPartitionSize) and `DimensionRangePartitionsSpec` (exactly one of targetRowsPerSegment and
 * maxRowsPerSegment, positive; partitionDimensions required).
 */
function checkPartitionsSpec(ctx: RuleContext, path: string, type: string, ps: Obj): void {
  const positive = (key: string, v: number | undefined, message = `${key} must be greater than 0`) => {
    if (v !== undefined && v <= 0) ctx.error(`${path}.${key}`, `${message}, found ${v}`);
  };
  const atMostOne = (keys: string[]): string | undefined => {
    const set = keys.filter((k) => effective(ps[k]) !== undefined);
    if (set.length > 1) {
      ctx.error(
        `${path}.${set[1]}`,
        `At most one of [${set[0]}] or [${set[1]}] must be present (they are aliases of each other)`,
      );
    }
    return set[0];
  };
  if (type === "dynamic") {
    // DynamicPartitionsSpec checks its sizes from Druid 36 on (apache/druid #18684); before, 0 or a negative
    // size is accepted and every row makes its own segment (or the limit is ignored).
    for (const key of ["maxRowsPerSegment", "maxTotalRows"]) {
      const v = effective(ps[key]);
      if (v === undefined || v > 0) continue;
      if (ctx.druidVersion >= 36) positive(key, v);
      else {
        ctx.warn(
          `${path}.${key}`,
          `${key} ${v}: Druid ${ctx.druidVersion} accepts it, Druid 36 and later refuse it (${key} must be greater than 0); leave it out for the default`,
        );
      }
    }
    return;
  }
  if (type === "hashed") {
    // HashPartitionFunction.fromString: an enum name, any case.
    const fn = ps.partitionFunction;
    if (fn !== undefined && (typeof fn !== "string" || fn.toLowerCase() !== "murmur3_32_abs")) {
      ctx.error(
        `${path}.partitionFunction`,
        `No enum constant HashPartitionFunction.${String(fn).toUpperCase()}: the only hash function is "murmur3_32_abs"; leave it out for the default`,
      );
    }
    const target = atMostOne(["targetRowsPerSegment", "targetPartitionSize", "maxRowsPerSegment"]);
    const shards = effective(ps.numShards);
    if (target !== undefined && shards !== undefined) {
      ctx.error(
        `${path}.numShards`,
        `At most one of [${target}] or [numShards] must be present: give a target size or a shard count, not both`,
      );
    }
    if (target !== undefined) positive(target, effective(ps[target]), `${target} should be positive`);
    positive("numShards", shards, "numShards should be positive");
    return;
  }
  // single_dim / dimension / range
  const single = type !== "range";
  const target = single ? atMostOne(["targetRowsPerSegment", "targetPartitionSize"]) : "targetRowsPerSegment";
  const max = single ? atMostOne(["maxRowsPerSegment", "maxPartitionSize"]) : "maxRowsPerSegment";
  const t = target !== undefined ? effective(ps[target]) : undefined;
  const m = max !== undefined ? effective(ps[max]) : undefined;
  if ((t === undefined) === (m === undefined)) {
    ctx.error(
      t === undefined ? `${path}.targetRowsPerSegment` : `${path}.${max}`,
      `Exactly one of targetRowsPerSegment or maxRowsPerSegment must be present, found ${t === undefined ? "neither" : "both"}`,
    );
  } else if (t !== undefined) positive(target as string, t);
  else positive(max as string, m);
  if (!single && (arr(ps.partitionDimensions)?.length ?? 0) === 0) {
    ctx.error(`${path}.partitionDimensions`, "partitionDimensions must be specified");
  }
}

/**
 * `IndexTuningConfig.getPartitionsSpec` without a partitionsSpec: the deprecated tuning-level fields make
 * a HashedPartitionsSpec (perfect rollup) or a DynamicPartitionsSpec, whose constructors check them.
 */
function checkLegacyPartitioning(ctx: RuleContext, base: string, tuning: Obj, perfect: boolean): void {
  const rowsKey = tuning.maxRowsPerSegment !== undefined ? "maxRowsPerSegment" : "targetPartitionSize";
  const rows = effective(tuning[rowsKey]);
  if (perfect) {
    const shards = effective(tuning.numShards);
    if (rows !== undefined && shards !== undefined) {
      ctx.error(
        `${base}.numShards`,
        `At most one of [${rowsKey}] or [numShards] must be present: give a target size or a shard count, not both`,
      );
    }
    if (rows !== undefined && rows <= 0)
      ctx.error(`${base}.${rowsKey}`, `${rowsKey} should be positive, found ${rows}`);
    if (shards !== undefined && shards <= 0)
      ctx.error(`${base}.numShards`, `numShards should be positive, found ${shards}`);
  } else {
    // A DynamicPartitionsSpec: its sizes are checked from Druid 36 on (see checkPartitionsSpec).
    const sizes: [string, number | undefined][] = [
      [rowsKey, rows],
      ["maxTotalRows", effective(tuning.maxTotalRows)],
    ];
    for (const [key, v] of sizes) {
      if (v === undefined || v > 0) continue;
      if (ctx.druidVersion >= 36) ctx.error(`${base}.${key}`, `${key} must be greater than 0, found ${v}`);
      else {
        ctx.warn(
          `${base}.${key}`,
          `${key} ${v}: Druid ${ctx.druidVersion} accepts it, Druid 36 and later refuse it (${key} must be greater than 0); leave it out for the default`,
        );
      }
    }
  }
}

/**
 * Interval rules. Druid's: `dropExisting` needs intervals (docs/druid-api.md §4.3). segops': the intervals must be
 * exactly the partition (so REPLACE cannot touch a neighbour) and aligned to segmentGranularity (otherwise
 * Druid's time-chunk lock silently widens to whole chunks — docs/druid-api.md §4.4).
 */
function checkIntervals(ctx: RuleContext, schema: Obj | undefined, io: Obj | undefined): void {
  checkPartitionIntervals(ctx, schema, io);
}

/** The interval rules alone (`checkIntervals`), on a dataSchema and ioConfig as Druid reads them. */
export function checkPartitionIntervals(ctx: RuleContext, schema: unknown, ioConfig: unknown): void {
  const io = obj(ioConfig);
  const path = "spec.dataSchema.granularitySpec.intervals";
  const g = obj(obj(schema)?.granularitySpec);
  const intervals = arr(g?.intervals);
  const hasIntervals = intervals !== undefined && intervals.length > 0;
  if (io?.dropExisting === true && !hasIntervals) {
    ctx.error(path, "GranularitySpec's intervals cannot be empty when using replace.");
  }
  if (ctx.partition !== undefined) {
    const want = formatInterval(ctx.partition);
    const parsed = (intervals ?? []).map(tryInterval);
    const exact = parsed.length === 1 && parsed[0] !== undefined && sameInterval(parsed[0], ctx.partition);
    if (!exact) {
      ctx.error(
        path,
        `must be exactly the partition interval ["${want}"], found ${intervals === undefined ? "nothing" : JSON.stringify(intervals)}`,
      );
    }
  }
  if (ctx.scope === "druid") return;
  if (io?.appendToExisting === true) {
    ctx.warn(
      "spec.ioConfig.appendToExisting",
      "appending is not idempotent: a rerun of this partition appends its rows again",
    );
  } else if (io && io.dropExisting !== true) {
    ctx.warn(
      "spec.ioConfig.dropExisting",
      "dropExisting is not true: time chunks that receive no rows keep their old data (REPLACE_LEGACY, docs/druid-api.md §4.3); set it to true to replace the whole partition",
    );
  }
  if (!hasIntervals && ctx.partition === undefined) {
    ctx.warn(
      path,
      "no intervals: the task locks time chunks as it allocates them, and a lock conflict fails it instead of waiting (docs/druid-api.md §4.4)",
    );
  }
  if (g?.type === "arbitrary") return;
  const seg =
    g?.segmentGranularity === undefined ? parseGranularity("day") : tryGranularity(g.segmentGranularity);
  if (seg?.kind !== "period") return;
  (intervals ?? []).forEach((text, i) => {
    const iv = tryInterval(text);
    if (iv) checkAligned(ctx, `${path}[${i}]`, iv, seg);
  });
}

function checkAligned(ctx: RuleContext, path: string, iv: Interval, seg: Granularity): void {
  if (isAligned(seg, iv.start) && isAligned(seg, iv.end)) return;
  const widened = { start: alignedBounds(seg, iv.start).floor, end: alignedBounds(seg, iv.end).ceil };
  ctx.error(
    path,
    `${formatInterval(iv)} is not aligned to segmentGranularity ${granName(seg)}: Druid would lock and replace ${formatInstant(widened.start)}/${formatInstant(widened.end)}, beyond the partition; align the interval or change segmentGranularity`,
  );
}

/** The rules of a `compact` task (`CompactionTask`'s creator) and segops' partition rules for it. */
export function checkCompact(ctx: RuleContext): void {
  const { task } = ctx;
  if (task.dataSource === "" && ctx.scope === "druid") {
    // CompactionTask only checks for null: Druid queues it, and it compacts nothing.
    ctx.warn("dataSource", "empty: Druid accepts the task but it compacts nothing; name the datasource");
  } else checkIds(ctx, "dataSource", task.dataSource);
  const await_ = num(obj(task.tuningConfig)?.awaitSegmentAvailabilityTimeoutMillis);
  if (await_ !== undefined && await_ > 0) {
    // CompactionTask.CompactionTuningConfig: only null or 0 (a compaction does not wait for handoff).
    ctx.error(
      "tuningConfig.awaitSegmentAvailabilityTimeoutMillis",
      `awaitSegmentAvailabilityTimeoutMillis is not supported for Compaction Task, found ${await_}; remove it (segops' handoff gate waits instead)`,
    );
  }
  if (obj(task.transformSpec)?.filter !== undefined)
    checkFilter(ctx, "transformSpec.filter", obj(task.transformSpec)?.filter);
  const dimsKey =
    task.dimensionsSpec === undefined && task.dimensions !== undefined ? "dimensions" : "dimensionsSpec";
  checkColumns(ctx, "", task[dimsKey], task.metricsSpec, dimsKey);
  const given = ["ioConfig", "interval", "segments"].filter((k) =>
    k === "segments" ? (arr(task.segments)?.length ?? 0) > 0 : task[k] !== undefined,
  );
  if (given.length > 1) {
    ctx.error(
      given[1] as string,
      `At most one of properties[[ioConfig, interval, segments]] must be present, found ${given.join(" and ")}`,
    );
  }
  // "Conflicting segment granularities found": the deprecated top-level segmentGranularity must agree.
  const top = tryGranularity(task.segmentGranularity);
  const specSeg = obj(task.granularitySpec)?.segmentGranularity;
  const inSpec = specSeg === undefined ? undefined : tryGranularity(specSeg);
  if (top && obj(task.granularitySpec) && !sameBuckets(top, inSpec)) {
    ctx.error(
      "segmentGranularity",
      `Conflicting segment granularities found ${granName(top)}(segmentGranularity) and ${inSpec ? granName(inSpec) : "null"}(granularitySpec.segmentGranularity). Remove segmentGranularity and set granularitySpec.segmentGranularity`,
    );
  }
  const tuning = obj(task.tuningConfig);
  if (tuning) checkTuning(ctx, "tuningConfig", tuning, undefined, "compact");
  const inputSpec = obj(obj(task.ioConfig)?.inputSpec);
  if (inputSpec?.type === "segments") return;
  const path = inputSpec ? "ioConfig.inputSpec.interval" : "interval";
  const text = inputSpec ? inputSpec.interval : task.interval;
  if (text === undefined) {
    if (given.length === 0) {
      ctx.error(
        "ioConfig.inputSpec",
        'expected {"type":"interval","interval":"START/END"}, found nothing (Druid: At least one of properties[[ioConfig, interval, segments]] must be present)',
      );
    }
    return;
  }
  const iv = tryInterval(text);
  if (!iv) return;
  if (ctx.partition !== undefined && !sameInterval(iv, ctx.partition)) {
    ctx.error(
      path,
      `must be exactly the partition interval "${formatInterval(ctx.partition)}", found ${JSON.stringify(text)}`,
    );
  }
  if (ctx.scope === "druid") return;
  const seg = inSpec ?? top;
  if (seg?.kind === "period") checkAligned(ctx, path, iv, seg);
}

/** Collects issues; the small adapter between rules and {@link SpecIssue} lists. */
export function collector(
  task: Obj,
  partition?: Interval,
  scope: RuleScope = "all",
  druidVersion: number = DEFAULT_DRUID_VERSION,
): RuleContext & { errors: SpecIssue[]; warnings: SpecIssue[] } {
  const errors: SpecIssue[] = [];
  const warnings: SpecIssue[] = [];
  return {
    task,
    ...(partition !== undefined ? { partition } : {}),
    scope,
    druidVersion,
    errors,
    warnings,
    error: (path, message) => errors.push({ path, message }),
    warn: (path, message) => warnings.push({ path, message }),
  };
}
