/**
 * The least any poller can cost a Druid on a given run and still see every task's finish within `intervalMs`,
 * read each task's report once and submit it once (and prove nothing else: no handoff, no admission). Computed
 * from a run's own measurements, so the pollers' figures can be read against it:
 *
 *   looks      Σ over tasks of ⌈run time / D⌉ (at least 1): a task that may end at any instant must be looked
 *              at once in every D of its run, or a finish inside an unlooked stretch is seen later than D;
 *   bytes      looks × the smallest measured per-task cost of a status answer, plus the mean measured report
 *              and submission answers, per task;
 *   requests   one submission and one report a task, plus ⌈makespan / D⌉ bulk lookups shared by all tasks.
 *
 * A floor, not a poller: it assumes the finish instants are unknown (no lower bound on a task's duration) and
 * that one bulk answer's per-task cost stays what it was measured at (the same batch sizes: the slots in use).
 */

export interface StatusEntryCost {
  /** Where the figure comes from, e.g. "segops' bulk `POST /taskStatus`, 441 B ÷ 16.2 ids". */
  source: string;
  /** Response bytes per task asked (one status entry). */
  bytes: number;
}

export interface FloorInputs {
  /** Each task's run time (ms) as the floor counts it (here: submitted to finished, at the emulator). */
  runTimesMs: readonly number[];
  /** First submission to last finish (ms): how long bulk lookups must go on. */
  makespanMs: number;
  /** Candidate per-entry costs of a status answer measured in the run; the smallest is used. */
  statusEntry: readonly StatusEntryCost[];
  /** Mean bytes of one report answer (`GET /task/{id}/reports`). */
  reportBytes: number;
  /** Mean bytes of one submission answer (`POST /task`). */
  submitBytes: number;
  /** D: every finish seen within this many ms. */
  intervalMs: number;
}

export interface CostFloor {
  intervalMs: number;
  tasks: number;
  /** Status entries over all tasks. */
  looks: number;
  looksPerTask: number;
  /** The per-entry cost used (the smallest candidate). */
  statusEntry: StatusEntryCost;
  bulkLookups: number;
  requestsPerTask: number;
  bytesPerTask: number;
}

function finiteNonNegative(name: string, value: number): void {
  if (!(Number.isFinite(value) && value >= 0))
    throw new Error(`cost floor: ${name} must be a finite number ≥ 0, got ${value}`);
}

/** The smallest per-entry cost among the candidates (ties: the first); throws on none. */
export function smallestStatusEntry(candidates: readonly StatusEntryCost[]): StatusEntryCost {
  const usable = candidates.filter((c) => Number.isFinite(c.bytes) && c.bytes > 0);
  if (usable.length === 0)
    throw new Error("cost floor: no measured status-answer cost (statusEntry needs a positive byte count)");
  return usable.reduce((min, c) => (c.bytes < min.bytes ? c : min));
}

export function costFloor(i: FloorInputs): CostFloor {
  if (!(Number.isFinite(i.intervalMs) && i.intervalMs > 0))
    throw new Error(`cost floor: intervalMs must be a positive number of ms, got ${i.intervalMs}`);
  if (i.runTimesMs.length === 0) throw new Error("cost floor: runTimesMs is empty (no task finished)");
  finiteNonNegative("makespanMs", i.makespanMs);
  finiteNonNegative("reportBytes", i.reportBytes);
  finiteNonNegative("submitBytes", i.submitBytes);
  let looks = 0;
  for (const run of i.runTimesMs) {
    finiteNonNegative("a run time", run);
    looks += Math.max(1, Math.ceil(run / i.intervalMs));
  }
  const tasks = i.runTimesMs.length;
  const statusEntry = smallestStatusEntry(i.statusEntry);
  const bulkLookups = Math.max(1, Math.ceil(i.makespanMs / i.intervalMs));
  return {
    intervalMs: i.intervalMs,
    tasks,
    looks,
    looksPerTask: looks / tasks,
    statusEntry,
    bulkLookups,
    requestsPerTask: 2 + bulkLookups / tasks,
    bytesPerTask: (looks * statusEntry.bytes) / tasks + i.reportBytes + i.submitBytes,
  };
}
