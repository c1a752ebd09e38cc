// The native-query conformance cases: what a real Druid 33.0.0 answered on `POST /druid/v2/` for timeseries,
// topN, groupBy, scan, segmentMetadata and timeBoundary over one small datasource, and for the queries it refused.
// The answers are in native-druid33.json (observed on the real Druid 33 stage, scripts/druid/start, by running
// these queries; the datasource's name, segment versions and the Historical's host normalised). The same cases run
// against a live Druid (native.conformance.ts, opt-in) and against the emulator (test/sim/native-conformance.test.ts,
// default suite); where the two differ, the emulator is what gets fixed. Never a `granularity: "none"` timeseries
// over hours here: Druid zero-fills one bucket per millisecond and a small Historical runs out of heap.
import { readFileSync } from "node:fs";
import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type ConformanceTarget,
  call,
  eventually,
  freshId,
  ingestServed,
  json,
  writeInput,
} from "./support.js";

const INTERVAL = "2026-01-01T00:00:00.000Z/2026-01-03T00:00:00.000Z";

/** The rows: two days of eight rows, every third hour; channel null every fourth row; long and double columns. */
export function nativeRows(): Record<string, unknown>[] {
  const channels = ["#en", "#fr", "#de", null];
  return ["2026-01-01", "2026-01-02"].flatMap((day) =>
    Array.from({ length: 8 }, (_, i) => ({
      time: `${day}T${String(i * 3).padStart(2, "0")}:15:00Z`,
      channel: channels[i % 4],
      page: `p${i % 3}`,
      added: (i + 1) * 10,
      delta: (i % 2 ? -1 : 1) * (i + 0.5),
    })),
  );
}

function spec(id: string, dataSource: string, baseDir: string): Record<string, unknown> {
  return {
    type: "index_parallel",
    id,
    spec: {
      dataSchema: {
        dataSource,
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: {
          dimensions: ["channel", "page", { type: "long", name: "added" }, { type: "double", name: "delta" }],
        },
        granularitySpec: { segmentGranularity: "day", queryGranularity: "none", rollup: false },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "local", baseDir, filter: "*.json" },
        inputFormat: { type: "json" },
      },
      tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic" } },
    },
  };
}

/** Rows for the rolled-up datasource: twelve rows over three hours of one day, two pages. */
export function rollupRows(): Record<string, unknown>[] {
  return Array.from({ length: 12 }, (_, i) => ({
    time: `2026-02-01T0${i % 3}:${String(i * 4).padStart(2, "0")}:00Z`,
    page: `p${i % 2}`,
    added: i + 1,
    delta: i % 2 ? 0.5 : -1.25,
  }));
}

/** Rollup by hour, with metrics named out of alphabetical order (a segment lists them sorted). */
function rollupSpec(id: string, dataSource: string, baseDir: string): Record<string, unknown> {
  const base = spec(id, dataSource, baseDir) as { spec: { dataSchema: Record<string, unknown> } };
  base.spec.dataSchema = {
    ...base.spec.dataSchema,
    dimensionsSpec: { dimensions: ["page"] },
    metricsSpec: [
      { type: "count", name: "count" },
      { type: "longSum", name: "added", fieldName: "added" },
      { type: "doubleMin", name: "dmin", fieldName: "delta" },
    ],
    granularitySpec: { segmentGranularity: "day", queryGranularity: "hour", rollup: true },
  };
  return base;
}

/** Queries over the rolled-up datasource. */
export const ROLLUP_CASES: [string, Record<string, unknown>][] = [
  [
    "rollup: sums of the count metric, the rolled-up row count",
    {
      queryType: "timeseries",
      granularity: "all",
      intervals: ["2026-02-01/2026-02-02"],
      aggregations: [
        { type: "count", name: "rows" },
        { type: "longSum", name: "n", fieldName: "count" },
        { type: "longSum", name: "added", fieldName: "added" },
        { type: "doubleMin", name: "dmin", fieldName: "dmin" },
      ],
    },
  ],
  [
    "rollup: a scan lists rows by time then dimension, metrics by name",
    { queryType: "scan", intervals: ["2026-02-01/2026-02-02"], limit: 3 },
  ],
  [
    "rollup: a merged segmentMetadata of one segment keeps its id",
    {
      queryType: "segmentMetadata",
      intervals: ["2026-02-01/2026-02-02"],
      merge: true,
      analysisTypes: ["rollup", "cardinality", "minmax"],
    },
  ],
  [
    "rollup: groupBy per hour over the query granularity's times",
    {
      queryType: "groupBy",
      granularity: "hour",
      intervals: ["2026-02-01/2026-02-02"],
      dimensions: ["page"],
      aggregations: [{ type: "longSum", name: "n", fieldName: "count" }],
    },
  ],
];

