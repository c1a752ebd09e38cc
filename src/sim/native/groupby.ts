import { bucketStart } from "../../core/granularity.js";
import type { Row } from "../ingest.js";
import { instant, matchingRows, zoneOf } from "./buckets.js";
import type { SegmentData } from "./data.js";
import { aggregate, asText, jsonNumber, postAggregate } from "./evaluate.js";
import type { GroupByQuery, Having } from "./model.js";
import { compareValues, type DimValue, dimValues } from "./topn.js";

/**
 * A groupBy (docs/querying/groupbyquery.md; `GroupingEngine`): one row per bucket and combination of dimension
 * values, in `{"version":"v1","timestamp","event"}` form; under `all` every row carries the first interval's
 * start (observed on Druid 33, unlike a timeseries). Sorted by time, then the dimensions ascending; a
 * `limitSpec` orders by its columns after the time (before it with `context.sortByDimsFirst`), then offset and
 * limit; `having` filters the result rows.
 */

function combos(row: Row, q: GroupByQuery): DimValue[][] {
  let out: DimValue[][] = [[]];
  for (const d of q.dimensions) {
    const vs = dimValues(row, d);
    out = out.flatMap((prefix) => vs.map((v) => [...prefix, v]));
  }
  return out;
}

function having(h: Having, e: Record<string, unknown>): boolean {
  switch (h.type) {
    case "greaterThan":
    case "lessThan":
    case "equalTo": {
      const v = e[h.aggregation];
      if (typeof v !== "number") return false;
      return h.type === "greaterThan" ? v > h.value : h.type === "lessThan" ? v < h.value : v === h.value;
    }
    case "and":
      return h.havingSpecs.every((x) => having(x, e));
    case "or":
      return h.havingSpecs.some((x) => having(x, e));
    case "not":
      return !having(h.havingSpec, e);
    case "dimSelector":
      return asText(e[h.dimension]) === h.value;
  }
}

export function groupBy(q: GroupByQuery, segments: SegmentData[]): unknown[] {
  const first = q.intervals[0]?.start ?? 0;
  const groups = new Map<string, { ts: number; dims: DimValue[]; rows: Row[] }>();
  for (const r of matchingRows(q, segments)) {
    const ts =
      q.granularity.kind === "all"
        ? first
        : q.granularity.kind === "none"
          ? r.__time
          : bucketStart(q.granularity, r.__time);
    for (const dims of combos(r, q)) {
      const key = JSON.stringify([ts, dims]);
      const g = groups.get(key);
      if (g) g.rows.push(r);
      else groups.set(key, { ts, dims, rows: [r] });
    }
  }
  const names = q.dimensions.map((d) => d.outputName);
  let rows = [...groups.values()].map((g) => {
    const event: Record<string, unknown> = Object.fromEntries(names.map((n, i) => [n, g.dims[i] ?? null]));
    Object.assign(event, aggregate(q.aggregations, g.rows));
    postAggregate(q.postAggregations, event);
    return { ts: g.ts, dims: g.dims, event };
  });
  rows.sort((a, b) => {
    if (a.ts !== b.ts) return a.ts - b.ts;
    for (let i = 0; i < a.dims.length; i++) {
      const c = compareValues(a.dims[i] ?? null, b.dims[i] ?? null);
      if (c !== 0) return c;
    }
    return 0;
  });
  if (q.having) {
    const h = q.having;
    rows = rows.filter((r) => having(h, r.event));
  }
  const { columns, limit, offset } = q.limitSpec;
  if (columns.length > 0) {
    const dimsFirst = q.context.sortByDimsFirst === true || q.context.sortByDimsFirst === "true";
    const byColumns = (a: (typeof rows)[number], b: (typeof rows)[number]) => {
      for (const c of columns) {
        const x = a.event[c.dimension] as DimValue;
        const y = b.event[c.dimension] as DimValue;
        const n = compareValues(x ?? null, y ?? null, c.ordering);
        if (n !== 0) return c.descending ? -n : n;
      }
      return 0;
    };
    rows.sort((a, b) => {
      const t = q.granularity.kind === "all" ? 0 : a.ts - b.ts;
      return dimsFirst ? byColumns(a, b) || t : t || byColumns(a, b);
    });
  }
  const cut = rows.slice(offset, limit === null ? undefined : offset + limit);
  const zone = zoneOf(q.granularity);
  return cut.map((r) => ({
    version: "v1",
    timestamp: instant(r.ts, zone),
    event: Object.fromEntries(Object.entries(r.event).map(([k, v]) => [k, jsonNumber(v)])),
  }));
}
