import { type Interval, overlaps } from "../core/interval.js";
import type { Row } from "./ingest.js";
import { intervalText } from "./instant-text.js";
import { versionTraits } from "./versions.js";

/**
 * The segment store and Druid's timeline rules (docs/druid-api.md §4.1–§4.2): per interval the highest version whose
 * core partition set is complete is visible; a segment is overshadowed when complete higher versions cover its
 * whole interval without gaps. Overshadowed segments stay used until the Coordinator's duty marks them unused
 * (`unusedAt`, set by coordinator.ts once the overshadowing segments are served). Whether a segment is served
 * (loaded on the emulated Historical) is the engine's call (`SimEngine.isServed`): its handoff time
 * (`servedAt`) must have passed and the load rules must want it there.
 */
export interface SimSegment {
  id: string;
  dataSource: string;
  interval: Interval;
  version: string;
  partitionNum: number;
  /** Core partitions of its (interval, version) set: chunks 0..core-1 must all exist for completeness. */
  corePartitions: number;
  shardSpec: Record<string, unknown>;
  size: number;
  numRows: number;
  dimensions: string[];
  metrics: string[];
  /** SQL types of the dimensions and metrics (`VARCHAR`, `BIGINT`, `DOUBLE`, `FLOAT`); absent in old state files. */
  columnTypes?: Record<string, string>;
  loadSpec: Record<string, unknown>;
  tombstone: boolean;
  taskId: string;
  publishedAt: number;
  /** Sim time its load on a Historical completes (the handoff delay after publish); null = never (fault). */
  servedAt: number | null;
  /**
   * It was overshadowed before it was loaded: `RunRules` skips overshadowed segments, so it never loads (it stays
   * used until `MarkOvershadowedSegmentsAsUnused` marks it unused).
   */
  skipLoad?: boolean;
  /** Sim time the Coordinator marks it unused; null = still used. */
  unusedAt: number | null;
  /** Rows kept for SQL aggregation; null for synthetic data. */
  rows: Row[] | null;
  /** Whether the ingestion rolled rows up (a compaction records it in its state); absent in old state files. */
  rollup?: boolean;
  /** `lastCompactionState`: set on the segments a compaction task published. */
  lastCompactionState?: Record<string, unknown>;
}

export function isUsed(s: SimSegment, now: number): boolean {
  return s.unusedAt === null || now < s.unusedAt;
}

/** Whether it is used and its Historical load would have completed by `now` (rules aside: `SimEngine.isServed`). */
export function isLoadDue(s: SimSegment, now: number): boolean {
  return isUsed(s, now) && s.servedAt !== null && s.servedAt <= now;
}

/**
 * `DataSegment` JSON (docs/druid-api.md §3.5): dimensions/metrics comma-joined, `identifier` included; `totalRows`
 * only from Druid 37 (§8).
 */
export function segmentJson(s: SimSegment, druidVersion = 38): Record<string, unknown> {
  return {
    dataSource: s.dataSource,
    interval: intervalText(s.interval),
    version: s.version,
    loadSpec: s.loadSpec,
    dimensions: s.dimensions.join(","),
    metrics: s.metrics.join(","),
    shardSpec: shardSpecJson(s, druidVersion),
    // `@JsonInclude(NON_NULL)`: only on segments a compaction task published.
    ...(s.lastCompactionState ? { lastCompactionState: s.lastCompactionState } : {}),
    // A tombstone has none (`TombstoneHelper` sets no binaryVersion; observed on Druid 33.0.0).
    binaryVersion: s.tombstone ? null : 9,
    size: s.size,
    ...(druidVersion >= 37 ? { totalRows: s.numRows } : {}),
    identifier: s.id,
  };
}

/** A segment's shardSpec as Druid writes it: a Druid 33 tombstone has `partitions` 0 (versions.ts). */
export function shardSpecJson(s: SimSegment, druidVersion = 38): Record<string, unknown> {
  if (!s.tombstone) return s.shardSpec;
  return { ...s.shardSpec, partitions: versionTraits(druidVersion).tombstoneCorePartitions };
}

interface VersionGroup {
  interval: Interval;
  version: string;
}

/**
 * Whether complete groups of higher versions cover `interval` without gaps. `sorted` is ordered by start; only
 * groups starting within one longest-group length before `interval` can overlap it, so the scan stays local.
 */
function coveredByHigher(
  sorted: VersionGroup[],
  maxLen: number,
  interval: Interval,
  version: string,
): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as VersionGroup).interval.start < interval.start - maxLen) lo = mid + 1;
    else hi = mid;
  }
  let reached = interval.start;
  for (let i = lo; i < sorted.length; i++) {
    const g = sorted[i] as VersionGroup;
    if (g.interval.start > reached) break;
    if (g.version > version && g.interval.end > interval.start) reached = Math.max(reached, g.interval.end);
    if (reached >= interval.end) return true;
  }
  return false;
}

