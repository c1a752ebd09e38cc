import type { Clock } from "../core/clock.js";
import { bucketsOverlapping } from "../core/granularity.js";
import { type Interval, overlaps } from "../core/interval.js";
import {
  autoCompactionPrefix,
  autoCompactionTask,
  type ClusterCompactionConfig,
  CompactionConfigs,
  CompactionSupervisors,
  compactionCapacity,
  compactionSlots,
  DEFAULT_CLUSTER_COMPACTION,
  DEFAULT_COMPACTION_PERIOD_MS,
  nextCompaction,
} from "./auto-compact.js";
import {
  compactedSegments,
  compactInput,
  NO_SEGMENTS_NOT_READY,
  nothingToCompactMessage,
} from "./compact.js";
import { compactionWorkerTasks, msqCompactionWorkers } from "./compact-workers.js";
import {
  coveredSince,
  defaultDynamicConfig,
  dropTime,
  type Placement,
  placementOf,
  RuleBook,
} from "./coordinator.js";
import { newTaskId } from "./ids.js";
import { emptyCounters, ingestRecords, syntheticIngest } from "./ingest.js";
import { InputError, readInput } from "./input.js";
import { instantText, intervalText } from "./instant-text.js";
import { condense, Lockbox, lockRevokedMessage } from "./lockbox.js";
import { CANCELED_MESSAGE, faultMessage, msqFault, workerTasks } from "./msq.js";
import type { TaskPlan } from "./plans.js";
import { buildSegments } from "./publish.js";
import { hash32, type Rng, seededRng } from "./rng.js";
import { ruleKind } from "./rules.js";
import { markUnused, markUsed, type SegmentFilter } from "./segment-state.js";
import { planTask } from "./spec.js";
import { StatsRecorder, type TaskEvent } from "./stats.js";
import type { SimTask, TaskLocation } from "./task.js";
import { slotLimit, slotTypes, taskLimitsIn } from "./task-limits.js";
import {
  analyseTimeline,
  isLoadDue,
  isUsed,
  SegmentStore,
  type SimSegment,
  servedTimelineLookup,
} from "./timeline.js";
import { SlotPool } from "./workers.js";

export const UNKNOWN_LOCATION: TaskLocation = { host: null, port: -1, tlsPort: -1 };
/** `ParallelIndexSupervisorTask.TASK_PHASE_FAILURE_MSG` (docs/druid-api.md §5). */
export const PHASE_FAILURE = "Failed in phase[segment generation]. See task logs for details.";
export const SHUTDOWN_MESSAGE = "Shutdown request from user";
/**
 * Sim ms from an MSQ compaction's start until it launches its workers: its peon starts and its controller plans the
 * query first. Until then Druid's `/workers` counts the compaction's one slot only.
 */
export const WORKER_LAUNCH_DELAY_MS = 1000;

export interface EngineOptions {
  clock: Clock;
  seed: number;
  workers: number;
  capacity: number;
  handoffDelayMs: number;
  /** Sim ms from the overshadowing segments being served until the overshadowed ones are marked unused. */
  unusedDelayMs: number;
  /** The dynamic config `millisToWaitBeforeDeleting`: no overshadowed segment goes unused before start + this. */
  millisToWaitBeforeDeleting: number;
  neverLoad: Set<string>;
  /** Druid major version whose version-specific shapes to emulate (docs/druid-api.md §8). */
  druidVersion: number;
  /** `druid.indexer.queue.maxSize`: active tasks beyond it get the 429 (docs/druid-api.md §2.2). */
  maxQueueSize: number;
  /** Duration model (sim ms): base per task, cost per row. */
  baseDurationMs: number;
  perRowMs: number;
  /** How often the auto-compaction duty looks (sim ms; auto-compact.ts). @default DEFAULT_COMPACTION_PERIOD_MS */
  compactionPeriodMs?: number;
}

const MAX_ERROR_MSG = 1024;

/** `TaskStatus` truncation: the middle of a long errorMsg is replaced (docs/druid-api.md §2.3). */
export function truncateErrorMsg(msg: string): string {
  if (msg.length <= MAX_ERROR_MSG) return msg;
  const keep = MAX_ERROR_MSG / 2;
  return `${msg.slice(0, keep)}...${msg.length - 2 * keep} characters omitted...${msg.slice(-keep)}`;
}

