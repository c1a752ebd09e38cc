import { bucketsOverlapping, type Granularity, parseGranularity } from "../core/granularity.js";
import { formatInterval, type Interval, parseInterval, sameInterval } from "../core/interval.js";

/**
 * Compaction `skipIntervals` (apache/druid #19792, Druid 39; docs/druid-versions.md): while a partition writes an
 * interval, that interval sits in its datasource's auto-compaction config, so the Coordinator (or a compaction
 * supervisor) does not compact it under the backfill — a compaction there would take the chunk's lock from
 * the next attempt, or publish a version over ours between our task's SUCCESS and our audit. Pure: the
 * read-modify-write of the config is compaction-guard.ts's.
 */

type Config = Record<string, unknown>;
const isRecord = (v: unknown): v is Config => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The granularity auto-compaction writes the datasource at (`granularitySpec.segmentGranularity`), or null when
 * the config keeps each chunk's own (or names one segops cannot read: then the partition's own interval is used).
 */
export function compactionGranularity(config: Config): Granularity | null {
  const spec = config.granularitySpec;
  const g = isRecord(spec) ? spec.segmentGranularity : undefined;
  if (g === undefined || g === null) return null;
  try {
    const parsed = parseGranularity(g, { druidJson: true });
    return parsed.kind === "none" ? null : parsed;
  } catch {
    return null;
  }
}

/**
 * The interval to skip for a partition: the partition widened to the compaction granularity's buckets, since a
 * compaction of a coarser chunk (a month) would rewrite the partition's day with it.
 */
export function skipIntervalFor(partition: Interval, config: Config): Interval {
  const g = compactionGranularity(config);
  if (!g || g.kind === "all") return partition;
  const buckets = bucketsOverlapping(g, partition);
  const first = buckets[0];
  const last = buckets.at(-1);
  return first && last ? { start: first.start, end: last.end } : partition;
}

/** The config's skip intervals as segops reads them (unreadable entries are kept as they are, not read). */
export function skipIntervalsOf(config: Config): Interval[] {
  const list = Array.isArray(config.skipIntervals) ? config.skipIntervals : [];
  const out: Interval[] = [];
  for (const entry of list) {
    if (typeof entry !== "string") continue;
    try {
      out.push(parseInterval(entry));
    } catch {
      // Druid accepted it; segops neither reads nor removes it.
    }
  }
  return out;
}

/** Whether the config skips exactly `interval`. */
export function skips(config: Config, interval: Interval): boolean {
  return skipIntervalsOf(config).some((i) => sameInterval(i, interval));
}

/** The config with `interval` added to its skip intervals, everything else as it was; null when already there. */
export function withSkipInterval(config: Config, interval: Interval): Config | null {
  if (skips(config, interval)) return null;
  const list = Array.isArray(config.skipIntervals) ? config.skipIntervals : [];
  return { ...config, skipIntervals: [...list, formatInterval(interval)] };
}

/** The config without `interval` in its skip intervals (others' entries kept); null when it is not there. */
export function withoutSkipInterval(config: Config, interval: Interval): Config | null {
  if (!skips(config, interval)) return null;
  const list = Array.isArray(config.skipIntervals) ? config.skipIntervals : [];
  const kept = list.filter((entry) => {
    if (typeof entry !== "string") return true;
    try {
      return !sameInterval(parseInterval(entry), interval);
    } catch {
      return true;
    }
  });
  return { ...config, skipIntervals: kept };
}
