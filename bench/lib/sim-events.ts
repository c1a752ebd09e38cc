import type { SimStatsSnapshot, TaskEvent } from "../../src/sim/stats.js";

/** Reading the emulator's per-task event timelines (sim time). */

type Timelines = SimStatsSnapshot["tasks"];

/** Sim ms of the task's first `event`, or null when it never happened. */
export function eventAt(tasks: Timelines, taskId: string, event: TaskEvent): number | null {
  const hit = tasks[taskId]?.find((e) => e.event === event);
  return hit ? Date.parse(hit.at) : null;
}

/** How many times the task reached `event` (a correctness check: a task succeeds once). */
export function eventCount(tasks: Timelines, taskId: string, event: TaskEvent): number {
  return tasks[taskId]?.filter((e) => e.event === event).length ?? 0;
}

/** The terminal event's sim time (success or failed). */
export function finishedAt(tasks: Timelines, taskId: string): number | null {
  return eventAt(tasks, taskId, "success") ?? eventAt(tasks, taskId, "failed");
}

/**
 * Average fraction of the cluster's slots busy over [fromSim, toSim]: Σ(slots × run time inside the
 * window) ÷ (capacity × window). `slotsOf` gives each task's slot count (k+1 for parallel ingestion).
 */
export function slotUtilization(
  tasks: Timelines,
  slotsOf: (taskId: string) => number,
  capacity: number,
  fromSim: number,
  toSim: number,
): number {
  const window = toSim - fromSim;
  if (window <= 0 || capacity <= 0) return Number.NaN;
  let busy = 0;
  for (const id of Object.keys(tasks)) {
    const start = eventAt(tasks, id, "running");
    const end = finishedAt(tasks, id);
    if (start === null || end === null) continue;
    const overlap = Math.min(end, toSim) - Math.max(start, fromSim);
    if (overlap > 0) busy += overlap * slotsOf(id);
  }
  return busy / (capacity * window);
}
