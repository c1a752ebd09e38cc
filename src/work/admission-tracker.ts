import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import type { DruidClient } from "../druid/client.js";
import { decideAdmission, type InFlightTask, isDisabledWorker, type WorkerSnapshot } from "./admission.js";

/**
 * How long a blocked streak stands without a partition asking: longer than a driver's claim cycle on a
 * loaded machine, short enough that a display says "no longer waiting" soon after a cancel.
 */
const BLOCK_STALE_MS = 10_000;

/**
 * The process's view for admission control: which partitions it has in flight (slots, Druid id, runner
 * state) and a worker snapshot refreshed at most once per tick from `/workers` plus the pending and
 * waiting task lists (docs/druid-api.md §2.5, §2.9), and only while a partition waits for admission (once
 * everything is admitted the tail of a backfill costs no capacity requests). `admit` reserves the slots at once, so several partitions
 * claimed in one driver cycle cannot all squeeze into the same free slots.
 */
export class AdmissionTracker {
  readonly #inFlight = new Map<string, InFlightTask & { druidTaskId: string | null; group?: string }>();
  #workers: WorkerSnapshot | null = null;
  #refreshedAt = Number.NEGATIVE_INFINITY;
  /** When the snapshot's answers arrived (a slow Overlord must not make every snapshot look stale). */
  #snapshotAt = Number.NEGATIVE_INFINITY;
  /** Someone is waiting for admission: only then is a fresh snapshot worth three Overlord requests. */
  #wanted = true;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  /** Highest Σ slots of our in-flight tasks seen (for reports and tests). */
  peakSlots = 0;
  lastDecision = "";
  /** The current blocked streak: refusals for the cluster's sake while none of ours is in flight. */
  #blocked: { since: number; at: number; reason: string; slots: number } | null = null;

  constructor(
    private readonly options: {
      client: Pick<DruidClient, "workers" | "tasks" | "totalWorkerCapacity">;
      clock: Clock;
      maxConcurrency: number;
      /** Refresh period. @default DEFAULTS.tickMs (1000) */
      tickMs?: number;
      headroom?: number;
    },
  ) {}

