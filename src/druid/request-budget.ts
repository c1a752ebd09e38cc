import type { Clock } from "../core/clock.js";
import { UsageError } from "../core/errors.js";

/**
 * A per-host budget of requests a second (`--druid-request-budget N/s`): a token bucket in front of every attempt
 * the client sends. A call past the budget waits for a token, it is never dropped; waiting calls go out by class —
 * status lookups first (they decide detection latency), then handoff checks, then everything else, admission reads
 * last (a slot seen a second later costs the least) — and in arrival order within a class. The bucket holds one
 * second's worth of tokens, so a quiet client may send that many at once.
 */

export type BudgetClass = "status" | "handoff" | "other" | "admission";

/** Lower goes first. */
const ORDER: Record<BudgetClass, number> = { status: 0, handoff: 1, other: 2, admission: 3 };

export const BUDGET_CLASSES: readonly BudgetClass[] = ["status", "handoff", "other", "admission"];

/** The class of a request by its route template (`METHOD /path/:param`, routes.ts). */
export function budgetClass(route: string): BudgetClass {
  if (route === "POST /druid/indexer/v1/taskStatus" || route === "GET /druid/indexer/v1/task/:taskId/status")
    return "status";
  if (
    route.startsWith("POST /druid/coordinator/v1/metadata/datasources/") ||
    route.endsWith("/serverview") ||
    route.startsWith("GET /druid/coordinator/v1/rules/") ||
    route.startsWith("GET /druid/coordinator/v1/datasources/")
  )
    return "handoff";
  if (
    route === "GET /druid/indexer/v1/workers" ||
    route === "GET /druid/indexer/v1/tasks" ||
    route === "GET /druid/indexer/v1/totalWorkerCapacity" ||
    route === "GET /druid/indexer/v1/worker"
  )
    return "admission";
  return "other";
}

export interface RequestBudgetOptions {
  /** Requests a second per host (origin), above 0. */
  perSecond: number;
  clock: Clock;
  /** Told about each call that had to wait, with its class and how long (ms on `clock`). */
  onWait?: (cls: BudgetClass, waitedMs: number) => void;
}

interface Waiter {
  cls: BudgetClass;
  seq: number;
  since: number;
  resolve(): void;
  reject(error: unknown): void;
  signal?: AbortSignal | undefined;
  onAbort?: () => void;
}

interface Bucket {
  tokens: number;
  refilledAt: number;
  queue: Waiter[];
  pumping: boolean;
}

/** What the budget did, per class: calls sent at once, calls that waited and their summed wait. */
export interface RequestBudgetStats {
  immediate: number;
  waits: Record<BudgetClass, number>;
  waitedMs: Record<BudgetClass, number>;
}

export class RequestBudget {
  readonly perSecond: number;
  readonly #clock: Clock;
  readonly #onWait: RequestBudgetOptions["onWait"];
  readonly #burst: number;
  readonly #buckets = new Map<string, Bucket>();
  #seq = 0;
  readonly stats: RequestBudgetStats = {
    immediate: 0,
    waits: { status: 0, handoff: 0, other: 0, admission: 0 },
    waitedMs: { status: 0, handoff: 0, other: 0, admission: 0 },
  };

  constructor(options: RequestBudgetOptions) {
    if (!(Number.isFinite(options.perSecond) && options.perSecond > 0))
      throw new UsageError(
        `request budget: expected a number of requests a second above 0, got ${options.perSecond}`,
        { option: "perSecond" },
      );
    this.perSecond = options.perSecond;
    this.#clock = options.clock;
    this.#onWait = options.onWait;
    this.#burst = Math.max(1, options.perSecond);
  }

  /**
   * Resolves when the request may be sent to `origin` (at once while the host's bucket has a token and nobody
   * waits); rejects with the signal's reason if it aborts first.
   */
  take(request: { origin: string; route: string; signal?: AbortSignal | undefined }): Promise<void> {
    const bucket = this.#bucket(request.origin);
    this.#refill(bucket);
    if (bucket.queue.length === 0 && bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.stats.immediate++;
      return Promise.resolve();
    }
    const { signal } = request;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        cls: budgetClass(request.route),
        seq: this.#seq++,
        since: this.#clock.now(),
        resolve,
        reject,
        signal,
      };
      if (signal) {
        waiter.onAbort = () => {
          const at = bucket.queue.indexOf(waiter);
          if (at >= 0) bucket.queue.splice(at, 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      insertByClass(bucket.queue, waiter);
      if (!bucket.pumping) void this.#pump(bucket);
    });
  }

  /** Calls waiting for a token, over every host. */
  get waiting(): number {
    let n = 0;
    for (const b of this.#buckets.values()) n += b.queue.length;
    return n;
  }

  #bucket(origin: string): Bucket {
    let b = this.#buckets.get(origin);
    if (!b) {
      b = { tokens: this.#burst, refilledAt: this.#clock.now(), queue: [], pumping: false };
      this.#buckets.set(origin, b);
    }
    return b;
  }

  #refill(b: Bucket): void {
    const now = this.#clock.now();
    b.tokens = Math.min(this.#burst, b.tokens + ((now - b.refilledAt) * this.perSecond) / 1000);
    b.refilledAt = now;
  }

  /** Hands out tokens to the host's waiting calls as they accrue, the highest class first. */
  async #pump(b: Bucket): Promise<void> {
    b.pumping = true;
    try {
      while (b.queue.length > 0) {
        this.#refill(b);
        if (b.tokens < 1) {
          await this.#clock.sleep(Math.ceil(((1 - b.tokens) * 1000) / this.perSecond));
          continue;
        }
        const next = b.queue.shift() as Waiter;
        b.tokens -= 1;
        if (next.signal && next.onAbort) next.signal.removeEventListener("abort", next.onAbort);
        const waited = this.#clock.now() - next.since;
        this.stats.waits[next.cls]++;
        this.stats.waitedMs[next.cls] += waited;
        this.#onWait?.(next.cls, waited);
        next.resolve();
      }
    } finally {
      b.pumping = false;
    }
  }
}

function insertByClass(queue: Waiter[], w: Waiter): void {
  let i = queue.length;
  while (i > 0 && ORDER[(queue[i - 1] as Waiter).cls] > ORDER[w.cls]) i--;
  queue.splice(i, 0, w);
}

/**
 * `--druid-request-budget`: `N/s` or `N` requests a second (a positive number); anything else is a usage error
 * naming the flag.
 */
export function parseRequestBudget(flag: string, raw: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*s)?\s*$/.exec(raw);
  const n = m ? Number(m[1]) : Number.NaN;
  if (!(n > 0))
    throw new UsageError(
      `${flag} ${JSON.stringify(raw)}: expected requests a second per Druid host, as N/s or N above 0 (e.g. 20/s)`,
      { flag },
    );
  return n;
}
