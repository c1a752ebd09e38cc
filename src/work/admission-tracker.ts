import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import type { DruidClient } from "../druid/client.js";
import type { WorkerInfo } from "../druid/types.js";
import { slotLimitFor, type TaskLimits, taskLimitsOf } from "../druid/worker-config.js";
import {
  decideAdmission,
  type InFlightTask,
  isDisabledWorker,
  msqSlotsHeld,
  msqSlotsOf,
  type RunningTask,
  type TypeLimits,
  type WorkerSnapshot,
} from "./admission.js";

/**
 * How long a blocked streak stands without a partition asking: longer than a driver's claim cycle on a
 * loaded machine, short enough that a display says "no longer waiting" soon after a cancel.
 */
const BLOCK_STALE_MS = 10_000;

/**
 * How long the worker select strategy's `taskLimits` (a dynamic config an operator changes by hand) are kept
 * before the next refresh reads them again: one request a minute while partitions wait, none otherwise.
 */
export const WORKER_CONFIG_TTL_MS = 60_000;

/**
 * The process's view for admission control: which partitions it has in flight (slots, Druid id, runner
 * state) and a worker snapshot refreshed at most once per tick from `/workers` (plus the pending and
 * waiting task lists where Druid lists no workers or limits task types; docs/druid-api.md §2.5, §2.9), and only while a partition waits for admission (once
 * everything is admitted the tail of a backfill costs no capacity requests). `admit` reserves the slots at once, so several partitions
 * claimed in one driver cycle cannot all squeeze into the same free slots.
 */
export class AdmissionTracker {
  readonly #inFlight = new Map<string, InFlightTask & { druidTaskId: string | null; group?: string }>();
  #workers: WorkerSnapshot | null = null;
  /** Druid's per-type limits as of the last refresh (null: none, or not readable). */
  #typeLimits: TypeLimits | null = null;
  #taskLimits: { limits: TaskLimits | null; readAt: number } | null = null;
  /** The Druid task type of each job's partitions, learnt from Druid's task lists (a job submits one type). */
  readonly #groupType = new Map<string, string>();
  /**
   * Other users' running tasks that may be MSQ controllers (`query_controller`, `compact`) → the slots their payload
   * says they take in all (null: not an MSQ one). A payload never changes: read once per task while it runs.
   */
  readonly #controllerSlots = new Map<string, number | null>();
  #refreshedAt = Number.NEGATIVE_INFINITY;
  /** When the snapshot's answers arrived (a slow Overlord must not make every snapshot look stale). */
  #snapshotAt = Number.NEGATIVE_INFINITY;
  /** Someone is waiting for admission: only then is a fresh snapshot worth three Overlord requests. */
  #wanted = true;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  /** Counts what could turn a refusal into an admission (see `epoch`). */
  #changes = 0;
  /** Highest Σ slots of our in-flight tasks seen (for reports and tests). */
  peakSlots = 0;
  lastDecision = "";
  /** The current blocked streak: refusals for the cluster's sake while none of ours is in flight. */
  #blocked: { since: number; at: number; reason: string; slots: number; detail?: string } | null = null;

