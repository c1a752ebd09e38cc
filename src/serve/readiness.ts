import type { HostOutage } from "../druid/outage.js";
import type { DruidReachability, ReadinessWorker } from "./schemas.js";

/** What `/readyz` reads of the local worker (a `Worker` satisfies it). */
export interface ReadyWorker {
  readonly state: string;
  readonly inFlight: number;
  /** What a paused worker waits for (`druid`, `ledger`); absent: a worker that does not say. */
  readonly pausedFor?: string | null;
  /** Whether it makes progress (`Worker.progress`); absent: a worker that does not watch it. */
  readonly progress?: {
    readonly stalled: boolean;
    readonly since: number | null;
    readonly reason: string | null;
    readonly lastProgressAt: number;
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The worker's part of `/readyz`: ready while it runs or waits out an outage (paused: the ledger and Druid
 * checks say why), not ready once stopped or stalled (partitions due for it and nothing claimed for the
 * stall timeout), with since when and why. No worker (the API alone) is ready.
 */
export function workerReadiness(worker: ReadyWorker | null): { ok: boolean; view: ReadinessWorker } {
  if (worker === null)
    return { ok: true, view: { state: "none", inFlight: 0, stalled: false, lastProgressAt: null } };
  const p = worker.progress;
  const stalled = p?.stalled === true;
  const view: ReadinessWorker = {
    state: worker.state,
    inFlight: worker.inFlight,
    stalled,
    lastProgressAt: p ? iso(p.lastProgressAt) : null,
    ...(stalled && p.since !== null ? { stalledSince: iso(p.since) } : {}),
    ...(stalled && p.reason !== null ? { reason: p.reason } : {}),
  };
  const alive = worker.state === "running" || worker.state === "paused";
  return { ok: alive && !stalled, view };
}

/** What the service reads of Druid's reachability (an `OutageMonitor` satisfies it). */
export interface DruidOutageSource {
  /** The host whose calls are refused (down the longest), or null while every host answers. */
  hostOutage(): HostOutage | null;
  /** Since when some call has gone unanswered (any endpoint), or null. */
  readonly since: number | null;
  readonly lastError: string | null;
}

/**
 * Whether this host reaches Druid, for `/readyz`, `/metrics` and the dashboard alike: unreachable while the
 * outage monitor refuses its calls (one probe per backoff step) or the worker has handed its partitions
 * back for Druid; with since when, the unanswered call and the next probe.
 */
export function druidReachability(
  outage: DruidOutageSource | null | undefined,
  worker: ReadyWorker | null,
  now: number,
): DruidReachability {
  const host = outage?.hostOutage() ?? null;
  const workerPaused = worker?.state === "paused" && worker.pausedFor === "druid";
  if (!host && !workerPaused) return { reachable: true, workerPaused: false };
  const since = host?.since ?? outage?.since ?? now;
  const lastError = host?.lastError ?? outage?.lastError ?? null;
  return {
    reachable: false,
    since: iso(since),
    ...(lastError ? { lastError } : {}),
    ...(host ? { nextProbeAt: iso(Math.max(now, host.nextProbeAt)), refused: host.refused } : {}),
    workerPaused,
  };
}
