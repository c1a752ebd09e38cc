import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import { Driver, type DriverLog, type DriverObserver } from "../driver/driver.js";
import type { KindOfWork } from "../driver/kind.js";
import type { DruidClient } from "../druid/client.js";
import { clusterOf, jobCluster, sameCluster } from "../druid/cluster.js";
import type { OutageMonitor } from "../druid/outage.js";
import { LedgerError } from "../ledger/errors.js";
import type { Store } from "../ledger/store.js";
import type { JobRow } from "../ledger/types.js";
import type { DruidServices, JobSettings } from "../work/services.js";
import { jobSettingsOf } from "../work/services.js";
import { createMachinery, type Machinery, type MachineryOptions, runnersFor } from "./engine.js";
import { KINDS } from "./kinds.js";
import { DEFAULT_STALL_TIMEOUT_MS, ProgressWatch } from "./progress-watch.js";

/**
 * The service's worker: runs every job of its cluster in a shared ledger, for as long as the process
 * lives. Several workers (one per `segops serve` host) on one ledger split the partitions through the
 * driver's leases; jobs of other clusters in the same ledger are never claimed.
 */

export interface WorkerOptions extends MachineryOptions {
  store: Store;
  client: DruidClient;
  clock: Clock;
  /** Lease owner id. @default the driver's (`host:pid:random`) */
  owner?: string;
  /** @default DEFAULTS.leaseMs */
  leaseMs?: number;
  log?: DriverLog & { info?(details: Record<string, unknown>, message: string): void };
  /** @default KINDS */
  kinds?: readonly KindOfWork<DruidServices>[];
  /**
   * While Druid has not answered for `timeoutMs`, the worker hands its partitions back and claims none
   * (attempts would only burn retries); it starts again once Druid answers its probe.
   */
  outage?: { monitor: OutageMonitor; timeoutMs: number };
  /** Told of every claim and commit of this worker's driver (metrics). */
  observer?: DriverObserver;
  /**
   * How long the ledger may fail (unreachable, sessions dropped, restarting) before the worker gives up
   * and stops with the error. Meanwhile it claims nothing, its partitions' leases run out (other hosts
   * take them over) and it probes the ledger every tick.
   * @default 600000 (10 minutes)
   */
  ledgerOutageMs?: number;
  /**
   * How long the worker may have partitions due for it while it holds none and claims none, with no
   * outage or slot shortage to excuse it, before it says it is stalled (progress-watch.ts).
   * @default DEFAULT_STALL_TIMEOUT_MS (5 minutes)
   */
  stallTimeoutMs?: number;
}

/** A ledger failure worth waiting out: a statement or connection that failed, not a schema refusal. */
export function isLedgerUnavailable(error: unknown): boolean {
  if (!(error instanceof LedgerError)) return false;
  const operation = (error.details as { operation?: unknown }).operation;
  return operation === "query" || operation === "transaction" || operation === "connect";
}

export type WorkerState = "created" | "running" | "paused" | "stopping" | "stopped";

/** Why a worker is paused: Druid or the ledger has not answered. */
export type PauseReason = "druid" | "ledger";

/** Whether a worker makes progress (progress-watch.ts), and why not when it is stalled. */
export interface WorkerProgress {
  readonly stalled: boolean;
  /** When stalled: since when partitions have been due while it held none and moved nothing. */
  readonly since: number | null;
  /** When stalled: what it waits on, in words, with its last admission decision. */
  readonly reason: string | null;
  /** Its last claim or committed change (its start, before the first). */
  readonly lastProgressAt: number;
}

/** The jobs a worker runs: the open ones of its cluster (a canceled job stays open until its flagged partitions finish). */
export function jobsOfCluster(jobs: readonly JobRow[], client: DruidClient): string[] {
  const mine = clusterOf(client);
  return jobs
    .filter((j) => j.state === "open")
    .filter((j) => {
      const bound = jobCluster(j);
      return bound === null || sameCluster(bound, mine);
    })
    .map((j) => j.id);
}

export class Worker {
  readonly #options: WorkerOptions;
  readonly #tickMs: number;
  readonly #machinery: Machinery;
  #driver: Driver | null = null;
  #jobIds: readonly string[] = [];
  /** Each open job's own settings (`maxConcurrency`, `poisonAfter`), re-read with the job list. */
  #jobSettings = new Map<string, JobSettings>();
  #state: WorkerState = "created";
  #stop = new AbortController();
  #loop: Promise<void> = Promise.resolve();
  #failure: unknown;
  #paused: PauseReason | null = null;
  /** When the ledger started failing (null while it answers). */
  #ledgerDownSince: number | null = null;
  readonly #progress: ProgressWatch;
  /** Whether the log last said the worker is stalled (it says so once, and once when it moves again). */
  #saidStalled = false;
  /** The kinds of work its driver claims (what `listDue` is asked about). */
  readonly #kinds: readonly string[];
  /** Every claim and commit moves the worker, then goes on to the caller's observer (metrics). */
  readonly #observer: DriverObserver;

