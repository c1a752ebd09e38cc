import type { Granularity } from "../../core/granularity.js";
import type { Interval } from "../../core/interval.js";

/**
 * The native queries the emulator answers, as Druid's Jackson binding leaves them (docs/querying/*.md in
 * apache/druid: timeseriesquery, topnquery, groupbyquery, scan-query, segmentmetadataquery,
 * timeboundaryquery). Fields the emulator does not read are dropped by the binder.
 */

export type Filter =
  | { type: "selector"; dimension: string; value: string | null }
  | { type: "equals"; column: string; matchValueType: string; matchValue: unknown }
  | { type: "null"; column: string }
  | {
      type: "range";
      column: string;
      matchValueType: string;
      lower: unknown;
      upper: unknown;
      lowerOpen: boolean;
      upperOpen: boolean;
    }
  | {
      type: "bound";
      dimension: string;
      lower: string | null;
      upper: string | null;
      lowerStrict: boolean;
      upperStrict: boolean;
      ordering: string;
    }
  | { type: "in"; dimension: string; values: (string | null)[] }
  | { type: "like"; dimension: string; regex: RegExp }
  | { type: "regex"; dimension: string; regex: RegExp }
  | { type: "interval"; dimension: string; intervals: Interval[] }
  | { type: "and" | "or"; fields: Filter[] }
  | { type: "not"; field: Filter }
  | { type: "true" | "false" };

/** Each simple aggregator type and the Druid factory class that binds it (for messages that name the class). */
export const AGGREGATOR_FACTORIES = {
  count: "CountAggregatorFactory",
  longSum: "LongSumAggregatorFactory",
  doubleSum: "DoubleSumAggregatorFactory",
  floatSum: "FloatSumAggregatorFactory",
  longMin: "LongMinAggregatorFactory",
  longMax: "LongMaxAggregatorFactory",
  doubleMin: "DoubleMinAggregatorFactory",
  doubleMax: "DoubleMaxAggregatorFactory",
  floatMin: "FloatMinAggregatorFactory",
  floatMax: "FloatMaxAggregatorFactory",
} as const;

export type AggregatorKind = keyof typeof AGGREGATOR_FACTORIES;

export type Aggregator =
  | { kind: AggregatorKind; name: string; fieldName: string | null }
  /** `ownName`: the name the filtered aggregator was given, if any (else it answers under its aggregator's). */
  | { kind: "filtered"; name: string; ownName: string | null; filter: Filter; aggregator: Aggregator };

export type PostAggregator =
  | { type: "arithmetic"; name: string; fn: string; fields: PostAggregator[] }
  | { type: "fieldAccess" | "finalizingFieldAccess"; name: string | null; fieldName: string }
  | { type: "constant"; name: string | null; value: number };

export type OutputType = "STRING" | "LONG" | "DOUBLE" | "FLOAT";

export interface DimensionSpec {
  dimension: string;
  outputName: string;
  outputType: OutputType;
}

export interface Common {
  dataSource: string;
  intervals: Interval[];
  filter: Filter | null;
  context: Record<string, unknown>;
}

export interface Aggregating extends Common {
  granularity: Granularity;
  aggregations: Aggregator[];
  postAggregations: PostAggregator[];
}

export interface TimeseriesQuery extends Aggregating {
  queryType: "timeseries";
  descending: boolean;
  limit: number | null;
}

export type TopNMetric =
  | { type: "numeric"; metric: string }
  | { type: "inverted"; of: TopNMetric }
  | { type: "dimension"; ordering: string; previousStop: string | null };

export interface TopNQuery extends Aggregating {
  queryType: "topN";
  dimension: DimensionSpec;
  metric: TopNMetric;
  threshold: number;
}

export interface OrderBy {
  dimension: string;
  descending: boolean;
  ordering: string;
}

export type Having =
  | { type: "greaterThan" | "lessThan" | "equalTo"; aggregation: string; value: number }
  | { type: "and" | "or"; havingSpecs: Having[] }
  | { type: "not"; havingSpec: Having }
  | { type: "dimSelector"; dimension: string; value: string | null };

export interface GroupByQuery extends Aggregating {
  queryType: "groupBy";
  dimensions: DimensionSpec[];
  limitSpec: { columns: OrderBy[]; limit: number | null; offset: number };
  having: Having | null;
}

export interface ScanQuery extends Common {
  queryType: "scan";
  columns: string[];
  resultFormat: "list" | "compactedList";
  limit: number | null;
  offset: number;
  order: "none" | "ascending" | "descending";
  batchSize: number;
}

export type Analysis =
  | "cardinality"
  | "interval"
  | "minmax"
  | "size"
  | "aggregators"
  | "rollup"
  | "timestampSpec"
  | "queryGranularity";

export interface SegmentMetadataQuery extends Omit<Common, "intervals"> {
  queryType: "segmentMetadata";
  /** Null: Druid's default history before the newest segment's end. */
  intervals: Interval[] | null;
  merge: boolean;
  analysisTypes: Set<Analysis>;
}

export interface TimeBoundaryQuery extends Common {
  queryType: "timeBoundary";
  bound: "minTime" | "maxTime" | null;
}

export type NativeQuery =
  | TimeseriesQuery
  | TopNQuery
  | GroupByQuery
  | ScanQuery
  | SegmentMetadataQuery
  | TimeBoundaryQuery;
