import { type Interval, overlaps } from "../core/interval.js";
import { intervalText } from "./instant-text.js";

/**
 * Time-chunk EXCLUSIVE locks per datasource (docs/druid-api.md §4.4): a request conflicting with a lock of the same
 * or higher priority waits; when every conflicting lock has a lower priority, those locks are revoked and the
 * request is granted. Locks are shared per `groupId`.
 */
export interface TaskLock {
  groupId: string;
  taskId: string;
  dataSource: string;
  interval: Interval;
  priority: number;
  version: string;
}

export type LockResult = { granted: true; revoked: TaskLock[] } | { granted: false; blockedBy: TaskLock };

export class Lockbox {
  #locks: TaskLock[] = [];

  /** All-or-nothing acquisition of `intervals` for one task. */
  tryLock(
    req: { groupId: string; taskId: string; dataSource: string; priority: number; version: string },
    intervals: Interval[],
  ): LockResult {
    const conflicts = this.#locks.filter(
      (l) =>
        l.dataSource === req.dataSource &&
        l.groupId !== req.groupId &&
        intervals.some((i) => overlaps(i, l.interval)),
    );
    const blocker = conflicts.find((l) => l.priority >= req.priority);
    if (blocker) return { granted: false, blockedBy: blocker };
    this.#locks = this.#locks.filter((l) => !conflicts.includes(l));
    for (const interval of intervals) this.#locks.push({ ...req, interval });
    return { granted: true, revoked: conflicts };
  }

  release(taskId: string): void {
    this.#locks = this.#locks.filter((l) => l.taskId !== taskId);
  }

  /** Every granted lock. */
  all(): readonly TaskLock[] {
    return this.#locks;
  }

  held(taskId: string): TaskLock[] {
    return this.#locks.filter((l) => l.taskId === taskId);
  }
}

/** The message a task sees when its lock was revoked by a higher-priority task (`AbstractBatchIndexTask`). */
export function lockRevokedMessage(lock: TaskLock): string {
  return `Lock revoked: [TimeChunkLock{type=EXCLUSIVE, groupId='${lock.groupId}', dataSource='${lock.dataSource}', interval=${intervalText(lock.interval)}, version='${lock.version}', priority=${lock.priority}, revoked=true}]`;
}

/** Condenses intervals: sorts and merges overlapping or abutting ones. */
export function condense(intervals: Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  const out: Array<{ start: number; end: number }> = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ start: i.start, end: i.end });
  }
  return out;
}