/** The timeline of a set of segments: which are overshadowed, and the complete version groups. */
export interface TimelineAnalysis {
  overshadowed: Set<string>;
  complete: VersionGroup[];
}

/** Builds the timeline of `segments` (`VersionedIntervalTimeline`: complete partition sets only). */
export function analyseTimeline(segments: readonly SimSegment[]): TimelineAnalysis {
  const groups = new Map<string, VersionGroup & { parts: Set<number>; core: number }>();
  for (const s of segments) {
    const key = `${s.interval.start}/${s.interval.end}/${s.version}`;
    const g = groups.get(key) ?? { interval: s.interval, version: s.version, parts: new Set(), core: 0 };
    g.parts.add(s.partitionNum);
    g.core = Math.max(g.core, s.corePartitions);
    groups.set(key, g);
  }
  const complete = [...groups.values()]
    .filter((g) => {
      for (let p = 0; p < g.core; p++) if (!g.parts.has(p)) return false;
      return true;
    })
    .sort((a, b) => a.interval.start - b.interval.start);
  let maxLen = 0;
  for (const g of complete) maxLen = Math.max(maxLen, g.interval.end - g.interval.start);
  const out = new Set<string>();
  for (const s of segments) {
    if (coveredByHigher(complete, maxLen, s.interval, s.version)) out.add(s.id);
  }
  return { overshadowed: out, complete: complete.map((g) => ({ interval: g.interval, version: g.version })) };
}

/**
 * Rows a query over `segments` reads: rows of segments that are not overshadowed, minus rows in parts of a
 * segment's interval that a complete higher version covers (a partially overshadowed segment is only queried where
 * it is visible).
 */
export function timelineRows(segments: readonly SimSegment[], analysis = analyseTimeline(segments)): Row[] {
  const out: Row[] = [];
  for (const s of segments) {
    if (!s.rows || analysis.overshadowed.has(s.id)) continue;
    const higher = analysis.complete.filter((g) => g.version > s.version && overlaps(g.interval, s.interval));
    for (const r of s.rows) {
      if (!higher.some((g) => r.__time >= g.interval.start && r.__time < g.interval.end)) out.push(r);
    }
  }
  return out;
}

/**
 * `VersionedIntervalTimeline.lookupWithIncompletePartitions` over served segments (the Coordinator's
 * `CoordinatorServerView` timeline, docs/druid-api.md §3.2a): every piece of `window` goes to the highest version
 * among the (interval, version) entries covering it, complete or not, and each run of pieces held by one entry
 * yields that entry's segments in partition order. An entry split by a higher one comes back once per run, as
 * Druid's holders do. Pure.
 */
export function servedTimelineLookup(served: readonly SimSegment[], window: Interval): SimSegment[] {
  const entries = new Map<string, { interval: Interval; version: string; segments: SimSegment[] }>();
  for (const s of served) {
    if (!overlaps(s.interval, window)) continue;
    const key = `${s.interval.start}/${s.interval.end}/${s.version}`;
    const e = entries.get(key) ?? { interval: s.interval, version: s.version, segments: [] };
    e.segments.push(s);
    entries.set(key, e);
  }
  const all = [...entries.values()];
  const cuts = new Set<number>([window.start, window.end]);
  for (const e of all) {
    if (e.interval.start > window.start && e.interval.start < window.end) cuts.add(e.interval.start);
    if (e.interval.end > window.start && e.interval.end < window.end) cuts.add(e.interval.end);
  }
  const bounds = [...cuts].sort((a, b) => a - b);
  const out: SimSegment[] = [];
  let previous: (typeof all)[number] | undefined;
  for (let i = 0; i + 1 < bounds.length; i++) {
    const start = bounds[i] as number;
    const end = bounds[i + 1] as number;
    let best: (typeof all)[number] | undefined;
    for (const e of all) {
      if (e.interval.start <= start && end <= e.interval.end && (!best || e.version > best.version)) best = e;
    }
    if (best && best !== previous)
      out.push(...[...best.segments].sort((a, b) => a.partitionNum - b.partitionNum));
    previous = best;
  }
  return out;
}

export class SegmentStore {
  #byDs = new Map<string, SimSegment[]>();
  #byId = new Map<string, SimSegment>();
  /** Bumped by a change that may concern any datasource (`touch`). */
  #generation = 0;
  /**
   * Bumped per datasource by adds and removes: a publish to one datasource leaves the others' cached timelines
   * valid (a global count made every publish re-analyse all 200,000 segments of a production-sized history).
   */
  readonly #dsGeneration = new Map<string, number>();
  #cache = new Map<string, { key: string; analysis: TimelineAnalysis }>();
  #byStart = new Map<string, { generation: string; sorted: SimSegment[]; longest: number }>();

