import type { Clock } from "../core/clock.js";
import type { Store } from "../ledger/store.js";
import type { EventRow, JobRow, StateCounts } from "../ledger/types.js";

/**
 * The service's change feed: one query a tick reads every event committed since the last one, whoever
 * committed it (any host sharing the ledger), and hands each to the subscribers of its job. Waiters and
 * event streams subscribe here instead of polling the ledger each, so a thousand of them cost one query
 * a tick (plus one job read per job that changed).
 *
 * Event ids come from a sequence: on PostgreSQL a transaction that took id 11 may commit after one that
 * took 12, so a tail that only asked for `id > 12` would never see 11. An id skipped between two seen
 * ones is kept as a hole and asked for again each tick until it shows up or `holeMs` passes (a rolled
 * back transaction leaves its id unused for good).
 */

export interface FeedOptions {
  store: Store;
  clock: Clock;
  /** How often the ledger is read. @default 250 */
  tickMs?: number;
  /** How long a skipped id is asked for again. @default 30000 */
  holeMs?: number;
  /** Events read per query (a busier tick reads several pages). @default 1000 */
  pageSize?: number;
}

type Listener = (events: readonly EventRow[]) => void;

/** Any job: subscribers to every event (metrics, logs). */
export const ALL_JOBS = "*";

export class EventFeed {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #tickMs: number;
  readonly #holeMs: number;
  readonly #pageSize: number;
  readonly #listeners = new Map<string, Set<Listener>>();
  /** Skipped id → when it was first found missing. */
  readonly #holes = new Map<number, number>();
  #cursor = 0;
  #stop = new AbortController();
  /**
   * The current sleep between ticks: `poke()` and `stop()` abort it. A fresh controller per sleep, not
   * `AbortSignal.any([stop, wake])`: on Node 20 every `any()` over a long-lived signal stays registered
   * on it for good (about 80 bytes a tick, some 26 MiB a day at 250 ms, measured).
   */
  #nap: AbortController | null = null;
  /** Set by `poke()`; a poke during a tick reads again at once instead of being lost. */
  #poked = false;
  #loop: Promise<void> = Promise.resolve();
  #lastTickAt: number | null = null;
  #failure: unknown = null;

  constructor(options: FeedOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#tickMs = options.tickMs ?? 250;
    this.#holeMs = options.holeMs ?? 30_000;
    this.#pageSize = options.pageSize ?? 1000;
  }

  /** The newest event id handed out so far. */
  get cursor(): number {
    return this.#cursor;
  }

  /** When the last tick completed (null before the first); `/readyz` and the metrics read it. */
  get lastTickAt(): number | null {
    return this.#lastTickAt;
  }

  /** The ledger error of the last tick, or null when it read fine. */
  get failure(): unknown {
    return this.#failure;
  }

  /** Starts from the newest event: subscribers see what is committed from now on. */
  async start(): Promise<void> {
    const newest = await this.#store.listEvents({ newestFirst: true, limit: 1 });
    this.#cursor = newest[0]?.id ?? 0;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#nap?.abort();
    await this.#loop;
  }

  /** Reads at once instead of at the next tick (e.g. right after this process changed a job). */
  poke(): void {
    this.#poked = true;
    this.#nap?.abort();
  }

  /** Calls `listener` with each batch of a job's events (or every job's, with `ALL_JOBS`). */
  subscribe(jobId: string, listener: Listener): () => void {
    let set = this.#listeners.get(jobId);
    if (!set) {
      set = new Set();
      this.#listeners.set(jobId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(jobId) === set) this.#listeners.delete(jobId);
    };
  }

