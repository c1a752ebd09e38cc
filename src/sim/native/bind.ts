import { GRANULARITY_NAMES, type Granularity, parseGranularity } from "../../core/granularity.js";
import { type Interval, parseInterval } from "../../core/interval.js";
import { bindAggregators, bindPostAggregators, checkPostAggregatorFields } from "./bind-aggregators.js";
import { bindFilter } from "./bind-filter.js";
import { bindDimension, bindHaving, bindLimitSpec, bindTopNMetric } from "./bind-parts.js";
import { type Binding, cannotConstruct, chained, chainText } from "./binding.js";
import { bindError, CLASSES } from "./errors.js";
import { aggregatorText, postAggregatorText } from "./java-text.js";
import type { Located } from "./located-json.js";
import type {
  Analysis,
  Common,
  GroupByQuery,
  NativeQuery,
  ScanQuery,
  SegmentMetadataQuery,
  TimeBoundaryQuery,
  TimeseriesQuery,
  TopNMetric,
  TopNQuery,
} from "./model.js";

/**
 * Binds a native query body as Druid's Jackson mapping of `Query` does (`@JsonSubTypes` on `queryType`, each
 * query's `@JsonCreator`), with the refusals a real Druid 33 answered (test/conformance/native-cases.ts).
 */

/** `Query`'s registered type ids in Druid 33 (the order Jackson lists them). */
const QUERY_TYPES = [
  "dataSourceMetadata",
  "groupBy",
  "scan",
  "search",
  "segmentMetadata",
  "select",
  "timeBoundary",
  "timeseries",
  "topN",
  "union",
  "windowOperator",
];