  track(ledgerTaskId: string, slots: number, druidTaskId: string | null = null): void {
    const current = this.#inFlight.get(ledgerTaskId);
    this.#inFlight.set(ledgerTaskId, {
      slots,
      druidTaskId,
      runnerState: current?.druidTaskId === druidTaskId ? current.runnerState : "UNKNOWN",
      ...(current?.group !== undefined ? { group: current.group } : {}),
    });
    this.#notePeak();
  }

  untrack(ledgerTaskId: string): void {
    this.#inFlight.delete(ledgerTaskId);
  }

  /** Drops a reservation that never became a submission (the partition went to another driver). */
  release(ledgerTaskId: string): void {
    if (this.#inFlight.get(ledgerTaskId)?.druidTaskId === null) this.#inFlight.delete(ledgerTaskId);
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Worker slots as last seen: ours (Σ slots of this process's partitions in flight), used by every
   * task on the cluster (ours included) and the cluster's capacity; null before the first refresh.
   */
  get slots(): { ours: number; used: number; capacity: number } | null {
    if (!this.#workers) return null;
    let ours = 0;
    for (const t of this.#inFlight.values()) ours += t.slots;
    return { ours, used: this.#workers.used, capacity: this.#workers.capacity };
  }

  /**
   * Backpressure: Druid answered 429 (its task queue is full), so nothing new is admitted before `untilMs`.
   * Partitions already in flight carry on; the waiting ones are deferred, not failed.
   */
  pause(untilMs: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, untilMs);
  }

  /**
   * Admission for a partition about to be submitted; reserves its slots when admitted. `group` caps the
   * partitions of one job (its own `maxConcurrency`) under the process's cap.
   */
  admit(ledgerTaskId: string, slots: number, group?: { id: string; cap: number }): boolean {
    if (this.#inFlight.has(ledgerTaskId)) return true;
    if (group) {
      let ofGroup = 0;
      for (const t of this.#inFlight.values()) if (t.group === group.id) ofGroup++;
      if (ofGroup >= group.cap) {
        this.lastDecision = "job max-concurrency";
        return false;
      }
    }
    if (this.options.clock.now() < this.#pausedUntil) {
      this.lastDecision = "Druid's task queue is full (429)";
      this.#noteRefusal("queue-full", slots);
      return false;
    }
    // At the cap no snapshot could admit anything: ask for none. (The driver runs more handlers than the cap,
    // for partitions waiting for handoff, so it asks here while at the cap every cycle; a refresh each tick
    // would be three Overlord requests a tick for nothing.)
    if (this.#inFlight.size >= this.options.maxConcurrency) {
      this.lastDecision = "max-concurrency";
      this.#blocked = null;
      return false;
    }
    this.#wanted = true;
    // No capacity known yet, or only from before an idle spell (refreshes stop while nobody waits): a
    // snapshot from an hour ago would admit into slots other tasks have taken since. Wait for a fresh one.
    const tick = this.options.tickMs ?? DEFAULTS.tickMs;
    if (!this.#workers || this.options.clock.now() - this.#snapshotAt > 2 * tick) {
      this.lastDecision = "capacity not known yet";
      return false;
    }
    const decision = decideAdmission({
      workers: this.#workers,
      inFlight: [...this.#inFlight.values()],
      candidateSlots: slots,
      maxConcurrency: this.options.maxConcurrency,
      headroom: this.options.headroom ?? 0,
    });
    this.lastDecision = decision.admit ? "admit" : decision.reason;
    if (!decision.admit) {
      this.#noteRefusal(decision.reason, slots);
      return false;
    }
    this.#blocked = null;
    // Reserved, not yet submitted: its slots count at once; Druid's verdict (PENDING or not) comes with the next refresh.
    this.#inFlight.set(ledgerTaskId, {
      slots,
      druidTaskId: null,
      runnerState: "UNKNOWN",
      ...(group ? { group: group.id } : {}),
    });
    this.#notePeak();
    return true;
  }

  /** Refreshes the worker snapshot and our tasks' runner states, at most once per tick. */
  async refresh(): Promise<void> {
    const now = this.options.clock.now();
    if (!this.#wanted || now - this.#refreshedAt < (this.options.tickMs ?? DEFAULTS.tickMs)) return;
    this.#refreshedAt = now;
    this.#wanted = false;
    const [workers, pending, waiting] = await Promise.all([
      this.#capacity(),
      this.options.client.tasks({ state: "pending" }),
      this.options.client.tasks({ state: "waiting" }),
    ]);
    this.#workers = workers;
    this.#snapshotAt = this.options.clock.now();
    const queued = new Map<string, "PENDING" | "WAITING">();
    for (const t of pending) queued.set(t.id, "PENDING");
    for (const t of waiting) queued.set(t.id, "WAITING");
    for (const [id, t] of this.#inFlight) {
      if (!t.druidTaskId) continue; // reserved, not yet submitted
      this.#inFlight.set(id, { ...t, runnerState: queued.get(t.druidTaskId) ?? "RUNNING" });
    }
  }

  /**
   * Live capacity from `/workers`; clusters whose runner lists no workers (Kubernetes: 500 "Task Runner
   * does not support worker listing", docs/druid-api.md §2.9) fall back to `/totalWorkerCapacity`, and when
   * that is unknown too (-1) only `--max-concurrency` bounds admission.
   */
  async #capacity(): Promise<WorkerSnapshot> {
    try {
      const workers = (await this.options.client.workers()).filter((w) => !isDisabledWorker(w));
      return {
        capacity: workers.reduce((sum, w) => sum + w.worker.capacity, 0),
        used: workers.reduce((sum, w) => sum + w.currCapacityUsed, 0),
      };
    } catch {
      // If the Overlord itself is down this throws too, and the driver logs it and tries next cycle.
      const total = await this.options.client.totalWorkerCapacity();
      if (total.currentClusterCapacity < 0) return { capacity: Number.MAX_SAFE_INTEGER, used: 0 };
      return { capacity: total.currentClusterCapacity, used: Math.max(0, total.usedClusterCapacity) };
    }
  }

  /**
   * Since when this run has been blocked by the cluster: partitions wait for admission and none of ours is
   * in flight at Druid, so nothing moves until other tasks free their slots (on an Indexer, a shut-down
   * task's thread can hold its slot for `gracefulShutdownTimeout`, 5 minutes by default). Null when not
   * blocked, or when no partition has asked for `BLOCK_STALE_MS` or three ticks, whichever is longer (the
   * wait ended some other way: canceled, or the run stopped).
   */
  get blockedSince(): number | null {
    const b = this.#blocked;
    const stale = Math.max(BLOCK_STALE_MS, 3 * (this.options.tickMs ?? DEFAULTS.tickMs));
    if (!b || this.options.clock.now() - b.at > stale) return null;
    return b.since;
  }

  /** What the run is blocked on, in words, or null (see `blockedSince`). */
  describeBlocked(): string | null {
    const b = this.#blocked;
    if (!b || this.blockedSince === null) return null;
    const w = this.#workers;
    const slots = w
      ? `${w.used} of ${w.capacity} worker slots in use by other tasks`
      : "worker slots unknown";
    switch (b.reason) {
      case "queue-full":
        return "waiting: Druid's task queue is full (429); nothing of this run is in flight";
      case "too-big":
        return `waiting for the cluster to empty: the next partition needs ${b.slots} slots, more than the cluster has, and runs alone (${slots})`;
      default:
        return `waiting for Druid worker slots: the next partition needs ${b.slots}, ${slots}; nothing of this run is in flight`;
    }
  }

  #noteRefusal(reason: string, slots: number): void {
    if (this.#inFlight.size > 0) {
      // Some of ours run: waiting for our own tasks to end is the normal pace of a backfill, not a block.
      this.#blocked = null;
      return;
    }
    const now = this.options.clock.now();
    this.#blocked = { since: this.#blocked?.since ?? now, at: now, reason, slots };
  }

  #notePeak(): void {
    let sum = 0;
    for (const t of this.#inFlight.values()) sum += t.slots;
    this.peakSlots = Math.max(this.peakSlots, sum);
  }
}