  dataSources(): string[] {
    return [...this.#byDs.keys()].sort();
  }

  /** Every stored segment of a datasource (used or not), in publish order. */
  all(dataSource: string): SimSegment[] {
    return this.#byDs.get(dataSource) ?? [];
  }

  used(dataSource: string, now: number): SimSegment[] {
    return this.all(dataSource).filter((s) => isUsed(s, now));
  }

  find(dataSource: string, id: string): SimSegment | undefined {
    const s = this.#byId.get(id);
    return s?.dataSource === dataSource ? s : undefined;
  }

  add(segments: SimSegment[]): void {
    for (const s of segments) {
      const list = this.#byDs.get(s.dataSource) ?? [];
      list.push(s);
      this.#byId.set(s.id, s);
      this.#byDs.set(s.dataSource, list);
    }
    for (const ds of new Set(segments.map((s) => s.dataSource))) this.#bump(ds);
  }

  #bump(dataSource: string): void {
    this.#dsGeneration.set(dataSource, (this.#dsGeneration.get(dataSource) ?? 0) + 1);
  }

  /** What a datasource's cached timelines were built from: stale once either count moves. */
  #generationOf(dataSource: string): string {
    return `${this.#generation}.${this.#dsGeneration.get(dataSource) ?? 0}`;
  }

  /** A segment's used state changed in place (markUsed / markUnused): cached timelines are stale. */
  touch(): void {
    this.#generation++;
  }

  /** Deletes segments for good (kill task); returns how many. */
  remove(dataSource: string, predicate: (s: SimSegment) => boolean): number {
    const list = this.all(dataSource);
    const keep = list.filter((s) => !predicate(s));
    for (const s of list) if (!keep.includes(s)) this.#byId.delete(s.id);
    if (keep.length === 0) this.#byDs.delete(dataSource);
    else this.#byDs.set(dataSource, keep);
    this.#bump(dataSource);
    return list.length - keep.length;
  }

  /**
   * Ids of overshadowed segments (§4.2) among the segments used at `now` (the Coordinator's
   * `DataSourcesSnapshot.getOvershadowedSegments`); without `now`, among every stored segment.
   */
  overshadowed(dataSource: string, now?: number): Set<string> {
    return this.#analyse(dataSource, now).overshadowed;
  }

  /** The used set's timeline, cached per datasource until a segment is added, removed or goes unused. */
  #analyse(dataSource: string, now: number | undefined): TimelineAnalysis {
    const segments = now === undefined ? this.all(dataSource) : this.used(dataSource, now);
    const set = now === undefined ? "all" : "used";
    const key = `${this.#generationOf(dataSource)}/${set}/${segments.length}`;
    // One entry per datasource and set: the two views alternate (the Coordinator pass asks for both).
    const slot = `${set}/${dataSource}`;
    const cached = this.#cache.get(slot);
    if (cached?.key === key) return cached.analysis;
    const analysis = analyseTimeline(segments);
    this.#cache.set(slot, { key, analysis });
    return analysis;
  }

  /** Rows of the used timeline (what a Broker would read if every used segment were loaded). */
  liveRows(dataSource: string, now: number): Row[] {
    return timelineRows(this.used(dataSource, now), this.#analyse(dataSource, now));
  }

  /** Used segments that are not overshadowed (the Coordinator's view of the timeline). */
  visible(dataSource: string, now: number): SimSegment[] {
    const shadowed = this.overshadowed(dataSource, now);
    return this.used(dataSource, now).filter((s) => !shadowed.has(s.id));
  }

  /**
   * Every stored segment of a datasource overlapping `interval` (used or not), by binary search over the
   * segments sorted by start (rebuilt when segments are added or removed): a lookup costs the segments near the
   * interval, not the datasource.
   */
  overlapping(dataSource: string, interval: Interval): SimSegment[] {
    let index = this.#byStart.get(dataSource);
    const generation = this.#generationOf(dataSource);
    if (index?.generation !== generation) {
      const sorted = [...this.all(dataSource)].sort((a, b) => a.interval.start - b.interval.start);
      let longest = 0;
      for (const s of sorted) longest = Math.max(longest, s.interval.end - s.interval.start);
      index = { generation, sorted, longest };
      this.#byStart.set(dataSource, index);
    }
    const { sorted, longest } = index;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((sorted[mid] as SimSegment).interval.start < interval.start - longest) lo = mid + 1;
      else hi = mid;
    }
    const out: SimSegment[] = [];
    for (let i = lo; i < sorted.length; i++) {
      const s = sorted[i] as SimSegment;
      if (s.interval.start >= interval.end) break;
      if (s.interval.end > interval.start) out.push(s);
    }
    return out;
  }

  /** Snapshot for persistence. */
  toJSON(): SimSegment[] {
    return [...this.#byDs.values()].flat();
  }
}
