import { bindFilter } from "./bind-filter.js";
import { type Binding, cannotConstruct, chained, chainText, unknownTypeId } from "./binding.js";
import { bindError, CLASSES } from "./errors.js";
import { AGGREGATOR_FACTORIES, type Aggregator, type AggregatorKind, type PostAggregator } from "./model.js";

/**
 * Binds aggregators and post-aggregators (docs/querying/aggregations.md, docs/querying/post-aggregations.md) with the
 * refusals of their `@JsonCreator`s a real Druid 33 answered.
 */

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `AggregatorFactory`'s type ids on the Druid 33 stage (its core ones; an extension adds its own). */
const CORE_AGGREGATORS = [
  "cardinality",
  "count",
  "doubleAny",
  "doubleFirst",
  "doubleLast",
  "doubleMax",
  "doubleMean",
  "doubleMin",
  "doubleSum",
  "expression",
  "filtered",
  "floatAny",
  "floatFirst",
  "floatLast",
  "floatMax",
  "floatMin",
  "floatSum",
  "grouping",
  "histogram",
  "hyperUnique",
  "javascript",
  "longAny",
  "longFirst",
  "longLast",
  "longMax",
  "longMin",
  "longSum",
  "singleValue",
  "stringAny",
  "stringFirst",
  "stringFirstFold",
  "stringLast",
  "stringLastFold",
];

/**
 * The type ids druid-datasketches adds (`SketchModule`, `HllSketchModule`, `DoublesSketchModule`, `KllSketchModule`,
 * `ArrayOfDoublesSketchModule`), which the Druid 33 stage loads: a real Druid 33 listed them among the known ones.
 */
const SKETCH_AGGREGATORS = [
  "HLLSketch",
  "HLLSketchBuild",
  "HLLSketchMerge",
  "KllDoublesSketch",
  "KllDoublesSketchMerge",
  "KllFloatsSketch",
  "KllFloatsSketchMerge",
  "arrayOfDoublesSketch",
  "quantilesDoublesSketch",
  "quantilesDoublesSketchMerge",
  "sketchBuild",
  "sketchMerge",
  "thetaSketch",
];
const SKETCH_POST_AGGREGATORS = [
  "HLLSketchEstimate",
  "HLLSketchEstimateWithBounds",
  "HLLSketchToString",
  "HLLSketchUnion",
  ...["CDF", "Histogram", "Quantile", "Quantiles", "Rank", "String"].flatMap((x) => [
    `KllDoublesSketchTo${x}`,
    `KllFloatsSketchTo${x}`,
    `quantilesDoublesSketchTo${x}`,
  ]),
  "arrayOfDoublesSketchConstant",
  "arrayOfDoublesSketchSetOp",
  "arrayOfDoublesSketchTTest",
  ...[
    "Base64String",
    "Estimate",
    "EstimateAndBounds",
    "Means",
    "MetricsSumEstimate",
    "NumEntries",
    "QuantilesSketch",
    "String",
    "Variances",
  ].map((x) => `arrayOfDoublesSketchTo${x}`),
  "sketchEstimate",
  "sketchSetOper",
  "thetaSketchConstant",
  "thetaSketchEstimate",
  "thetaSketchSetOp",
  "thetaSketchToString",
];
/** Jackson lists the known ids in Java's String order (UTF-16 code units, as JavaScript's default sort). */
const KNOWN_AGGREGATORS = [...CORE_AGGREGATORS, ...SKETCH_AGGREGATORS].sort();

function bindAggregator(a: unknown, b: Binding, pojo: string): Aggregator {
  if (!isObject(a)) throw bindError(CLASSES.mismatch, `an aggregator must be an object${chainText(b)}`);
  const type = a.type;
  const cls = (name: string) => `org.apache.druid.query.aggregation.${name}`;
  if (type === "filtered") {
    if (a.aggregator === undefined || a.aggregator === null)
      throw cannotConstruct(b, a, cls("FilteredAggregatorFactory"), "aggregator");
    if (a.filter === undefined || a.filter === null)
      throw cannotConstruct(b, a, cls("FilteredAggregatorFactory"), "filter");
    const inner = bindAggregator(
      a.aggregator,
      chained(b, `->${cls("FilteredAggregatorFactory")}["aggregator"]`),
      "aggregator",
    );
    return {
      kind: "filtered",
      name: typeof a.name === "string" ? a.name : inner.name,
      ownName: typeof a.name === "string" ? a.name : null,
      filter: bindFilter(a.filter, chained(b, `->${cls("FilteredAggregatorFactory")}["filter"]`), "filter"),
      aggregator: inner,
    };
  }
  if (typeof type === "string" && type in AGGREGATOR_FACTORIES) {
    const kind = type as AggregatorKind;
    const className = cls(AGGREGATOR_FACTORIES[kind]);
    if (typeof a.name !== "string")
      throw cannotConstruct(b, a, className, "Must have a valid, non-null aggregator name");
    if (kind === "count") return { kind, name: a.name, fieldName: null };
    if (typeof a.fieldName !== "string") {
      throw cannotConstruct(b, a, className, "Must have a valid, non-null fieldName or expression");
    }
    return { kind, name: a.name, fieldName: a.fieldName };
  }
  if (typeof type === "string" && KNOWN_AGGREGATORS.includes(type)) {
    throw cannotConstruct(
      b,
      a,
      cls("AggregatorFactory"),
      `aggregator type [${type}] is not computed by the segops emulator`,
    );
  }
  throw unknownTypeId(b, a, type, cls("AggregatorFactory"), KNOWN_AGGREGATORS, pojo);
}

