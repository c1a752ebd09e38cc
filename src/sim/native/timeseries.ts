import { bucketRows, instant, zoneOf } from "./buckets.js";
import type { SegmentData } from "./data.js";
import { aggregate, jsonNumber, postAggregate } from "./evaluate.js";
import type { TimeseriesQuery } from "./model.js";

/**
 * A timeseries (docs/querying/timeseriesquery.md; `TimeseriesQueryEngine`): one result per bucket, empty buckets
 * zero-filled unless `context.skipEmptyBuckets`; under `all` with no data at all, one empty result at the first
 * interval's start (observed on Druid 33, also for a datasource that does not exist).
 */
export function timeseries(q: TimeseriesQuery, segments: SegmentData[]): unknown[] {
  const skipEmpty = q.context.skipEmptyBuckets === true || q.context.skipEmptyBuckets === "true";
  const buckets = bucketRows(q.granularity, q, segments);
  if (buckets.size === 0 && q.granularity.kind === "all" && q.intervals[0])
    buckets.set(q.intervals[0].start, []);
  let out = [...buckets.entries()]
    .filter(([, rows]) => !skipEmpty || rows.length > 0)
    .map(([ts, rows]) => {
      const result: Record<string, unknown> = aggregate(q.aggregations, rows);
      postAggregate(q.postAggregations, result);
      for (const k of Object.keys(result)) result[k] = jsonNumber(result[k]);
      return { timestamp: instant(ts, zoneOf(q.granularity)), result };
    });
  if (q.descending) out = out.reverse();
  return q.limit === null ? out : out.slice(0, q.limit);
}
