import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { type Clock, systemClock, yieldToEventLoop } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import { isDruidUnreachable } from "../druid/host-backoff.js";
import { LedgerError } from "../ledger/errors.js";
import type { HeldLease, Store } from "../ledger/store.js";
import { isTerminal, type TaskRow, type Transition } from "../ledger/types.js";
import { InFlight, TaskStopped } from "./in-flight.js";
import { ceilingOf, decide, type RunResult, reasonOf } from "./outcome.js";
import { type Runner, validateRunners } from "./runner.js";

/** Where the driver reports what it contains (hook failures); pino's `warn(obj, msg)` fits. */
export interface DriverLog {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Options of `Driver`. */
export interface DriverOptions {
  readonly store: Store;
  readonly runners: readonly Runner[];
  /** @default systemClock */
  readonly clock?: Clock;
  /** Lease owner id; unique per driver. @default `${hostname}:${pid}:${random}` */
  readonly owner?: string;
  /** Lease length: how long a dead driver's task stays unclaimable. @default DEFAULTS.leaseMs (30000) */
  readonly leaseMs?: number;
  /** Heartbeat (lease renewal) interval. @default leaseMs / 6 */
  readonly heartbeatMs?: number;
  /** Sleep between claim cycles when nothing was claimed. @default DEFAULTS.tickMs (1000) */
  readonly pollMs?: number;
  /** Randomness for backoff jitter. @default Math.random */
  readonly random?: () => number;
  /** @default silent */
  readonly log?: DriverLog;
  /**
   * The jobs this driver runs; tasks of other jobs in the same ledger are never claimed (they may belong to
   * another cluster or another user). A function is asked again every claim cycle (a service whose set of
   * jobs grows as they are created). Unset: every job in the ledger.
   * @default every job in the ledger
   */
  readonly jobIds?: readonly string[] | (() => readonly string[]);
  /** @default none */
  readonly observer?: DriverObserver;
}

/**
 * What a driver tells an observer (metrics): the rows it claimed and every transition it committed.
 * Called synchronously after the ledger accepted the write; an observer's failure is logged and ignored.
 */
export interface DriverObserver {
  claimed?(kind: string, rows: readonly TaskRow[]): void;
  committed?(kind: string, change: Transition, row: TaskRow): void;
}

export type DriverState = "created" | "running" | "stopping" | "stopped";

const silent: DriverLog = { warn: () => undefined };

/**
 * The longest a runner's "nothing eligible" stands without its `eligibilityEpoch` changing, in polls: what
 * changes eligibility by time alone (a deferred partition whose attempt is already at Druid becoming due, a
 * backpressure pause running out, a canceled row not held here) is seen this much later at most.
 */
export const IDLE_RELIST_POLLS = 4;

const HAND_BACK = (now: number): Transition => ({
  to: "suspended",
  runAt: now,
  reason: "handed back: driver shutting down",
});

/**
 * The claim → run → commit loop (docs/ledger-and-driver.md, "The driver"), as a small class with explicit states. Handler
 * errors are contained as retries; storage errors stop the driver and reject `done` with a `LedgerError`.
 */
export class Driver {
  readonly owner: string;
  readonly #store: Store;
  readonly #runners: readonly Runner[];
  readonly #clock: Clock;
  readonly #leaseMs: number;
  readonly #heartbeatMs: number;
  readonly #pollMs: number;
  readonly #random: () => number;
  readonly #log: DriverLog;
  readonly #jobIds: DriverOptions["jobIds"];
  readonly #observer: DriverObserver | undefined;
  readonly #inFlight = new Map<InFlight, { runner: Runner; settled: Promise<void> }>();
  /** Tasks whose terminal state this driver committed (so `abandon` is not theirs). */
  readonly #finishedHere = new WeakSet<InFlight>();
  #state: DriverState = "created";
  #wake = new AbortController();
  #failure: unknown;
  #loop: Promise<void> = Promise.resolve();
  readonly #beatStop = new AbortController();
  /** Per runner: its last due list held nothing eligible (at that epoch, that count of tasks gone, that time). */
  readonly #idle = new Map<Runner, { epoch: number; left: number; at: number }>();
  /** Tasks that left this driver so far (a slot of theirs may be free). */
  #left = 0;