/** Queries over the datasource (its name is added), by what each shows. */
export const NATIVE_CASES: [string, Record<string, unknown>][] = [
  [
    "timeseries: all granularity names the earliest row's time; count, longSum, doubleSum, a sum of a missing column is null",
    {
      queryType: "timeseries",
      granularity: "all",
      intervals: ["2025-01-01/2027-01-01"],
      aggregations: [
        { type: "count", name: "n" },
        { type: "longSum", name: "added", fieldName: "added" },
        { type: "doubleSum", name: "delta", fieldName: "delta" },
        { type: "longSum", name: "missing", fieldName: "nosuch" },
      ],
    },
  ],
  [
    "timeseries: hour buckets zero-filled within the data (a null sum in an empty one)",
    {
      queryType: "timeseries",
      granularity: "hour",
      intervals: ["2026-01-01T00/2026-01-01T07"],
      aggregations: [
        { type: "count", name: "n" },
        { type: "longSum", name: "added", fieldName: "added" },
      ],
    },
  ],
  [
    "timeseries: skipEmptyBuckets, descending, limit",
    {
      queryType: "timeseries",
      granularity: "hour",
      intervals: ["2026-01-01T00/2026-01-01T10"],
      descending: true,
      limit: 2,
      context: { skipEmptyBuckets: true },
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "timeseries: a period in a time zone, min/max, arithmetic post-aggregators (/ by zero is 0, quotient Infinity)",
    {
      queryType: "timeseries",
      granularity: { type: "period", period: "PT6H", timeZone: "America/New_York" },
      intervals: ["2026-01-01/2026-01-03"],
      aggregations: [
        { type: "count", name: "n" },
        { type: "longMax", name: "mx", fieldName: "added" },
        { type: "doubleMin", name: "mn", fieldName: "delta" },
      ],
      postAggregations: [
        {
          type: "arithmetic",
          name: "avg",
          fn: "/",
          fields: [
            { type: "fieldAccess", fieldName: "mx" },
            { type: "fieldAccess", fieldName: "n" },
          ],
        },
        {
          type: "arithmetic",
          name: "zero",
          fn: "/",
          fields: [
            { type: "constant", value: 7 },
            { type: "constant", value: 0 },
          ],
        },
        {
          type: "arithmetic",
          name: "inf",
          fn: "quotient",
          fields: [
            { type: "constant", value: 7 },
            { type: "constant", value: 0 },
          ],
        },
      ],
    },
  ],
  [
    "timeseries: a duration granularity and a selector on null",
    {
      queryType: "timeseries",
      granularity: { type: "duration", duration: 43200000 },
      intervals: ["2026-01-01/2026-01-03"],
      filter: { type: "selector", dimension: "channel", value: null },
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "timeseries: filtered aggregator, or of bound and like, doubleSum of a string column",
    {
      queryType: "timeseries",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-03"],
      filter: {
        type: "or",
        fields: [
          { type: "bound", dimension: "added", lower: "20", upper: "60", ordering: "numeric" },
          { type: "like", dimension: "page", pattern: "p2%" },
        ],
      },
      aggregations: [
        {
          type: "filtered",
          filter: { type: "in", dimension: "channel", values: ["#en", "#fr"] },
          aggregator: { type: "count", name: "enfr" },
        },
        { type: "longMin", name: "mn", fieldName: "added" },
        { type: "doubleMax", name: "dx", fieldName: "delta" },
        { type: "doubleSum", name: "chs", fieldName: "channel" },
      ],
    },
  ],
  [
    "timeseries: not of a selector keeps no null rows; and, regex, equals, range",
    {
      queryType: "timeseries",
      granularity: "day",
      intervals: ["2026-01-01/2026-01-03"],
      aggregations: [
        {
          type: "filtered",
          filter: { type: "not", field: { type: "selector", dimension: "channel", value: "#en" } },
          aggregator: { type: "count", name: "notEn" },
        },
        {
          type: "filtered",
          filter: {
            type: "and",
            fields: [
              { type: "regex", dimension: "channel", pattern: "^#[ef]" },
              { type: "equals", column: "page", matchValueType: "STRING", matchValue: "p1" },
            ],
          },
          aggregator: { type: "count", name: "efP1" },
        },
        {
          type: "filtered",
          filter: {
            type: "range",
            column: "delta",
            matchValueType: "DOUBLE",
            lower: -2,
            upper: 2,
            lowerOpen: true,
          },
          aggregator: { type: "doubleSum", name: "small", fieldName: "delta" },
        },
        {
          type: "filtered",
          filter: { type: "null", column: "channel" },
          aggregator: { type: "count", name: "nulls" },
        },
        {
          type: "filtered",
          filter: { type: "not", field: { type: "null", column: "channel" } },
          aggregator: { type: "count", name: "notNulls" },
        },
      ],
    },
  ],
  [
    "timeseries: no data in the intervals under all is one empty result at the interval's start",
    {
      queryType: "timeseries",
      granularity: "all",
      intervals: ["2027-01-01T01/2027-01-01T05"],
      aggregations: [
        { type: "count", name: "n" },
        { type: "longSum", name: "s", fieldName: "added" },
      ],
    },
  ],
  [
    "timeseries: week buckets start on Monday",
    {
      queryType: "timeseries",
      granularity: "week",
      intervals: ["2025-12-01/2026-02-01"],
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "timeseries: a period with an origin, a filtered aggregator over true",
    {
      queryType: "timeseries",
      granularity: { type: "period", period: "PT10H", origin: "2026-01-01T05:00:00Z" },
      intervals: ["2026-01-01/2026-01-02"],
      aggregations: [
        { type: "count", name: "n" },
        { type: "filtered", filter: { type: "true" }, aggregator: { type: "count", name: "all" } },
      ],
    },
  ],
  [
    "timeseries: a duration with an origin",
    {
      queryType: "timeseries",
      granularity: { type: "duration", duration: 36000000, origin: "2026-01-01T05:00:00Z" },
      intervals: ["2026-01-01/2026-01-02"],
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "groupBy: month buckets",
    {
      queryType: "groupBy",
      granularity: "month",
      intervals: ["2025-12-01/2026-02-01"],
      dimensions: [],
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "groupBy: days in a time zone east of UTC, a limit without columns keeps the default order",
    {
      queryType: "groupBy",
      granularity: { type: "period", period: "P1D", timeZone: "Asia/Kolkata" },
      intervals: ["2026-01-01/2026-01-03"],
      dimensions: ["page"],
      aggregations: [{ type: "count", name: "n" }],
      limitSpec: { type: "default", limit: 3 },
    },
  ],
  [
    "topN: by a metric, ties by the dimension value with null first, a post-aggregator",
    {
      queryType: "topN",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-03"],
      dimension: "channel",
      metric: "added",
      threshold: 3,
      aggregations: [
        { type: "count", name: "n" },
        { type: "longSum", name: "added", fieldName: "added" },
      ],
      postAggregations: [
        {
          type: "arithmetic",
          name: "per",
          fn: "/",
          fields: [
            { type: "fieldAccess", fieldName: "added" },
            { type: "fieldAccess", fieldName: "n" },
          ],
        },
      ],
    },
  ],
  [
    "topN: per day, lexicographic dimension order, an output name",
    {
      queryType: "topN",
      granularity: "day",
      intervals: ["2026-01-01/2026-01-03"],
      dimension: { type: "default", dimension: "page", outputName: "pg" },
      metric: { type: "dimension", ordering: "lexicographic" },
      threshold: 2,
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "topN: inverted metric, a long dimension as strings, a filter",
    {
      queryType: "topN",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-03"],
      dimension: "added",
      metric: { type: "inverted", metric: "d" },
      threshold: 3,
      filter: { type: "in", dimension: "page", values: ["p0", "p2"] },
      aggregations: [{ type: "doubleSum", name: "d", fieldName: "delta" }],
    },
  ],
  [
    "topN: hour buckets within the data without rows have empty lists",
    {
      queryType: "topN",
      granularity: "hour",
      intervals: ["2026-01-01T00/2026-01-01T04"],
      dimension: "channel",
      metric: "n",
      threshold: 3,
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "topN: a filter no row passes leaves the bucket with an empty list",
    {
      queryType: "topN",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-03"],
      dimension: "channel",
      metric: "n",
      threshold: 3,
      filter: { type: "selector", dimension: "page", value: "zz" },
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "timeseries: a filter no row passes zero-fills each day",
    {
      queryType: "timeseries",
      granularity: "day",
      intervals: ["2026-01-01/2026-01-03"],
      filter: { type: "selector", dimension: "page", value: "zz" },
      aggregations: [
        { type: "count", name: "n" },
        { type: "doubleSum", name: "d", fieldName: "delta" },
      ],
    },
  ],
  [
    "topN: no data is an empty list",
    {
      queryType: "topN",
      granularity: "all",
      intervals: ["2027-01-01/2027-01-03"],
      dimension: "channel",
      metric: "n",
      threshold: 3,
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "groupBy: two dimensions under all (timestamps at the interval's start), a not filter, post-aggregator",
    {
      queryType: "groupBy",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-03"],
      dimensions: ["channel", "page"],
      filter: {
        type: "not",
        field: { type: "equals", column: "page", matchValueType: "STRING", matchValue: "p1" },
      },
      aggregations: [
        { type: "count", name: "n" },
        { type: "doubleSum", name: "d", fieldName: "delta" },
      ],
      postAggregations: [
        {
          type: "arithmetic",
          name: "x",
          fn: "*",
          fields: [
            { type: "fieldAccess", fieldName: "n" },
            { type: "constant", value: 2 },
          ],
        },
      ],
    },
  ],
  [
    "groupBy: per day, a LONG output dimension, range filter, limitSpec descending",
    {
      queryType: "groupBy",
      granularity: "day",
      intervals: ["2026-01-01/2026-01-03"],
      dimensions: [{ type: "default", dimension: "added", outputName: "a", outputType: "LONG" }],
      filter: {
        type: "range",
        column: "added",
        matchValueType: "LONG",
        lower: 40,
        upper: 60,
        upperOpen: true,
      },
      aggregations: [{ type: "count", name: "n" }],
      limitSpec: {
        type: "default",
        limit: 3,
        columns: [{ dimension: "a", direction: "descending", dimensionOrder: "numeric" }],
      },
    },
  ],
  [
    "groupBy: having, ordering by an aggregator",
    {
      queryType: "groupBy",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-03"],
      dimensions: ["page"],
      aggregations: [{ type: "longSum", name: "s", fieldName: "added" }],
      having: { type: "greaterThan", aggregation: "s", value: 200 },
      limitSpec: {
        type: "default",
        columns: [{ dimension: "s", direction: "descending", dimensionOrder: "numeric" }],
      },
    },
  ],
  [
    "groupBy: no dimensions, and no data",
    {
      queryType: "groupBy",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-02", "2027-01-01/2027-01-02"],
      dimensions: [],
      aggregations: [{ type: "count", name: "n" }],
    },
  ],
  [
    "scan: chosen columns (one unknown, untyped in rowSignature), a limit, a batch per segment",
    {
      queryType: "scan",
      intervals: ["2026-01-01T00/2026-01-01T10"],
      columns: ["__time", "channel", "added", "nosuch"],
      limit: 3,
    },
  ],
  [
    "scan: compactedList, descending by time (no segment id), a filter",
    {
      queryType: "scan",
      intervals: ["2026-01-01/2026-01-03"],
      resultFormat: "compactedList",
      filter: { type: "equals", column: "page", matchValueType: "STRING", matchValue: "p1" },
      order: "descending",
      columns: ["__time", "page", "delta"],
      limit: 4,
    },
  ],
  [
    "scan: every column, an offset across segments",
    { queryType: "scan", intervals: ["2026-01-01T20/2026-01-02T04"], offset: 1 },
  ],
  [
    "segmentMetadata: per segment, default analyses",
    { queryType: "segmentMetadata", intervals: ["2026-01-01/2026-01-03"] },
  ],
  ["segmentMetadata: merged over the default history", { queryType: "segmentMetadata", merge: true }],
  [
    "segmentMetadata: merged with size and rollup only",
    {
      queryType: "segmentMetadata",
      merge: true,
      intervals: ["2026-01-01/2026-01-03"],
      analysisTypes: ["size", "rollup"],
    },
  ],
  ["timeBoundary: both bounds", { queryType: "timeBoundary" }],
  ["timeBoundary: maxTime only", { queryType: "timeBoundary", bound: "maxTime" }],
  [
    "timeBoundary: minTime of filtered rows within intervals",
    {
      queryType: "timeBoundary",
      bound: "minTime",
      intervals: ["2026-01-01T05/2026-01-02"],
      filter: { type: "selector", dimension: "page", value: "p2" },
    },
  ],
];

/**
 * Bodies Druid refuses, sent as text (`DS` becomes a datasource name: the fixed, absent one of the binding errors,
 * whose locations count its characters, or the ingested one where the query runs).
 */
export const NATIVE_ERRORS: [string, string][] = [
  ["an unknown queryType", '{"queryType":"nosuch","dataSource":"DS"}'],
  ["no queryType", '{"dataSource":"DS"}'],
  ["a body that is not JSON", "not json"],
  [
    "no intervals",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","aggregations":[{"type":"count","name":"n"}]}',
  ],
  [
    "an unknown granularity name",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"fortnight","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"count","name":"n"}]}',
  ],
  [
    "an aggregator without fieldName",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"longSum","name":"n"}]}',
  ],
  [
    "a post-aggregator reading an unknown field",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"count","name":"n"}],"postAggregations":[{"type":"fieldAccess","name":"q","fieldName":"zz"}]}',
  ],
  [
    "a topN without metric",
    '{"queryType":"topN","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"dimension":"channel","threshold":3,"aggregations":[{"type":"count","name":"n"}]}',
  ],
  [
    "an unknown filter type inside not",
    '{"queryType":"groupBy","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"dimensions":[],"filter":{"type":"not","field":{"type":"equality","column":"page","matchValue":"p1"}},"aggregations":[{"type":"count","name":"n"}]}',
  ],
  [
    "a time-ordered scan without __time",
    '{"queryType":"scan","dataSource":"DS","intervals":["2026-01-01/2026-01-03"],"order":"ascending","columns":["page"],"limit":2}',
  ],
  [
    "an unknown aggregator type",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"nosuch","name":"n"}]}',
  ],
  [
    "an unknown post-aggregator type",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"count","name":"n"}],"postAggregations":[{"type":"nosuch","name":"p"}]}',
  ],
  [
    "a filter without a type",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"count","name":"n"}],"filter":{"value":"x"}}',
  ],
  [
    "filters without their column, each in its class's words",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"count","name":"n"}],"filter":{"type":"or","fields":[{"type":"selector","dimension":"a","value":"b"},{"type":"in","values":["a"]}]}}',
  ],
  [
    "a selector without dimension",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"count","name":"n"}],"filter":{"type":"selector","value":"x"}}',
  ],
  [
    "an equals filter without column",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"count","name":"n"}],"filter":{"type":"equals","matchValueType":"STRING","matchValue":"x"}}',
  ],
  [
    "a range filter without column",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"count","name":"n"}],"filter":{"type":"range","matchValueType":"LONG","lower":1}}',
  ],
  [
    "a like filter without dimension inside not",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"count","name":"n"}],"filter":{"type":"not","field":{"type":"like","pattern":"a"}}}',
  ],
  [
    "a filtered aggregator without its aggregator",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"filtered","filter":{"type":"true"}},{"type":"count"}]}',
  ],
  [
    "a filtered aggregator whose aggregator has no fieldName",
    '{"queryType":"timeseries","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"aggregations":[{"type":"filtered","filter":{"type":"true"},"aggregator":{"type":"longSum","name":"x"}}]}',
  ],
  [
    "a topN ranked by a name no aggregator or post-aggregator has, each printed as Java does",
    '{"queryType":"topN","dataSource":"DS","granularity":"all","intervals":["2026-01-01/2026-01-03"],"dimension":"d","metric":{"type":"inverted","metric":"zz"},"threshold":2,"aggregations":[{"type":"longSum","name":"s","fieldName":"added"},{"type":"doubleMax","name":"m","fieldName":"delta"},{"type":"filtered","filter":{"type":"true"},"aggregator":{"type":"count","name":"c"}}],"postAggregations":[{"type":"arithmetic","name":"p","fn":"+","fields":[{"type":"fieldAccess","fieldName":"s"},{"type":"constant","value":1}]}]}',
  ],
  [
    "a scan resultFormat the data server refuses",
    '{"queryType":"scan","dataSource":"DS","intervals":["2026-01-01/2026-01-03"],"resultFormat":"valueVector"}',
  ],
];

