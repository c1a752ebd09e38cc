import type { Row } from "../ingest.js";
import { bucketRows, instant, zoneOf } from "./buckets.js";
import type { SegmentData } from "./data.js";
import { aggregate, asNumber, asText, jsonNumber, postAggregate } from "./evaluate.js";
import type { DimensionSpec, TopNMetric, TopNQuery } from "./model.js";

/**
 * A topN (docs/querying/topnquery.md; `TopNQueryEngine`, `TopNNumericResultBuilder`): per bucket, the dimension's
 * values ranked by the metric spec, ties broken by the dimension value ascending (null first), cut at the
 * threshold. Buckets are a timeseries' (each segment's data interval cut by the granularity): one without rows
 * has an empty list, and no data at all is `[]`.
 */

export type DimValue = string | number | null;

/** A row's values of a dimension as a dimension spec outputs them (a multi-value row gives each value). */
export function dimValues(row: Row, d: DimensionSpec): DimValue[] {
  const raw = d.dimension === "__time" ? row.__time : row[d.dimension];
  const list = Array.isArray(raw) ? (raw.length === 0 ? [null] : raw) : [raw];
  return list.map((v) => {
    if (d.outputType === "STRING") return asText(v);
    const n = asNumber(v);
    return n === null ? null : d.outputType === "LONG" ? Math.trunc(n) : n;
  });
}

/** Ascending, null first; numbers numerically, strings by `ordering`. */
export function compareValues(a: DimValue, b: DimValue, ordering = "lexicographic"): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  const x = String(a);
  const y = String(b);
  if (ordering === "numeric" || ordering === "alphanumeric") {
    const nx = Number(x);
    const ny = Number(y);
    if (Number.isFinite(nx) && Number.isFinite(ny) && nx !== ny) return nx - ny;
  }
  if (ordering === "strlen" && x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

type Entry = Record<string, unknown>;

function comparator(m: TopNMetric, dim: string): (a: Entry, b: Entry) => number {
  const byDim = (a: Entry, b: Entry, ordering = "lexicographic") =>
    compareValues(a[dim] as DimValue, b[dim] as DimValue, ordering);
  if (m.type === "dimension") return (a, b) => byDim(a, b, m.ordering);
  const metricOf = (t: TopNMetric): { metric: string; inverted: boolean } =>
    t.type === "inverted"
      ? { ...metricOf(t.of), inverted: !metricOf(t.of).inverted }
      : { metric: t.type === "numeric" ? t.metric : dim, inverted: false };
  const { metric, inverted } = metricOf(m);
  return (a, b) => {
    const x = a[metric] as number | null;
    const y = b[metric] as number | null;
    // Descending by the metric (nulls last); `inverted` ascends.
    const c = x === y ? 0 : x === null ? 1 : y === null ? -1 : y - x;
    return (inverted ? -c : c) || byDim(a, b);
  };
}

export function topN(q: TopNQuery, segments: SegmentData[]): unknown[] {
  const out: unknown[] = [];
  const dim = q.dimension.outputName;
  const order = comparator(q.metric, dim);
  for (const [ts, rows] of bucketRows(q.granularity, q, segments)) {
    const groups = new Map<string, { value: DimValue; rows: Row[] }>();
    for (const r of rows) {
      for (const v of dimValues(r, q.dimension)) {
        const key = JSON.stringify(v);
        const g = groups.get(key);
        if (g) g.rows.push(r);
        else groups.set(key, { value: v, rows: [r] });
      }
    }
    let entries: Entry[] = [...groups.values()].map((g) => {
      const e: Entry = { [dim]: g.value, ...aggregate(q.aggregations, g.rows) };
      postAggregate(q.postAggregations, e);
      return e;
    });
    if (q.metric.type === "dimension" && q.metric.previousStop !== null) {
      const stop = q.metric.previousStop;
      const ordering = q.metric.ordering;
      entries = entries.filter((e) => compareValues(e[dim] as DimValue, stop, ordering) > 0);
    }
    entries.sort(order);
    const result = entries
      .slice(0, q.threshold)
      .map((e) => Object.fromEntries(Object.entries(e).map(([k, v]) => [k, jsonNumber(v)])));
    out.push({ timestamp: instant(ts, zoneOf(q.granularity)), result });
  }
  return out;
}
