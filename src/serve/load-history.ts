import type { Clock } from "../core/clock.js";
import type { DruidAttempt } from "../druid/http.js";

/**
 * What the dashboard's Druid view draws over time: worker slots (segops' own, used by anything, all of
 * them) and requests to Druid and their response bytes per endpoint, sampled every `sampleMs` into a ring of `keep` samples (an
 * hour at the defaults). Kept in memory by this process: it is what this host saw, like its counters.
 */

export interface LoadSample {
  at: number;
  ours: number | null;
  used: number | null;
  capacity: number | null;
  /** Requests per endpoint since the previous sample. */
  requests: Map<string, number>;
  /** Response bytes per endpoint since the previous sample. */
  bytes: Map<string, number>;
}

export interface LoadHistoryOptions {
  clock: Clock;
  slots(): { ours: number; used: number; capacity: number } | null;
  /** @default 10000 */
  sampleMs?: number;
  /** @default 360 */
  keep?: number;
}

export class LoadHistory {
  readonly sampleMs: number;
  readonly #clock: Clock;
  readonly #slots: LoadHistoryOptions["slots"];
  readonly #keep: number;
  readonly #samples: LoadSample[] = [];
  #pending = new Map<string, number>();
  #pendingBytes = new Map<string, number>();
  #stop = new AbortController();
  #loop: Promise<void> = Promise.resolve();

  constructor(options: LoadHistoryOptions) {
    this.#clock = options.clock;
    this.#slots = options.slots;
    this.sampleMs = options.sampleMs ?? 10_000;
    this.#keep = options.keep ?? 360;
  }

  /** For the Druid client's `onAttempt`: one request to an endpoint, and the bytes of its answer. */
  readonly druidAttempt = (attempt: DruidAttempt): void => {
    this.#pending.set(attempt.route, (this.#pending.get(attempt.route) ?? 0) + 1);
    this.#pendingBytes.set(
      attempt.route,
      (this.#pendingBytes.get(attempt.route) ?? 0) + (attempt.bytes ?? 0),
    );
  };

  /** Takes one sample now. */
  sample(): void {
    const slots = this.#slots();
    this.#samples.push({
      at: this.#clock.now(),
      ours: slots?.ours ?? null,
      used: slots?.used ?? null,
      capacity: slots?.capacity ?? null,
      requests: this.#pending,
      bytes: this.#pendingBytes,
    });
    this.#pending = new Map();
    this.#pendingBytes = new Map();
    if (this.#samples.length > this.#keep) this.#samples.splice(0, this.#samples.length - this.#keep);
  }

  get samples(): readonly LoadSample[] {
    return this.#samples;
  }

  start(): void {
    this.sample();
    this.#loop = (async () => {
      while (!this.#stop.signal.aborted) {
        await this.#clock.sleep(this.sampleMs, this.#stop.signal).catch(() => undefined);
        if (!this.#stop.signal.aborted) this.sample();
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }
}

/**
 * A quantile of a Prometheus histogram from its cumulative buckets, interpolated linearly within the
 * bucket it falls in, as `histogram_quantile` does; null without observations. Past the last finite
 * bound it is that bound.
 */
export function histogramQuantile(
  q: number,
  buckets: readonly { le: number; count: number }[],
): number | null {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total === 0) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const b of sorted) {
    if (b.count >= rank) {
      if (!Number.isFinite(b.le)) return prevLe;
      const inBucket = b.count - prevCount;
      return inBucket === 0 ? b.le : prevLe + ((b.le - prevLe) * (rank - prevCount)) / inBucket;
    }
    prevLe = b.le;
    prevCount = b.count;
  }
  return prevLe;
}