export class SimEngine {
  readonly tasks = new Map<string, SimTask>();
  readonly lockbox = new Lockbox();
  readonly store = new SegmentStore();
  /** Load/drop rules (`/druid/coordinator/v1/rules`). */
  readonly rules = new RuleBook();
  /** When the emulated Coordinator started (gates `MarkOvershadowedSegmentsAsUnused`). */
  readonly startedAt: number;
  /** The Coordinator dynamic config (`/druid/coordinator/v1/config`). */
  dynamicConfig: Record<string, unknown>;
  /** The Overlord's dynamic worker config (`/druid/indexer/v1/worker`); null until one is set. */
  workerConfig: Record<string, unknown> | null = null;
  readonly slots: SlotPool;
  readonly stats = new StatsRecorder();
  readonly rng: Rng;
  #t: number;
  #seq = 0;
  #lastVersion = 0;
  #failCounts = new Map<string, number>();
  /** Datasource auto-compaction configs (`/druid/coordinator/v1/config/compaction`; auto-compact.ts). */
  readonly compactionConfigs: CompactionConfigs;
  /** The Overlord's compaction supervisors (`/druid/indexer/v1/supervisor`; auto-compact.ts). */
  readonly compactionSupervisors: CompactionSupervisors;
  /** The cluster compaction config (`/druid/indexer/v1/compaction/config/cluster`): slots, `useSupervisors`, engine. */
  clusterCompaction: ClusterCompactionConfig = { ...DEFAULT_CLUSTER_COMPACTION };
  #nextCompactionAt: number;
  /**
   * A test switch: while set, an MSQ controller due to launch its workers waits (its peon is "still starting"),
   * so a test can place other work inside that window whatever the machine's speed; `releaseWorkerLaunches` ends it.
   */
  holdWorkerLaunches = false;
  #heldLaunches = new Set<SimTask>();
  /** Called after every state change (persistence hooks in here). */
  onChange: () => void = () => {};

  constructor(readonly options: EngineOptions) {
    this.#t = options.clock.now();
    this.startedAt = this.#t;
    this.dynamicConfig = defaultDynamicConfig(options.millisToWaitBeforeDeleting);
    this.rng = seededRng(options.seed);
    this.slots = new SlotPool(options.workers, options.capacity, this.#t);
    this.compactionConfigs = new CompactionConfigs(options.druidVersion);
    this.compactionSupervisors = new CompactionSupervisors(options.druidVersion);
    this.#nextCompactionAt = this.#t;
  }

  /** Current sim time as last synced. */
  get now(): number {
    return this.#t;
  }

  /** Replays every event due up to the clock's now. */
  sync(): void {
    const target = this.options.clock.now();
    let changed = false;
    // The running tasks due by `target`, earliest first (ties in submission order), listed again only when
    // scheduling started one: a scan of every task per finish made 10,000 tasks ending between two requests
    // cost 10,000² visits in one answer.
    let due: SimTask[] = [];
    let at = 0;
    for (let started = true; ; ) {
      if (this.#schedule()) {
        changed = true;
        started = true;
      }
      if (started) {
        due = this.#runningBy(target);
        at = 0;
        started = false;
      }
      let next: SimTask | undefined;
      while (at < due.length && !next) {
        const t = due[at++] as SimTask;
        // Ended meanwhile (an MSQ worker with its controller, a task failed by a revoked lock).
        if (t.phase === "running" && t.endsAt !== null && t.endsAt <= target) next = t;
      }
      if (!next) break;
      const task = next;
      this.#t = Math.max(this.#t, task.endsAt as number);
      changed = this.#coordinate() || changed;
      this.#guard(task, () => this.#finish(task));
      changed = true;
    }
    this.#t = Math.max(this.#t, target);
    changed = this.#autoCompact() || changed;
    changed = this.#schedule() || changed;
    changed = this.#coordinate() || changed;
    changed = this.#recordHandoffs() || changed;
    if (changed) this.onChange();
  }

  /** Running tasks that end by `target`, earliest first; a stable sort keeps equal ends in map order. */
  #runningBy(target: number): SimTask[] {
    const due: SimTask[] = [];
    for (const t of this.tasks.values())
      if (t.phase === "running" && (t.endsAt as number) <= target) due.push(t);
    return due.sort((a, b) => (a.endsAt as number) - (b.endsAt as number));
  }

  newTaskId(type: string, dataSource: string): string {
    return newTaskId(type, dataSource, this.#t, this.rng);
  }

  /** Adds an accepted task to the queue (validation already done). */
  add(id: string, plan: TaskPlan, payload: Record<string, unknown>): SimTask {
    const task = this.#insert(id, plan, payload);
    this.sync();
    this.onChange();
    return task;
  }

  /** Queues a task without syncing (the Coordinator's own submissions, made during a sync). */
  #insert(id: string, plan: TaskPlan, payload: Record<string, unknown>): SimTask {
    const task: SimTask = {
      id,
      groupId: plan.groupId ?? id,
      type: plan.type,
      dataSource: plan.dataSource,
      payload,
      plan,
      seq: this.#seq++,
      createdAt: this.#t,
      phase: "waiting",
      runnerInsertedAt: null,
      startedAt: null,
      endsAt: null,
      finishedAt: null,
      errorMsg: null,
      location: UNKNOWN_LOCATION,
      version: null,
      result: null,
      plannedFailure: null,
      segmentIds: [],
      handedOff: false,
    };
    this.tasks.set(id, task);
    this.#event(task, "submitted");
    return task;
  }