/** The datasource the binding errors name; it need not exist (Jackson refuses the body before any lookup). */
export const ERROR_DATASOURCE = "segops_native_conformance";

/** Cases whose query has to reach the data servers, so they name the ingested datasource. */
export const RUNTIME_ERRORS = new Set(["a scan resultFormat the data server refuses"]);

export interface NativeAnswer {
  status: number;
  body: unknown;
}

/** The answers a real Druid 33 gave (native-druid33.json). */
export function druid33Answers(): {
  cases: Record<string, NativeAnswer>;
  rollup: Record<string, NativeAnswer>;
  errors: Record<string, NativeAnswer>;
} {
  return JSON.parse(readFileSync(new URL("./native-druid33.json", import.meta.url), "utf8"));
}

/**
 * What differs between two clusters answering the same query: the datasource's name (fresh per run), segment
 * versions (the time a task ran) and the Historical's host in a data server's error.
 */
export function normalise(body: unknown, dataSource: string): unknown {
  const text = JSON.stringify(body)
    .replaceAll(dataSource, "DS")
    .replace(/(DS_[^"_]+_[^"_]+)_\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "$1_VERSION");
  const value = JSON.parse(text) as unknown;
  if (value && typeof value === "object" && "errorCode" in value) {
    const e = value as { host?: unknown; context?: { host?: unknown } };
    if (typeof e.host === "string") e.host = "HISTORICAL";
    if (e.context && typeof e.context.host === "string") e.context.host = "HISTORICAL";
  }
  return value;
}

