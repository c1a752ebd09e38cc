/**
 * Druid's own budgets for work that must not take every task slot: a ratio of the cluster's slots, capped
 * by a maximum, at least one (null when the capacity is unknown). Druid applies them to the kill tasks its
 * auto-kill duty submits (`killTaskSlotRatio`, `maxKillTaskSlots`) and to auto-compaction
 * (`compactionTaskSlotRatio`, `maxCompactionTaskSlots`); segops applies them to its own kills and
 * compactions, so a big cleanup never starves ingestion (apache/druid #14769).
 */
export function taskSlotBudget(
  ratio: unknown,
  max: unknown,
  capacity: number,
  defaultRatio = 0.1,
): number | null {
  if (!(capacity > 0)) return null;
  const r = typeof ratio === "number" && ratio >= 0 ? ratio : defaultRatio;
  const m = typeof max === "number" && max >= 0 ? max : Number.MAX_SAFE_INTEGER;
  return Math.max(1, Math.min(Math.floor(r * capacity), m));
}

/**
 * How many kill tasks may run at once (`killTaskSlotRatio` @default 0.1, `maxKillTaskSlots` @default
 * unlimited, from the Coordinator's dynamic config).
 * @param capacity the cluster's task slots (`currentClusterCapacity`; -1 = unknown)
 */
export function killSlotBudget(config: Record<string, unknown>, capacity: number): number | null {
  return taskSlotBudget(config.killTaskSlotRatio, config.maxKillTaskSlots, capacity);
}

/**
 * How many compaction tasks may run at once (`compactionTaskSlotRatio` @default 0.1,
 * `maxCompactionTaskSlots` @default unlimited, from the cluster compaction config).
 * @param capacity the cluster's task slots (`currentClusterCapacity`; -1 = unknown)
 */
export function compactionSlotBudget(config: Record<string, unknown>, capacity: number): number | null {
  return taskSlotBudget(config.compactionTaskSlotRatio, config.maxCompactionTaskSlots, capacity);
}

/** The Druid reads the budgets need (a `DruidClient` satisfies it). */
export interface BudgetSource {
  coordinatorDynamicConfig(options?: { signal?: AbortSignal }): Promise<Record<string, unknown>>;
  compactionConfig(options?: { signal?: AbortSignal }): Promise<Record<string, unknown>>;
  totalWorkerCapacity(options?: { signal?: AbortSignal }): Promise<{ currentClusterCapacity: number }>;
}

/**
 * A budget as Druid states it now, from a config read alongside the cluster's capacity; null when it cannot
 * be read (permissions, an older Druid).
 */
async function readBudget(
  client: BudgetSource,
  readConfig: (options: { signal?: AbortSignal }) => Promise<Record<string, unknown>>,
  budgetOf: (config: Record<string, unknown>, capacity: number) => number | null,
  signal?: AbortSignal,
): Promise<number | null> {
  const options = signal ? { signal } : {};
  try {
    const [config, capacity] = await Promise.all([readConfig(options), client.totalWorkerCapacity(options)]);
    return budgetOf(config, capacity.currentClusterCapacity);
  } catch {
    return null;
  }
}

/** The kill budget as Druid states it now; null when it cannot be read. */
export function readKillBudget(client: BudgetSource, signal?: AbortSignal): Promise<number | null> {
  return readBudget(client, (o) => client.coordinatorDynamicConfig(o), killSlotBudget, signal);
}

/** The compaction budget as Druid states it now; null when it cannot be read. */
export function readCompactionBudget(client: BudgetSource, signal?: AbortSignal): Promise<number | null> {
  return readBudget(client, (o) => client.compactionConfig(o), compactionSlotBudget, signal);
}

/** A budget read from Druid and kept a while (see {@link cachedBudget}). */
export interface CachedBudget {
  (signal: AbortSignal): Promise<number | null>;
  /** The last value read, without reading (undefined before the first read or once it is stale). */
  peek(): number | null | undefined;
}

/**
 * A budget read from Druid at most once a minute (`read` runs against the cluster; a failed read is null,
 * no budget: worker-slot admission alone caps the tasks then). Shared by the compaction and kill runners.
 * @param refreshMs how long a read stays good. @default 60000
 */
export function cachedBudget(
  read: (signal: AbortSignal) => Promise<number | null>,
  clock: { now(): number },
  refreshMs = 60_000,
): CachedBudget {
  let last: { value: number | null; readAt: number } | null = null;
  const fresh = () => last !== null && clock.now() - last.readAt < refreshMs;
  const budget = async (signal: AbortSignal) => {
    if (last && fresh()) return last.value;
    const value = await read(signal);
    last = { value, readAt: clock.now() };
    return value;
  };
  return Object.assign(budget, { peek: () => (last && fresh() ? last.value : undefined) });
}
