import { instant, matchingRows } from "./buckets.js";
import type { SegmentData } from "./data.js";
import type { TimeBoundaryQuery } from "./model.js";

/**
 * timeBoundary (docs/querying/timeboundaryquery.md): the earliest and latest row times within the intervals that
 * pass the filter; `bound` keeps one, and the result's timestamp is the first one kept. No rows: `[]`.
 */
export function timeBoundary(q: TimeBoundaryQuery, segments: SegmentData[]): unknown[] {
  const rows = matchingRows(q, segments);
  if (rows.length === 0) return [];
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const r of rows) {
    min = Math.min(min, r.__time);
    max = Math.max(max, r.__time);
  }
  const result: Record<string, string> = {};
  if (q.bound !== "minTime") result.maxTime = instant(max);
  if (q.bound !== "maxTime") result.minTime = instant(min);
  return [{ timestamp: instant(q.bound === "maxTime" ? max : min), result }];
}
