/** Slots one `index_parallel` task occupies: the supervisor plus k concurrent sub-tasks when k > 1 (docs/druid-api.md §5). */
export function slotsForSpec(spec: unknown): number {
  const tuning = (spec as { spec?: { tuningConfig?: { maxNumConcurrentSubTasks?: unknown } } })?.spec
    ?.tuningConfig;
  const k = typeof tuning?.maxNumConcurrentSubTasks === "number" ? tuning.maxNumConcurrentSubTasks : 1;
  return k > 1 ? k + 1 : 1;
}
