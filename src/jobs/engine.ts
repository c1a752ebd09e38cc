import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import { UsageError } from "../core/errors.js";
import { type DrainResult, drain } from "../driver/drain.js";
import type { DriverLog } from "../driver/driver.js";
import type { KindOfWork } from "../driver/kind.js";
import type { Runner } from "../driver/runner.js";
import type { DruidClient } from "../druid/client.js";
import { assertJobCluster, clusterOf } from "../druid/cluster.js";
import type { OutageMonitor } from "../druid/outage.js";
import type { Store } from "../ledger/store.js";
import type { JobRow, JobState, TaskRow } from "../ledger/types.js";
import { AdmissionTracker } from "../work/admission-tracker.js";
import type { SizeBand } from "../work/audit.js";
import { HandoffChecker } from "../work/handoff.js";
import type { DruidServices, JobSettings } from "../work/services.js";
import { StatusBatcher, type TaskStatusSnapshot } from "../work/status-batcher.js";
import { KINDS } from "./kinds.js";

/**
 * Wires one process's ingestion machinery — a status batcher, a handoff checker, admission control and
 * the ingestion runner — onto the driver, and drains one job. `run`, `backfill`, `demo` and the service
 * all come through here.
 */

export interface EngineOptions {
  store: Store;
  client: DruidClient;
  clock: Clock;
  jobId: string;
  /** Polling cadence (status batches, handoff checks, worker refresh). @default DEFAULTS.tickMs (1000) */
  tickMs?: number;
  maxConcurrency?: number;
  poisonAfter?: number;
  handoffTimeoutMs?: number;
  maxRetry?: number;
  sizeBand?: SizeBand;
  /** First retry delay after a failed attempt. @default 5 ticks */
  retryBaseMs?: number;
  leaseMs?: number;
  /** Stop (work left resumable) at this time. */
  deadline?: number;
  signal?: AbortSignal;
  onStep?: (task: TaskRow, step: string, detail: string) => void;
  log?: DriverLog;
  owner?: string;
  /**
   * Bounds a Druid outage: fed by the client's `onAttempt`, it stops the run (work handed back,
   * resumable) once Druid has not answered for `timeoutMs`.
   */
  outage?: { monitor: OutageMonitor; timeoutMs: number };
  /** The kinds of work this process runs. @default KINDS (every kind of this build) */
  kinds?: readonly KindOfWork<DruidServices>[];
  /**
   * Handed the run's admission tracker before anything runs, for a display of why the run waits
   * (`blockedSince`, `describeBlocked`). @default none
   */
  onAdmission?: (admission: AdmissionTracker) => void;
}

export interface EngineResult extends DrainResult {
  peakSlots: number;
  statusLookups: number;
  /** The job as settled after the run: `done`/`failed` once every partition is terminal, else `open`. */
  job: JobRow;
  /** Set when the run stopped because Druid did not answer for the outage timeout. */
  outage: { since: number; lastError: string | null } | null;
}

/** A job's state from its partitions: open while any is unfinished; then failed if any failed or died. */
export function jobStateFor(counts: DrainResult["counts"]): JobState {
  if (counts.new + counts.running + counts.suspended > 0) return "open";
  return counts.failed + counts.dead > 0 ? "failed" : "done";
}

/**
 * Records a job's state once its partitions say it changed. Every caller of the library gets it: the
 * driver that commits a job's last partition settles that job, whichever process planned it.
 */
export async function settleJob(store: Store, jobId: string, actor = "driver"): Promise<JobRow | null> {
  const [job, counts] = await Promise.all([store.getJob(jobId), store.countTasks(jobId)]);
  if (!job) return null;
  const state = jobStateFor(counts);
  // An open job whose partitions finished, or a finished one sent back by retry, moves.
  if (job.state === state) return job;
  const reason =
    state === "open"
      ? "partitions sent back to run"
      : `every partition finished: ${counts.done} done, ${counts.failed} failed, ${counts.dead} dead-lettered`;
  return (await store.setJobState(jobId, state, reason, actor)) ?? job;
}

/** The status batcher's lookup through `client`: the lean bulk path, one small entry per known task. */
export function statusLookupFor(client: DruidClient) {
  return (ids: readonly string[], signal: AbortSignal): Promise<Map<string, TaskStatusSnapshot>> =>
    client.bulkTaskStates(ids, { signal });
}

/** Aborts `stop` once the monitor has seen no answer for `timeoutMs`; resolves with the outage (or null). */
async function watchOutage(
  outage: NonNullable<EngineOptions["outage"]>,
  clock: Clock,
  tickMs: number,
  stop: AbortController,
  external: AbortSignal | undefined,
): Promise<EngineResult["outage"]> {
  const done = external ? AbortSignal.any([external, stop.signal]) : stop.signal;
  while (!done.aborted) {
    const since = outage.monitor.since;
    if (since !== null && outage.monitor.outageMs() >= outage.timeoutMs) {
      stop.abort(new Error("Druid outage"));
      return { since, lastError: outage.monitor.lastError };
    }
    await clock.sleep(tickMs, done).catch(() => undefined);
  }
  return null;
}

/** What one process's Druid machinery is built from (shared by `runJob` and the service's worker). */
export type MachineryOptions = Pick<
  EngineOptions,
  | "client"
  | "clock"
  | "tickMs"
  | "maxConcurrency"
  | "poisonAfter"
  | "handoffTimeoutMs"
  | "maxRetry"
  | "sizeBand"
  | "retryBaseMs"
  | "onStep"
