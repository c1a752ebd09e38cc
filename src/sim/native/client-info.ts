import type { Interval } from "../../core/interval.js";
import type { SegmentData } from "./data.js";

/**
 * The Broker's datasource catalogue (`ClientInfoResource`, `GET /druid/v2/datasources…`): the dimensions and metrics
 * of the served segments over an interval (by default the week before now, `druid.query.segmentMetadata.
 * defaultHistory`), sorted; `full` keys them by interval, runs of segments with the same columns joined and clipped
 * to the interval asked for (observed on a real Druid 33: test/conformance/native-cases.ts).
 */

export interface Columns {
  dimensions: string[];
  metrics: string[];
}

/** Dimensions and metrics of a segment (every column but `__time`, by the ingestion's split). */
function columnsOf(s: SegmentData): Columns {
  const metrics = new Set(s.metrics);
  const names = s.columns.map((c) => c.name).filter((n) => n !== "__time");
  return {
    dimensions: names.filter((n) => !metrics.has(n)).sort(),
    metrics: names.filter((n) => metrics.has(n)).sort(),
  };
}

export function union(segments: SegmentData[]): Columns {
  const dims = new Set<string>();
  const mets = new Set<string>();
  for (const s of segments) {
    const c = columnsOf(s);
    for (const d of c.dimensions) dims.add(d);
    for (const m of c.metrics) mets.add(m);
  }
  return { dimensions: [...dims].sort(), metrics: [...mets].sort() };
}

export function byInterval(
  segments: SegmentData[],
  window: Interval,
): { interval: Interval; columns: Columns }[] {
  const out: { interval: Interval; columns: Columns }[] = [];
  for (const s of [...segments].sort((a, b) => a.interval.start - b.interval.start)) {
    const interval = {
      start: Math.max(s.interval.start, window.start),
      end: Math.min(s.interval.end, window.end),
    };
    if (interval.start >= interval.end) continue;
    const columns = columnsOf(s);
    const last = out.at(-1);
    if (
      last &&
      last.interval.end >= interval.start &&
      JSON.stringify(last.columns) === JSON.stringify(columns)
    ) {
      last.interval = { start: last.interval.start, end: Math.max(last.interval.end, interval.end) };
    } else out.push({ interval, columns });
  }
  return out;
}
