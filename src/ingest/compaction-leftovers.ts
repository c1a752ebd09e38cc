import type { Store } from "../ledger/store.js";
import { isTerminal, type TaskRow } from "../ledger/types.js";
import { INGEST_KIND } from "./types.js";

/**
 * The compaction skip intervals segops added (compaction-guard.ts), as the ledger records them: each partition that
 * added one keeps it in its progress (`compactionSkip`), and keeps it there once it is over. The ledger is therefore
 * the durable list of what is segops' to take out, across hosts and restarts:
 *
 * - an entry is still needed while any unfinished partition (of any job, on any host) records it: two hosts whose
 *   partitions share a widened interval (days of a month compacted monthly) do not take it from each other;
 * - an entry only finished partitions record is a leftover: the removal failed (Druid down when the partition
 *   ended), or no process ran the partition when it ended (a job canceled while nothing ran it). The next process
 *   that runs ingestion for the ledger takes it out (`clearLeftoverSkips`).
 *
 * Pure except `ledgerHoldings`, which reads the ledger.
 */

/** One partition's record of a skip interval segops added. */
export interface SkipHolding {
  readonly taskId: string;
  readonly datasource: string;
  /** The interval as recorded (`formatInterval` of the widened interval). */
  readonly interval: string;
  /** Whether the partition is unfinished (it may still write inside the interval). */
  readonly active: boolean;
}

/** The holdings among `tasks`: ingest partitions whose progress records a skip interval. */
export function skipHoldings(tasks: readonly TaskRow[]): SkipHolding[] {
  const out: SkipHolding[] = [];
  for (const t of tasks) {
    if (t.kind !== INGEST_KIND) continue;
    const interval = (t.progress as { compactionSkip?: unknown }).compactionSkip;
    const datasource = (t.payload as { datasource?: unknown }).datasource;
    if (typeof interval !== "string" || typeof datasource !== "string") continue;
    out.push({ taskId: t.id, datasource, interval, active: !isTerminal(t.state) });
  }
  return out;
}

/** Whether a partition other than `except` that is not over still records `interval` for `datasource`. */
export function heldByOthers(
  holdings: readonly SkipHolding[],
  datasource: string,
  interval: string,
  except: string,
): boolean {
  return holdings.some(
    (h) => h.active && h.taskId !== except && h.datasource === datasource && h.interval === interval,
  );
}

/** Entries only finished partitions record: segops' to take out. One per datasource and interval, sorted. */
export function leftoverSkips(
  holdings: readonly SkipHolding[],
): Array<{ datasource: string; interval: string; recordedBy: string }> {
  const active = new Set(holdings.filter((h) => h.active).map((h) => `${h.datasource}|${h.interval}`));
  const out = new Map<string, { datasource: string; interval: string; recordedBy: string }>();
  for (const h of holdings) {
    const key = `${h.datasource}|${h.interval}`;
    if (h.active || active.has(key) || out.has(key)) continue;
    out.set(key, { datasource: h.datasource, interval: h.interval, recordedBy: h.taskId });
  }
  return [...out.values()].sort((a, b) =>
    a.datasource === b.datasource
      ? a.interval.localeCompare(b.interval)
      : a.datasource.localeCompare(b.datasource),
  );
}

/** Jobs read per page when the ledger is scanned. */
const JOB_PAGE = 100;

type Ledger = Pick<Store, "listJobs" | "listTasks">;

/**
 * The holdings of the ledger's jobs, newest first, one `listJobs` page at a time and one `listTasks` per job:
 * `open` only the open jobs (the only ones with unfinished partitions); `maxJobs` at most that many jobs.
 */
export async function ledgerHoldings(
  ledger: Ledger,
  options: { open?: boolean; maxJobs?: number } = {},
): Promise<SkipHolding[]> {
  const out: SkipHolding[] = [];
  let after: { createdAt: number; id: string } | undefined;
  let seen = 0;
  const max = options.maxJobs ?? Number.POSITIVE_INFINITY;
  for (;;) {
    const jobs = await ledger.listJobs({
      limit: JOB_PAGE,
      ...(options.open ? { state: "open" as const } : {}),
      ...(after ? { after } : {}),
    });
    for (const job of jobs) {
      if (seen++ >= max) return out;
      out.push(...skipHoldings(await ledger.listTasks(job.id)));
    }
    const last = jobs.at(-1);
    if (jobs.length < JOB_PAGE || !last) return out;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/** Whether a partition of another host or job that is not over records the interval (the guard's `heldElsewhere`). */
export async function heldInLedger(
  ledger: Ledger,
  datasource: string,
  interval: string,
  holder: string,
): Promise<boolean> {
  return heldByOthers(await ledgerHoldings(ledger, { open: true }), datasource, interval, holder);
}

/**
 * Takes out the leftovers the ledger records (`leftoverSkips`) through `clear`; `maxJobs` limits the scan to the
 * newest jobs. Each removal is its own: one that fails stays a leftover for the next sweep.
 */
export async function sweepLeftoverSkips(
  ledger: Ledger,
  clear: (datasource: string, interval: string) => Promise<void>,
  options: { maxJobs?: number } = {},
): Promise<{ cleared: string[]; failed: Array<{ entry: string; error: string }> }> {
  const cleared: string[] = [];
  const failed: Array<{ entry: string; error: string }> = [];
  const holdings = await ledgerHoldings(
    ledger,
    options.maxJobs !== undefined ? { maxJobs: options.maxJobs } : {},
  );
  for (const l of leftoverSkips(holdings)) {
    const entry = `${l.datasource} ${l.interval}`;
    try {
      await clear(l.datasource, l.interval);
      cleared.push(entry);
    } catch (error) {
      failed.push({ entry, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { cleared, failed };
}
