import { contains, type Interval } from "../core/interval.js";
import { analyseTimeline, isUsed, type SegmentStore, type SimSegment } from "./timeline.js";

/**
 * Marking segments used and unused, as Druid's segment update APIs do (docs/druid-api.md §3.7): the
 * Overlord's `/druid/indexer/v1/datasources/{ds}/markUsed|markUnused` (`OverlordDataSourcesResource`,
 * filter `SegmentsToUpdateFilter`) and the same operations by id or for a whole datasource.
 *
 * - An interval selects the segments wholly inside it (partly overlapping ones are not touched), optionally
 *   only those of the listed versions.
 * - markUsed marks only segments that are not overshadowed once marked: the timeline is the used segments
 *   plus the candidates (`SqlSegmentsMetadataManager.markNonOvershadowedSegmentsAsUsed`), so an older version
 *   under a used newer one stays unused.
 * - A segment marked used again loads one handoff delay later; one marked unused leaves the Historical at once.
 *   `handoffDelayMs` null: it never loads (a datasource under the never-load fault).
 */

/** `SegmentsToUpdateFilter`: exactly one of `interval` and `segmentIds`; `versions` only with `interval`. */
export interface SegmentFilter {
  interval?: Interval;
  segmentIds?: string[];
  versions?: string[];
}

export const INVALID_FILTER_MESSAGE =
  "Invalid request payload. Specify either 'interval' or 'segmentIds', but not both. Optionally, include 'versions' only when 'interval' is provided.";

export function isValidFilter(f: SegmentFilter): boolean {
  const byInterval = f.interval !== undefined;
  // An empty id list counts as none (observed on Druid 33.0.0: `{"segmentIds": []}` is the 400).
  const byIds = f.segmentIds !== undefined && f.segmentIds.length > 0;
  if (byInterval === byIds) return false;
  return f.versions === undefined || byInterval;
}

function selects(f: SegmentFilter, s: SimSegment): boolean {
  if (f.segmentIds) return f.segmentIds.includes(s.id);
  if (!f.interval || !contains(f.interval, s.interval)) return false;
  return !f.versions || f.versions.includes(s.version);
}

/** Marks the selected used segments unused; returns how many changed. */
export function markUnused(store: SegmentStore, dataSource: string, f: SegmentFilter, now: number): number {
  let n = 0;
  for (const s of store.all(dataSource)) {
    if (!isUsed(s, now) || !selects(f, s)) continue;
    s.unusedAt = now;
    n++;
  }
  if (n > 0) store.touch();
  return n;
}

/**
 * Marks the selected unused segments used, unless overshadowed (`null`: every unused segment of the
 * datasource); returns how many changed. `plain` marks one segment by id without the overshadow check, as
 * `POST …/segments/{id}` does (`markSegmentAsUsed` is a plain update of the row).
 */
export function markUsed(
  store: SegmentStore,
  dataSource: string,
  f: SegmentFilter | null,
  now: number,
  handoffDelayMs: number | null,
  plain = false,
): number {
  const used = store.used(dataSource, now);
  const candidates = store.all(dataSource).filter((s) => !isUsed(s, now) && (f === null || selects(f, s)));
  if (candidates.length === 0) return 0;
  const shadowed = plain ? new Set<string>() : analyseTimeline([...used, ...candidates]).overshadowed;
  let n = 0;
  for (const s of candidates) {
    if (shadowed.has(s.id)) continue;
    s.unusedAt = null;
    s.skipLoad = false;
    // Dropped from the Historical when it went unused: it loads again, one handoff delay from now (null: a
    // datasource whose loads never complete, the emulator's fault).
    s.servedAt = handoffDelayMs === null ? null : now + handoffDelayMs;
    n++;
  }
  if (n > 0) store.touch();
  return n;
}
