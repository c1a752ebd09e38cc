import type { Interval } from "../core/interval.js";

/**
 * Druid's timeline rule (docs/druid-api.md §4.2), reduced to what the handoff gate and the audit need:
 * for every elementary piece of time, the visible ("live") version is the highest version whose
 * core partition set covering that piece is complete. Appended partitions (partitionNum ≥ core count)
 * ride along with their version but never decide completeness.
 */

export interface TimelineSegment {
  id: string;
  start: number;
  end: number;
  version: string;
  partitionNum: number;
  /** Core partitions of this segment's (interval, version) set: numbered `partitions`, range `numCorePartitions`, tombstone 1. */
  corePartitions: number;
  tombstone: boolean;
  sizeBytes: number;
  /** null when Druid does not know (older versions without totalRows). */
  numRows: number | null;
  /** Announced by a data server (Coordinator inventory). */
  served: boolean;
}

export interface TimelinePiece extends Interval {
  /** null: no complete version covers this piece (no data there). */
  liveVersion: string | null;
  /** Segments of the live version that overlap the piece. */
  live: TimelineSegment[];
}

interface Entry {
  start: number;
  end: number;
  version: string;
  segments: TimelineSegment[];
}

function entryKey(s: TimelineSegment): string {
  return `${s.start}/${s.end}/${s.version}`;
}

/** Groups segments into (interval, version) entries and keeps the complete ones. */
export function completeEntries(segments: readonly TimelineSegment[]): Entry[] {
  const byKey = new Map<string, Entry>();
  for (const s of segments) {
    const key = entryKey(s);
    let e = byKey.get(key);
    if (!e) {
      e = { start: s.start, end: s.end, version: s.version, segments: [] };
      byKey.set(key, e);
    }
    e.segments.push(s);
  }
  return [...byKey.values()].filter((e) => {
    const core = Math.max(1, ...e.segments.map((s) => s.corePartitions));
    const have = new Set(e.segments.map((s) => s.partitionNum));
    for (let p = 0; p < core; p++) if (!have.has(p)) return false;
    return true;
  });
}

/** The live view of `window`: contiguous pieces, each with its visible version (versions compare as strings, §4.1). */
export function liveTimeline(segments: readonly TimelineSegment[], window: Interval): TimelinePiece[] {
  const entries = completeEntries(segments).filter((e) => e.start < window.end && window.start < e.end);
  const cuts = new Set<number>([window.start, window.end]);
  for (const e of entries) {
    if (e.start > window.start && e.start < window.end) cuts.add(e.start);
    if (e.end > window.start && e.end < window.end) cuts.add(e.end);
  }
  const bounds = [...cuts].sort((a, b) => a - b);
  const pieces: TimelinePiece[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const start = bounds[i] as number;
    const end = bounds[i + 1] as number;
    let best: Entry | undefined;
    for (const e of entries) {
      if (e.start <= start && end <= e.end && (!best || e.version > best.version)) best = e;
    }
    pieces.push({ start, end, liveVersion: best?.version ?? null, live: best ? best.segments : [] });
  }
  return pieces;
}

/** What the interval serves now, from the same metadata read as the baseline. */
export interface LiveData {
  /** Live non-tombstone segments overlapping the interval. */
  segments: number;
  versions: string[];
  /** Rows in them, where Druid's metadata has row counts (null otherwise). */
  rows: number | null;
  bytes: number;
}

/** The live data of `interval` among the used segments read for the baseline. */
export function liveDataOf(segments: readonly TimelineSegment[], interval: Interval): LiveData {
  const live = new Map<string, TimelineSegment>();
  for (const piece of liveTimeline(segments, interval))
    for (const s of piece.live) if (!s.tombstone) live.set(s.id, s);
  const all = [...live.values()];
  return {
    segments: all.length,
    versions: [...new Set(all.map((s) => s.version))].sort(),
    rows: all.every((s) => s.numRows !== null) ? all.reduce((n, s) => n + (s.numRows ?? 0), 0) : null,
    bytes: all.reduce((n, s) => n + s.sizeBytes, 0),
  };
}
