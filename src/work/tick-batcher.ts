import { setMaxListeners } from "node:events";
import type { Clock } from "../core/clock.js";

/**
 * The mechanism under the status batcher and the handoff checker: callers ask questions under a key; the
 * questions gathered during one tick are answered together by one `flush`. Idle, it sleeps until asked.
 * A flush may hand a batch back (`requeue`) to have it ride the next tick, e.g. after a 503.
 */

export interface Pending<Q, A> {
  question: Q;
  resolve(answer: A): void;
  reject(error: unknown): void;
  /** Set once answered or rejected (e.g. its signal aborted during a flush): a requeue drops it. */
  settled?: boolean;
}

export type Batch<K, Q, A> = Map<K, Array<Pending<Q, A>>>;

export interface TickBatcherOptions<K, Q, A> {
  clock: Clock;
  /** Delay before the next flush (a tick, or longer while backing off). */
  nextDelay(): number;
  flush(batch: Batch<K, Q, A>, signal: AbortSignal): Promise<void>;
  /** Names the batcher in the error its pending questions get on `stop()`. */
  name: string;
}

export class TickBatcher<K, Q, A> {
  #waiting: Batch<K, Q, A> = new Map();
  /** Asks waiting under each caller's signal (weakly held: a signal nobody keeps takes its entry along). */
  readonly #bySignal = new WeakMap<AbortSignal, Map<Pending<Q, A>, K>>();
  readonly #stop = new AbortController();
  #wake: (() => void) | null = null;
  #loop: Promise<void> | null = null;

  constructor(private readonly options: TickBatcherOptions<K, Q, A>) {}

  ask(key: K, question: Q, signal?: AbortSignal): Promise<A> {
    if (this.#stop.signal.aborted) return Promise.reject(new Error(`${this.options.name} is stopped`));
    // An abort listener added to an aborted signal never fires: answer now instead of waiting forever.
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#loop ??= this.#run();
    return new Promise<A>((resolve, reject) => {
      const asks = signal ? this.#asksOf(signal) : undefined;
      const pending: Pending<Q, A> = {
        question,
        resolve: (answer) => {
          pending.settled = true;
          asks?.delete(pending);
          resolve(answer);
        },
        reject: (error) => {
          pending.settled = true;
          asks?.delete(pending);
          reject(error);
        },
      };
      asks?.set(pending, key);
      this.#enqueue(key, pending);
      this.#wake?.();
    });
  }

  /**
   * The asks waiting under `signal`, with one abort listener per signal for as long as the signal lives
   * rather than one added and removed per ask: a partition asks once a tick under the same signal for as long
   * as its task runs, and an EventTarget listener a tick per partition was a tenth of a 2,000-partition
   * backfill's allocations.
   */
  #asksOf(signal: AbortSignal): Map<Pending<Q, A>, K> {
    let asks = this.#bySignal.get(signal);
    if (!asks) {
      const mine = new Map<Pending<Q, A>, K>();
      asks = mine;
      this.#bySignal.set(signal, mine);
      signal.addEventListener(
        "abort",
        () => {
          for (const [pending, key] of [...mine]) {
            const remaining = (this.#waiting.get(key) ?? []).filter((p) => p !== pending);
            if (remaining.length > 0) this.#waiting.set(key, remaining);
            else this.#waiting.delete(key);
            pending.reject(signal.reason);
          }
          this.#bySignal.delete(signal);
        },
        { once: true },
      );
    }
    return asks;
  }

  /**
   * Asks the same question under many keys at once; resolves with every key's answer (they all ride the
   * same flush), or rejects with the first rejection. One promise and one abort listener for the whole set,
   * where `ask` per key costs one of each per key per tick (a poll of 10,000 tasks: 10,000 of each a tick).
   */
  askMany(keys: Iterable<K>, question: Q, signal?: AbortSignal): Promise<Map<K, A>> {
    if (this.#stop.signal.aborted) return Promise.reject(new Error(`${this.options.name} is stopped`));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const distinct = new Set(keys);
    if (distinct.size === 0) return Promise.resolve(new Map());
    this.#loop ??= this.#run();
    return new Promise<Map<K, A>>((resolve, reject) => {
      const answers = new Map<K, A>();
      const mine = new Map<K, Pending<Q, A>>();
      let left = distinct.size;
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        fn();
      };
      const onAbort = () => {
        for (const [key, pending] of mine) {
          pending.settled = true;
          const remaining = (this.#waiting.get(key) ?? []).filter((p) => p !== pending);
          if (remaining.length > 0) this.#waiting.set(key, remaining);
          else this.#waiting.delete(key);
        }
        settle(() => reject(signal?.reason));
      };
      for (const key of distinct) {
        const pending: Pending<Q, A> = {
          question,
          resolve: (answer) => {
            pending.settled = true;
            if (settled) return;
            answers.set(key, answer);
            if (--left === 0) settle(() => resolve(answers));
          },
          reject: (error) => {
            pending.settled = true;
            settle(() => reject(error));
          },
        };
        mine.set(key, pending);
        this.#enqueue(key, pending);
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#wake?.();
    });
  }

  #enqueue(key: K, pending: Pending<Q, A>): void {
    const list = this.#waiting.get(key);
    if (list) list.push(pending);
    else this.#waiting.set(key, [pending]);
  }

  /**
   * Puts a batch back in front of anything asked meanwhile; it rides the next flush. Asks settled since
   * the batch was taken (their signal aborted) are dropped, so they are not asked about again.
   */
  requeue(batch: Batch<K, Q, A>): void {
    for (const [key, list] of batch) {
      const open = list.some((p) => p.settled) ? list.filter((p) => !p.settled) : list;
      if (open.length === 0) continue;
      const asked = this.#waiting.get(key);
      this.#waiting.set(key, asked ? [...open, ...asked] : open);
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort(new Error(`${this.options.name} stopped`));
    this.#wake?.();
    await this.#loop?.catch(() => {});
    for (const list of this.#waiting.values()) for (const p of list) p.reject(this.#stop.signal.reason);
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
        await this.options.clock.sleep(this.options.nextDelay(), signal);
      } catch {
        return;
      }
      // The waiting map itself becomes the batch (a copy of 10,000 keys a tick was a cost of its own).
      const batch = this.#waiting;
      this.#waiting = new Map();
      if (batch.size === 0) continue;
      // A signal of this flush's own: a flush may send one request per key at once (the handoff checker, one
      // per datasource), each listening for the stop; on the loop's long-lived signal that many listeners read
      // as a leak (MaxListenersExceededWarning). This one lives as long as the flush.
      const flushStop = new AbortController();
      setMaxListeners(batch.size + 10, flushStop.signal);
      const onStop = () => flushStop.abort(signal.reason);
      signal.addEventListener("abort", onStop, { once: true });
      try {
        await this.options.flush(batch, flushStop.signal);
      } finally {
        signal.removeEventListener("abort", onStop);
      }
    }
  }
}
