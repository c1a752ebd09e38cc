import { backoffDelay } from "../core/backoff.js";
import type { Clock } from "../core/clock.js";

/**
 * One status batcher per process (architecture doc, "Polling economics"): every in-flight Druid task asks
 * it for its status; the ids asked for during a tick go to Druid in one bulk call (the lookup chunks and
 * falls back to per-task GETs itself). Detection latency stays about one tick however many tasks are in
 * flight, and on 429/503/leader change the whole batcher backs off instead of every task hammering alone.
 */

export type TaskState = "RUNNING" | "SUCCESS" | "FAILED";

export interface TaskStatusSnapshot {
  id: string;
  state: TaskState;
  /** Milliseconds; -1 while running. */
  duration: number;
  errorMsg: string | null;
}

/** Statuses of the ids Druid knows; an id missing from the map is unknown to Druid (not failed). */
export type StatusLookup = (
  ids: readonly string[],
  signal: AbortSignal,
) => Promise<Map<string, TaskStatusSnapshot>>;

export type StatusResult = TaskStatusSnapshot | { id: string; state: "UNKNOWN" };

export interface StatusBatcherOptions {
  lookup: StatusLookup;
  clock: Clock;
  /** Time between bulk calls while anyone is waiting. @default 1000 */
  tickMs?: number;
  /** Longest pause after repeated lookup failures. @default 30000 */
  maxBackoffMs?: number;
  /** Whether a lookup failure is worth waiting out (429, 503, 5xx, resets); others reject every waiter. */
  isRetryable?: (error: unknown) => boolean;
  random?: () => number;
}

interface Waiter {
  resolve: (r: StatusResult) => void;
  reject: (e: unknown) => void;
}

export interface BatcherStats {
  lookups: number;
  idsLookedUp: number;
  failures: number;
}

export class StatusBatcher {
  readonly #opts: Required<Omit<StatusBatcherOptions, "random">> & { random: () => number };
  readonly #waiting = new Map<string, Waiter[]>();
  readonly #stop = new AbortController();
  #wake: (() => void) | null = null;
  #loop: Promise<void> | null = null;
  #failures = 0;
  readonly stats: BatcherStats = { lookups: 0, idsLookedUp: 0, failures: 0 };

  constructor(options: StatusBatcherOptions) {
    this.#opts = {
      tickMs: 1000,
      maxBackoffMs: 30_000,
      isRetryable: (e) => (e as { retryable?: unknown })?.retryable === true,
      random: Math.random,
      ...options,
    };
  }

  /** Resolves with the task's status at the next bulk lookup (within about one tick). */
  get(id: string, signal?: AbortSignal): Promise<StatusResult> {
    if (this.#stop.signal.aborted) return Promise.reject(new Error("status batcher is stopped"));
    this.#loop ??= this.#run();
    return new Promise<StatusResult>((resolve, reject) => {
      // The abort listener lives exactly as long as the wait: a task polled for hours must not pile them up.
      const onAbort = () => {
        const remaining = (this.#waiting.get(id) ?? []).filter((w) => w !== waiter);
        if (remaining.length) this.#waiting.set(id, remaining);
        else this.#waiting.delete(id);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        resolve: (r) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(r);
        },
        reject: (e) => {
          signal?.removeEventListener("abort", onAbort);
          reject(e);
        },
      };
      const list = this.#waiting.get(id) ?? [];
      list.push(waiter);
      this.#waiting.set(id, list);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#wake?.();
    });
  }

  async stop(): Promise<void> {
    this.#stop.abort(new Error("status batcher stopped"));
    this.#wake?.();
    await this.#loop?.catch(() => {});
    for (const [, list] of this.#waiting) for (const w of list) w.reject(this.#stop.signal.reason);
    this.#waiting.clear();
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      if (this.#waiting.size === 0) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = null;
        continue;
      }
      try {
        await this.#opts.clock.sleep(this.#nextDelay(), signal);
      } catch {
        return;
      }
      await this.#flush(signal);
    }
  }

  #nextDelay(): number {
    if (this.#failures === 0) return this.#opts.tickMs;
    const pause = backoffDelay(
      this.#failures - 1,
      { baseMs: this.#opts.tickMs * 2, capMs: this.#opts.maxBackoffMs },
      this.#opts.random,
    );
    return Math.max(this.#opts.tickMs, pause);
  }

  async #flush(signal: AbortSignal): Promise<void> {
    const batch = new Map(this.#waiting);
    if (batch.size === 0) return;
    this.#waiting.clear();
    this.stats.lookups++;
    this.stats.idsLookedUp += batch.size;
    try {
      const found = await this.#opts.lookup([...batch.keys()], signal);
      this.#failures = 0;
      for (const [id, waiters] of batch) {
        const result: StatusResult = found.get(id) ?? { id, state: "UNKNOWN" };
        for (const w of waiters) w.resolve(result);
      }
    } catch (error) {
      this.stats.failures++;
      if (this.#opts.isRetryable(error) && !signal.aborted) {
        this.#failures++;
        // Put the batch back in front of anything asked meanwhile; it rides the next lookup.
        for (const [id, waiters] of batch)
          this.#waiting.set(id, [...waiters, ...(this.#waiting.get(id) ?? [])]);
      } else {
        for (const [, waiters] of batch) for (const w of waiters) w.reject(error);
      }
    }
  }
}
