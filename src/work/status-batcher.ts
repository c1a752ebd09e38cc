import { backoffDelay } from "../core/backoff.js";
import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import { isDruidUnreachable } from "../druid/host-backoff.js";
import { type Batch, TickBatcher } from "./tick-batcher.js";

/**
 * One status batcher per process (docs/benchmarks.md, "Polling economics"): every in-flight Druid task asks
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

export interface BatcherStats {
  lookups: number;
  idsLookedUp: number;
  failures: number;
}

/** What a caller waits for: the next answer, or the first answer that is not RUNNING. */
type Wait = "next" | "not-running";

export class StatusBatcher {
  readonly #opts: Required<Omit<StatusBatcherOptions, "random">> & { random: () => number };
  readonly #batcher: TickBatcher<string, Wait, StatusResult>;
  #failures = 0;
  #lastFlushEnd = Number.NEGATIVE_INFINITY;
  #lastFlushStart = Number.NEGATIVE_INFINITY;
  readonly stats: BatcherStats = { lookups: 0, idsLookedUp: 0, failures: 0 };

  constructor(options: StatusBatcherOptions) {
    this.#opts = {
      tickMs: DEFAULTS.tickMs,
      maxBackoffMs: 30_000,
      isRetryable: (e) => (e as { retryable?: unknown })?.retryable === true,
      random: Math.random,
      ...options,
    };
    this.#batcher = new TickBatcher({
      name: "status batcher",
      clock: this.#opts.clock,
      nextDelay: () => this.#nextDelay(),
      flush: (batch, signal) => this.#flush(batch, signal),
    });
  }

  /** Resolves with the task's status at the next bulk lookup (within about one tick). */
  get(id: string, signal?: AbortSignal): Promise<StatusResult> {
    return this.#batcher.ask(id, "next", signal);
  }

  /**
   * Resolves with the task's first status that is not RUNNING (ended, or unknown to Druid). The id rides
   * every bulk lookup until then with the same waiter: a partition watching its task costs one promise for
   * the whole run, not one a tick (10,000 partitions in flight made 10,000 a tick, most of a backfill's
   * garbage).
   */
  getEnded(id: string, signal?: AbortSignal): Promise<StatusResult> {
    return this.#batcher.ask(id, "not-running", signal);
  }

  /** Resolves with every id's status at the next bulk lookup: one promise for the set, not one per id. */
  getMany(ids: Iterable<string>, signal?: AbortSignal): Promise<Map<string, StatusResult>> {
    return this.#batcher.askMany(ids, "next", signal);
  }

  stop(): Promise<void> {
    return this.#batcher.stop();
  }

  #nextDelay(): number {
    const tick = this.#opts.tickMs;
    // At most one lookup a tick, a tick apart from start to start: timed from the last one's end, every lookup's
    // own latency was added to the period (a 20 ms answer at the benchmark's time scale of 20 made a 1.4 s tick,
    // and detection p99 with it). A slow answer still leaves Druid half a tick before the next. After a tick or
    // more of quiet, a short gathering pause instead of a whole tick (a task just submitted would wait a tick
    // for its first status: `segops run`'s overhead).
    if (this.#failures === 0) {
      const due = Math.max(this.#lastFlushStart + tick, this.#lastFlushEnd + tick / 2);
      return Math.min(tick, Math.max(DEFAULTS.gatherMs, due - this.#opts.clock.now()));
    }
    const pause = backoffDelay(
      this.#failures - 1,
      { baseMs: this.#opts.tickMs * 2, capMs: this.#opts.maxBackoffMs },
      this.#opts.random,
    );
    return Math.max(this.#opts.tickMs, pause);
  }

  async #flush(batch: Batch<string, Wait, StatusResult>, signal: AbortSignal): Promise<void> {
    this.stats.lookups++;
    this.stats.idsLookedUp += batch.size;
    this.#lastFlushStart = this.#opts.clock.now();
    try {
      await this.#lookUp(batch, signal);
    } finally {
      this.#lastFlushEnd = this.#opts.clock.now();
    }
  }

  async #lookUp(batch: Batch<string, Wait, StatusResult>, signal: AbortSignal): Promise<void> {
    try {
      const found = await this.#opts.lookup([...batch.keys()], signal);
      this.#failures = 0;
      const still: Batch<string, Wait, StatusResult> = new Map();
      for (const [id, waiters] of batch) {
        const result: StatusResult = found.get(id) ?? { id, state: "UNKNOWN" };
        if (result.state === "RUNNING" && waiters.some((w) => w.question === "not-running")) {
          // The usual case (only a watcher waits) keeps the same list: no new array per id per tick.
          const mixed = waiters.some((w) => w.question !== "not-running");
          if (mixed) for (const w of waiters) if (w.question !== "not-running") w.resolve(result);
          still.set(id, mixed ? waiters.filter((w) => w.question === "not-running") : waiters);
        } else {
          for (const w of waiters) w.resolve(result);
        }
      }
      // Still RUNNING: the same waiters ride the next lookup.
      if (still.size > 0) this.#batcher.requeue(still);
    } catch (error) {
      this.stats.failures++;
      if (isDruidUnreachable(error) && !signal.aborted) {
        // Druid does not answer and the host's one backoff (host-backoff.ts) already paces what is sent: a lookup
        // each tick is refused here, sent nothing, until the gate lets one through as the probe or another
        // caller's answer opens it. A backoff of the batcher's own on top would leave it up to its cap behind.
        this.#failures = 0;
        this.#batcher.requeue(batch);
      } else if (this.#opts.isRetryable(error) && !signal.aborted) {
        this.#failures++;
        this.#batcher.requeue(batch);
      } else {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(error);
      }
    }
  }
}
