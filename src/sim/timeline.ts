import { type Interval, overlaps } from "../core/interval.js";
import type { Row } from "./ingest.js";
import { intervalText } from "./time.js";
import { versionTraits } from "./versions.js";

/**
 * The segment store and Druid's timeline rules (api-contract §4.1–§4.2): per interval the highest version whose
 * core partition set is complete is visible; a segment is overshadowed when complete higher versions cover its
 * whole interval without gaps. Overshadowed segments stay used until the Coordinator's duty marks them unused
 * (`unusedAt`), and a segment is served once its handoff time (`servedAt`) has passed.
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
  loadSpec: Record<string, unknown>;
  tombstone: boolean;
  taskId: string;
  publishedAt: number;
  /** Sim time it loads on a Historical; null = never (fault). */
  servedAt: number | null;
  /** Sim time the Coordinator marks it unused; null = still used. */
  unusedAt: number | null;
  /** Rows kept for SQL aggregation; null for synthetic data. */
  rows: Row[] | null;
}

export function isUsed(s: SimSegment, now: number): boolean {
  return s.unusedAt === null || now < s.unusedAt;
}

export function isServed(s: SimSegment, now: number): boolean {
  return isUsed(s, now) && s.servedAt !== null && s.servedAt <= now;
}

/**
 * `DataSegment` JSON (api-contract §3.5): dimensions/metrics comma-joined, `identifier` included; `totalRows`
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
    binaryVersion: 9,
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

export class SegmentStore {
  #byDs = new Map<string, SimSegment[]>();
  #byId = new Map<string, SimSegment>();
  #cache = new Map<string, { overshadowed: Set<string>; complete: VersionGroup[] }>();

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
      this.#cache.delete(s.dataSource);
    }
  }

  /** Deletes segments for good (kill task); returns how many. */
  remove(dataSource: string, predicate: (s: SimSegment) => boolean): number {
    const list = this.all(dataSource);
    const keep = list.filter((s) => !predicate(s));
    for (const s of list) if (!keep.includes(s)) this.#byId.delete(s.id);
    if (keep.length === 0) this.#byDs.delete(dataSource);
    else this.#byDs.set(dataSource, keep);
    this.#cache.delete(dataSource);
    return list.length - keep.length;
  }

  /**
   * Ids of overshadowed segments (§4.2). Computed over every stored segment: only overshadowed segments are ever
   * marked unused, and what overshadowed them still covers their interval, so the answer is the same as over the
   * used set.
   */
  overshadowed(dataSource: string): Set<string> {
    return this.#analyse(dataSource).overshadowed;
  }

  #analyse(dataSource: string): { overshadowed: Set<string>; complete: VersionGroup[] } {
    const cached = this.#cache.get(dataSource);
    if (cached) return cached;
    const segments = this.all(dataSource);
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
    const result = {
      overshadowed: out,
      complete: complete.map((g) => ({ interval: g.interval, version: g.version })),
    };
    this.#cache.set(dataSource, result);
    return result;
  }

  /**
   * Rows the Broker would read: rows of visible segments, minus rows in parts of a segment's interval that a
   * complete higher version covers (a partially overshadowed segment is only queried where it is visible).
   */
  liveRows(dataSource: string, now: number): Row[] {
    const { complete } = this.#analyse(dataSource);
    const out: Row[] = [];
    for (const s of this.visible(dataSource, now)) {
      if (!s.rows) continue;
      const higher = complete.filter((g) => g.version > s.version && overlaps(g.interval, s.interval));
      for (const r of s.rows) {
        if (!higher.some((g) => r.__time >= g.interval.start && r.__time < g.interval.end)) out.push(r);
      }
    }
    return out;
  }

  /** Used segments that are not overshadowed (what the Broker's timeline would query). */
  visible(dataSource: string, now: number): SimSegment[] {
    const shadowed = this.overshadowed(dataSource);
    return this.used(dataSource, now).filter((s) => !shadowed.has(s.id));
  }

  /** Snapshot for persistence. */
  toJSON(): SimSegment[] {
    return [...this.#byDs.values()].flat();
  }
}
