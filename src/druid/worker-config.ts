/**
 * The Overlord's dynamic worker config (`GET /druid/indexer/v1/worker`, a `WorkerBehaviorConfig`) as far as
 * admission needs it: the select strategy's `taskLimits` (apache/druid #16889, Druid 33 and newer; capabilities.ts,
 * `taskLimits`). Pure.
 *
 * Not readable over HTTP, so not seen here: `druid.indexer.runner.parallelIndexTaskSlotRatio` (apache/druid
 * #12221), a runtime property of the Overlord that caps `index_parallel` supervisors per worker
 * (docs/druid-versions.md).
 */

/** `TaskLimits`: per task type, the most slots its tasks may hold at once across the cluster. */
export interface TaskLimits {
  readonly maxSlotCountByType: Readonly<Record<string, number>>;
  readonly maxSlotRatioByType: Readonly<Record<string, number>>;
}

function numbers(value: unknown, valid: (n: number) => boolean): Record<string, number> {
  const out: Record<string, number> = {};
  if (!value || typeof value !== "object" || Array.isArray(value)) return out;
  for (const [type, n] of Object.entries(value)) if (typeof n === "number" && valid(n)) out[type] = n;
  return out;
}

/**
 * The select strategy's `taskLimits`, or null when there are none (no config, a strategy without the field, or
 * empty maps). Every strategy type is read the same way: #16889 gave the field to `equalDistribution`,
 * `fillCapacity` and their category-spec variants, and a strategy without it has no limits. Values Druid's
 * `TaskLimits.validateLimits` would refuse (a negative count, a ratio outside [0, 1]) are left out.
 */
export function taskLimitsOf(config: unknown): TaskLimits | null {
  if (!config || typeof config !== "object") return null;
  const strategy = (config as Record<string, unknown>).selectStrategy;
  if (!strategy || typeof strategy !== "object") return null;
  const limits = (strategy as Record<string, unknown>).taskLimits;
  if (!limits || typeof limits !== "object") return null;
  const l = limits as Record<string, unknown>;
  const counts = numbers(l.maxSlotCountByType, (n) => Number.isInteger(n) && n >= 0);
  const ratios = numbers(l.maxSlotRatioByType, (n) => n >= 0 && n <= 1);
  if (Object.keys(counts).length === 0 && Object.keys(ratios).length === 0) return null;
  return { maxSlotCountByType: counts, maxSlotRatioByType: ratios };
}

/**
 * The slots tasks of `type` may hold at once, or null when the type has no limit: `TaskLimits.getLimitForTask`,
 * the smaller of the count and the ratio of `totalCapacity` (floored, at least 1, at most the capacity).
 */
export function slotLimitFor(limits: TaskLimits, type: string, totalCapacity: number): number | null {
  const count = limits.maxSlotCountByType[type];
  const ratio = limits.maxSlotRatioByType[type];
  if (ratio === undefined) return count ?? null;
  const fromRatio = Math.max(1, Math.min(Math.floor(ratio * totalCapacity), totalCapacity));
  return count === undefined ? fromRatio : Math.min(count, fromRatio);
}
