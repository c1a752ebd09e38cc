import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import type { DruidClient } from "../druid/client.js";
import type { Store } from "../ledger/store.js";
import type { TaskRow } from "../ledger/types.js";
import type { AdmissionTracker } from "./admission-tracker.js";
import type { SizeBand } from "./audit.js";
import type { HandoffChecker } from "./handoff.js";
import type { StatusBatcher } from "./status-batcher.js";

/**
 * What the engine hands every kind of work that runs through Druid tasks: one process's client, clock and
 * shared machinery (one status batcher, one handoff checker, one admission tracker for every partition of
 * every job), and the process's settings.
 */
export interface DruidServices {
  client: DruidClient;
  clock: Clock;
  batcher: StatusBatcher;
  handoff: HandoffChecker;
  admission?: AdmissionTracker;
  /**
   * Partitions with a Druid task in flight at once in this process (`--max-concurrency`). With admission
   * control that is its cap, and the driver runs up to `1 + DEFAULTS.handoffWaitFactor` times as many
   * handlers, the rest waiting for handoff and the audit. @default DEFAULTS.maxConcurrency (8)
   */
  concurrency?: number;
  /** Cadence of status polls for one task. @default DEFAULTS.tickMs (1000) */
  tickMs?: number;
  /**
   * A job's own settings (`maxConcurrency`, `poisonAfter` stored with it), where a process runs many jobs
   * (the service's worker): they apply under the process's own. @default none (the process's settings)
   */
  jobSettings?: (jobId: string) => JobSettings | undefined;
  /** Give up on handoff this long after SUCCESS. @default DEFAULTS.handoffTimeoutMs (15 min) */
  handoffTimeoutMs?: number;
  /** Dead-letter after this many same-class deterministic failures. @default DEFAULTS.poisonAfter (3) */
  poisonAfter?: number;
  /** Retry ceiling for transient failures (Druid unreachable, failed attempts). @default DEFAULTS.maxRetry (10) */
  maxRetry?: number;
  sizeBand?: SizeBand;
  /** First retry delay after a failed attempt or an unreachable Druid; grows to 60× with full jitter. @default DEFAULTS.retryBaseTicks ticks (5000) */
  retryBaseMs?: number;
  /** Told about each step a partition finishes (progress display, logs). */
  onStep?: (task: TaskRow, step: string, detail: string) => void;
  /**
   * The ledger the process runs from, read for what other partitions (other hosts, other jobs) hold: the compaction
   * skip intervals they share (ingest/compaction-leftovers.ts). @default none (this process's partitions only)
   */
  ledger?: Pick<Store, "listJobs" | "listTasks">;
}

/** What a job may set for itself (stored in its options by `planRequest`). */
export interface JobSettings {
  maxConcurrency?: number;
  poisonAfter?: number;
}

/** A job's own settings from its stored options (numbers only; anything else is not a setting). */
export function jobSettingsOf(options: Readonly<Record<string, unknown>>): JobSettings {
  const out: JobSettings = {};
  for (const key of ["maxConcurrency", "poisonAfter"] as const) {
    const v = options[key];
    if (typeof v === "number" && Number.isInteger(v) && v >= 1) out[key] = v;
  }
  return out;
}

/**
 * How many partitions the driver may run at once for a cap of `cap` at Druid. A partition past SUCCESS
 * waits for handoff and the audit inside its handler but holds no worker slot; were it counted against the
 * cap, every success would leave a slot idle for the handoff delay (5 % of a 200-partition backfill's
 * makespan at a 10 s handoff, bench/baselines.ts). Admission keeps the Druid side at `cap`; the extra
 * handlers are for those waits, and once they are all taken new submissions stop — backpressure from a
 * Coordinator that loads segments slower than the tasks make them. Without admission the cap is all there is.
 */
export function handlerConcurrency(cap: number, admission: AdmissionTracker | undefined): number {
  return admission ? cap * (1 + DEFAULTS.handoffWaitFactor) : cap;
}
