/**
 * The timeline's time chunks (pure): every segment interval of the datasource with what each lane of the
 * dashboard draws there — the live version and its state, and how many versions and segments are
 * overshadowed or unused — plus each version's figures for the chunk's expanded view. One entry per
 * interval instead of one row per version keeps a 90-day backfill with re-runs and a compaction at a few
 * hundred shapes to draw, however many segments it has.
 */

export type SegmentStatus = "live" | "overshadowed" | "unused";

/** The fields of a segment the chunks are built from (the route's segment view). */
export interface ChunkSegment {
  start: string;
  end: string;
  version: string;
  status: SegmentStatus;
  tombstone: boolean;
  sizeBytes: number;
  rows: number | null;
  served: boolean;
  compactionCandidate: string | null;
}

/**
 * The live version's state, worst first: `tombstone` (no rows), `not-served` (a live segment no Historical
 * serves), `ours` (a version a segops job of this datasource published, all served), `served` (another
 * writer's, all served).
 */
export type LiveState = "tombstone" | "not-served" | "ours" | "served";

export interface ChunkVersion {
  version: string;
  status: SegmentStatus;
  segments: number;
  rows: number | null;
  bytes: number;
  ours: boolean;
}

export interface TimelineChunk {
  interval: string;
  live: {
    version: string;
    state: LiveState;
    segments: number;
    rows: number | null;
    bytes: number;
    /** Its segments the audit names compaction candidates. */
    candidates: number;
  } | null;
  overshadowed: { versions: number; segments: number };
  unused: { versions: number; segments: number };
  /** Newest first. */
  versions: ChunkVersion[];
}

const STATUS_ORDER: Record<SegmentStatus, number> = { live: 0, overshadowed: 1, unused: 2 };

/** Chunks oldest first, from the segments (any order) and the versions segops published. */
export function timelineChunks(
  segments: readonly ChunkSegment[],
  ourVersions: ReadonlySet<string>,
): TimelineChunk[] {
  const byInterval = new Map<string, ChunkSegment[]>();
  for (const s of segments) {
    const key = `${s.start}/${s.end}`;
    const list = byInterval.get(key);
    if (list) list.push(s);
    else byInterval.set(key, [s]);
  }
  return [...byInterval.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([interval, list]) => chunkOf(interval, list, ourVersions));
}

function chunkOf(interval: string, list: readonly ChunkSegment[], ours: ReadonlySet<string>): TimelineChunk {
  const groups = new Map<string, ChunkSegment[]>();
  for (const s of list) {
    const key = `${s.status}\u0000${s.version}`;
    const group = groups.get(key);
    if (group) group.push(s);
    else groups.set(key, [s]);
  }
  const versions = [...groups.values()]
    .map((g): ChunkVersion => {
      const first = g[0] as ChunkSegment;
      return {
        version: first.version,
        status: first.status,
        segments: g.length,
        rows: sumRows(g),
        bytes: g.reduce((sum, s) => sum + (s.tombstone ? 0 : s.sizeBytes), 0),
        ours: ours.has(first.version),
      };
    })
    .sort((a, b) =>
      a.version !== b.version
        ? a.version < b.version
          ? 1
          : -1
        : STATUS_ORDER[a.status] - STATUS_ORDER[b.status],
    );
  const live = list.filter((s) => s.status === "live");
  const count = (status: SegmentStatus) => {
    const of = versions.filter((v) => v.status === status);
    return { versions: of.length, segments: of.reduce((sum, v) => sum + v.segments, 0) };
  };
  return {
    interval,
    live: live.length === 0 ? null : liveOf(live, ours),
    overshadowed: count("overshadowed"),
    unused: count("unused"),
    versions,
  };
}

function liveOf(
  live: readonly ChunkSegment[],
  ours: ReadonlySet<string>,
): NonNullable<TimelineChunk["live"]> {
  // One interval has one live version (the timeline's rule); the newest is named should data say otherwise.
  const version = live.map((s) => s.version).sort()[live.length - 1] as string;
  const state: LiveState = live.every((s) => s.tombstone)
    ? "tombstone"
    : live.some((s) => !s.tombstone && !s.served)
      ? "not-served"
      : ours.has(version)
        ? "ours"
        : "served";
  return {
    version,
    state,
    segments: live.length,
    rows: sumRows(live.filter((s) => !s.tombstone)),
    bytes: live.reduce((sum, s) => sum + (s.tombstone ? 0 : s.sizeBytes), 0),
    candidates: live.filter((s) => s.compactionCandidate !== null).length,
  };
}

function sumRows(list: readonly ChunkSegment[]): number | null {
  let rows = 0;
  for (const s of list) {
    if (s.tombstone) continue;
    if (s.rows === null) return null;
    rows += s.rows;
  }
  return rows;
}
