import type { Interval } from "../../core/interval.js";
import type { SimEngine } from "../engine.js";
import type { Row } from "../ingest.js";
import { analyseTimeline, timelineRows } from "../timeline.js";

/**
 * What a native query reads: the served segments of a datasource that overlap its intervals, each with the rows
 * the timeline lets it answer for — the same rows Broker SQL reads (sql-catalog.ts, `timelineRows`), kept per
 * segment because native results are (scan batches, segmentMetadata) or are bucketed (a cursor's data interval)
 * per segment.
 */

export type NativeType = "STRING" | "LONG" | "DOUBLE" | "FLOAT";

export interface SegmentData {
  id: string;
  interval: Interval;
  /** Visible rows, in time order. */
  rows: Row[];
  /** `__time`, then dimensions and metrics, with their native types. */
  columns: { name: string; type: NativeType }[];
  /** Which of the columns are metrics (the rest, but `__time`, are dimensions). */
  metrics: string[];
  rollup: boolean | null;
}

const NATIVE: Record<string, NativeType> = {
  VARCHAR: "STRING",
  BIGINT: "LONG",
  DOUBLE: "DOUBLE",
  FLOAT: "FLOAT",
};

/** Orders two rows of a segment by its dimensions' values (null first, then as text). */
function byDims(a: Row, b: Row, dimensions: readonly string[]): number {
  for (const d of dimensions) {
    const x = a[d] === null || a[d] === undefined ? null : String(a[d]);
    const y = b[d] === null || b[d] === undefined ? null : String(b[d]);
    if (x === y) continue;
    if (x === null) return -1;
    if (y === null) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

export function overlapsAny(intervals: readonly Interval[], i: Interval): boolean {
  return intervals.some((q) => q.start < i.end && i.start < q.end);
}

export function inAny(intervals: readonly Interval[], ms: number): boolean {
  return intervals.some((q) => ms >= q.start && ms < q.end);
}

/** The datasource's served segments overlapping `intervals`, in interval then partition order. */
export function segmentsOf(
  engine: SimEngine,
  dataSource: string,
  intervals: readonly Interval[],
): SegmentData[] {
  const served = engine.served(dataSource);
  const analysis = analyseTimeline(served);
  return served
    .filter((s) => !s.tombstone && !analysis.overshadowed.has(s.id) && overlapsAny(intervals, s.interval))
    .sort((a, b) => a.interval.start - b.interval.start || a.partitionNum - b.partitionNum)
    .map((s) => {
      // A segment's rows are sorted by time, then by its dimensions in order (null first), as Druid's
      // IncrementalIndex keeps them; its metrics are listed by name (IndexMerger merges them sorted).
      const rows = timelineRows([s], analysis).sort(
        (a, b) => a.__time - b.__time || byDims(a, b, s.dimensions),
      );
      const typeOf = (name: string, fallback: NativeType): NativeType =>
        NATIVE[s.columnTypes?.[name] ?? ""] ?? fallback;
      return {
        id: s.id,
        interval: s.interval,
        rows,
        columns: [
          { name: "__time", type: "LONG" as const },
          ...s.dimensions.map((name) => ({ name, type: typeOf(name, "STRING") })),
          ...[...s.metrics].sort().map((name) => ({ name, type: typeOf(name, "LONG") })),
        ],
        metrics: s.metrics,
        rollup: s.rollup ?? null,
      };
    });
}

/**
 * A segment's data interval clipped to the query's intervals (the cursors Druid makes per segment: from its first
 * row's time to just past its last row's), one per query interval it meets.
 */
export function cursors(segment: SegmentData, intervals: readonly Interval[]): Interval[] {
  const first = segment.rows[0];
  const last = segment.rows.at(-1);
  if (!first || !last) return [];
  const data = { start: first.__time, end: last.__time + 1 };
  return intervals
    .map((q) => ({ start: Math.max(q.start, data.start), end: Math.min(q.end, data.end) }))
    .filter((c) => c.start < c.end);
}
