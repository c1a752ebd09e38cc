import type { SimEngine } from "../engine.js";
import { segmentsOf } from "./data.js";
import { groupBy } from "./groupby.js";
import type { NativeQuery } from "./model.js";
import { scan } from "./scan.js";
import { defaultIntervals, segmentMetadata } from "./segment-metadata.js";
import { timeBoundary } from "./time-boundary.js";
import { timeseries } from "./timeseries.js";
import { topN } from "./topn.js";

/** Runs a bound native query over the emulated cluster's served data; the result is Druid's JSON array. */
export function runNative(engine: SimEngine, q: NativeQuery): unknown[] {
  switch (q.queryType) {
    case "timeseries":
      return timeseries(q, segmentsOf(engine, q.dataSource, q.intervals));
    case "topN":
      return topN(q, segmentsOf(engine, q.dataSource, q.intervals));
    case "groupBy":
      return groupBy(q, segmentsOf(engine, q.dataSource, q.intervals));
    case "scan":
      return scan(q, segmentsOf(engine, q.dataSource, q.intervals));
    case "timeBoundary":
      return timeBoundary(q, segmentsOf(engine, q.dataSource, q.intervals));
    case "segmentMetadata": {
      const all = segmentsOf(engine, q.dataSource, [{ start: -8.64e15, end: 8.64e15 }]);
      const intervals = q.intervals ?? (all.length > 0 ? defaultIntervals(all) : []);
      return segmentMetadata(
        q,
        all.filter((s) => intervals.some((i) => i.start < s.interval.end && s.interval.start < i.end)),
      );
    }
  }
}
