import { DateTime } from "luxon";
import { bucketStart, type Granularity, increment } from "../../core/granularity.js";
import type { Row } from "../ingest.js";
import { cursors, inAny, type SegmentData } from "./data.js";
import { keeps } from "./evaluate.js";
import type { Common } from "./model.js";

/**
 * Time buckets of timeseries and topN (docs/querying/granularities.md): each segment's cursor (its data interval
 * clipped to the query's) is cut into the granularity's buckets, a bucket named by its start; under `all` the one
 * bucket is named by the earliest cursor start. Under `none` Druid has a bucket per millisecond (zero-filled by a
 * timeseries); the emulator keeps the buckets that hold rows.
 */

/** A granularity's zone for result timestamps. */
export function zoneOf(g: Granularity): string {
  return g.kind === "period" && g.type === "period" ? g.timeZone : "UTC";
}

export function bucketRows(g: Granularity, query: Common, segments: SegmentData[]): Map<number, Row[]> {
  const out = new Map<number, Row[]>();
  let allStart: number | null = null;
  const all: Row[] = [];
  for (const s of segments) {
    for (const c of cursors(s, query.intervals)) {
      if (g.kind === "all") allStart = allStart === null ? c.start : Math.min(allStart, c.start);
      else if (g.kind !== "none") {
        for (let b = bucketStart(g, c.start); b < c.end; b = increment(g, b)) if (!out.has(b)) out.set(b, []);
      }
      for (const r of s.rows) {
        if (r.__time < c.start || r.__time >= c.end || !keeps(query.filter, r)) continue;
        if (g.kind === "all") {
          all.push(r);
          continue;
        }
        const key = g.kind === "none" ? r.__time : bucketStart(g, r.__time);
        const list = out.get(key);
        if (list) list.push(r);
        else out.set(key, [r]);
      }
    }
  }
  if (allStart !== null) out.set(allStart, all);
  return new Map([...out.entries()].sort(([a], [b]) => a - b));
}

/** Rows of the segments within the query's intervals that pass its filter. */
export function matchingRows(query: Common, segments: SegmentData[]): Row[] {
  const out: Row[] = [];
  for (const s of segments)
    for (const r of s.rows) if (inAny(query.intervals, r.__time) && keeps(query.filter, r)) out.push(r);
  return out;
}

/** An instant as Druid prints it in a result: ISO with milliseconds, in `zone` (UTC: `Z`). */
export function instant(ms: number, zone = "UTC"): string {
  if (zone === "UTC") return new Date(ms).toISOString();
  return DateTime.fromMillis(ms, { zone }).toISO() ?? new Date(ms).toISOString();
}
