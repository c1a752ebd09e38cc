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
}

export interface InFlightTask {
  slots: number;
  /** Runner state as last polled; PENDING/WAITING tasks hold no slot yet but will. */
  runnerState: "WAITING" | "PENDING" | "RUNNING" | "NONE" | "UNKNOWN";
  /** The Druid task type (`index_parallel`, `kill`, …) when known; unknown counts against every type's limit. */
  type?: string | null;
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
  const ourRunning = inFlight.filter((t) => t.runnerState === "RUNNING").reduce((sum, t) => sum + t.slots, 0);
  const usedByOthers = Math.max(0, workers.used - ourRunning);
  const budget = workers.capacity - headroom - usedByOthers;
  if (candidateSlots > workers.capacity - headroom) {
    return inFlight.length === 0 && usedByOthers === 0
      ? { admit: true }
      : { admit: false, reason: "too-big" };
  }
  return ourSlots + candidateSlots <= budget ? { admit: true } : { admit: false, reason: "capacity" };
}
