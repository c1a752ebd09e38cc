import type { TaskPlan } from "./plans.js";

/**
 * The Overlord's per-type task slot limits: the worker select strategy's `taskLimits` in the dynamic worker config
 * (`POST /druid/indexer/v1/worker`), honoured from Druid 33 on (apache/druid #16889: `TaskLimits`,
 * `WorkerSelectUtils`). A task whose type would hold more slots than its limit stays PENDING, whatever slots are
 * free. The same rules as segops' own reading of them (src/druid/worker-config.ts; sim/ imports only core/).
 */
export interface SimTaskLimits {
  maxSlotCountByType: Record<string, number>;
  maxSlotRatioByType: Record<string, number>;
}

function numbers(value: unknown, valid: (n: number) => boolean): Record<string, number> {
  const out: Record<string, number> = {};
  if (!value || typeof value !== "object" || Array.isArray(value)) return out;
  for (const [type, n] of Object.entries(value)) if (typeof n === "number" && valid(n)) out[type] = n;
  return out;
}

/**
 * `selectStrategy.taskLimits` of a worker config, or null when it sets none. Values `TaskLimits.validateLimits`
 * refuses (a negative count, a ratio outside [0, 1]) are left out; the emulator does not refuse the config.
 */
export function taskLimitsIn(config: Record<string, unknown> | null): SimTaskLimits | null {
  const strategy = config?.selectStrategy;
  if (!strategy || typeof strategy !== "object") return null;
  const limits = (strategy as Record<string, unknown>).taskLimits as Record<string, unknown> | undefined;
  if (!limits || typeof limits !== "object") return null;
  const counts = numbers(limits.maxSlotCountByType, (n) => Number.isInteger(n) && n >= 0);
  const ratios = numbers(limits.maxSlotRatioByType, (n) => n >= 0 && n <= 1);
  if (Object.keys(counts).length === 0 && Object.keys(ratios).length === 0) return null;
  return { maxSlotCountByType: counts, maxSlotRatioByType: ratios };
}

/** `TaskLimits.getLimitForTask`: the smaller of the count and the ratio of the capacity (floored, 1 to capacity). */
export function slotLimit(limits: SimTaskLimits, type: string, totalCapacity: number): number | null {
  const count = limits.maxSlotCountByType[type];
  const ratio = limits.maxSlotRatioByType[type];
  if (ratio === undefined) return count ?? null;
  const fromRatio = Math.max(1, Math.min(Math.floor(ratio * totalCapacity), totalCapacity));
  return count === undefined ? fromRatio : Math.min(count, fromRatio);
}

/**
 * The task types a task's slots count as in Druid's `currCapacityUsedByTaskType`. The emulator runs a parallel
 * `index_parallel` as one task holding k+1 slots; in Druid the supervisor holds one slot as `index_parallel` and
 * each sub-task one as its own type: `single_phase_sub_task` under dynamic partitioning, the first phase
 * (`partial_index_generate`) otherwise. An MSQ controller likewise holds one as `query_controller` and its
 * workers one each as `query_worker`. Any other task holds all its slots as its own type.
 */
export function slotTypes(plan: TaskPlan): { own: string; sub: string | null } {
  if (plan.type === "index_parallel" && plan.ingest?.parallel && plan.slots > 1) {
    const dynamic = plan.ingest.partitions.type === "dynamic";
    return { own: plan.type, sub: dynamic ? "single_phase_sub_task" : "partial_index_generate" };
  }
  if (plan.type === "query_controller" && plan.slots > 1) return { own: plan.type, sub: "query_worker" };
  return { own: plan.type, sub: null };
}
