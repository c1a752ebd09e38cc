import type { Row } from "../ingest.js";
import { Sketch } from "../sql-sketches.js";
import { inAny, type SegmentData } from "./data.js";
import { emulatorGap, unsupported } from "./errors.js";
import { keeps } from "./evaluate.js";
import type { ScanQuery } from "./model.js";

/**
 * A scan (docs/querying/scan-query.md; `ScanQueryEngine`, `ScanResultValue`): unordered, a batch of up to
 * `batchSize` rows per segment, named by the segment; time-ordered, one sequence of batches with a null
 * `segmentId`. Each batch lists its columns and, from Druid 31, a `rowSignature` (a column no segment has is
 * listed without a type). No columns asked for: `__time`, then the segment's dimensions and metrics.
 * `offset` and `limit` count rows across batches. A result format other than list and compactedList is the
 * data server's `UOE`.
 */
export function scan(q: ScanQuery, segments: SegmentData[]): unknown[] {
  if (q.resultFormat !== "list" && q.resultFormat !== "compactedList")
    throw unsupported(`resultFormat[${String(q.resultFormat)}] is not supported`);
  const picked = segments.map((s) => ({
    segment: s,
    rows: s.rows.filter((r) => inAny(q.intervals, r.__time) && keeps(q.filter, r)),
  }));
  const value = (r: Row, c: string) => {
    const v = c === "__time" ? r.__time : (r[c] ?? null);
    // Druid prints a sketch's serialized bytes; the emulator holds none.
    if (v instanceof Sketch) throw emulatorGap(`a scan of the sketch column [${c}]`);
    return v;
  };
  const columnsOf = (s: SegmentData | undefined) =>
    q.columns.length > 0 ? q.columns : (s?.columns.map((c) => c.name) ?? ["__time"]);
  const batch = (s: SegmentData | undefined, id: string | null, rows: Row[]) => {
    const columns = columnsOf(s);
    return {
      segmentId: id,
      columns,
      events: rows.map((r) =>
        q.resultFormat === "list"
          ? Object.fromEntries(columns.map((c) => [c, value(r, c)]))
          : columns.map((c) => value(r, c)),
      ),
      rowSignature: columns.map((c) => {
        const type = s?.columns.find((x) => x.name === c)?.type;
        return type ? { name: c, type } : { name: c };
      }),
    };
  };
  let skip = q.offset;
  let left = q.limit ?? Number.POSITIVE_INFINITY;
  const take = (rows: Row[]): Row[] => {
    const dropped = Math.min(skip, rows.length);
    skip -= dropped;
    const kept = rows.slice(dropped, dropped + Math.min(left, rows.length - dropped));
    left -= kept.length;
    return kept;
  };
  const out: unknown[] = [];
  if (q.order === "none") {
    for (const { segment, rows } of picked) {
      for (let i = 0; i < rows.length && left > 0; i += q.batchSize) {
        const kept = take(rows.slice(i, i + q.batchSize));
        if (kept.length > 0) out.push(batch(segment, segment.id, kept));
      }
    }
    return out;
  }
  const all = picked.flatMap((p) => p.rows).sort((a, b) => a.__time - b.__time);
  if (q.order === "descending") all.reverse();
  const kept = take(all);
  for (let i = 0; i < kept.length; i += q.batchSize)
    out.push(batch(segments[0], null, kept.slice(i, i + q.batchSize)));
  return out;
}