  constructor(
    private readonly options: {
      /**
       * `capabilities` and `workerConfig` are optional: a client without them (a test double) is taken for a
       * cluster without per-type limits.
       */
      client: Pick<DruidClient, "workers" | "tasks" | "totalWorkerCapacity"> &
        Partial<Pick<DruidClient, "capabilities" | "workerConfig" | "taskPayload">>;
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
      ...(current?.type ? { type: current.type } : {}),
    });
    this.#notePeak();
  }

  untrack(ledgerTaskId: string): void {
    if (this.#inFlight.delete(ledgerTaskId)) this.#changes++;
  }

  /** Drops a reservation that never became a submission (the partition went to another driver). */
  release(ledgerTaskId: string): void {
    if (this.#inFlight.get(ledgerTaskId)?.druidTaskId === null && this.#inFlight.delete(ledgerTaskId))
      this.#changes++;
  }

  /**
   * Changes whenever a refusal could turn into an admission: one of ours left (its slots and its job's count freed),
   * a snapshot was read, a backpressure pause ran out (the driver's `eligibilityEpoch`).
   */
  get epoch(): number {
    return this.#changes * 2 + (this.options.clock.now() >= this.#pausedUntil ? 1 : 0);
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
   * partitions of one job (its own `maxConcurrency`) under the process's cap. `taskType` is the Druid task type
   * it will submit, for Druid's per-type limits; without it the type is the one Druid listed for the job's
   * earlier partitions, or unknown (then every type's limit must allow it).
   */
  admit(
    ledgerTaskId: string,
    slots: number,
    group?: { id: string; cap: number },
    taskType?: string,
  ): boolean {
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
    const type = taskType ?? (group ? this.#groupType.get(group.id) : undefined) ?? null;
    const decision = decideAdmission({
      workers: this.#workers,
      inFlight: [...this.#inFlight.values()],
      candidateSlots: slots,
      maxConcurrency: this.options.maxConcurrency,
      headroom: this.options.headroom ?? 0,
      typeLimits: this.#typeLimits,
      candidateType: type,
    });
    if (!decision.admit) {
      if (decision.reason === "task-limit") {
        this.lastDecision = `task-limit ${decision.taskType}`;
        this.#noteRefusal(
          decision.reason,
          slots,
          `waiting for Druid's limit on ${decision.taskType} tasks: ${decision.used} of its ${decision.limit} slot(s) taken (the worker select strategy's taskLimits)`,
        );
      } else {
        this.lastDecision = decision.reason;
        this.#noteRefusal(decision.reason, slots);
      }
      return false;
    }
    this.lastDecision = "admit";
    this.#blocked = null;
    // Reserved, not yet submitted: its slots count at once; Druid's verdict (PENDING or not) comes with the next refresh.
    this.#inFlight.set(ledgerTaskId, {
      slots,
      druidTaskId: null,
      runnerState: "UNKNOWN",
      ...(group ? { group: group.id } : {}),
      ...(type ? { type } : {}),
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
    // Only tasks submitted before the snapshot's requests went out can be judged by it: one submitted while they
    // were under way may be missing from `/workers` yet absent from the pending list, and calling it RUNNING would
    // count its slots nowhere (admitting one task too many). A task is tracked just before its POST, so even one of
    // these may reach Druid after `/workers` was read: hence RUNNING only where `/workers` lists it (below).
    const before = new Set(this.#submitted());
    const [capacity, taskLimits] = await Promise.all([this.#capacity(), this.#readTaskLimits(now)]);
    // `/workers` names the tasks each worker runs (`runningTasks`, Druid's ImmutableWorkerInfo): ours missing there
    // are queued, with no task list read. The pending and waiting lists are read only where that is not enough: no
    // worker listing (Kubernetes), or per-type limits (the lists give each queued task's type).
    //
    // What counts as holding slots comes from that one snapshot: the task lists are read after it, and a task that
    // started in between (one of ours, or an MSQ worker) is in them but not in the snapshot's used slots. So one of
    // ours runs only if `/workers` lists it (else it counts in full as still to come), and an MSQ controller holds
    // only what `/workers` lists of it and its workers (`heldList`). The lists only add what the snapshot cannot
    // say: which tasks are queued, their types, which are controllers. Either way the count can only err high.
    const inSnapshot = capacity.listed ? new Set(capacity.listed.flatMap((w) => w.runningTasks ?? [])) : null;
    const queued = new Map<string, "PENDING" | "WAITING">();
    const types = new Map<string, string>();
    if (inSnapshot && !taskLimits) {
      for (const id of before) if (!inSnapshot.has(id)) queued.set(id, "PENDING");
    } else {
      const [pending, waiting] = await Promise.all([
        this.options.client.tasks({ state: "pending" }),
        this.options.client.tasks({ state: "waiting" }),
      ]);
      for (const t of pending) queued.set(t.id, "PENDING");
      for (const t of waiting) queued.set(t.id, "WAITING");
      for (const t of [...pending, ...waiting]) if (t.type) types.set(t.id, t.type);
    }
    // The running list, only when it can matter: while Druid limits some type, the types of our running tasks (so
    // they count against their own type's limit, not every one); and while an MSQ controller may run (an MSQ
    // compaction's or a SQL query's: it holds its `maxNumTasks` slots only once its workers run, and admission
    // budgets what it is about to take, `#launching`).
    const untyped = taskLimits && capacity.listed && this.#submitted(true).some((id) => !types.has(id));
    const running =
      untyped || mayRunMsq(capacity.listed) || this.#hasOwnController()
        ? await this.options.client.tasks({ state: "running" })
        : [];
    for (const t of running) if (t.type) types.set(t.id, t.type);
    const runningList: RunningTask[] = running.map((t) => ({ id: t.id, groupId: t.groupId, type: t.type }));
    const heldList = inSnapshot ? runningList.filter((t) => inSnapshot.has(t.id)) : runningList;
    const launching = await this.#launching(runningList, heldList);
    this.#workers = { ...capacity.snapshot, ...(launching > 0 ? { launching } : {}) };
    this.#typeLimits =
      taskLimits && capacity.listed ? typeLimitsOf(taskLimits, capacity.snapshot, capacity.listed) : null;
    this.#snapshotAt = this.options.clock.now();
    this.#changes++;
    for (const [id, t] of this.#inFlight) {
      if (!t.druidTaskId || !before.has(t.druidTaskId)) continue; // not submitted before the snapshot
      const type = t.type ?? types.get(t.druidTaskId);
      if (type && t.group !== undefined) this.#groupType.set(t.group, type);
      // Neither queued nor in the snapshot: it ended, or started after `/workers` was read (not in its used slots).
      const runnerState =
        queued.get(t.druidTaskId) ?? (inSnapshot && !inSnapshot.has(t.druidTaskId) ? "UNKNOWN" : "RUNNING");
      // Our own MSQ controller counts in `/workers` only with the workers it runs there so far.
      const visible =
        runnerState === "RUNNING" && type === "query_controller" && t.slots > 1
          ? msqSlotsHeld(t.druidTaskId, heldList)
          : undefined;
      const { visibleSlots: _old, ...rest } = t;
      this.#inFlight.set(id, {
        ...rest,
        runnerState,
        ...(type ? { type } : {}),
        ...(visible !== undefined ? { visibleSlots: visible } : {}),
      });
    }
  }

  /**
   * The slots other users' running MSQ controllers are still to take: for each (an MSQ compaction, a SQL query),
   * its `maxNumTasks` less what `/workers` counts of it and its workers (`held`: the running list cut to the
   * snapshot's tasks). Each candidate's payload is read once; one that cannot be read counts as no MSQ one (a worker
   * it launches then shows in `/workers` a tick later).
   */
  async #launching(running: readonly RunningTask[], held: readonly RunningTask[]): Promise<number> {
    const ours = new Set(this.#submitted());
    const live = new Set(running.map((t) => t.id));
    for (const id of this.#controllerSlots.keys()) if (!live.has(id)) this.#controllerSlots.delete(id);
    const read = this.options.client.taskPayload;
    if (!read) return 0;
    const candidates = running.filter(
      (t) => (t.type === "compact" || t.type === "query_controller") && !ours.has(t.id),
    );
    await Promise.all(
      candidates
        .filter((t) => !this.#controllerSlots.has(t.id))
        .map(async (t) => {
          try {
            this.#controllerSlots.set(t.id, msqSlotsOf((await read.call(this.options.client, t.id)).payload));
          } catch {
            this.#controllerSlots.set(t.id, null);
          }
        }),
    );
    let launching = 0;
    for (const t of candidates) {
      const total = this.#controllerSlots.get(t.id);
      if (total) launching += Math.max(0, total - msqSlotsHeld(t.id, held));
    }
    return launching;
  }

  /** Whether one of ours in flight is an MSQ controller with workers. */
  #hasOwnController(): boolean {
    for (const t of this.#inFlight.values()) if (t.type === "query_controller" && t.slots > 1) return true;
    return false;
  }

  /** Druid ids of our submitted tasks (only those whose type is not known yet, when `untyped`). */
  #submitted(untyped = false): string[] {
    const ids: string[] = [];
    for (const t of this.#inFlight.values())
      if (t.druidTaskId && !(untyped && t.type)) ids.push(t.druidTaskId);
    return ids;
  }

  /**
   * The worker select strategy's `taskLimits`, read at most once per {@link WORKER_CONFIG_TTL_MS}, and only from a
   * Druid that has them (capabilities.ts, `taskLimits`). A config segops may not read (403 without config
   * permission) or cannot get means no limits are known: admission then goes by slots alone, as before.
   */
  async #readTaskLimits(now: number): Promise<TaskLimits | null> {
    const client = this.options.client;
    if (!client.capabilities || !client.workerConfig) return null;
    if (this.#taskLimits && now - this.#taskLimits.readAt < WORKER_CONFIG_TTL_MS)
      return this.#taskLimits.limits;
    let limits: TaskLimits | null = null;
    try {
      if ((await client.capabilities()).taskLimits) limits = taskLimitsOf(await client.workerConfig());
    } catch {
      limits = null;
    }
    this.#taskLimits = { limits, readAt: now };
    return limits;
  }

  /**
   * Live capacity from `/workers`; clusters whose runner lists no workers (Kubernetes: 500 "Task Runner
   * does not support worker listing", docs/druid-api.md §2.9) fall back to `/totalWorkerCapacity`, and when
   * that is unknown too (-1) only `--max-concurrency` bounds admission.
   */
  async #capacity(): Promise<{ snapshot: WorkerSnapshot; listed: WorkerInfo[] | null }> {
    try {
      const listed = await this.options.client.workers();
      const workers = listed.filter((w) => !isDisabledWorker(w));
      return {
        snapshot: {
          capacity: workers.reduce((sum, w) => sum + w.worker.capacity, 0),
          used: workers.reduce((sum, w) => sum + w.currCapacityUsed, 0),
        },
        listed,
      };
    } catch {
      // If the Overlord itself is down this throws too, and the driver logs it and tries next cycle.
      const total = await this.options.client.totalWorkerCapacity();
      if (total.currentClusterCapacity < 0)
        return { snapshot: { capacity: Number.MAX_SAFE_INTEGER, used: 0 }, listed: null };
      return {
        snapshot: { capacity: total.currentClusterCapacity, used: Math.max(0, total.usedClusterCapacity) },
        listed: null,
      };
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
      case "task-limit":
        return `${b.detail ?? "waiting for Druid's per-type task limit"}; nothing of this run is in flight`;
      case "queue-full":
        return "waiting: Druid's task queue is full (429); nothing of this run is in flight";
      case "too-big":
        return `waiting for the cluster to empty: the next partition needs ${b.slots} slots, more than the cluster has, and runs alone (${slots})`;
      default:
        return `waiting for Druid worker slots: the next partition needs ${b.slots}, ${slots}; nothing of this run is in flight`;
    }
  }

  #noteRefusal(reason: string, slots: number, detail?: string): void {
    if (this.#inFlight.size > 0) {
      // Some of ours run: waiting for our own tasks to end is the normal pace of a backfill, not a block.
      this.#blocked = null;
      return;
    }
    const now = this.options.clock.now();
    this.#blocked = {
      since: this.#blocked?.since ?? now,
      at: now,
      reason,
      slots,
      ...(detail ? { detail } : {}),
    };
  }

  #notePeak(): void {
    let sum = 0;
    for (const t of this.#inFlight.values()) sum += t.slots;
    this.peakSlots = Math.max(this.peakSlots, sum);
  }
}

/**
 * Whether `/workers` may show an MSQ controller running: a worker lists slots of `compact` or `query_controller`
 * tasks in `currCapacityUsedByTaskType`, or uses slots without saying of which types.
 */
function mayRunMsq(listed: readonly WorkerInfo[] | null): boolean {
  if (!listed) return false;
  return listed.some((w) => {
    const byType = w.currCapacityUsedByTaskType;
    if (!byType) return w.currCapacityUsed > 0;
    return (byType.compact ?? 0) > 0 || (byType.query_controller ?? 0) > 0;
  });
}

/**
 * Each limited type's slot limit at the current capacity and what its tasks hold now. The limits go by the enabled
 * workers' capacity and the use by every listed worker's (a disabled one's running tasks too): whichever of the two
 * Druid's `WorkerSelectUtils` counts, the answer errs towards waiting.
 */
function typeLimitsOf(
  limits: TaskLimits,
  snapshot: WorkerSnapshot,
  listed: readonly WorkerInfo[],
): TypeLimits {
  const types = new Set([
    ...Object.keys(limits.maxSlotCountByType),
    ...Object.keys(limits.maxSlotRatioByType),
  ]);
  const byType: Record<string, number> = {};
  const usedByType: Record<string, number> = {};
  for (const type of types) {
    const limit = slotLimitFor(limits, type, snapshot.capacity);
    if (limit === null) continue;
    byType[type] = limit;
    usedByType[type] = listed.reduce((sum, w) => sum + (w.currCapacityUsedByTaskType?.[type] ?? 0), 0);
  }
  return { limits: byType, usedByType };
}
