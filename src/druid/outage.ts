import type { Clock } from "../core/clock.js";
import type { DruidAttempt } from "./http.js";

/** The endpoint family a call belongs to: its method and first four path segments (ids dropped). */
export function endpointFamily(endpoint: string): string {
  const [method, path = ""] = endpoint.split(" ", 2);
  return `${method} /${path.split("?")[0]?.split("/").filter(Boolean).slice(0, 4).join("/")}`;
}

interface FamilyState {
  /** First unanswered attempt since the family's last answer. */
  since: number;
  lastFailure: number;
  error: string;
  endpoint: string;
}

/**
 * Tracks whether Druid is answering, from every attempt the client makes (`onAttempt`), per endpoint
 * family: Druid down makes every family fail, but a single endpoint that keeps failing (a persistent 500
 * on `POST /taskStatus`) stalls a run just as surely while the others answer. An outage is the oldest
 * unbroken run of failures of a family still being tried; it ends when that family answers again.
 * A long run uses it to say "Druid unreachable since …" and to give up after a bounded outage.
 */
export class OutageMonitor {
  readonly #failing = new Map<string, FamilyState>();

  /**
   * @param staleMs A family not tried for this long no longer counts (nothing is waiting on it).
   * @default 300000
   */
  constructor(
    private readonly clock: Clock,
    private readonly staleMs = 300_000,
  ) {}

  /** Pass as the client's `onAttempt`. */
  readonly record = (attempt: DruidAttempt): void => {
    const family = endpointFamily(attempt.endpoint);
    if (attempt.reachable) {
      this.#failing.delete(family);
      return;
    }
    const now = this.clock.now();
    const current = this.#failing.get(family);
    this.#failing.set(family, {
      since: current?.since ?? now,
      lastFailure: now,
      error: attempt.error.message,
      endpoint: attempt.endpoint,
    });
  };

  #oldest(): FamilyState | null {
    const now = this.clock.now();
    let oldest: FamilyState | null = null;
    for (const s of this.#failing.values()) {
      if (now - s.lastFailure > this.staleMs) continue;
      if (!oldest || s.since < oldest.since) oldest = s;
    }
    return oldest;
  }

  /** When the current outage began; null while Druid answers. */
  get since(): number | null {
    return this.#oldest()?.since ?? null;
  }

  /** How long the current outage has lasted, ms (0 when none). */
  outageMs(): number {
    const since = this.since;
    return since === null ? 0 : Math.max(0, this.clock.now() - since);
  }

  /** The unanswered call behind the outage and why (messages are already free of credentials). */
  get lastError(): string | null {
    const s = this.#oldest();
    return s ? `${s.endpoint}: ${s.error}` : null;
  }

  /** One line for people: null while Druid answers. */
  describe(): string | null {
    const s = this.#oldest();
    if (!s) return null;
    return `Druid unreachable since ${new Date(s.since).toISOString()} (${Math.round(this.outageMs() / 1000)}s): ${s.endpoint}: ${s.error}`;
  }
}

/** An outage as a wait reports it: since when the failing call has not been answered, and that call. */
export interface OutageSeen {
  since: number;
  lastError: string | null;
}

/** "Druid unreachable since <ISO time> (<the failing call>: <why>)". */
export function describeOutage(outage: OutageSeen): string {
  return `Druid unreachable since ${new Date(outage.since).toISOString()} (${outage.lastError ?? "no answer"})`;
}

/**
 * Bounds a wait on Druid (`segops poll`, `segops wait`) by its outages: `signal` aborts once the monitor's
 * outage has lasted `timeoutMs`, and `tripped` is that outage. `current()` is the outage going on now, so
 * a deadline that came first while Druid was not answering can say so instead of blaming the task.
 */
export class OutageGuard {
  readonly #trip = new AbortController();
  readonly #stop = new AbortController();
  readonly #loop: Promise<void>;
  #tripped: OutageSeen | null = null;

  /** @param checkMs Longest time between two looks while Druid answers. @default 1000 */
  constructor(
    private readonly monitor: OutageMonitor,
    clock: Clock,
    timeoutMs: number,
    checkMs = 1000,
  ) {
    this.#loop = (async () => {
      while (!this.#stop.signal.aborted) {
        const since = monitor.since;
        const now = clock.now();
        if (since !== null && now - since >= timeoutMs) {
          this.#tripped = { since, lastError: monitor.lastError };
          this.#trip.abort(new Error(describeOutage(this.#tripped)));
          return;
        }
        // During an outage, look again when it would reach the timeout (not a whole check later).
        const wait = since === null ? checkMs : Math.min(checkMs, since + timeoutMs - now);
        await clock.sleep(Math.max(1, wait), this.#stop.signal).catch(() => undefined);
      }
    })();
  }

  /** Aborted once an outage outlasted the timeout. */
  get signal(): AbortSignal {
    return this.#trip.signal;
  }

  /** The outage that outlasted the timeout; null while none has. */
  get tripped(): OutageSeen | null {
    return this.#tripped;
  }

  /** The outage that stopped the wait, or else the one going on now; null while Druid answers. */
  current(): OutageSeen | null {
    if (this.#tripped) return this.#tripped;
    const since = this.monitor.since;
    return since === null ? null : { since, lastError: this.monitor.lastError };
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }
}
