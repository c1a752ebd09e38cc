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

/**
 * The task id prefix of Druid's automatic compaction tasks (`CompactSegments.TASK_ID_PREFIX`, used by the
 * Coordinator's duty and, through `CompactSegments.createCompactionTask`, by the compaction supervisors):
 * `coordinator-issued` up to 36, `auto` from 37 (apache/druid #19252, backported to 37.0.0 by #19292). The id is
 * `IdUtils.newTaskId(prefix, "compact", dataSource, null)`: `<prefix>_compact_<dataSource>_<time>_<random>`.
 */
export function autoCompactionPrefix(druidVersion: number): string {
  return druidVersion >= 37 ? "auto" : "coordinator-issued";
}

/**
 * The cluster-level compaction config (`ClusterCompactionConfig`, `GET`/`POST /druid/indexer/v1/compaction/config/cluster`
 * on a Druid 33, observed; apache/druid #16803): the compaction slots and, from #17782, whether auto-compaction runs as compaction supervisors
 * on the Overlord (`useSupervisors`; the Coordinator's duty then does nothing) and with which engine. Off by default on
 * every release, as `ClusterCompactionConfig`'s constructor has it (apache/druid 1c3c88b): Druid 37's notes call
 * supervisors the default (#19252), meaning the recommended setup, so a test states which path it runs.
 */
export interface ClusterCompactionConfig {
  compactionTaskSlotRatio: number;
  maxCompactionTaskSlots: number;
  useSupervisors: boolean;
  engine: "native" | "msq";
}

export const DEFAULT_CLUSTER_COMPACTION: ClusterCompactionConfig = {
  compactionTaskSlotRatio: 0.1,
  maxCompactionTaskSlots: 2147483647,
  useSupervisors: false,
  engine: "native",
};

/** Applies a cluster compaction config update; the error text when a field is not what Druid takes. */
export function updateClusterCompaction(
  current: ClusterCompactionConfig,
  body: unknown,
): ClusterCompactionConfig | string {
  if (!isRecord(body)) return "Cannot deserialize ClusterCompactionConfig from a non-object value";
  const next = { ...current };
  if (body.compactionTaskSlotRatio !== undefined && body.compactionTaskSlotRatio !== null) {
    const r = Number(body.compactionTaskSlotRatio);
    if (!(r >= 0 && r <= 1)) return "compactionTaskSlotRatio must be between 0 and 1";
    next.compactionTaskSlotRatio = r;
  }
  if (body.maxCompactionTaskSlots !== undefined && body.maxCompactionTaskSlots !== null) {
    const n = Number(body.maxCompactionTaskSlots);
    if (!(Number.isInteger(n) && n >= 0)) return "maxCompactionTaskSlots must be a non-negative integer";
    next.maxCompactionTaskSlots = n;
  }
  if (typeof body.useSupervisors === "boolean") next.useSupervisors = body.useSupervisors;
  if (body.engine !== undefined && body.engine !== null) {
    const e = String(body.engine).toLowerCase();
    if (e !== "native" && e !== "msq") return `Unknown compaction engine[${String(body.engine)}]`;
    next.engine = e;
  }
  return next;
}

/**
 * The slots one compaction task holds at most (`CompactionSlotManager.computeSlotsRequiredForTask`): an MSQ one
 * its context's `maxNumTasks` (a controller and `maxNumTasks - 1` workers, 2 by default:
 * `MultiStageQueryContext.getMaxNumTasks`), a native one one slot (the emulator runs no compaction sub-tasks).
 */
export function compactionSlots(payload: Config): number {
  const runner = isRecord(payload.compactionRunner) ? payload.compactionRunner.type : undefined;
  if (runner !== "msq") return 1;
  const context = isRecord(payload.context) ? payload.context : {};
  const n = Number(context.maxNumTasks ?? 2);
  return Number.isInteger(n) && n >= 2 ? n : 2;
}

/** The compaction slots (`CompactSegments.getCompactionTaskCapacity`, at least one when none is busy). */
export function compactionCapacity(cluster: ClusterCompactionConfig, totalSlots: number): number {
  return Math.min(Math.floor(totalSlots * cluster.compactionTaskSlotRatio), cluster.maxCompactionTaskSlots);
}

/**
 * The Overlord's compaction supervisors (`POST /druid/indexer/v1/supervisor` with `{"type": "autocompact", "spec":
 * <datasource compaction config>, "suspended": false}`; `CompactionSupervisorSpec`, id `autocompact__<dataSource>`).
 * They run only while the cluster config says `useSupervisors`.
 */