  /** One read of the ledger: new events and holes that filled, delivered per job in id order. */
  async tick(): Promise<void> {
    const found: EventRow[] = [];
    for (;;) {
      const page = await this.#store.listEvents({ afterId: this.#cursor, limit: this.#pageSize });
      for (const event of page) {
        for (let id = this.#cursor + 1; id < event.id; id++) this.#holes.set(id, this.#clock.now());
        this.#cursor = Math.max(this.#cursor, event.id);
        found.push(event);
      }
      if (page.length < this.#pageSize) break;
    }
    const now = this.#clock.now();
    const holes = [...this.#holes].filter(([, since]) => now - since <= this.#holeMs).map(([id]) => id);
    const skipped = new Set(found.map((e) => e.id));
    const late = holes.length > 0 ? await this.#store.listEvents({ ids: holes, limit: holes.length }) : [];
    for (const event of late) if (!skipped.has(event.id)) found.push(event);
    for (const [id, since] of this.#holes) {
      if (skipped.has(id) || late.some((e) => e.id === id) || now - since > this.#holeMs)
        this.#holes.delete(id);
    }
    this.#lastTickAt = now;
    if (found.length === 0) return;
    const byJob = new Map<string, EventRow[]>();
    for (const event of found) {
      const list = byJob.get(event.jobId) ?? [];
      list.push(event);
      byJob.set(event.jobId, list);
    }
    for (const [jobId, events] of byJob) this.#deliver(jobId, events);
    this.#deliver(ALL_JOBS, found);
  }

  #deliver(key: string, events: readonly EventRow[]): void {
    for (const listener of [...(this.#listeners.get(key) ?? [])]) {
      try {
        listener(events);
      } catch {
        // A subscriber's failure is its own; the feed goes on for the others.
      }
    }
  }

  async #run(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      this.#poked = false;
      try {
        await this.tick();
        this.#failure = null;
      } catch (error) {
        // The ledger is unreachable for now: readiness says so; the next tick tries again.
        this.#failure = error;
      }
      if (this.#poked || this.#stop.signal.aborted) continue;
      const nap = new AbortController();
      this.#nap = nap;
      await this.#clock.sleep(this.#tickMs, nap.signal).catch(() => undefined);
      this.#nap = null;
    }
  }
}

/** A job seen by a waiter: ended once no partition can run any more. */
export interface JobProgress {
  job: JobRow;
  counts: StateCounts;
  ended: boolean;
}

/** Ended: done or failed (a canceled job ends failed once its partitions have finished). */
export function hasEnded(job: JobRow): boolean {
  return job.state === "done" || job.state === "failed";
}

export async function jobProgress(store: Store, jobId: string): Promise<JobProgress | null> {
  const [job, counts] = await Promise.all([store.getJob(jobId), store.countTasks(jobId)]);
  if (!job) return null;
  return { job, counts, ended: hasEnded(job) };
}

/**
 * Long-poll waits on jobs. All waiters of one job share one subscription and one check per batch of its
 * events; a waiter costs a promise and a timer, nothing on the ledger.
 */
export class JobWaiters {
  readonly #store: Store;
  readonly #feed: EventFeed;
  readonly #clock: Clock;
  readonly #shutdown: AbortSignal | undefined;
  readonly #jobs = new Map<string, { waiters: Set<(p: JobProgress) => void>; unsubscribe: () => void }>();

  /** `shutdown`: the service's drain signal; every parked waiter answers when it fires. */
  constructor(options: { store: Store; feed: EventFeed; clock: Clock; shutdown?: AbortSignal }) {
    this.#store = options.store;
    this.#feed = options.feed;
    this.#clock = options.clock;
    this.#shutdown = options.shutdown;
  }

  /** Waiters parked right now (a gauge). */
  get waiting(): number {
    let n = 0;
    for (const entry of this.#jobs.values()) n += entry.waiters.size;
    return n;
  }

  /**
   * Resolves as soon as the job has ended, or with its progress when `timeoutMs` passes or `signal`
   * fires (the client went away). Null when there is no such job.
   */
  async wait(jobId: string, timeoutMs: number, signal?: AbortSignal): Promise<JobProgress | null> {
    let resolve!: (p: JobProgress) => void;
    const ended = new Promise<JobProgress>((r) => {
      resolve = r;
    });
    // Subscribe before the first read, so an end committed between the two is not missed.
    this.#add(jobId, resolve);
    // One controller per wait, aborted by the client leaving or the service draining. Listeners, not
    // `AbortSignal.any`: on Node 20 each `any()` over a long-lived signal stays registered on it for good.
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#shutdown?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted || this.#shutdown?.aborted) stop.abort();
    try {
      const first = await jobProgress(this.#store, jobId);
      if (!first || first.ended || timeoutMs <= 0 || stop.signal.aborted) return first;
      const timer = this.#clock.sleep(timeoutMs, stop.signal).then(
        () => null,
        () => null,
      );
      const winner = await Promise.race([ended, timer]);
      return winner ?? (await jobProgress(this.#store, jobId)) ?? first;
    } finally {
      stop.abort();
      signal?.removeEventListener("abort", onAbort);
      this.#shutdown?.removeEventListener("abort", onAbort);
      this.#remove(jobId, resolve);
    }
  }

  #add(jobId: string, resolve: (p: JobProgress) => void): void {
    let entry = this.#jobs.get(jobId);
    if (!entry) {
      const waiters = new Set<(p: JobProgress) => void>();
      const unsubscribe = this.#feed.subscribe(jobId, () => void this.#check(jobId));
      entry = { waiters, unsubscribe };
      this.#jobs.set(jobId, entry);
    }
    entry.waiters.add(resolve);
  }

  #remove(jobId: string, resolve: (p: JobProgress) => void): void {
    const entry = this.#jobs.get(jobId);
    if (!entry) return;
    entry.waiters.delete(resolve);
    if (entry.waiters.size === 0) {
      entry.unsubscribe();
      this.#jobs.delete(jobId);
    }
  }

  /** One read for every waiter of the job; resolves them all if it has ended. */
  async #check(jobId: string): Promise<void> {
    const entry = this.#jobs.get(jobId);
    if (!entry) return;
    const progress = await jobProgress(this.#store, jobId).catch(() => null);
    if (!progress?.ended) return;
    for (const resolve of [...entry.waiters]) resolve(progress);
  }
}
