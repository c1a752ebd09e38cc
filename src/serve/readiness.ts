import type { ReadinessWorker } from "./schemas.js";

/** What `/readyz` reads of the local worker (a `Worker` satisfies it). */
export interface ReadyWorker {
  readonly state: string;
  readonly inFlight: number;
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