  constructor(options: DriverOptions) {
    validateRunners(options.runners);
    this.#store = options.store;
    this.#runners = options.runners;
    this.#clock = options.clock ?? systemClock;
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.#leaseMs = options.leaseMs ?? DEFAULTS.leaseMs;
    this.#heartbeatMs = options.heartbeatMs ?? Math.max(1, Math.floor(this.#leaseMs / 6));
    this.#pollMs = options.pollMs ?? DEFAULTS.tickMs;
    this.#random = options.random ?? Math.random;
    this.#log = options.log ?? silent;
    this.#jobIds = options.jobIds;
    this.#observer = options.observer;
  }

  #observe(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#log.warn({ error: reasonOf(error) }, `observer (${what}) failed`);
    }
  }

  get state(): DriverState {
    return this.#state;
  }

  /** Number of tasks this driver holds right now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** The storage error that stopped the driver, if any. */
  get failure(): unknown {
    return this.#failure;
  }

  start(): void {
    if (this.#state !== "created") throw new Error(`driver already ${this.#state}`);
    this.#state = "running";
    this.#loop = this.#run(this.#heartbeat());
  }

  /**
   * Graceful stop: aborts handlers' signals, waits for them, hands unfinished tasks back (suspended,
   * due now). Resolves when stopped; rejects with the storage error if one stopped the driver.
   */
  async stop(): Promise<void> {
    if (this.#state === "created") this.#state = "stopped";
    if (this.#state === "running") this.#beginStopping();
    await this.#loop;
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Resolves when the driver has stopped (after `stop()`), rejects on a storage error. */
  async done(): Promise<void> {
    await this.#loop;
    if (this.#failure !== undefined) throw this.#failure;
  }

  #beginStopping(): void {
    this.#state = "stopping";
    this.#wake.abort();
    for (const task of this.#inFlight.keys()) task.stop("shutdown");
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure =
      error instanceof LedgerError
        ? error
        : new LedgerError(`driver stopped on an unexpected error: ${reasonOf(error)}`, {}, { cause: error });
    if (this.#state === "running") this.#beginStopping();
  }

  async #run(heartbeat: Promise<void>): Promise<void> {
    try {
      while (this.#state === "running") {
        // A macrotask turn every cycle: with SQLite (synchronous) every await of a cycle can resolve as a
        // microtask, so a driver that claims something each cycle (tasks deferred a tick, re-claimed,
        // deferred again) never let timers or sockets run; a compaction waiting for its Druid status, and
        // the lease heartbeat, stalled until its lease lapsed (seen: one compaction a lease, 60 s a month).
        await yieldToEventLoop();
        await this.#upkeep();
        let claimed = 0;
        for (const runner of this.#runners) {
          if (this.#state !== "running") break;
          claimed += await this.#claimFor(runner);
        }
        if (claimed === 0 && this.#state === "running") await this.#sleep(this.#pollMs);
      }
    } catch (error) {
      this.#fail(error);
    }
    await Promise.all([...this.#inFlight.values()].map((f) => f.settled));
    for (const runner of this.#runners) {
      try {
        runner.close?.();
      } catch (error) {
        this.#log.warn({ kind: runner.kind, error: reasonOf(error) }, "close failed");
      }
    }
    this.#beatStop.abort();
    await heartbeat;
    this.#state = "stopped";
  }

  async #upkeep(): Promise<void> {
    for (const runner of this.#runners) {
      try {
        await runner.onCycle?.();
      } catch (error) {
        // Druid not answering is logged once by its outage monitor, not once a cycle here.
        if (!isDruidUnreachable(error))
          this.#log.warn({ kind: runner.kind, error: reasonOf(error) }, "onCycle failed");
      }
    }
  }

  /** Abortable sleep: a freed slot or `stop()` wakes the loop early. */
  async #sleep(ms: number): Promise<void> {
    if (this.#wake.signal.aborted) this.#wake = new AbortController();
    try {
      await this.#clock.sleep(ms, this.#wake.signal);
    } catch {
      // woken early
    }
  }

  async #claimFor(runner: Runner): Promise<number> {
    let running = 0;
    for (const f of this.#inFlight.values()) if (f.runner === runner) running++;
    const free = runner.concurrency - running;
    if (free <= 0) return 0;
    const jobIds = typeof this.#jobIds === "function" ? this.#jobIds() : this.#jobIds;
    if (jobIds?.length === 0) return 0;
    let ids: string[] | undefined;
    if (runner.isEligible) {
      const epoch = runner.eligibilityEpoch?.();
      const now = this.#clock.now();
      const idle = this.#idle.get(runner);
      // Nothing was eligible, nothing that could change that has happened, and not long ago: the same no again.
      if (
        idle &&
        epoch !== undefined &&
        idle.epoch === epoch &&
        idle.left === this.#left &&
        now - idle.at < IDLE_RELIST_POLLS * this.#pollMs
      )
        return 0;
      const due = await this.#store.listDue({
        kind: runner.kind,
        limit: Math.min(100, free * 4),
        ...(jobIds ? { jobIds } : {}),
      });
      ids = due.filter((t) => t.canceled || this.#eligible(runner, t)).map((t) => t.id);
      if (ids.length === 0) {
        if (epoch !== undefined) this.#idle.set(runner, { epoch, left: this.#left, at: now });
        return 0;
      }
      this.#idle.delete(runner);
    }
    const tasks = await this.#store.claim({
      kind: runner.kind,
      owner: this.owner,
      leaseMs: this.#leaseMs,
      limit: free,
      ...(ids ? { ids } : {}),
      ...(jobIds ? { jobIds } : {}),
    });
    if (tasks.length > 0 && this.#observer?.claimed)
      this.#observe("claimed", () => this.#observer?.claimed?.(runner.kind, tasks));
    for (const row of tasks) this.#dispatch(runner, row);
    if (ids && runner.release) {
      // Eligible but not ours: another host claimed it first, or the claim limit cut it. What
      // `isEligible` reserved for it (admission slots) must not linger.
      const claimed = new Set(tasks.map((t) => t.id));
      for (const id of ids) {
        if (claimed.has(id)) continue;
        try {
          runner.release(id);
        } catch (error) {
          this.#log.warn({ kind: runner.kind, taskId: id, error: reasonOf(error) }, "release failed");
        }
      }
    }
    return tasks.length;
  }

  #eligible(runner: Runner, task: TaskRow): boolean {
    try {
      return runner.isEligible?.(task) !== false;
    } catch (error) {
      this.#log.warn({ kind: runner.kind, taskId: task.id, error: reasonOf(error) }, "isEligible failed");
      return false;
    }
  }

  /** Whether a task with this id is in flight in this driver. */
  #holds(id: string): boolean {
    for (const held of this.#inFlight.keys()) if (held.row.id === id) return true;
    return false;
  }

  #dispatch(runner: Runner, row: TaskRow): void {
    // We re-claimed a task we still hold (our own lease lapsed, e.g. a stalled event loop): the older
    // copy's version is stale, so its writes would be refused anyway; stop its handler now.
    for (const held of this.#inFlight.keys()) if (held.row.id === row.id) held.stop("lost");
    const task = new InFlight(row, this.owner, this.#store);
    if (this.#state !== "running") task.stop("shutdown");
    const settled = this.#runTask(runner, task)
      .catch((error) => this.#fail(error))
      .finally(() => {
        this.#inFlight.delete(task);
        this.#left++;
        // Not finished here (lost, handed back, waiting again): the runner drops what it holds for it,
        // unless this driver has already claimed the task again.
        if (!this.#finishedHere.delete(task) && runner.abandon && !this.#holds(row.id)) {
          const why = task.lost ? "lost" : task.row.state === "suspended" ? "handed-back" : "waiting";
          try {
            runner.abandon(row.id, why);
          } catch (error) {
            this.#log.warn({ kind: runner.kind, taskId: row.id, error: reasonOf(error) }, "abandon failed");
          }
        }
        this.#wake.abort();
      });
    this.#inFlight.set(task, { runner, settled });
  }

  /**
   * One heartbeat for every task this driver holds: every `heartbeatMs`, one `renewLeases` statement
   * (one statement per partition was 2,000 writes a second at 2,000 in flight). A refused
   * renewal stops that task's handler (`lost`), a canceled row stops it with `canceled`.
   */
  async #heartbeat(): Promise<void> {
    const stop = this.#beatStop.signal;
    while (!stop.aborted) {
      try {
        await this.#clock.sleep(this.#heartbeatMs, stop);
      } catch {
        return;
      }
      const held: Array<{ task: InFlight; lease: HeldLease }> = [];
      for (const task of this.#inFlight.keys()) {
        const lease = task.lease;
        if (lease) held.push({ task, lease });
      }
      if (held.length === 0) continue;
      try {
        const { renewed } = await this.#store.renewLeases(
          this.owner,
          held.map((h) => h.lease),
          this.#leaseMs,
        );
        const answers = new Map(renewed.map((r) => [r.id, r]));
        for (const { task, lease } of held) {
          const answer = answers.get(lease.id);
          if (answer) task.renewed(lease, answer);
          else void task.refused(lease);
        }
      } catch (error) {
        // The ledger is unreachable: stop everything now rather than run on unrenewed leases.
        this.#fail(error);
        return;
      }
    }
  }

  /** Runs one claimed task until it leaves this driver; every outcome is settled exactly once. */
  async #runTask(runner: Runner, task: InFlight): Promise<void> {
    for (let step = 0; ; step++) {
      if (step > 0 && !(await task.refresh())) return;
      if (this.#state !== "running") {
        await this.#finish(runner, task, HAND_BACK(this.#clock.now()));
        return;
      }
      const row = task.row;
      if (row.canceled) {
        await this.#finish(runner, task, { to: "failed", reason: `canceled: ${row.reason ?? ""}` });
        return;
      }
      const ceiling = ceilingOf(row, runner);
      if (ceiling >= 0 && row.retry > ceiling) {
        await this.#finish(runner, task, { to: "failed", reason: `retry ceiling (${ceiling}) reached` });
        return;
      }
      let result: RunResult;
      try {
        await runner.handler(row, {
          signal: task.controller.signal,
          owner: this.owner,
          clock: this.#clock,
          checkpoint: (progress) => task.checkpoint(progress),
        });
        // A handler told it was canceled (refused checkpoint, aborted signal) that then returns has not
        // finished its work: that return must not become "done" on the canceled row.
        const stop = task.controller.signal.reason;
        result =
          stop instanceof TaskStopped && stop.reason === "canceled"
            ? { ok: false, error: stop }
            : { ok: true };
      } catch (error) {
        result = { ok: false, error };
      }
      if (task.lost) return;
      const change = decide(result, {
        task: task.row,
        runner,
        now: this.#clock.now(),
        leaseMs: this.#leaseMs,
        stopping: this.#state !== "running",
        random: this.#random,
      });
      const committed = await this.#finish(runner, task, change);
      if (committed?.state !== "running") return;
      // TaskProgress: keep lease and exclusion, wait, then run the next step on a fresh row.
      try {
        await this.#clock.sleep(Math.max(0, committed.runAt - this.#clock.now()), task.controller.signal);
      } catch {
        if (task.lost) return;
        if (this.#state !== "running") {
          await this.#finish(runner, task, HAND_BACK(this.#clock.now()));
          return;
        }
      }
    }
  }

  /**
   * Commits `change`; on a refusal caused only by a cancel (row still ours) finishes the task as canceled.
   * Runs `onFinish` only when this driver committed the terminal state. Returns the committed row or null.
   */
  async #finish(runner: Runner, task: InFlight, change: Transition): Promise<TaskRow | null> {
    let row = await task.commit(change);
    let committed: Transition = change;
    if (!row && !task.lost && task.row.canceled) {
      committed = { to: "failed", reason: `canceled: ${task.row.reason ?? ""}` };
      row = await task.commit(committed);
    }
    if (row && this.#observer?.committed) {
      const done = row;
      this.#observe("committed", () => this.#observer?.committed?.(runner.kind, committed, done));
    }
    if (row && isTerminal(row.state)) this.#finishedHere.add(task);
    if (row && isTerminal(row.state) && runner.onFinish) {
      try {
        await runner.onFinish(row);
      } catch (error) {
        this.#log.warn({ kind: runner.kind, taskId: row.id, error: reasonOf(error) }, "onFinish failed");
      }
    }
    return row;
  }
}