  constructor(options: WorkerOptions) {
    this.#options = options;
    this.#tickMs = options.tickMs ?? DEFAULTS.tickMs;
    this.#machinery = createMachinery({ ...options, jobSettings: (id) => this.#jobSettings.get(id) });
    const stallAfterMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    this.#progress = new ProgressWatch({
      clock: options.clock,
      stallAfterMs,
      // The worker looks once a tick: a due read more often than that would never be asked for.
      dueCheckMs: Math.max(this.#tickMs, Math.min(10_000, stallAfterMs / 10)),
    });
    this.#kinds = (options.kinds ?? KINDS).map((k) => k.name);
    this.#observer = {
      claimed: (kind, rows) => {
        this.#progress.progressed();
        options.observer?.claimed?.(kind, rows);
      },
      committed: (kind, change, row) => {
        this.#progress.progressed();
        options.observer?.committed?.(kind, change, row);
      },
    };
  }

  get state(): WorkerState {
    return this.#state;
  }

  /** What a paused worker waits for. */
  get pausedFor(): PauseReason | null {
    return this.#state === "paused" ? this.#paused : null;
  }

  /** The driver's lease owner (stable for the worker's life, across outage pauses). */
  get owner(): string | undefined {
    return this.#options.owner;
  }

  get machinery(): Machinery {
    return this.#machinery;
  }

  /** Whether the worker makes progress; a paused worker is never stalled (its pause says why). */
  get progress(): WorkerProgress {
    const s = this.#progress.state;
    const stalled = s.stalled && this.#state === "running";
    return {
      stalled,
      since: stalled ? s.since : null,
      reason: stalled ? this.#stallReason(s.since as number) : null,
      lastProgressAt: s.lastProgressAt,
    };
  }

  /** Partitions this worker holds right now. */
  get inFlight(): number {
    return this.#driver?.inFlight ?? 0;
  }

  /** Settles when the worker has stopped (after `stop`, or on a storage error: see `failure`). */
  get done(): Promise<void> {
    return this.#loop;
  }

  /** The storage error that stopped the worker, if any. */
  get failure(): unknown {
    return this.#failure;
  }

  async start(): Promise<void> {
    if (this.#state !== "created") throw new Error(`worker already ${this.#state}`);
    await this.refresh();
    this.#startDriver();
    this.#loop = this.#run();
  }

  /** Re-reads which jobs to run (called each tick, and at once when this process creates a job). */
  async refresh(): Promise<void> {
    const open = await this.#options.store.listJobs({ state: "open", limit: 100_000 });
    this.#jobIds = jobsOfCluster(open, this.#options.client);
    const settings = new Map<string, JobSettings>();
    for (const job of open) {
      const own = jobSettingsOf(job.options);
      if (own.maxConcurrency !== undefined || own.poisonAfter !== undefined) settings.set(job.id, own);
    }
    this.#jobSettings = settings;
  }

  /**
   * Graceful stop (SIGTERM): claims nothing more, hands every held partition back (suspended, due now)
   * so another host takes it at once, and stops the machinery. Rejects with a storage error, if one
   * stopped the driver.
   */
  async stop(): Promise<void> {
    if (this.#state === "created") {
      this.#state = "stopped";
      await this.#machinery.stop();
      return;
    }
    if (this.#state !== "stopped") this.#state = "stopping";
    this.#stop.abort();
    await this.#loop;
    if (this.#failure !== undefined) throw this.#failure;
  }

  #startDriver(): void {
    const o = this.#options;
    const actor = o.owner ?? "driver";
    this.#driver = new Driver({
      store: o.store,
      runners: runnersFor(o.kinds ?? KINDS, this.#machinery.services, o.store, actor),
      clock: o.clock,
      pollMs: Math.max(10, Math.floor(this.#tickMs / 2)),
      jobIds: () => this.#jobIds,
      ...(o.owner ? { owner: o.owner } : {}),
      ...(o.leaseMs !== undefined ? { leaseMs: o.leaseMs } : {}),
      ...(o.log ? { log: o.log } : {}),
      observer: this.#observer,
    });
    if (!o.owner) this.#options.owner = this.#driver.owner;
    this.#driver.start();
    this.#state = "running";
    this.#paused = null;
  }

  async #run(): Promise<void> {
    const o = this.#options;
    const signal = this.#stop.signal;
    try {
      while (!signal.aborted) {
        await o.clock.sleep(this.#tickMs, signal).catch(() => undefined);
        if (signal.aborted) break;
        try {
          if (this.#driver && this.#driver.failure !== undefined) throw this.#driver.failure;
          await this.refresh();
          if (this.#ledgerDownSince !== null) await this.#ledgerBack();
          await this.#watchOutage();
          await this.#lookForProgress();
        } catch (error) {
          if (!isLedgerUnavailable(error)) throw error;
          await this.#ledgerDown(error);
        }
      }
    } catch (error) {
      this.#failure = error;
    } finally {
      const driver = this.#driver;
      this.#driver = null;
      await driver?.stop().catch((error) => {
        this.#failure ??= error;
      });
      await this.#machinery.stop();
      this.#state = "stopped";
    }
  }

  /**
   * The ledger failed: stop claiming and drop the driver (whatever it held is the ledger's to hand out again
   * once the leases run out: every write is a compare-and-set on owner and version, so a late one of ours
   * changes nothing). Past `ledgerOutageMs` the error stops the worker.
   */
  async #ledgerDown(error: unknown): Promise<void> {
    const now = this.#options.clock.now();
    if (this.#ledgerDownSince === null) {
      this.#ledgerDownSince = now;
      this.#options.log?.warn(
        { err: error },
        "the ledger does not answer: claiming nothing until it does (held partitions go back when their leases expire)",
      );
      const driver = this.#driver;
      this.#driver = null;
      await driver?.stop().catch(() => undefined);
      this.#state = "paused";
      this.#paused = "ledger";
      this.#progress.observe({ excuse: "the ledger does not answer", held: 0 });
    }
    if (now - this.#ledgerDownSince > (this.#options.ledgerOutageMs ?? 600_000)) throw error;
  }

  /** The ledger answered a whole tick again: claim work (unless Druid is what keeps the worker paused). */
  async #ledgerBack(): Promise<void> {
    // At warn, like the outage it ends: whoever saw the one should see the other.
    this.#options.log?.warn(
      { downMs: this.#options.clock.now() - (this.#ledgerDownSince as number) },
      "the ledger answers again: claiming work",
    );
    this.#ledgerDownSince = null;
    if (this.#state === "paused" && this.#paused === "ledger") this.#startDriver();
  }

  /** Pauses (work handed back) while Druid is down for longer than allowed; resumes once it answers. */
  async #watchOutage(): Promise<void> {
    const outage = this.#options.outage;
    if (!outage) return;
    if (this.#state === "running" && outage.monitor.since !== null) {
      if (outage.monitor.outageMs() < outage.timeoutMs) return;
      this.#options.log?.warn(
        { since: outage.monitor.since, lastError: outage.monitor.lastError },
        "Druid has not answered for the outage timeout: handing partitions back until it does",
      );
      const driver = this.#driver;
      this.#driver = null;
      await driver?.stop();
      this.#state = "paused";
      this.#paused = "druid";
      return;
    }
    if (this.#state !== "paused" || this.#paused !== "druid") return;
    // One cheap call a tick; the monitor hears its answer (the client reports every attempt to it).
    const answered = await this.#options.client.totalWorkerCapacity().then(
      () => true,
      () => false,
    );
    if (!answered) return;
    this.#options.log?.info?.({}, "Druid answers again: claiming work");
    this.#startDriver();
  }

  /** What excuses the worker for not moving now, already reported elsewhere; null when nothing does. */
  #excuse(): string | null {
    if (this.#state !== "running") return `paused (${this.#paused ?? this.#state})`;
    if (this.#options.outage && this.#options.outage.monitor.since !== null) return "Druid does not answer";
    if (this.#machinery.admission.blockedSince !== null) return "blocked by worker slots other tasks hold";
    return null;
  }

  /** One look a tick: is the worker expected to move (see progress-watch.ts)? Logs a stall and its end. */
  async #lookForProgress(): Promise<void> {
    const look = { excuse: this.#excuse(), held: this.inFlight };
    // The ledger is read only while the worker is idle and nothing excuses it, at most every few seconds.
    const due = this.#progress.wantsDue(look) ? await this.#anyDue() : undefined;
    this.#progress.observe(due === undefined ? look : { ...look, due });
    const progress = this.progress;
    if (progress.stalled === this.#saidStalled) return;
    this.#saidStalled = progress.stalled;
    // Its end at warn too, like the stall: whoever saw the one should see the other.
    if (progress.stalled)
      this.#options.log?.warn(
        { since: progress.since, reason: progress.reason },
        "the worker is stalled: partitions are due and it claims none (GET /readyz answers 503)",
      );
    else
      this.#options.log?.warn({ lastProgressAt: progress.lastProgressAt }, "the worker is no longer stalled");
  }

  /** Whether any partition of the jobs this worker runs is claimable now (one short read per kind). */
  async #anyDue(): Promise<boolean> {
    if (this.#jobIds.length === 0) return false;
    for (const kind of this.#kinds) {
      const due = await this.#options.store.listDue({ kind, limit: 1, jobIds: this.#jobIds });
      if (due.length > 0) return true;
    }
    return false;
  }

  #stallReason(since: number): string {
    const admission = this.#machinery.admission;
    const decision = admission.lastDecision
      ? `; its last admission decision: ${admission.lastDecision}, with ${admission.inFlight} partition(s) counted in flight`
      : "";
    return `partitions of its jobs are due, it holds none, and it has claimed and committed nothing since ${new Date(since).toISOString()}${decision}`;
  }
}
