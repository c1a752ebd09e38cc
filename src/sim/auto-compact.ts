import { bucketOf, type Granularity, parseGranularity } from "../core/granularity.js";
import { type Interval, overlaps, parseInterval, parsePeriodMs } from "../core/interval.js";
import { intervalText } from "./instant-text.js";
import type { SimSegment } from "./timeline.js";

/**
 * The emulated Coordinator's auto-compaction (docs/druid-api.md §3.9, docs/emulator.md), minimal: the datasource
 * compaction configs of `POST /druid/coordinator/v1/config/compaction`, and a duty that every period submits a
 * `compact` task (priority `taskPriority`, 25 by default) for the newest time chunk that needs one. A chunk needs
 * one when one of its visible segments was not written by a compaction (no `lastCompactionState`). It is skipped,
 * as Druid's `CompactSegments` and `DataSourceCompactibleSegmentIterator` skip it, when it ends after the newest
 * segment's end minus `skipOffsetFromLatest` (P1D by default), when a task of at least the compaction's priority
 * holds a lock on it (`lockedIntervals`), when a compaction of it is running, and, from Druid 39, when it overlaps
 * one of the config's `skipIntervals` (apache/druid #19792). Before 39 a `skipIntervals` field is dropped, as
 * Druid's mapper drops a property the class does not have. Pure but for {@link CompactionConfigs}' own state.
 */

type Config = Record<string, unknown>;
const isRecord = (v: unknown): v is Config => typeof v === "object" && v !== null && !Array.isArray(v);

/** How often the duty looks, in sim ms (Druid's `druid.coordinator.period.indexingPeriod` is 30 min). */
export const DEFAULT_COMPACTION_PERIOD_MS = 60_000;

/** The task id prefix of the Coordinator's compaction tasks (`ClientCompactionTaskQuery`'s ids). */
export const AUTO_COMPACTION_PREFIX = "coordinator-issued_compact_";

/** One accepted change of a datasource's config, for tests and `…/config/compaction/history`. */
export interface CompactionConfigChange {
  at: number;
  dataSource: string;
  /** The config after the change; null when it was deleted. */
  config: Config | null;
}

/** The datasource compaction configs, as the Coordinator keeps them. */
export class CompactionConfigs {
  readonly #configs = new Map<string, Config>();
  readonly history: CompactionConfigChange[] = [];

  constructor(readonly druidVersion: number) {}

  all(): Config[] {
    return [...this.#configs.values()];
  }

  get(dataSource: string): Config | undefined {
    return this.#configs.get(dataSource);
  }

  /** Adds or replaces one config; the error text when the body is not one. */
  set(body: unknown, at: number): string | null {
    if (!isRecord(body)) return "Cannot deserialize DataSourceCompactionConfig from a non-object value";
    if (typeof body.dataSource !== "string" || body.dataSource === "")
      return "dataSource cannot be null or empty";
    const config: Config = {
      taskPriority: 25,
      inputSegmentSizeBytes: 100_000_000_000_000,
      skipOffsetFromLatest: "P1D",
      ...body,
    };
    if (this.druidVersion < 39) delete config.skipIntervals;
    else if (config.skipIntervals !== undefined && config.skipIntervals !== null) {
      if (!Array.isArray(config.skipIntervals)) return "skipIntervals must be a list of intervals";
      for (const entry of config.skipIntervals) {
        try {
          parseInterval(String(entry));
        } catch {
          return `Invalid interval in skipIntervals: ${String(entry)}`;
        }
      }
    }
    this.#configs.set(body.dataSource, config);
    this.history.push({ at, dataSource: body.dataSource, config: structuredClone(config) });
    return null;
  }

  delete(dataSource: string, at: number): boolean {
    const had = this.#configs.delete(dataSource);
    if (had) this.history.push({ at, dataSource, config: null });
    return had;
  }
}

/** The chunks locked or being compacted, as the duty reads them. */
export interface BusyIntervals {
  /** Intervals locked by tasks of at least the compaction's priority. */
  locked: readonly Interval[];
  /** Intervals of compaction tasks still active. */
  compacting: readonly Interval[];
}

/** The skip intervals the duty honours: none before Druid 39. */
export function honouredSkipIntervals(config: Config, druidVersion: number): Interval[] {
  if (druidVersion < 39 || !Array.isArray(config.skipIntervals)) return [];
  return config.skipIntervals.map((e) => parseInterval(String(e)));
}

function granularityOf(config: Config): Granularity | null {
  const spec = config.granularitySpec;
  const g = isRecord(spec) ? spec.segmentGranularity : undefined;
  if (g === undefined || g === null) return null;
  try {
    const parsed = parseGranularity(g, { druidJson: true });
    return parsed.kind === "period" ? parsed : null;
  } catch {
    return null;
  }
}

/** The newest chunk of `visible` that needs compacting under `config`, or null. */
export function nextCompaction(
  config: Config,
  visible: readonly SimSegment[],
  busy: BusyIntervals,
  druidVersion: number,
): Interval | null {
  const data = visible.filter((s) => !s.tombstone);
  if (data.length === 0) return null;
  const gran = granularityOf(config);
  const latest = Math.max(...data.map((s) => s.interval.end));
  let offset = 0;
  try {
    offset = parsePeriodMs(String(config.skipOffsetFromLatest ?? "P1D"));
  } catch {
    offset = 24 * 3600_000;
  }
  const skip = honouredSkipIntervals(config, druidVersion);
  const chunks = new Map<string, { interval: Interval; segments: SimSegment[] }>();
  for (const s of data) {
    const interval = gran ? bucketOf(gran, s.interval.start) : s.interval;
    const key = intervalText(interval);
    const chunk = chunks.get(key) ?? { interval, segments: [] };
    chunk.segments.push(s);
    chunks.set(key, chunk);
  }
  const newestFirst = [...chunks.values()].sort((a, b) => b.interval.start - a.interval.start);
  for (const { interval, segments } of newestFirst) {
    if (interval.end > latest - offset) continue;
    if (segments.every((s) => s.lastCompactionState !== undefined)) continue;
    if (skip.some((i) => overlaps(i, interval))) continue;
    if (busy.locked.some((i) => overlaps(i, interval))) continue;
    if (busy.compacting.some((i) => overlaps(i, interval))) continue;
    return interval;
  }
  return null;
}

/** The `compact` task the duty submits for `interval` (`ClientCompactionTaskQuery`, as the Coordinator builds it). */
export function autoCompactionTask(id: string, config: Config, interval: Interval): Config {
  return {
    type: "compact",
    id,
    dataSource: config.dataSource,
    ioConfig: { type: "compact", inputSpec: { type: "interval", interval: intervalText(interval) } },
    ...(isRecord(config.tuningConfig) ? { tuningConfig: config.tuningConfig } : {}),
    ...(isRecord(config.granularitySpec) ? { granularitySpec: config.granularitySpec } : {}),
    context: {
      ...(isRecord(config.taskContext) ? config.taskContext : {}),
      priority: config.taskPriority ?? 25,
    },
  };
}
