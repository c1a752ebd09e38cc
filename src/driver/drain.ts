import { systemClock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import type { StateCounts } from "../ledger/types.js";
import { Driver, type DriverOptions } from "./driver.js";

/** Options of `drain`: the driver's, plus which job to wait for. */
export interface DrainOptions extends DriverOptions {
  /** Run until no task of this job is new, running or suspended; only this job's tasks are claimed. */
  readonly jobId: string;
  /** Stop (leaving the work resumable) at this time, ms since epoch. @default no deadline */
  readonly deadline?: number;
  /** Stop early (e.g. SIGINT), handing unfinished tasks back. */
  readonly signal?: AbortSignal;
}

export interface DrainResult {
  /** Why it returned: every task terminal, the deadline passed, or the signal fired. */
  readonly reason: "idle" | "deadline" | "aborted";
  readonly counts: StateCounts;
}

export function nonTerminal(counts: StateCounts): number {
  return counts.new + counts.running + counts.suspended;
}

/**
 * Runs a driver until the job has no non-terminal task (tasks held by other hosts count too), the
 * deadline passes or the signal fires; then stops it gracefully. What `segops backfill` runs.
 * Rejects with the `LedgerError` that stopped the driver, if any.
 */
export async function drain(options: DrainOptions): Promise<DrainResult> {
  const clock = options.clock ?? systemClock;
  const pollMs = options.pollMs ?? DEFAULTS.tickMs;
  // Draining a job runs that job only, unless the caller names a wider set.
  const driver = new Driver({ ...options, jobIds: options.jobIds ?? [options.jobId] });
  const failed = new AbortController();
  driver.start();
  // A storage failure must interrupt our wait immediately, not at the next poll.
  void driver.done().catch(() => failed.abort());
  let result: DrainResult | undefined;
  try {
    for (;;) {
      // A ledger deleted or replaced under the run would make every later "done" a lie: stop on it.
      await options.store.verify?.();
      const counts = await options.store.countTasks(options.jobId);
      if (nonTerminal(counts) === 0) result = { reason: "idle", counts };
      else if (options.signal?.aborted) result = { reason: "aborted", counts };
      else if (options.deadline !== undefined && clock.now() >= options.deadline)
        result = { reason: "deadline", counts };
      if (result || failed.signal.aborted) break;
      const wake = AbortSignal.any([failed.signal, ...(options.signal ? [options.signal] : [])]);
      const wait =
        options.deadline === undefined
          ? pollMs
          : Math.min(pollMs, Math.max(0, options.deadline - clock.now()));
      await clock.sleep(wait, wake).catch(() => undefined);
    }
  } finally {
    await driver.stop().catch(() => undefined);
  }
  if (driver.failure !== undefined) throw driver.failure;
  if (!result) throw new Error("drain ended without a result");
  if (result.reason !== "idle")
    return { reason: result.reason, counts: await options.store.countTasks(options.jobId) };
  return result;
}