  /**
   * Automatic compaction (auto-compact.ts): once a period, for each configured datasource, a `compact` task for its
   * newest chunk that needs one, within the compaction slots (`compactionTaskSlotRatio` of the capacity, at least
   * one while none is busy), each task counted by the slots it takes (an MSQ one `maxNumTasks`). The configs are the
   * Coordinator's (its `CompactSegments` duty) or, while the cluster config says `useSupervisors`, the Overlord's
   * running compaction supervisors (`OverlordCompactionScheduler`; the Coordinator's duty then does nothing).
   * Nothing to do, and no cost, while no datasource has a config.
   */
  #autoCompact(): boolean {
    const cluster = this.clusterCompaction;
    const configs = cluster.useSupervisors
      ? this.compactionSupervisors.running()
      : this.compactionConfigs.all();
    if (configs.length === 0 || this.#t < this.#nextCompactionAt) return false;
    this.#nextCompactionAt = this.#t + (this.options.compactionPeriodMs ?? DEFAULT_COMPACTION_PERIOD_MS);
    const active = [...this.tasks.values()].filter(isActive);
    const prefix = `${autoCompactionPrefix(this.options.druidVersion)}_compact_`;
    let used = 0;
    for (const t of active)
      if (t.type === "compact" && t.id.startsWith(prefix)) used += compactionSlots(t.payload);
    const capacity = compactionCapacity(cluster, this.options.workers * this.options.capacity);
    const slots = used > 0 ? capacity : Math.max(1, capacity);
    let changed = false;
    for (const config of configs) {
      if (used >= slots) break;
      const ds = String(config.dataSource);
      const priority = Number(config.taskPriority ?? 25);
      const busy = {
        locked: this.lockbox
          .all()
          .filter((l) => l.dataSource === ds && l.priority >= priority)
          .map((l) => l.interval),
        compacting: active.flatMap((t) =>
          t.dataSource === ds && t.plan.compact ? [t.plan.compact.interval] : [],
        ),
      };
      const interval = nextCompaction(
        config,
        this.store.visible(ds, this.#t),
        busy,
        this.options.druidVersion,
      );
      if (!interval) continue;
      const id = `${autoCompactionPrefix(this.options.druidVersion)}_${this.newTaskId("compact", ds)}`;
      const task = autoCompactionTask(id, config, interval, cluster.engine);
      const need = compactionSlots(task);
      // `CompactionJobQueue`: a job whose slots are not free waits for a later run.
      if (used > 0 && used + need > slots) continue;
      const planned = planTask(task, this.options.druidVersion);
      if (!planned.ok) continue;
      const payload = { ...task, groupId: id, resource: { availabilityGroup: id, requiredCapacity: 1 } };
      this.#insert(id, planned.plan, payload);
      used += need;
      changed = true;
    }
    return changed;
  }

  /** `TaskQueue#shutdown`: an active task FAILs with "Shutdown request from user"; complete ones are untouched. */
  shutdown(id: string): void {
    const task = this.tasks.get(id);
    if (!task || !isActive(task)) return;
    task.shutDown = true;
    this.#fail(task, SHUTDOWN_MESSAGE);
    this.sync();
    this.onChange();
  }

  /**
   * A MiddleManager's `POST /druid/worker/v1/disable` (or `enable`): a disabled worker keeps its running tasks and
   * gets no new one; pending tasks are tried again at once on enable. False when there is no worker `index`.
   */
  setWorkerEnabled(index: number, enabled: boolean): boolean {
    this.sync();
    if (!this.slots.setEnabled(index, enabled)) return false;
    this.sync();
    this.onChange();
    return true;
  }

  /** `POST /druid/indexer/v1/worker`: a new worker config; pending tasks are tried again under its limits. */
  setWorkerConfig(config: Record<string, unknown>): void {
    this.sync();
    this.workerConfig = config;
    this.sync();
    this.onChange();
  }

  setNeverLoad(dataSource: string, never: boolean): void {
    if (never) this.options.neverLoad.add(dataSource);
    else this.options.neverLoad.delete(dataSource);
  }

  /** markUsed / markUnused (segment-state.ts), then the Coordinator's pass; returns how many changed. */
  markSegments(
    dataSource: string,
    to: "used" | "unused",
    filter: SegmentFilter | null,
    options: { plain?: boolean } = {},
  ): number {
    this.sync();
    const n =
      to === "unused"
        ? markUnused(
            this.store,
            dataSource,
            filter ?? { interval: { start: Number.NEGATIVE_INFINITY, end: Number.POSITIVE_INFINITY } },
            this.#t,
          )
        : markUsed(
            this.store,
            dataSource,
            filter,
            this.#t,
            this.options.neverLoad.has(dataSource) ? null : this.options.handoffDelayMs,
            options.plain === true,
          );
    if (n > 0) {
      if (to === "unused") {
        // A segment the Coordinator had scheduled to mark unused (overshadowed by a served one) is no
        // longer overshadowed once that one is unused: the duty would not mark it, so the schedule goes and
        // the pass below decides again (a rollback's markUsed of it must find it still used).
        const shadowed = this.store.overshadowed(dataSource, this.#t);
        for (const s of this.store.all(dataSource)) {
          if (s.unusedAt !== null && s.unusedAt > this.#t && !shadowed.has(s.id)) s.unusedAt = null;
        }
      }
      this.#coordinate();
      this.onChange();
    }
    return n;
  }

  /** Makes a segment of a never-loading datasource load now (e.g. after the test lifts the fault). */
  loadNow(dataSource: string): void {
    for (const s of this.store.all(dataSource)) if (s.servedAt === null) s.servedAt = this.#t;
    this.onChange();
  }

  /**
   * `POST /rules/{dataSource}` (`SQLMetadataRuleManager.overrideRule`). Segments the new rules put on the
   * Historical that were not there load one handoff delay later (the next Coordinator run assigns them); segments
   * a drop rule now matches are marked unused at once.
   */
  setRules(
    dataSource: string,
    rules: Parameters<RuleBook["set"]>[1],
    audit: Parameters<RuleBook["set"]>[3],
  ): void {
    this.sync();
    const waiting = new Set<SimSegment>();
    for (const ds of dataSource === "_default" ? this.store.dataSources() : [dataSource]) {
      for (const s of this.store.used(ds, this.#t))
        if (isLoadDue(s, this.#t) && !this.isServed(s)) waiting.add(s);
    }
    this.rules.set(dataSource, rules, this.#t, audit);
    for (const s of waiting) {
      if (this.isServed(s)) s.servedAt = this.#t + this.options.handoffDelayMs;
    }
    this.#coordinate();
    this.onChange();
  }

  /**
   * `POST /druid/coordinator/v1/config`: the given fields replace the current ones. Overshadowed segments whose
   * unused time was still ahead are reconsidered under the new `millisToWaitBeforeDeleting`.
   */
  setDynamicConfig(update: Record<string, unknown>): void {
    this.sync();
    this.dynamicConfig = { ...this.dynamicConfig, ...update };
    for (const ds of this.store.dataSources()) {
      const shadowed = this.store.overshadowed(ds, this.#t);
      for (const s of this.store.all(ds)) {
        if (s.unusedAt !== null && s.unusedAt > this.#t && shadowed.has(s.id)) s.unusedAt = null;
      }
    }
    this.#coordinate();
    this.onChange();
  }

  /** What the rules ask for `s` at `at` (`RunRules`); see coordinator.ts. */
  placement(s: SimSegment, at = this.#t): Placement {
    return placementOf(this.rules.withDefault(s.dataSource), s.interval, at);
  }

  /**
   * Whether `s` is loaded on the emulated Historical at `at`: used, its load done (handoff time passed, not
   * skipped as overshadowed before it loaded), and, unless it is overshadowed (`RunRules` leaves those where they
   * are), wanted there by the load rules.
   */
  isServed(s: SimSegment, at = this.#t): boolean {
    return this.#servedGiven(s, at, this.store.overshadowed(s.dataSource, at));
  }

  #servedGiven(s: SimSegment, at: number, shadowed: Set<string>): boolean {
    if (!isLoadDue(s, at)) return false;
    if (shadowed.has(s.id)) return !s.skipLoad;
    return this.placement(s, at).onHistorical;
  }

  /**
   * The replication factor the Coordinator reports (`getReplicationFactor`): 0 for overshadowed segments (a real
   * Druid 33 answered 0: `RunRules` skips them), else what the first matching rule requires; null when no rule
   * matched.
   */
  replicationFactor(s: SimSegment, at = this.#t): number | null {
    if (this.store.overshadowed(s.dataSource, at).has(s.id)) return 0;
    return this.placement(s, at).replicationFactor;
  }

  /** Segments of `dataSource` served at `at` (the Coordinator's server inventory; the Broker's timeline). */
  served(dataSource: string, at = this.#t): SimSegment[] {
    const shadowed = this.store.overshadowed(dataSource, at);
    return this.store.all(dataSource).filter((s) => this.#servedGiven(s, at, shadowed));
  }

  /**
   * The Coordinator's served timeline over `interval` (`…/intervals/{interval}/serverview`, docs/druid-api.md
   * §3.2a): served segments overlapping it, the highest served version per piece. Overshadowing is decided on the
   * used segments around the interval only (a segment's overshadowers overlap it), so the answer costs the
   * segments near the interval, as Druid's timeline lookup does.
   */
  servedView(dataSource: string, interval: Interval, at = this.#t): SimSegment[] {
    const near = this.store.overlapping(dataSource, interval);
    if (near.length === 0) return [];
    let start = interval.start;
    let end = interval.end;
    for (const s of near) {
      start = Math.min(start, s.interval.start);
      end = Math.max(end, s.interval.end);
    }
    const around = this.store.overlapping(dataSource, { start, end }).filter((s) => isUsed(s, at));
    const shadowed = analyseTimeline(around).overshadowed;
    return servedTimelineLookup(
      near.filter((s) => this.#servedGiven(s, at, shadowed)),
      interval,
    );
  }

  /** Restores persisted counters (see persistence.ts). */
  restoreCounters(seq: number, lastVersion: number, failCounts: Record<string, number>): void {
    this.#seq = seq;
    this.#lastVersion = lastVersion;
    this.#failCounts = new Map(Object.entries(failCounts));
  }

  counters(): { seq: number; lastVersion: number; failCounts: Record<string, number> } {
    return {
      seq: this.#seq,
      lastVersion: this.#lastVersion,
      failCounts: Object.fromEntries(this.#failCounts),
    };
  }

  /**
   * After a restart: tasks that were running lost their worker and FAIL with `message`; waiting and pending ones
   * queue again (their locks were not persisted) and re-acquire locks with new versions.
   */
  requeueAfterRestart(message: string): void {
    for (const task of this.tasks.values()) {
      if (task.phase === "running") {
        task.endsAt = null;
        this.#fail(task, message);
      } else if (task.phase === "pending" || task.phase === "waiting") {
        task.phase = "waiting";
        task.version = null;
        task.runnerInsertedAt = null;
      }
    }
  }

  /**
   * An emulator bug in one task must not wedge every later request (each would replay the same failing event):
   * the task FAILs with the error instead, where a test will see it.
   */
  #guard(task: SimTask, step: () => void): void {
    try {
      step();
    } catch (error) {
      task.endsAt = null;
      this.#fail(task, `Emulator error: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Lock versions are the lock time, made strictly increasing (docs/druid-api.md §4.1). */
  #nextVersion(): string {
    this.#lastVersion = Math.max(this.#t, this.#lastVersion + 1);
    return instantText(this.#lastVersion);
  }

  #event(task: SimTask, event: TaskEvent, at = this.#t): void {
    this.stats.event(task.id, event, at);
  }

  /**
   * Tries waiting tasks' locks and pending tasks' slots, highest priority first, then FIFO (§4.4). A pending task
   * whose type is at its slot limit (task-limits.ts) stays pending while later ones of other types may start, as
   * the Overlord assigns each pending task on its own.
   */
  #schedule(): boolean {
    let changed = false;
    const limits = this.options.druidVersion >= 33 ? taskLimitsIn(this.workerConfig) : null;
    let usedByType: Map<string, number> | null = null;
    const queue = [...this.tasks.values()]
      .filter((t) => t.phase === "waiting" || t.phase === "pending")
      .sort((a, b) => b.plan.priority - a.plan.priority || a.seq - b.seq);
    for (const task of queue) {
      if (task.phase === "waiting") {
        const compact = task.plan.compact;
        if (compact && compactInput(this.store, task.dataSource, compact.interval, this.#t).length === 0) {
          // `isReady` finds the segments to lock: none is a failure before the task ever runs (§3.9).
          task.notReady = true;
          this.#fail(task, NO_SEGMENTS_NOT_READY);
          changed = true;
          continue;
        }
        const intervals = this.#upfrontLockIntervals(task);
        if (intervals.length > 0 && !this.#lock(task, intervals)) {
          if (!this.stats.events.get(task.id)?.some((e) => e.event === "waiting"))
            this.#event(task, "waiting");
          continue;
        }
        task.phase = "pending";
        task.runnerInsertedAt = this.#t;
        this.#event(task, "pending");
        changed = true;
      }
      if (task.phase === "pending") {
        const own = slotTypes(task.plan).own;
        const limit = limits ? slotLimit(limits, own, this.slots.enabledTotal) : null;
        if (limit !== null) {
          usedByType ??= this.slotsByType();
          // `TaskLimits.canRunTask`: the type's slots in use plus this task's own (its supervisor's) one.
          if ((usedByType.get(own) ?? 0) + 1 > limit) continue;
        }
        const placement = this.slots.tryPlace(task.id, task.plan.slots);
        if (!placement) continue;
        usedByType = null; // recounted for the next limited task
        task.location = { host: "localhost", port: placement.port, tlsPort: -1 };
        this.#guard(task, () => this.#start(task));
        changed = true;
      }
    }
    return changed;
  }

  /**
   * Slots held by running tasks per task type, as Druid's `currCapacityUsedByTaskType` counts them (slotTypes); per
   * worker when `worker` is given.
   */
  slotsByType(worker?: number): Map<string, number> {
    const out = new Map<string, number>();
    const add = (type: string, n: number) => {
      if (n > 0) out.set(type, (out.get(type) ?? 0) + n);
    };
    this.slots.workers.forEach((w, i) => {
      if (worker !== undefined && i !== worker) return;
      for (const [id, held] of w.held) {
        const task = this.tasks.get(id);
        if (!task) continue;
        const { own, sub } = slotTypes(task.plan);
        if (sub === null) add(own, held);
        else if (this.slots.homeOf(id) === i) {
          add(own, 1);
          add(sub, held - 1);
        } else add(sub, held);
      }
    });
    return out;
  }

  /** Tasks with explicit intervals lock them in `isReady` (§4.4); so do kill and compact tasks. */
  #upfrontLockIntervals(task: SimTask): Interval[] {
    const ingest = task.plan.ingest;
    if (ingest?.dataSchema.intervals) {
      return condense(
        ingest.dataSchema.intervals.flatMap((i) =>
          bucketsOverlapping(ingest.dataSchema.segmentGranularity, i).filter((b) => overlaps(b, i)),
        ),
      );
    }
    if (task.plan.compact) return [task.plan.compact.interval];
    return task.plan.killInterval ? [task.plan.killInterval] : [];
  }

  /** Acquires locks, revoking lower-priority holders (they FAIL); false when a peer of equal/higher priority holds one. */
  #lock(task: SimTask, intervals: Interval[]): boolean {
    const version = instantText(Math.max(this.#t, this.#lastVersion + 1));
    const result = this.lockbox.tryLock(
      {
        groupId: task.groupId,
        taskId: task.id,
        dataSource: task.dataSource,
        priority: task.plan.priority,
        version,
      },
      intervals,
    );
    if (!result.granted) return false;
    task.version = this.#nextVersion();
    for (const lock of result.revoked) {
      const victim = this.tasks.get(lock.taskId);
      if (victim && isActive(victim)) this.#fail(victim, lockRevokedMessage(lock));
    }
    return true;
  }

  #start(task: SimTask): void {
    task.phase = "running";
    task.startedAt = this.#t;
    this.#event(task, "running");
    if (task.plan.controller !== undefined) {
      // An MSQ compaction's worker (compact.ts): it lives and ends with its controller, whose work starts once
      // every worker runs.
      task.endsAt = Number.POSITIVE_INFINITY;
      const controller = this.tasks.get(task.plan.controller);
      if (controller && controller.phase === "running" && controller.runMs !== undefined) {
        const waiting = [...this.tasks.values()].some(
          (w) => w.plan.controller === controller.id && w.phase !== "running",
        );
        if (!waiting) controller.endsAt = this.#t + controller.runMs;
      }
      return;
    }
    let rows = 0;
    const ingest = task.plan.ingest;
    if (ingest) {
      try {
        const raw = readInput(ingest.inputSource, ingest.inputFormat);
        task.result = raw
          ? ingestRecords(raw, ingest)
          : syntheticIngest(task.plan.sim.rows ?? this.#syntheticRows(task), ingest);
      } catch (error) {
        if (!(error instanceof InputError)) throw error;
        task.result = {
          counters: emptyCounters(),
          chunks: [],
          dimensions: [],
          metrics: [],
          unparseableEvents: [],
          failure: null,
        };
        task.plannedFailure = error.message;
      }
      rows = task.result.counters.processed;
      task.plannedFailure ??= task.result.failure;
      if (!ingest.dataSchema.intervals && task.result.chunks.length > 0 && !task.plannedFailure) {
        // Without intervals, each chunk is locked at allocation time; a conflict fails the task (§4.4).
        const chunks = condense(task.result.chunks.map((c) => c.interval));
        if (!this.#lock(task, chunks)) {
          task.plannedFailure = ingest.parallel
            ? PHASE_FAILURE
            : `Cannot acquire a lock for interval[${intervalText(chunks[0] as Interval)}]`;
        }
      }
    }
    if (task.plan.msq && task.result && !task.plannedFailure) {
      const fault = msqFault(task.plan, task.result);
      if (fault) task.plannedFailure = faultMessage(fault);
    }
    const compact = task.plan.compact;
    if (compact) {
      task.compactInput = compactInput(this.store, task.dataSource, compact.interval, this.#t);
      rows = task.compactInput.reduce((n, c) => n + c.numRows, 0);
      if (task.compactInput.length === 0) task.plannedFailure = nothingToCompactMessage(compact.interval);
    }
    task.plannedFailure ??= this.#simFailure(task);
    task.endsAt = this.#t + this.#duration(task, rows);
    if (compact && msqCompactionWorkers(task) > 0 && !task.plannedFailure) {
      // The MSQ controller launches its workers once its peon is up and the query planned (`ControllerImpl` starts
      // `MSQWorkerTaskLauncher`), then waits for their slots before it does anything (#launchWorkers).
      task.runMs = task.endsAt - this.#t;
      task.endsAt = this.#t + WORKER_LAUNCH_DELAY_MS;
      task.launchingWorkers = true;
    }
    // An MSQ controller launches its workers as it starts; they end with it (#complete).
    for (const worker of workerTasks(task)) {
      this.tasks.set(worker.id, worker);
      this.#event(worker, "submitted");
      this.#event(worker, "running");
    }
  }

  #syntheticRows(task: SimTask): number {
    return seededRng(hash32(task.id, this.options.seed)).int(1_000, 100_000);
  }

  /** `simFail` / `simFailAttempts`: the first N tasks with the same key fail, later ones succeed. */
  #simFailure(task: SimTask): string | null {
    const { fail, failAttempts, failKey } = task.plan.sim;
    if (failAttempts === null) return fail;
    const key =
      failKey ?? `${task.dataSource}|${JSON.stringify(task.plan.ingest?.dataSchema.intervals ?? [])}`;
    const n = this.#failCounts.get(key) ?? 0;
    if (n >= failAttempts) return null;
    this.#failCounts.set(key, n + 1);
    return fail ?? PHASE_FAILURE;
  }

  /** Seeded duration model: a per-datasource base, a per-row cost shared by k sub-tasks, ±10% jitter. */
  #duration(task: SimTask, rows: number): number {
    if (task.plan.sim.durationMs !== null) return Math.max(0, task.plan.sim.durationMs);
    const dsFactor = 0.75 + 0.5 * seededRng(hash32(task.dataSource, this.options.seed)).next();
    const jitter = 0.9 + 0.2 * seededRng(hash32(task.id, this.options.seed)).next();
    const k = task.plan.ingest?.parallel ? task.plan.ingest.maxNumConcurrentSubTasks : 1;
    return Math.round((this.options.baseDurationMs * dsFactor + (rows * this.options.perRowMs) / k) * jitter);
  }

  /** An MSQ compaction's controller submits its `query_worker` tasks (compact-workers.ts): each waits for a slot. */
  #launchWorkers(task: SimTask): void {
    task.launchingWorkers = false;
    task.endsAt = Number.POSITIVE_INFINITY;
    for (const worker of compactionWorkerTasks(task, this.#t)) {
      this.tasks.set(worker.id, worker);
      this.#event(worker, "submitted");
      this.#event(worker, "pending");
    }
  }

  /** Lets the controllers held by `holdWorkerLaunches` launch their workers at the next sync. */
  releaseWorkerLaunches(): void {
    this.holdWorkerLaunches = false;
    for (const task of this.#heldLaunches) if (task.phase === "running") task.endsAt = this.#t;
    this.#heldLaunches.clear();
  }

  #finish(task: SimTask): void {
    if (task.launchingWorkers && this.holdWorkerLaunches) {
      task.endsAt = Number.POSITIVE_INFINITY;
      this.#heldLaunches.add(task);
      return;
    }
    if (task.launchingWorkers) {
      this.#launchWorkers(task);
      return;
    }
    if (task.plannedFailure) {
      this.#fail(task, task.plannedFailure);
      return;
    }
    const ingest = task.plan.ingest;
    if (ingest && task.result) {
      const version = task.version ?? this.#nextVersion();
      const never = this.options.neverLoad.has(task.dataSource) || task.plan.sim.neverHandoff;
      const segments = buildSegments({
        taskId: task.id,
        dataSource: task.dataSource,
        plan: ingest,
        result: task.result,
        version,
        now: this.#t,
        servedAt: never ? null : this.#t + this.options.handoffDelayMs,
        store: this.store,
      });
      this.#publish(task, segments);
    }
    if (task.plan.compact && task.compactInput) {
      const never = this.options.neverLoad.has(task.dataSource) || task.plan.sim.neverHandoff;
      this.#publish(
        task,
        compactedSegments({
          taskId: task.id,
          dataSource: task.dataSource,
          plan: task.plan.compact,
          chunks: task.compactInput,
          version: task.version ?? this.#nextVersion(),
          now: this.#t,
          servedAt: never ? null : this.#t + this.options.handoffDelayMs,
        }),
      );
    }
    if (task.plan.type === "kill" && task.plan.killInterval) {
      // Unused segments wholly inside the interval, filtered as the task asked (KillUnusedSegmentsTask
      // reads them with RetrieveUnusedSegmentsAction); used segments are never touched.
      const interval = task.plan.killInterval;
      const f = task.plan.kill;
      let left = f?.limit ?? Number.POSITIVE_INFINITY;
      this.store.remove(task.dataSource, (s) => {
        const chosen =
          left > 0 &&
          s.unusedAt !== null &&
          s.unusedAt <= this.#t &&
          interval.start <= s.interval.start &&
          s.interval.end <= interval.end &&
          (!f?.versions || f.versions.includes(s.version)) &&
          (f?.maxUsedStatusLastUpdatedTime == null || s.unusedAt <= f.maxUsedStatusLastUpdatedTime);
        if (chosen) left--;
        return chosen;
      });
    }
    this.#complete(task, "success", null);
  }

  /** Adds a finished task's segments to the timeline; they overshadow what they replace. */
  #publish(task: SimTask, segments: SimSegment[]): void {
    const servedBefore = new Set(this.served(task.dataSource).map((s) => s.id));
    this.store.add(segments);
    // `RunRules` skips overshadowed segments: one that is not loaded yet never will be (§4.2).
    const shadowed = this.store.overshadowed(task.dataSource, this.#t);
    for (const s of this.store.used(task.dataSource, this.#t)) {
      if (shadowed.has(s.id) && !servedBefore.has(s.id)) s.skipLoad = true;
    }
    task.segmentIds = segments.map((s) => s.id);
    if (segments.length > 0) this.#event(task, "published");
  }

  #fail(task: SimTask, message: string): void {
    this.#complete(task, "failed", truncateErrorMsg(message));
  }

  #complete(task: SimTask, phase: "success" | "failed", errorMsg: string | null): void {
    task.phase = phase;
    task.errorMsg = errorMsg;
    task.finishedAt = this.#t;
    task.endsAt = null;
    this.lockbox.release(task.id);
    this.slots.release(task.id, this.#t);
    this.#event(task, phase);
    // Only an MSQ controller has workers (workerTasks, compactionWorkerTasks): other tasks skip a pass over
    // every task.
    if (!task.plan.msq && msqCompactionWorkers(task) === 0) return;
    for (const worker of this.tasks.values()) {
      if (worker.plan.controller === task.id && isActive(worker))
        this.#complete(worker, phase, phase === "failed" ? CANCELED_MESSAGE : null);
    }
  }

  /** Records "handedOff" once every segment a task published is served. */
  #recordHandoffs(): boolean {
    let changed = false;
    for (const task of this.tasks.values()) {
      if (task.phase !== "success" || task.handedOff || task.segmentIds.length === 0) continue;
      const segments = task.segmentIds.map((id) => this.store.find(task.dataSource, id));
      if (!segments.every((s) => s !== undefined && this.isServed(s))) continue;
      task.handedOff = true;
      this.#event(task, "handedOff", Math.max(...segments.map((s) => s?.servedAt ?? this.#t)));
      changed = true;
    }
    return changed;
  }

  /**
   * One Coordinator pass at the current sim time (coordinator.ts): segments a drop rule matches are marked unused
   * from the instant it matched (not before the Coordinator first saw them, one handoff delay after publish);
   * overshadowed segments are marked unused `unusedDelayMs` after the segments overshadowing them are served (or
   * need zero replicas), and never before `millisToWaitBeforeDeleting` after start. Times are exact, so the result
   * does not depend on when a request triggers the pass.
   */
  #coordinate(): boolean {
    let changed = false;
    const now = this.#t;
    for (const ds of this.store.dataSources()) {
      const rules = this.rules.withDefault(ds);
      const changedAt = this.rules.changedAt(ds);
      // Without a drop rule in the chain nothing can be dropped, and with no segment overshadowed among all the
      // stored ones none is among the used ones (a subset): nothing to do, and no pass over every used segment
      // (each request syncs; a datasource of 200,000 segments made every answer cost them all). The first check
      // reads a timeline cached until segments are added or removed.
      const mayDrop = rules.some((r) => ruleKind(r) === "drop");
      if (!mayDrop && this.store.overshadowed(ds).size === 0) continue;
      let shadowed = this.store.overshadowed(ds, now);
      for (const s of mayDrop ? this.store.used(ds, now) : []) {
        if (s.unusedAt !== null || shadowed.has(s.id)) continue;
        const from = Math.max(s.publishedAt + this.options.handoffDelayMs, changedAt);
        const at = dropTime(rules, s.interval, from, now);
        if (at !== null) {
          s.unusedAt = at;
          changed = true;
        }
      }
      if (changed) shadowed = this.store.overshadowed(ds, now);
      const candidates = this.store.used(ds, now).filter((s) => s.unusedAt === null && shadowed.has(s.id));
      if (candidates.length === 0) continue;
      const serving: Array<{ segment: SimSegment; since: number }> = [];
      for (const s of this.store.used(ds, now)) {
        if (this.#servedGiven(s, now, shadowed)) serving.push({ segment: s, since: s.servedAt as number });
        else if (!shadowed.has(s.id) && zeroReplicas(this.placement(s, now))) {
          serving.push({
            segment: s,
            since: Math.max(s.publishedAt + this.options.handoffDelayMs, changedAt),
          });
        }
      }
      const wait = Number(this.dynamicConfig.millisToWaitBeforeDeleting);
      const earliest = this.startedAt + (Number.isFinite(wait) ? wait : 0);
      for (const s of candidates) {
        const since = coveredSince(s, serving);
        if (since === null) continue;
        s.unusedAt = Math.max(since, earliest) + this.options.unusedDelayMs;
        changed = true;
      }
    }
    return changed;
  }
}

/** A load rule that asks for no replica at all (`segmentsWithZeroRequiredReplicas`). */
function zeroReplicas(p: Placement): boolean {
  return p.kind === "load" && p.replicationFactor === 0;
}

export function isActive(task: SimTask): boolean {
  return task.phase === "waiting" || task.phase === "pending" || task.phase === "running";
}