/** The fields a Druid 33 fills in a supervisor's `InlineSchemaDataSourceCompactionConfig` (observed). */
const INLINE_DEFAULTS: Config = {
  type: "inline",
  taskPriority: 25,
  inputSegmentSizeBytes: 100_000_000_000_000,
  maxRowsPerSegment: null,
  skipOffsetFromLatest: "P1D",
  tuningConfig: null,
  granularitySpec: null,
  dimensionsSpec: null,
  metricsSpec: null,
  transformSpec: null,
  projections: null,
  ioConfig: null,
  engine: null,
  taskContext: null,
};

export class CompactionSupervisors {
  readonly #specs = new Map<string, { spec: Config; suspended: boolean }>();

  constructor(readonly druidVersion: number) {}

  /**
   * Adds or replaces a supervisor; its id, or the error text when the body is not an autocompact spec (Druid 33's
   * words, observed). The stored spec is `InlineSchemaDataSourceCompactionConfig` with Druid's defaults.
   */
  set(body: unknown): { id: string } | { error: string } {
    if (!isRecord(body)) return { error: "Cannot deserialize SupervisorSpec from a non-object value" };
    if (body.type !== "autocompact")
      return {
        error: `Please make sure to load all the necessary extensions and jars with type '${String(body.type)}' on 'druid/coordinator' service. Could not resolve type id '${String(body.type)}' as a subtype of \`org.apache.druid.indexing.overlord.supervisor.SupervisorSpec\` known type ids = [NoopSupervisorSpec, autocompact, scheduled_batch]`,
      };
    const spec = body.spec;
    if (!isRecord(spec) || typeof spec.dataSource !== "string" || spec.dataSource === "")
      return {
        error:
          "Cannot construct instance of `org.apache.druid.server.coordinator.InlineSchemaDataSourceCompactionConfig`, problem: dataSource",
      };
    const config = new CompactionConfigs(this.druidVersion);
    const problem = config.set(spec, 0);
    if (problem) return { error: problem };
    const id = `autocompact__${spec.dataSource}`;
    const stored = { ...INLINE_DEFAULTS, ...(config.get(spec.dataSource) as Config), type: "inline" };
    this.#specs.set(id, { spec: stored, suspended: body.suspended === true });
    return { id };
  }

  get(id: string): { type: "autocompact"; spec: Config; suspended: boolean } | undefined {
    const entry = this.#specs.get(id);
    return entry ? { type: "autocompact", spec: entry.spec, suspended: entry.suspended } : undefined;
  }

  ids(): string[] {
    return [...this.#specs.keys()].sort();
  }

  /** `POST /supervisor/{id}/suspend|resume`; false when there is no such supervisor. */
  setSuspended(id: string, suspended: boolean): boolean {
    const entry = this.#specs.get(id);
    if (!entry) return false;
    entry.suspended = suspended;
    return true;
  }

  terminate(id: string): boolean {
    return this.#specs.delete(id);
  }

  /** The configs of the running (not suspended) supervisors. */
  running(): Config[] {
    return [...this.#specs.values()].filter((e) => !e.suspended).map((e) => e.spec);
  }
}

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

/**
 * The `compact` task the duty or a supervisor submits for `interval` (`ClientCompactionTaskQuery`, as
 * `CompactSegments.createCompactionTask` builds it): `storeCompactionState` in its context, and on the MSQ engine
 * (the config's `engine`, else the cluster's) `compactionRunner: {"type": "msq"}` (`ClientCompactionRunnerInfo`).
 */
export function autoCompactionTask(
  id: string,
  config: Config,
  interval: Interval,
  clusterEngine: "native" | "msq" = "native",
): Config {
  const engine = typeof config.engine === "string" ? config.engine.toLowerCase() : clusterEngine;
  return {
    type: "compact",
    id,
    dataSource: config.dataSource,
    ioConfig: { type: "compact", inputSpec: { type: "interval", interval: intervalText(interval) } },
    ...(isRecord(config.tuningConfig) ? { tuningConfig: config.tuningConfig } : {}),
    ...(isRecord(config.granularitySpec) ? { granularitySpec: config.granularitySpec } : {}),
    ...(engine === "msq" ? { compactionRunner: { type: "msq" } } : {}),
    context: {
      ...(isRecord(config.taskContext) ? config.taskContext : {}),
      storeCompactionState: true,
      priority: config.taskPriority ?? 25,
    },
  };
}
