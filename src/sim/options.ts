import type { Clock } from "../core/clock.js";
import type { FaultRule } from "./faults.js";

/** Options of `startSim` (every field optional). */
export interface SimOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** Interface to listen on. @default "127.0.0.1" */
  host?: string;
  /** Worker slots per emulated MiddleManager. @default 4 */
  capacity?: number;
  /** Number of emulated MiddleManagers. @default 1 */
  workers?: number;
  /** Sim milliseconds per real millisecond; 1000 makes a 10 s task take 10 ms. @default 1 */
  timeScale?: number;
  /** Seed for every random choice (ids, durations, synthetic rows, fault rates). @default 1 */
  seed?: number;
  /** Sim ms from publish until a segment is served by a Historical. @default 5000 */
  handoffDelayMs?: number;
  /**
   * Sim ms from the segments overshadowing a segment being served (loaded) until the Coordinator marks it unused
   * (`MarkOvershadowedSegmentsAsUnused`). @default 60000
   */
  unusedDelayMs?: number;
  /**
   * The Coordinator dynamic config `millisToWaitBeforeDeleting`: no overshadowed segment is marked unused before
   * this long after the emulator started. Druid's default is 900000 (15 min); the emulator's is 0. @default 0
   */
  millisToWaitBeforeDeleting?: number;
  /** Fault rules (see `FaultRule`). @default [] */
  faults?: FaultRule[];
  /** Directory for the persisted state file; no persistence when absent. */
  dataDir?: string;
  /** Base clock (e.g. a `ManualClock` in tests); scaled by `timeScale`. @default systemClock */
  clock?: Clock;
  /** Druid major version whose version-specific bodies to emulate (docs/druid-api.md §8). @default 38 */
  druidVersion?: number;
  /** Datasources whose segments never load (handoff-timeout tests). @default [] */
  neverLoadDataSources?: string[];
  /** `druid.indexer.queue.maxSize`: active tasks beyond it get a 429. @default 2147483647 */
  maxQueueSize?: number;
  /** Duration model: base sim ms per task (scaled per datasource by 0.75–1.25). @default 8000 */
  baseDurationMs?: number;
  /** Duration model: sim ms per ingested row, divided among k sub-tasks. @default 0.05 */
  perRowMs?: number;
  /** How often the Coordinator's auto-compaction duty looks, in sim ms (auto-compact.ts). @default 60000 */
  compactionPeriodMs?: number;
  /**
   * What `GET /status/properties` answers (every service shares the emulator's port), e.g. the auto-kill settings
   * (`druid.coordinator.kill.*`, Druid 34's `druid.manager.segments.killUnused.*`). From 34 the emulated Overlord
   * acts on `druid.manager.segments.killUnused.enabled` and `…bufferPeriod` (embedded-kill.ts); nothing reads the
   * others. @default {}
   */
  runtimeProperties?: Record<string, string>;
  /**
   * The Historical runs in virtual storage mode (Druid 35+, apache/druid #18176; a cluster setting, so opt-in): it
   * announces each segment it is assigned without downloading it and loads it when a query reads it. On the wire
   * segops reads nothing else differs (serverview, loadstatus, `sys.segments` `is_available`); `/status/properties`
   * answers `druid.segmentCache.virtualStorage=true`. @default false
   */
  virtualStorage?: boolean;
}

/** First release with virtual storage Historicals (apache/druid #18176, in the 35.0.0 release notes). */
export const VIRTUAL_STORAGE_SINCE = 35;

export const DEFAULTS = {
  host: "127.0.0.1",
  capacity: 4,
  workers: 1,
  timeScale: 1,
  seed: 1,
  handoffDelayMs: 5000,
  unusedDelayMs: 60_000,
  millisToWaitBeforeDeleting: 0,
  druidVersion: 38,
  maxQueueSize: 2_147_483_647,
  baseDurationMs: 8000,
  perRowMs: 0.05,
} as const;

/** Eager option checks with precise messages. */
export function validateOptions(o: SimOptions): void {
  const positiveInt = (name: keyof SimOptions, min: number) => {
    const v = o[name];
    if (v !== undefined && !(typeof v === "number" && Number.isInteger(v) && v >= min)) {
      throw new TypeError(`Expected \`${name}\` to be a whole number from ${min} and up, got ${String(v)}`);
    }
  };
  if (o.virtualStorage !== undefined && typeof o.virtualStorage !== "boolean")
    throw new TypeError(`Expected \`virtualStorage\` to be true or false, got ${String(o.virtualStorage)}`);
  const version = o.druidVersion ?? DEFAULTS.druidVersion;
  if (o.virtualStorage && version < VIRTUAL_STORAGE_SINCE)
    throw new TypeError(
      `Expected \`virtualStorage\` only with \`druidVersion\` ${VIRTUAL_STORAGE_SINCE} or newer (Druid ${VIRTUAL_STORAGE_SINCE} added virtual storage), got druidVersion ${version}: raise druidVersion or drop virtualStorage`,
    );
  positiveInt("capacity", 1);
  positiveInt("workers", 1);
  positiveInt("port", 0);
  positiveInt("maxQueueSize", 1);
  for (const name of ["timeScale"] as const) {
    const v = o[name];
    if (v !== undefined && !(typeof v === "number" && v > 0 && Number.isFinite(v))) {
      throw new TypeError(`Expected \`${name}\` to be a number above 0, got ${String(v)}`);
    }
  }
  for (const name of [
    "handoffDelayMs",
    "unusedDelayMs",
    "millisToWaitBeforeDeleting",
    "baseDurationMs",
    "perRowMs",
  ] as const) {
    const v = o[name];
    if (v !== undefined && !(typeof v === "number" && v >= 0 && Number.isFinite(v))) {
      throw new TypeError(`Expected \`${name}\` to be a number from 0 and up, got ${String(v)}`);
    }
  }
}
