/**
 * Admission control (architecture doc, "One ingestion, step by step"): a backfill starts a new partition only while
 * the worker slots its in-flight Druid tasks need fit in what the cluster has free, and under the user's cap.
 * Pure: the caller supplies a fresh `/workers` snapshot and its own in-flight list each tick.
 */

/**
 * Whether a `/workers` entry can take no task. Druid 38 flags a disabled MiddleManager or Indexer with
 * `worker.disabled` (apache/druid #19448); up to 37 `WorkerResource`'s disable announced it with version `""` and
 * no flag, and an empty version never passes the Overlord's `minWorkerVersion` check. Both are read whatever the
 * cluster's release (capabilities.ts, `workerDisabledFlag`): a 38 Overlord lists a MiddleManager still on 37
 * during a rolling upgrade the old way.
 */
export function isDisabledWorker(w: { worker: { version: string; disabled?: boolean } }): boolean {
  return w.worker.disabled === true || w.worker.version === "";
}

export interface WorkerSnapshot {
  /** Σ worker.capacity over enabled workers. */
  capacity: number;
  /** Σ currCapacityUsed over enabled workers (includes our own running tasks). */
  used: number;
  /**
   * Slots other users' running MSQ controllers are still to take: an MSQ compaction or SQL query holds
   * `maxNumTasks` slots, but Druid counts a worker only once it runs, so a controller that has just started shows
   * fewer (see {@link msqSlotsHeld}). Counted as used. @default 0
   */
  launching?: number;
}

export interface InFlightTask {
  slots: number;
  /** Runner state as last polled; PENDING/WAITING tasks hold no slot yet but will. */
  runnerState: "WAITING" | "PENDING" | "RUNNING" | "NONE" | "UNKNOWN";
  /** The Druid task type (`index_parallel`, `kill`, …) when known; unknown counts against every type's limit. */
  type?: string | null;
  /**
   * While RUNNING: the slots Druid's `/workers` counts for it now, when fewer than `slots` (our MSQ controller whose
   * workers do not all run yet). The rest are still ours to take, not free for others. @default slots
   */
  visibleSlots?: number;
}

/**
 * Druid's per-type slot limits (the worker select strategy's `taskLimits`, apache/druid #16889): the Overlord keeps
 * a task PENDING while the slots its type holds across the cluster, plus its own, exceed the type's limit.
 */
export interface TypeLimits {
  /** Type → the most slots its tasks may hold (`TaskLimits.getLimitForTask` at the current capacity). */
  limits: Readonly<Record<string, number>>;
  /** Type → slots its running tasks hold now, summed over `/workers`' `currCapacityUsedByTaskType`. */
  usedByType: Readonly<Record<string, number>>;
}

export interface AdmissionInput {
  workers: WorkerSnapshot;
  inFlight: readonly InFlightTask[];
  /** Slots the candidate partition needs. */
  candidateSlots: number;
  /** User cap on concurrently in-flight partitions (`--max-concurrency`). */
  maxConcurrency: number;
  /** Slots to leave free for other users of the cluster. @default 0 */
  headroom?: number;
  /** Druid's per-type limits; absent: none known. */
  typeLimits?: TypeLimits | null;
  /** The candidate's Druid task type; null or absent: unknown, so every type's limit must allow it. */
  candidateType?: string | null;
}

export type AdmissionDecision =
  | { admit: true }
  | { admit: false; reason: "max-concurrency" | "pending" | "capacity" | "too-big" }
  | { admit: false; reason: "task-limit"; taskType: string; limit: number; used: number };

/**
 * The first type whose limit the candidate would pass. Each task takes one slot of its type: segops never sets
 * `resource.requiredCapacity`, and an `index_parallel` supervisor's sub-tasks are tasks of their own types. Druid
 * counts our running tasks in `usedByType`; ours not running yet (reserved, just submitted, queued) are added, and
 * one of unknown type is counted against every limit, so the answer errs towards waiting.
 */
function overTypeLimit(input: AdmissionInput): AdmissionDecision | null {
  const limits = input.typeLimits;
  if (!limits) return null;
  const candidate = input.candidateType ?? null;
  for (const [type, limit] of Object.entries(limits.limits)) {
    if (candidate !== null && candidate !== type) continue;
    const notCounted = input.inFlight.filter(
      (t) => t.runnerState !== "RUNNING" && (t.type === undefined || t.type === null || t.type === type),
    ).length;
    const used = (limits.usedByType[type] ?? 0) + notCounted;
    if (used + 1 > limit) return { admit: false, reason: "task-limit", taskType: type, limit, used };
  }
  return null;
}