/** Posts a native query body as text to `/druid/v2/` (pydruid's path). */
export async function nativeQuery(target: ConformanceTarget, body: string): Promise<NativeAnswer> {
  const ex = await call(target, "POST", "/druid/v2/", body);
  return { status: ex.status, body: json(ex) };
}

/** Defines the native cases against `target`. */
export function nativeConformanceSuite(target: ConformanceTarget): void {
  const expected = druid33Answers();
  describe(`native queries: ${target.name}`, () => {
    const dataSource = freshId("segops_native");
    const ask = async (body: string) => {
      const a = await nativeQuery(target, body);
      return { status: a.status, body: normalise(a.body, dataSource) };
    };

    const rollupSource = freshId("segops_native_rollup");

    /** Submits a task and waits until its rows are served and the Broker counts `rows` rows. */
    async function ingest(ds: string, task: Record<string, unknown>, interval: string, rows: number) {
      await ingestServed(target, task, ds, interval);
      // The Broker learns of loaded segments a moment after the Coordinator does.
      await eventually(target, `the Broker to see every row of ${ds}`, async () => {
        const a = await nativeQuery(
          target,
          JSON.stringify({
            queryType: "timeseries",
            dataSource: ds,
            intervals: [interval],
            granularity: "all",
            aggregations: [{ type: "count", name: "n" }],
          }),
        );
        return JSON.stringify(a.body).includes(`"n":${rows}`) ? true : undefined;
      });
    }

    beforeAll(async () => {
      const dir = writeInput(target.dataDir(), { "rows.json": nativeRows() });
      const rollupDir = writeInput(target.dataDir(), { "rows.json": rollupRows() });
      await Promise.all([
        ingest(dataSource, spec(freshId("segops_native_task"), dataSource, dir), INTERVAL, 16),
        ingest(
          rollupSource,
          rollupSpec(freshId("segops_native_rollup_task"), rollupSource, rollupDir),
          "2026-02-01T00:00:00.000Z/2026-02-02T00:00:00.000Z",
          6,
        ),
      ]);
    });

    for (const [name, query] of ROLLUP_CASES) {
      it(name, async () => {
        const a = await nativeQuery(target, JSON.stringify({ ...query, dataSource: rollupSource }));
        expect({ status: a.status, body: normalise(a.body, rollupSource) }).toEqual(expected.rollup[name]);
      });
    }

    for (const [name, query] of NATIVE_CASES) {
      it(name, async () => {
        expect(await ask(JSON.stringify({ ...query, dataSource }))).toEqual(expected.cases[name]);
      });
    }

    it("indents ?pretty as Jackson's default printer and echoes context.queryId in X-Druid-Query-Id", async () => {
      const res = await request(`${target.url()}/druid/v2/?pretty`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          queryType: "timeBoundary",
          dataSource,
          context: { queryId: "segops-native-pretty" },
        }),
      });
      expect([res.statusCode, res.headers["x-druid-query-id"], await res.body.text()]).toEqual([
        200,
        "segops-native-pretty",
        '[ {\n  "timestamp" : "2026-01-01T00:15:00.000Z",\n  "result" : {\n    "maxTime" : "2026-01-02T21:15:00.000Z",\n    "minTime" : "2026-01-01T00:15:00.000Z"\n  }\n} ]',
      ]);
    });

    it("refuses a body not declared as JSON with an empty 415, also on the path without a slash", async () => {
      const body = JSON.stringify({ queryType: "timeBoundary", dataSource });
      const ex = await call(target, "POST", "/druid/v2", body, "text/plain");
      expect([ex.status, ex.text]).toEqual([415, ""]);
    });

    it("lists the datasource in the Broker's catalogue, with its columns over an interval, sorted", async () => {
      const get = async (path: string) => {
        const ex = await call(target, "GET", `/druid/v2/datasources${path}`);
        return [ex.status, json(ex)];
      };
      const listed = await call(target, "GET", "/druid/v2/datasources");
      expect(json(listed)).toContain(dataSource);
      const columns = { dimensions: ["added", "channel", "delta", "page"], metrics: [] };
      const days = "2026-01-01T00:00:00.000Z/2026-01-03T00:00:00.000Z";
      expect(await get(`/${dataSource}?interval=2026-01-01/2026-01-03`)).toEqual([200, columns]);
      // `full`: by interval, the two days' segments joined, clipped to the interval asked for.
      expect(await get(`/${dataSource}?interval=2026-01-01/2026-01-03&full`)).toEqual([
        200,
        { [days]: columns },
      ]);
      expect(await get(`/${dataSource}?interval=2026-01-01T05/2026-01-01T06&full`)).toEqual([
        200,
        { "2026-01-01T05:00:00.000Z/2026-01-01T06:00:00.000Z": columns },
      ]);
      expect(await get(`/${dataSource}/dimensions?interval=2026-01-01/2026-01-03`)).toEqual([
        200,
        columns.dimensions,
      ]);
      expect(await get(`/${dataSource}/metrics?interval=2026-01-01/2026-01-03`)).toEqual([200, []]);
      // Without an interval: the week before now, long after these rows.
      expect(await get(`/${dataSource}`)).toEqual([200, { dimensions: [], metrics: [] }]);
      expect(await get(`/${ERROR_DATASOURCE}?interval=2026-01-01/2026-01-03`)).toEqual([
        200,
        { dimensions: [], metrics: [] },
      ]);
    });

    it("answers a catalogue interval that does not parse with Jetty's 500 page naming Druid's exception", async () => {
      const ex = await call(target, "GET", `/druid/v2/datasources/${dataSource}?interval=bad`);
      expect([ex.status, ex.text]).toEqual([
        500,
        expect.stringContaining(
          "<title>Error 500 org.apache.druid.error.DruidException: Invalid interval[bad]: [Format requires a &apos;/&apos; separator: bad]</title>",
        ),
      ]);
    });

    for (const [name, body] of NATIVE_ERRORS) {
      it(`refuses ${name}`, async () => {
        const ds = RUNTIME_ERRORS.has(name) ? dataSource : ERROR_DATASOURCE;
        expect(await ask(body.replaceAll("DS", ds))).toEqual(expected.errors[name]);
      });
    }
  });
}
