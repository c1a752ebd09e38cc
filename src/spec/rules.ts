import { type Granularity, isAligned, parseGranularity } from "../core/granularity.js";
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

/**
 * Cross-field rules: Druid's own submit-time checks (api-contract §5, §4.3, §2.2; messages quoted where
 * Druid has one) and segops' rules for safe, idempotent partitions. Each rule reads the raw task with
 * defensive accessors, so it runs even when the structural schema found problems elsewhere.
 */

type Obj = Record<string, unknown>;

export interface RuleContext {
  readonly task: Obj;
  /** The partition interval the task must cover exactly, when known. */
  readonly partition?: Interval;
  error(path: string, message: string): void;
  warn(path: string, message: string): void;
}

function obj(v: unknown): Obj | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : undefined;
}

function arr(v: unknown): unknown[] | undefined {
  return Array.isArray(v) ? v : undefined;
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

function granName(g: Granularity): string {
  return g.kind === "period" ? g.name.toUpperCase() : g.kind.toUpperCase();
}

/** Aggregators of Druid core and its bundled extensions; others are warned about, not refused. */
const KNOWN_AGGREGATORS = new Set([
  "count",
  "longSum",
  "doubleSum",
  "floatSum",
  "longMin",
  "longMax",
  "doubleMin",
  "doubleMax",
  "floatMin",
  "floatMax",
  "longFirst",
  "longLast",
  "doubleFirst",
  "doubleLast",
  "floatFirst",
  "floatLast",
  "stringFirst",
  "stringLast",
  "longAny",
  "doubleAny",
  "floatAny",
  "stringAny",
  "hyperUnique",
  "cardinality",
  "filtered",
  "expression",
  "javascript",
  "thetaSketch",
  "HLLSketchBuild",
  "HLLSketchMerge",
  "quantilesDoublesSketch",
  "arrayOfDoublesSketch",
  "KllDoublesSketch",
  "KllFloatsSketch",
  "approxHistogram",
  "approxHistogramFold",
  "fixedBucketsHistogram",
  "bloom",
  "variance",
  "tDigestSketch",
  "momentSketch",
]);

/** Aggregators that read one input column: `fieldName` (or, for sums/min/max, `expression`) is required. */
const FIELD_AGGREGATORS = /^(long|double|float)(Sum|Min|Max)$|^(long|double|float|string)(First|Last|Any)$/;

const PARTITION_TYPES = new Set(["dynamic", "hashed", "single_dim", "dimension", "range"]);

/** Input sources that bring their own row format (no `inputFormat`). */
const FORMATLESS_SOURCES = new Set(["druid", "sql"]);

export function checkIds(ctx: RuleContext, dataSourcePath: string, dataSource: unknown): void {
  const { task } = ctx;
  if (typeof task.id === "string") {
    const p = druidIdProblem("Task ID", task.id);
    if (p) ctx.error("id", p);
  }
  if (typeof dataSource === "string") {
    const p = druidIdProblem("dataSource", dataSource);
    if (p) ctx.error(dataSourcePath, p);
  }
}

/** Dimension and metric rules of `DataSchema` (api-contract §5). */
export function checkColumns(
  ctx: RuleContext,
  base: string,
  dimensionsSpec: unknown,
  metricsSpec: unknown,
): void {
  const at = (suffix: string) => (base === "" ? suffix : `${base}.${suffix}`);
  const seen = new Map<string, string>();
  const dims = arr(obj(dimensionsSpec)?.dimensions) ?? [];
  const sortByTime = obj(dimensionsSpec)?.forceSegmentSortByTime !== false;
  dims.forEach((d, i) => {
    const path = at(`dimensionsSpec.dimensions[${i}]`);
    const name = typeof d === "string" ? d : obj(d)?.name;
    if (typeof name !== "string") return; // structural problem, reported by the schema
    if (name === "") {
      ctx.error(
        typeof d === "string" ? path : `${path}.name`,
        `Encountered dimension with null or empty name at position[${i}]`,
      );
      return;
    }
    if (name === "__time") {
      const type = typeof d === "string" ? "string" : (obj(d)?.type ?? "string");
      if (type !== "long") {
        ctx.error(
          typeof d === "string" ? path : `${path}.type`,
          `Encountered dimension[__time] with incorrect type[${String(type)}]. Type must be 'long'.`,
        );
      } else if (i > 0 && sortByTime) {
        ctx.error(
          path,
          `__time is at position ${i}, but it can only come first unless dimensionsSpec.forceSegmentSortByTime is false`,
        );
      }
    }
    const first = seen.get(name);
    if (first !== undefined) {
      ctx.error(path, `Cannot specify a column more than once: [${name}] already at ${first}`);
    } else seen.set(name, path);
  });
  (arr(metricsSpec) ?? []).forEach((m, i) => {
    const path = at(`metricsSpec[${i}]`);
    const agg = obj(m);
    if (!agg) return;
    const { type, name } = agg;
    if (name === undefined || name === null || name === "") {
      ctx.error(`${path}.name`, `Encountered metric with null or empty name at position ${i}`);
    } else if (typeof name === "string") {
      const first = seen.get(name);
      if (first !== undefined)
        ctx.error(`${path}.name`, `Cannot specify a column more than once: [${name}] already at ${first}`);
      else seen.set(name, `${path}.name`);
    }
    if (typeof type !== "string") return;
    if (!KNOWN_AGGREGATORS.has(type)) {
      ctx.warn(
        `${path}.type`,
        `"${type}" is not a core or bundled aggregator; fine only if an extension provides it`,
      );
    } else if (
      FIELD_AGGREGATORS.test(type) &&
      typeof agg.fieldName !== "string" &&
      typeof agg.expression !== "string"
    ) {
      ctx.error(
        `${path}.fieldName`,
        `a ${type} aggregator needs fieldName (the input column), found nothing`,
      );
    }
  });
}

/** The rules of an `index_parallel` / `index` task (api-contract §5, §4.3). */
export function checkIngestion(ctx: RuleContext, type: "index_parallel" | "index"): void {
  const spec = obj(ctx.task.spec);
  if (!spec) return;
  const schema = obj(spec.dataSchema);
  const io = obj(spec.ioConfig);
  const tuning = obj(spec.tuningConfig);
  if (schema) {
    checkIds(ctx, "spec.dataSchema.dataSource", schema.dataSource);
    if (schema.parser !== undefined) {
      ctx.error(
        "spec.dataSchema.parser",
        "parser was removed in Druid 37, define the timestampSpec and dimensionsSpec on the schema directly instead of nested inside the parser definition",
      );
    }
    if (schema.timestampSpec === undefined || schema.timestampSpec === null) {
      ctx.error("spec.dataSchema.timestampSpec", "timestampSpec must not be null");
    }
    checkColumns(ctx, "spec.dataSchema", schema.dimensionsSpec, schema.metricsSpec);
  }
  if (io) {
    if (io.type === undefined) {
      ctx.warn("spec.ioConfig.type", `Druid's docs require type "${type}" here; add it`);
    }
    const source = obj(io.inputSource);
    if (!source) ctx.error("spec.ioConfig.inputSource", "inputSource must not be null");
    if (
      io.inputFormat === undefined &&
      !(typeof source?.type === "string" && FORMATLESS_SOURCES.has(source.type))
    ) {
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
  if (tuning) checkTuning(ctx, tuning, io);
  checkIntervals(ctx, schema, io);
}

function checkTuning(ctx: RuleContext, tuning: Obj, io: Obj | undefined): void {
  const base = "spec.tuningConfig";
  if (tuning.type === undefined) ctx.warn(`${base}.type`, "Druid's docs require the task type here; add it");
  const perfect = tuning.forceGuaranteedRollup === true;
  const ps = obj(tuning.partitionsSpec);
  const psType = typeof ps?.type === "string" ? ps.type : undefined;
  if (perfect && io?.appendToExisting === true) {
    ctx.error(
      `${base}.forceGuaranteedRollup`,
      "Perfect rollup cannot be guaranteed when appending to existing dataSources",
    );
  }
  if (psType !== undefined && PARTITION_TYPES.has(psType)) {
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
    if (
      perfect &&
      (psType === "single_dim" || psType === "dimension") &&
      typeof ps?.partitionDimension !== "string"
    ) {
      ctx.error(
        `${base}.partitionsSpec.partitionDimension`,
        "forceGuaranteedRollup is incompatible with partitionsSpec: partitionDimension must be specified",
      );
    }
    if (psType === "range" && (arr(ps?.partitionDimensions)?.length ?? 0) === 0) {
      ctx.error(`${base}.partitionsSpec.partitionDimensions`, "partitionDimensions must be specified");
    }
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
  if (tuning.targetPartitionSize != null && tuning.maxRowsPerSegment != null) {
    ctx.error(`${base}.targetPartitionSize`, "Can't use targetPartitionSize and maxRowsPerSegment together");
  }
}

/**
 * Interval rules. Druid's: `dropExisting` needs intervals (api-contract §4.3). segops': the intervals must be
 * exactly the partition (so REPLACE cannot touch a neighbour) and aligned to segmentGranularity (otherwise
 * Druid's time-chunk lock silently widens to whole chunks — api-contract §4.4).
 */
function checkIntervals(ctx: RuleContext, schema: Obj | undefined, io: Obj | undefined): void {
  const path = "spec.dataSchema.granularitySpec.intervals";
  const g = obj(schema?.granularitySpec);
  const intervals = arr(g?.intervals);
  const hasIntervals = intervals !== undefined && intervals.length > 0;
  if (io?.dropExisting === true && !hasIntervals) {
    ctx.error(path, "GranularitySpec's intervals cannot be empty when using replace.");
  }
  if (io?.appendToExisting === true) {
    ctx.warn(
      "spec.ioConfig.appendToExisting",
      "appending is not idempotent: a rerun of this partition appends its rows again",
    );
  } else if (io && io.dropExisting !== true) {
    ctx.warn(
      "spec.ioConfig.dropExisting",
      "dropExisting is not true: time chunks that receive no rows keep their old data (REPLACE_LEGACY, api-contract §4.3); set it to true to replace the whole partition",
    );
  }
  if (!hasIntervals && ctx.partition === undefined) {
    ctx.warn(
      path,
      "no intervals: the task locks time chunks as it allocates them, and a lock conflict fails it instead of waiting (api-contract §4.4)",
    );
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

/** The rules of a `compact` task that are cheap to check. */
export function checkCompact(ctx: RuleContext): void {
  const { task } = ctx;
  checkIds(ctx, "dataSource", task.dataSource);
  checkColumns(ctx, "", task.dimensionsSpec, task.metricsSpec);
  const inputSpec = obj(obj(task.ioConfig)?.inputSpec);
  const path = inputSpec ? "ioConfig.inputSpec.interval" : "interval";
  const text = inputSpec ? inputSpec.interval : task.interval;
  if (text === undefined) {
    ctx.error("ioConfig.inputSpec", 'expected {"type":"interval","interval":"START/END"}, found nothing');
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
  const seg = tryGranularity(obj(task.granularitySpec)?.segmentGranularity);
  if (seg?.kind === "period") checkAligned(ctx, path, iv, seg);
}

/** Collects issues; the small adapter between rules and {@link SpecIssue} lists. */
export function collector(
  task: Obj,
  partition?: Interval,
): RuleContext & { errors: SpecIssue[]; warnings: SpecIssue[] } {
  const errors: SpecIssue[] = [];
  const warnings: SpecIssue[] = [];
  return {
    task,
    ...(partition !== undefined ? { partition } : {}),
    errors,
    warnings,
    error: (path, message) => errors.push({ path, message }),
    warn: (path, message) => warnings.push({ path, message }),
  };
}