> & {
  /** Told how long each bulk status lookup took and for how many ids (metrics). */
  onStatusLookup?: (durationMs: number, ids: number) => void;
  /** Each job's own settings, where one process runs many (the service's worker). */
  jobSettings?: (jobId: string) => JobSettings | undefined;
  /** The ledger, for what partitions of other hosts and jobs hold (services' `ledger`). */
  store?: Store;
};

/**
 * One process's Druid machinery: one status batcher, one handoff checker and one admission tracker,
 * shared by every partition (of every job) the process runs, so status polls stay one bulk call a tick.
 */
export interface Machinery {
  readonly services: DruidServices;
  readonly batcher: StatusBatcher;
  readonly admission: AdmissionTracker;
  /** Stops the batcher's and the checker's loops. */
  stop(): Promise<void>;
}

export function createMachinery(options: MachineryOptions): Machinery {
  const tickMs = options.tickMs ?? DEFAULTS.tickMs;
  const maxConcurrency = options.maxConcurrency ?? DEFAULTS.maxConcurrency;
  const lookup = statusLookupFor(options.client);
  const observed = options.onStatusLookup;
  const batcher = new StatusBatcher({
    lookup: observed
      ? async (ids, signal) => {
          const started = performance.now();
          try {
            return await lookup(ids, signal);
          } finally {
            observed(performance.now() - started, ids.length);
          }
        }
      : lookup,
    clock: options.clock,
    tickMs,
  });
  const handoff = new HandoffChecker({ source: options.client, clock: options.clock, tickMs });
  const admission = new AdmissionTracker({
    client: options.client,
    clock: options.clock,
    maxConcurrency,
    tickMs,
  });
  const services: DruidServices = {
    client: options.client,
    clock: options.clock,
    batcher,
    handoff,
    admission,
    concurrency: maxConcurrency,
    tickMs,
    retryBaseMs: options.retryBaseMs ?? tickMs * DEFAULTS.retryBaseTicks,
    ...(options.poisonAfter !== undefined ? { poisonAfter: options.poisonAfter } : {}),
    ...(options.handoffTimeoutMs !== undefined ? { handoffTimeoutMs: options.handoffTimeoutMs } : {}),
    ...(options.maxRetry !== undefined ? { maxRetry: options.maxRetry } : {}),
    ...(options.sizeBand ? { sizeBand: options.sizeBand } : {}),
    ...(options.onStep ? { onStep: options.onStep } : {}),
    ...(options.jobSettings ? { jobSettings: options.jobSettings } : {}),
    ...(options.store ? { ledger: options.store } : {}),
  };
  return {
    services,
    batcher,
    admission,
    stop: async () => {
      await batcher.stop();
      await handoff.stop();
    },
  };
}

/**
 * The runners of `kinds` over `services`. The driver that commits a partition's terminal state settles
 * its job (`settleJob`), so a job ends in whichever process ran its last partition.
 */
export function runnersFor(
  kinds: readonly KindOfWork<DruidServices>[],
  services: DruidServices,
  store: Store,
  actor: string,
): Runner[] {
  return kinds.map((kind) => {
    const runner = kind.runner(services);
    return {
      ...runner,
      onFinish: async (task: TaskRow) => {
        await runner.onFinish?.(task);
        await settleJob(store, task.jobId, actor);
      },
    };
  });
}

/** Runs one job, whatever its kinds of work, to the end (or deadline, signal, outage); settles its state. */
export async function runJob(options: EngineOptions): Promise<EngineResult> {
  const tickMs = options.tickMs ?? DEFAULTS.tickMs;
  const planned = await options.store.getJob(options.jobId);
  if (!planned) throw new UsageError(`no job ${options.jobId} in the ledger`, { jobId: options.jobId });
  // Before anything is claimed: a job never runs against a cluster other than its own.
  assertJobCluster(planned, clusterOf(options.client));
  const machinery = createMachinery(options);
  options.onAdmission?.(machinery.admission);
  const runners = runnersFor(
    options.kinds ?? KINDS,
    machinery.services,
    options.store,
    options.owner ?? "driver",
  );
  // An outage longer than allowed stops the run like Ctrl-C does: work handed back, resumable.
  const stop = new AbortController();
  const watch = options.outage
    ? watchOutage(options.outage, options.clock, tickMs, stop, options.signal)
    : null;
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  try {
    const result = await drain({
      store: options.store,
      runners,
      clock: options.clock,
      jobId: options.jobId,
      pollMs: Math.max(10, Math.floor(tickMs / 2)),
      ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
      ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
      signal,
      ...(options.log ? { log: options.log } : {}),
      ...(options.owner ? { owner: options.owner } : {}),
    });
    const job = (await settleJob(options.store, options.jobId, options.owner ?? "driver")) ?? planned;
    stop.abort();
    const outage = (await watch) ?? null;
    return {
      ...result,
      job,
      outage,
      peakSlots: machinery.admission.peakSlots,
      statusLookups: machinery.batcher.stats.lookups,
    };
  } finally {
    stop.abort();
    await watch;
    await machinery.stop();
  }
}

/** The name the ingestion commands have always used: every job is run the same way now. */
export const runIngestJob = runJob;
