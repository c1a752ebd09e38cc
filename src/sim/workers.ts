/**
 * Worker slots (docs/druid-api.md §2.9): `workers` MiddleManagers of `capacity` slots each. A task takes all its
 * slots at once (supervisor + k sub-tasks for a parallel `index_parallel`); the supervisor sits on the worker
 * with the most free slots, sub-task slots fill the others.
 */
export interface WorkerState {
  host: string;
  capacity: number;
  /**
   * Disabled (`POST /druid/worker/v1/disable` on the MiddleManager): its running tasks go on, the Overlord
   * assigns it no new one (`WorkerHolder`, `HttpRemoteTaskRunner`).
   */
  disabled: boolean;
  /** taskId → slots held on this worker. */
  held: Map<string, number>;
  lastCompletedTaskTime: number;
}

export interface Placement {
  /** Index of the worker running the supervisor (its location). */
  home: number;
  /** Peon port of the supervisor. */
  port: number;
}

export class SlotPool {
  readonly workers: WorkerState[];
  /** taskId → the worker its supervisor (or only) slot is on. */
  readonly #homes = new Map<string, number>();
  #maxUsed = 0;
  #nextPort = 0;

  constructor(workers: number, capacity: number, startMs: number) {
    this.workers = Array.from({ length: workers }, (_, i) => ({
      host: `localhost:${8091 + i}`,
      capacity,
      disabled: false,
      held: new Map(),
      lastCompletedTaskTime: startMs,
    }));
  }

  get total(): number {
    return this.workers.reduce((n, w) => n + w.capacity, 0);
  }

  get used(): number {
    return this.workers.reduce((n, w) => n + usedOn(w), 0);
  }

  /** Highest number of slots in use at once since start (or the last stats reset). */
  get maxUsed(): number {
    return this.#maxUsed;
  }

  resetMax(): void {
    this.#maxUsed = this.used;
  }

  /**
   * A task never needs more slots than the enabled workers have (it would never start otherwise: a real
   * supervisor runs with fewer sub-tasks at once).
   */
  need(slots: number): number {
    return Math.max(1, Math.min(slots, this.enabledTotal));
  }

  /** Disables or enables worker `index`; false when there is no such worker. */
  setEnabled(index: number, enabled: boolean): boolean {
    const w = this.workers[index];
    if (!w) return false;
    w.disabled = !enabled;
    return true;
  }

  tryPlace(taskId: string, slots: number): Placement | null {
    const needed = this.need(slots);
    const enabled = this.workers.map((w, i) => ({ w, i })).filter(({ w }) => !w.disabled);
    const free = enabled.reduce((n, { w }) => n + w.capacity - usedOn(w), 0);
    if (free < needed) return null;
    const byFree = enabled.sort(
      (a, b) => b.w.capacity - usedOn(b.w) - (a.w.capacity - usedOn(a.w)) || a.i - b.i,
    );
    let left = needed;
    for (const { w } of byFree) {
      const take = Math.min(left, w.capacity - usedOn(w));
      if (take > 0) w.held.set(taskId, take);
      left -= take;
      if (left === 0) break;
    }
    const home = byFree[0]?.i ?? 0;
    this.#homes.set(taskId, home);
    this.#maxUsed = Math.max(this.#maxUsed, this.used);
    // Peons get consecutive ports from 8100, like a MiddleManager's port finder.
    const port = 8100 + (this.#nextPort++ % 1000);
    return { home, port };
  }

  /** The worker index holding the task's supervisor slot, while it runs. */
  homeOf(taskId: string): number | undefined {
    return this.#homes.get(taskId);
  }

  /** Capacity of the workers that take new tasks. */
  get enabledTotal(): number {
    return this.workers.reduce((n, w) => n + (w.disabled ? 0 : w.capacity), 0);
  }

  release(taskId: string, now: number): void {
    this.#homes.delete(taskId);
    for (const w of this.workers) {
      if (w.held.delete(taskId)) w.lastCompletedTaskTime = now;
    }
  }
}

export function usedOn(w: WorkerState): number {
  let n = 0;
  for (const v of w.held.values()) n += v;
  return n;
}
