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
}

export type AdmissionDecision =
  | { admit: true }
  | { admit: false; reason: "max-concurrency" | "pending" | "capacity" | "too-big" };

/**
 * Admit when: under the concurrency cap; none of ours is queued (PENDING/WAITING means the cluster is
 * already full for us — slow down, don't pile on); and our slots plus everyone else's fit the capacity.
 * A candidate bigger than the whole cluster is admitted alone (otherwise it would starve forever): Druid
 * runs it with fewer sub-tasks.
 */
export function decideAdmission(input: AdmissionInput): AdmissionDecision {
  const { workers, inFlight, candidateSlots, maxConcurrency } = input;
  const headroom = input.headroom ?? 0;
  if (inFlight.length >= maxConcurrency) return { admit: false, reason: "max-concurrency" };
  if (inFlight.some((t) => t.runnerState === "PENDING" || t.runnerState === "WAITING")) {
    return { admit: false, reason: "pending" };
  }
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
