import { type Binding, cannotConstruct, chainText, unknownTypeId } from "./binding.js";
import { bindError, CLASSES } from "./errors.js";
import type { DimensionSpec, GroupByQuery, Having, OrderBy, OutputType, TopNMetric } from "./model.js";

/**
 * The parts of topN and groupBy queries: dimension specs (docs/querying/dimensionspecs.md; `default` only, no
 * extraction), topN metric specs (docs/querying/topnmetricspec.md), groupBy's `limitSpec`
 * (docs/querying/limitspec.md) and `having` (docs/querying/having.md).
 */

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const OUTPUT_TYPES = new Set(["STRING", "LONG", "DOUBLE", "FLOAT"]);

export function bindDimension(d: unknown, b: Binding): DimensionSpec {
  if (typeof d === "string") return { dimension: d, outputName: d, outputType: "STRING" };
  if (isObject(d) && (d.type === "default" || d.type === undefined) && typeof d.dimension === "string") {
    const t = String(d.outputType ?? "STRING").toUpperCase();
    return {
      dimension: d.dimension,
      outputName: typeof d.outputName === "string" ? d.outputName : d.dimension,
      outputType: (OUTPUT_TYPES.has(t) ? t : "STRING") as OutputType,
    };
  }
  if (isObject(d))
    throw unknownTypeId(b, d, d.type, "org.apache.druid.query.dimension.DimensionSpec", ["default"], null);
  throw cannotConstruct(
    b,
    {},
    "org.apache.druid.query.dimension.DimensionSpec",
    "dimension must be a name or an object",
  );
}

export function bindTopNMetric(m: unknown, b: Binding): TopNMetric {
  if (typeof m === "string") return { type: "numeric", metric: m };
  if (isObject(m)) {
    if (m.type === "numeric" && typeof m.metric === "string") return { type: "numeric", metric: m.metric };
    if (m.type === "inverted") return { type: "inverted", of: bindTopNMetric(m.metric, b) };
    if (m.type === "dimension" || m.type === "lexicographic" || m.type === "alphaNumeric")
      return {
        type: "dimension",
        ordering:
          m.type === "dimension"
            ? String(m.ordering ?? "lexicographic")
            : m.type === "alphaNumeric"
              ? "alphanumeric"
              : "lexicographic",
        previousStop: typeof m.previousStop === "string" ? m.previousStop : null,
      };
    throw unknownTypeId(
      b,
      m,
      m.type,
      "org.apache.druid.query.topn.TopNMetricSpec",
      ["alphaNumeric", "dimension", "inverted", "lexicographic", "numeric"],
      null,
    );
  }
  throw bindError(CLASSES.mismatch, `topN metric must be a name or an object${chainText(b)}`);
}

export function bindLimitSpec(l: unknown): GroupByQuery["limitSpec"] {
  if (!isObject(l)) return { columns: [], limit: null, offset: 0 };
  const columns: OrderBy[] = (Array.isArray(l.columns) ? l.columns : []).map((c) =>
    typeof c === "string"
      ? { dimension: c, descending: false, ordering: "lexicographic" }
      : {
          dimension: String((c as Record<string, unknown>).dimension),
          descending: String((c as Record<string, unknown>).direction ?? "ascending")
            .toLowerCase()
            .startsWith("desc"),
          ordering: String((c as Record<string, unknown>).dimensionOrder ?? "lexicographic"),
        },
  );
  return {
    columns,
    limit: typeof l.limit === "number" ? l.limit : null,
    offset: typeof l.offset === "number" ? l.offset : 0,
  };
}

export function bindHaving(h: Record<string, unknown>): Having {
  switch (h.type) {
    case "greaterThan":
    case "lessThan":
    case "equalTo":
      return { type: h.type, aggregation: String(h.aggregation), value: Number(h.value) };
    case "and":
    case "or":
      return {
        type: h.type,
        havingSpecs: (Array.isArray(h.havingSpecs) ? h.havingSpecs : []).filter(isObject).map(bindHaving),
      };
    case "not":
      return { type: "not", havingSpec: bindHaving(isObject(h.havingSpec) ? h.havingSpec : {}) };
    case "dimSelector":
      return {
        type: "dimSelector",
        dimension: String(h.dimension),
        value: h.value === null || h.value === undefined ? null : String(h.value),
      };
    default:
      throw bindError(
        "org.apache.druid.java.util.common.UOE",
        `having type ${JSON.stringify(h.type)}: the segops emulator answers greaterThan, lessThan, equalTo, and, or, not and dimSelector`,
      );
  }
}
