/**
 * Time as an injected dependency: production uses the system clock, tests use a manual clock
 * so that nothing in the suite depends on real sleeps.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted", "AbortError");
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const timer = setTimeout(
        () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortError(signal as AbortSignal));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};

interface Sleeper {
  wakeAt: number;
  resolve: () => void;
}

/**
 * A clock that only moves when told to. `advance(ms)` wakes every sleeper whose time has come,
 * in wake-time order, yielding to the microtask queue between wake-ups so awaiting code can run.
 */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: Sleeper[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  /** Number of sleeps currently waiting on this clock. */
  get pendingSleeps(): number {
    return this.#sleepers.length;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError(signal));
      const sleeper: Sleeper = { wakeAt: this.#now + Math.max(0, ms), resolve };
      const onAbort = () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(abortError(signal as AbortSignal));
      };
      sleeper.resolve = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#sleepers.push(sleeper);
    });
  }

  /** Moves time forward by `ms`, waking due sleepers one by one. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    // Let code that is about to sleep (continuations already queued) register first.
    await flushMicrotasks();
    for (;;) {
      this.#sleepers.sort((a, b) => a.wakeAt - b.wakeAt);
      const next = this.#sleepers[0];
      if (!next || next.wakeAt > target) break;
      this.#sleepers.shift();
      this.#now = Math.max(this.#now, next.wakeAt);
      next.resolve();
      await flushMicrotasks();
    }
    this.#now = target;
    await flushMicrotasks();
  }

  /** Sets the time without waking anyone (e.g. to backdate or jump ahead in a test). */
  set(ms: number): void {
    this.#now = ms;
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await yieldToEventLoop();
}

/**
 * One macrotask turn: timers and sockets run before the caller goes on. Long synchronous work (SQLite
 * statements, planning thousands of partitions) awaits it between pieces so a service stays responsive;
 * an `await` of a resolved promise alone only drains microtasks.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