export function bindAggregators(list: unknown, b: Binding): Aggregator[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw bindError(CLASSES.mismatch, `aggregations must be a list${chainText(b)}`);
  return list.map((a, i) => bindAggregator(a, chained(b, `->java.util.ArrayList[${i}]`), "aggregations"));
}

const ARITHMETIC = new Set(["+", "-", "*", "/", "quotient", "pow"]);

function bindPostAggregator(p: unknown, b: Binding, pojo: string): PostAggregator {
  if (!isObject(p)) throw bindError(CLASSES.mismatch, `a post-aggregator must be an object${chainText(b)}`);
  const cls = (name: string) => `org.apache.druid.query.aggregation.post.${name}`;
  const name = typeof p.name === "string" ? p.name : null;
  switch (p.type) {
    case "arithmetic": {
      const fn = String(p.fn ?? "");
      if (!ARITHMETIC.has(fn))
        throw cannotConstruct(b, p, cls("ArithmeticPostAggregator"), `Unknown fn ${fn}`);
      if (!Array.isArray(p.fields) || p.fields.length < 2)
        throw cannotConstruct(
          b,
          p,
          cls("ArithmeticPostAggregator"),
          `Illegal number of fields[${Array.isArray(p.fields) ? p.fields.length : 0}], must be > 1`,
        );
      if (name === null) throw cannotConstruct(b, p, cls("ArithmeticPostAggregator"), "name cannot be null");
      return {
        type: "arithmetic",
        name,
        fn,
        fields: p.fields.map((f, i) =>
          bindPostAggregator(
            f,
            chained(b, `->${cls("ArithmeticPostAggregator")}["fields"]->java.util.ArrayList[${i}]`),
            "fields",
          ),
        ),
      };
    }
    case "fieldAccess":
    case "finalizingFieldAccess":
      if (typeof p.fieldName !== "string")
        throw cannotConstruct(b, p, cls("FieldAccessPostAggregator"), "fieldName cannot be null");
      return { type: p.type, name, fieldName: p.fieldName };
    case "constant": {
      const value = Number(p.value);
      if (p.value === undefined || p.value === null || !Number.isFinite(value))
        throw cannotConstruct(b, p, cls("ConstantPostAggregator"), "Constant value must not be null");
      return { type: "constant", name, value };
    }
    default:
      if (typeof p.type === "string" && SKETCH_POST_AGGREGATORS.includes(p.type))
        throw cannotConstruct(
          b,
          p,
          "org.apache.druid.query.aggregation.PostAggregator",
          `post-aggregator type [${p.type}] is not computed by the segops emulator`,
        );
      throw unknownTypeId(
        b,
        p,
        p.type,
        "org.apache.druid.query.aggregation.PostAggregator",
        [
          "arithmetic",
          "constant",
          "doubleGreatest",
          "doubleLeast",
          "expression",
          "fieldAccess",
          "finalizingFieldAccess",
          "hyperUniqueCardinality",
          "javascript",
          "longGreatest",
          "longLeast",
          ...SKETCH_POST_AGGREGATORS,
        ].sort(),
        pojo,
      );
  }
}

export function bindPostAggregators(list: unknown, b: Binding): PostAggregator[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list))
    throw bindError(CLASSES.mismatch, `postAggregations must be a list${chainText(b)}`);
  return list.map((p, i) =>
    bindPostAggregator(p, chained(b, `->java.util.ArrayList[${i}]`), "postAggregations"),
  );
}

function fieldsOf(p: PostAggregator): string[] {
  if (p.type === "arithmetic") return p.fields.flatMap(fieldsOf);
  if (p.type === "constant") return [];
  return [p.fieldName];
}

/**
 * `Queries.prepareAggregations`: each post-aggregator may read the aggregators and the post-aggregators before
 * it; Druid's words for the first one that reads anything else, or null.
 */
export function checkPostAggregatorFields(aggs: Aggregator[], posts: PostAggregator[]): string | null {
  const known = new Set(aggs.map((a) => a.name));
  for (const p of posts) {
    const missing = [...new Set(fieldsOf(p))].filter((f) => !known.has(f));
    if (missing.length > 0) return `Missing fields [[${missing.join(", ")}]] for postAggregator [${p.name}]`;
    if (p.name !== null) known.add(p.name);
  }
  return null;
}