/**
 * Admit when: under the concurrency cap; none of ours is queued (PENDING/WAITING means the cluster is
 * already full for us — slow down, don't pile on); its type is under Druid's limit for the type; and our slots
 * plus everyone else's fit the capacity. A candidate bigger than the whole cluster is admitted alone (otherwise
 * it would starve forever): Druid runs it with fewer sub-tasks.
 */
export function decideAdmission(input: AdmissionInput): AdmissionDecision {
  const { workers, inFlight, candidateSlots, maxConcurrency } = input;
  const headroom = input.headroom ?? 0;
  if (inFlight.length >= maxConcurrency) return { admit: false, reason: "max-concurrency" };
  if (inFlight.some((t) => t.runnerState === "PENDING" || t.runnerState === "WAITING")) {
    return { admit: false, reason: "pending" };
  }
  const limited = overTypeLimit(input);
  if (limited) return limited;
  const ourSlots = inFlight.reduce((sum, t) => sum + t.slots, 0);
  // What Druid counts for ours now: the rest of `used` is other users', plus what their MSQ controllers launch.
  const ourRunning = inFlight
    .filter((t) => t.runnerState === "RUNNING")
    .reduce((sum, t) => sum + Math.min(t.slots, t.visibleSlots ?? t.slots), 0);
  const usedByOthers = Math.max(0, workers.used - ourRunning) + (workers.launching ?? 0);
  const budget = workers.capacity - headroom - usedByOthers;
  if (candidateSlots > workers.capacity - headroom) {
    return inFlight.length === 0 && usedByOthers === 0
      ? { admit: true }
      : { admit: false, reason: "too-big" };
  }
  return ourSlots + candidateSlots <= budget ? { admit: true } : { admit: false, reason: "capacity" };
}

/** A running task as the Overlord lists it (`GET /tasks?state=running`). */
export interface RunningTask {
  id: string;
  groupId?: string | undefined;
  type?: string | undefined;
}

/**
 * The slots Druid counts now for an MSQ controller: its own (while it runs) and one per running `query_worker` it
 * launched (`MSQWorkerTaskLauncher` names them `<controller>-worker<n>_<retry>`, in the controller's group). An
 * MSQ compaction's controller is the compact task itself (`MSQCompactionRunner` gives it the compact task's id).
 */
export function msqSlotsHeld(controllerId: string, running: readonly RunningTask[]): number {
  let n = 0;
  for (const t of running) {
    if (t.id === controllerId) n++;
    else if (
      t.type === "query_worker" &&
      (t.groupId === controllerId || t.id.startsWith(`${controllerId}-worker`))
    )
      n++;
  }
  return n;
}

/**
 * The slots an MSQ controller's payload (`GET /task/{id}`) says it takes in all, or null when it is not one: a
 * `query_controller` (`maxNumTasks` of its SQL context, else `maxNumWorkers` + 1 of its spec's tuningConfig) or a
 * `compact` task on the MSQ engine (`compactionRunner.type: "msq"`, `maxNumTasks` of its context;
 * `CompactionSlotManager.computeSlotsRequiredForTask`). `maxNumTasks` is 2 by default
 * (`MultiStageQueryContext.getMaxNumTasks`).
 */
export function msqSlotsOf(payload: Record<string, unknown>): number | null {
  const obj = (v: unknown): Record<string, unknown> =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const atLeast2 = (v: unknown): number | null =>
    typeof v === "number" && Number.isInteger(v) && v >= 2 ? v : null;
  if (payload.type === "compact") {
    if (obj(payload.compactionRunner).type !== "msq") return null;
    return atLeast2(obj(payload.context).maxNumTasks) ?? 2;
  }
  if (payload.type !== "query_controller") return null;
  const fromContext =
    atLeast2(obj(payload.sqlQueryContext).maxNumTasks) ?? atLeast2(obj(payload.context).maxNumTasks);
  if (fromContext !== null) return fromContext;
  const workers = obj(obj(obj(payload.spec).tuningConfig)).maxNumWorkers;
  return typeof workers === "number" && workers >= 1 ? workers + 1 : 2;
}