const QUERY_CLASS: Record<string, string> = {
  timeseries: "org.apache.druid.query.timeseries.TimeseriesQuery",
  topN: "org.apache.druid.query.topn.TopNQuery",
  groupBy: "org.apache.druid.query.groupby.GroupByQuery",
  scan: "org.apache.druid.query.scan.ScanQuery",
  segmentMetadata: "org.apache.druid.query.metadata.metadata.SegmentMetadataQuery",
  timeBoundary: "org.apache.druid.query.timeboundary.TimeBoundaryQuery",
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export function bindQuery(doc: Located): NativeQuery {
  const body = doc.value;
  if (!isObject(body)) {
    return mismatch(doc, body);
  }
  const type = body.queryType;
  if (type === undefined || type === null) {
    throw bindError(
      CLASSES.typeId,
      `Could not resolve subtype of [simple type, class org.apache.druid.query.Query]: missing type id property 'queryType'\n ${doc.closeOf(body)}`,
    );
  }
  if (typeof type !== "string" || !(type in QUERY_CLASS)) {
    if (typeof type === "string" && QUERY_TYPES.includes(type)) {
      throw bindError(
        "org.apache.druid.java.util.common.UOE",
        `Query type [${type}] is not supported by the segops emulator (it answers ${Object.keys(QUERY_CLASS).join(", ")})`,
      );
    }
    throw bindError(
      CLASSES.typeId,
      `Please make sure to load all the necessary extensions and jars with type '${String(type)}' on 'druid/router' service. Could not resolve type id '${String(type)}' as a subtype of \`org.apache.druid.query.Query\` known type ids = [${QUERY_TYPES.join(", ")}]\n ${doc.memberOf(body, "queryType")}`,
    );
  }
  const className = QUERY_CLASS[type] as string;
  const b: Binding = { doc, chain: "" };
  const field = (name: string): Binding => ({ doc, chain: `${className}["${name}"]` });
  const refuse = (problem: string) => cannotConstruct(b, body, className, problem);
  const common = bindCommon(body, type, field, refuse);
  switch (type) {
    case "timeseries":
    case "topN":
    case "groupBy": {
      const granularity = bindGranularity(body, field("granularity"));
      const aggregations = bindAggregators(body.aggregations, field("aggregations"));
      const postAggregations = bindPostAggregators(body.postAggregations, field("postAggregations"));
      const missing = checkPostAggregatorFields(aggregations, postAggregations);
      if (missing) throw refuse(missing);
      const base = { ...common, granularity, aggregations, postAggregations };
      if (type === "timeseries") {
        const q: TimeseriesQuery = {
          ...base,
          queryType: "timeseries",
          descending: body.descending === true,
          limit: typeof body.limit === "number" && body.limit > 0 ? body.limit : null,
        };
        return q;
      }
      if (type === "topN") {
        if (body.dimension === undefined || body.dimension === null)
          throw refuse("dimensionSpec can't be null");
        if (body.metric === undefined || body.metric === null) throw refuse("must specify a metric");
        const dimension = bindDimension(body.dimension, field("dimension"));
        const threshold = Number(body.threshold ?? 0);
        if (!(threshold > 0)) throw refuse("Threshold cannot be equal to 0.");
        const metric = bindTopNMetric(body.metric, field("metric"));
        const named = numericMetric(metric);
        const known = [...aggregations.map((a) => a.name), ...postAggregations.map((p) => p.name)];
        if (named !== null && !known.includes(named))
          throw refuse(
            `Must have an AggregatorFactory or PostAggregator for metric[${named}], gave[[${aggregations.map(aggregatorText).join(", ")}]] and [[${postAggregations.map(postAggregatorText).join(", ")}]]`,
          );
        const q: TopNQuery = { ...base, queryType: "topN", dimension, metric, threshold };
        return q;
      }
      const dims = Array.isArray(body.dimensions) ? body.dimensions : [];
      const q: GroupByQuery = {
        ...base,
        queryType: "groupBy",
        dimensions: dims.map((d, i) =>
          bindDimension(d, chained(field("dimensions"), `->java.util.ArrayList[${i}]`)),
        ),
        limitSpec: bindLimitSpec(body.limitSpec),
        having: isObject(body.having) ? bindHaving(body.having) : null,
      };
      return q;
    }
    case "scan":
      return bindScan(body, common, refuse);
    case "segmentMetadata": {
      const analysisTypes = new Set<Analysis>(
        Array.isArray(body.analysisTypes)
          ? (body.analysisTypes.map((a) => String(a)) as Analysis[])
          : ["cardinality", "interval", "minmax"],
      );
      const q: SegmentMetadataQuery = {
        ...common,
        queryType: "segmentMetadata",
        intervals: body.intervals === undefined || body.intervals === null ? null : common.intervals,
        merge: body.merge === true,
        analysisTypes,
      };
      return q;
    }
    default: {
      const bound = body.bound === "minTime" || body.bound === "maxTime" ? body.bound : null;
      const q: TimeBoundaryQuery = { ...common, queryType: "timeBoundary", bound };
      return q;
    }
  }
}

function mismatch(doc: Located, body: unknown): never {
  const token = Array.isArray(body)
    ? "START_ARRAY"
    : body === null
      ? "VALUE_NULL"
      : typeof body === "number"
        ? Number.isInteger(body)
          ? "VALUE_NUMBER_INT"
          : "VALUE_NUMBER_FLOAT"
        : typeof body === "boolean"
          ? body
            ? "VALUE_TRUE"
            : "VALUE_FALSE"
          : "VALUE_STRING";
  throw bindError(
    CLASSES.mismatch,
    `Cannot deserialize value of type \`org.apache.druid.query.Query\` from ${Array.isArray(body) ? "Array" : "non-Object"} value (token \`JsonToken.${token}\`)\n ${doc.at(0)}`,
  );
}

/** All time, as Druid's `Intervals.ETERNITY` prints it. */
const ETERNITY: Interval = { start: -9223372036854, end: 9223372036854 };
const ETERNITY_TEXT = "-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z";

function bindInterval(text: string, b: Binding, o: object): Interval {
  if (text === ETERNITY_TEXT) return ETERNITY;
  try {
    return parseInterval(text);
  } catch {
    throw bindError(
      CLASSES.instantiation,
      `Cannot construct instance of \`org.joda.time.Interval\`, problem: Invalid format: "${text}"\n ${b.doc.closeOf(o)}${chainText(b)}`,
    );
  }
}

function bindCommon(
  body: Record<string, unknown>,
  type: string,
  field: (name: string) => Binding,
  refuse: (problem: string) => Error,
): Common {
  const ds = body.dataSource;
  let dataSource: string;
  if (typeof ds === "string") dataSource = ds;
  else if (isObject(ds) && ds.type === "table" && typeof ds.name === "string") dataSource = ds.name;
  else if (ds === undefined || ds === null) throw refuse("dataSource can't be null");
  else
    throw bindError(
      "org.apache.druid.java.util.common.UOE",
      `dataSource ${JSON.stringify(ds)}: the segops emulator answers table datasources only`,
    );
  let intervals: Interval[] = [ETERNITY];
  const spec = body.intervals;
  const texts = Array.isArray(spec)
    ? spec
    : typeof spec === "string"
      ? [spec]
      : isObject(spec) && Array.isArray(spec.intervals)
        ? spec.intervals
        : null;
  if (texts) intervals = texts.map((t) => bindInterval(String(t), field("intervals"), body));
  else if (type !== "segmentMetadata" && type !== "timeBoundary")
    throw refuse("querySegmentSpec can't be null");
  intervals.sort((a, c) => a.start - c.start);
  const filter =
    body.filter === undefined || body.filter === null
      ? null
      : bindFilter(body.filter, field("filter"), "filter");
  const context = isObject(body.context) ? body.context : {};
  return { dataSource, intervals, filter, context };
}

function bindGranularity(body: Record<string, unknown>, b: Binding): Granularity {
  const g = body.granularity ?? "all";
  if (typeof g === "string" && !(g.toLowerCase() in GRANULARITY_NAMES)) {
    throw bindError(
      CLASSES.instantiation,
      `Cannot construct instance of \`org.apache.druid.java.util.common.granularity.Granularity\`, problem: No enum constant org.apache.druid.java.util.common.granularity.GranularityType.${g.toUpperCase()}\n ${b.doc.memberOf(body, "granularity")}${chainText(b)}`,
    );
  }
  try {
    return parseGranularity(g, { druidJson: true });
  } catch (error) {
    throw bindError(
      CLASSES.instantiation,
      `Cannot construct instance of \`org.apache.druid.java.util.common.granularity.Granularity\`, problem: ${(error as Error).message}\n ${b.doc.memberOf(body, "granularity")}${chainText(b)}`,
    );
  }
}

function bindScan(
  body: Record<string, unknown>,
  common: Common,
  refuse: (problem: string) => Error,
): ScanQuery {
  const columns = Array.isArray(body.columns) ? body.columns.map(String) : [];
  const orderText = String(body.order ?? "none").toLowerCase();
  const order = orderText === "ascending" || orderText === "descending" ? orderText : "none";
  if (order !== "none" && columns.length > 0 && !columns.includes("__time"))
    throw refuse("The __time column must be selected if the results are time-ordered.");
  const format = String(body.resultFormat ?? "list");
  const limit = typeof body.limit === "number" && body.limit > 0 ? body.limit : null;
  return {
    ...common,
    queryType: "scan",
    columns,
    // Checked when the query runs, as Druid's ScanQueryEngine does (a 500 from the data server).
    resultFormat: format as ScanQuery["resultFormat"],
    limit,
    offset: typeof body.offset === "number" ? body.offset : 0,
    order,
    batchSize: typeof body.batchSize === "number" && body.batchSize > 0 ? body.batchSize : 20480,
  };
}

/** The aggregator or post-aggregator a topN ranks by (through `inverted`); null for a dimension ordering. */
function numericMetric(m: TopNMetric): string | null {
  if (m.type === "inverted") return numericMetric(m.of);
  return m.type === "numeric" ? m.metric : null;
}
