import { yieldToEventLoop } from "../core/clock.js";
import { exitCodeFor, type PartitionReport, partitionReport, shownState } from "../jobs/report.js";
import type { Store } from "../ledger/store.js";
import type { JobRow, StateCounts } from "../ledger/types.js";
import type * as S from "./schemas.js";
import { JOB_VIEW_PARTITIONS } from "./schemas.js";

/** A job in a listing: its state as its partitions say, and their counts per state. */
export function jobSummary(job: JobRow, counts: StateCounts): S.JobSummary {
  return {
    id: job.id,
    kind: job.kind,
    state: shownState(job.state, counts),
    canceled: job.canceled,
    createdAt: new Date(job.createdAt).toISOString(),
    updatedAt: new Date(job.updatedAt).toISOString(),
    counts,
  };
}

/**
 * A job as the API shows it. Its totals are summed over every partition, read a page at a time with the
 * event loop free between pages (a 36,000-partition job is 36 reads, not one 500 ms stall on SQLite); only
 * the first page is shown, so an answer stays about half a megabyte whatever the job's size.
 */
export async function jobView(store: Store, job: JobRow): Promise<S.Job> {
  const counts = await store.countTasks(job.id);
  const totals = { rows: 0, segments: 0, bytes: 0 };
  let shown: PartitionReport[] = [];
  let partitionCount = 0;
  let after: string | undefined;
  for (;;) {
    const page = await store.listTasks(job.id, {
      ...(after !== undefined ? { afterId: after } : {}),
      limit: JOB_VIEW_PARTITIONS,
    });
    const reports = page.map((t) => partitionReport(t));
    for (const p of reports) {
      totals.rows += p.rows ?? 0;
      totals.segments += p.segments ?? 0;
      totals.bytes += p.bytes ?? 0;
    }
    if (after === undefined) shown = reports;
    partitionCount += page.length;
    after = page.at(-1)?.id;
    if (page.length < JOB_VIEW_PARTITIONS || after === undefined) break;
    await yieldToEventLoop();
  }
  return {
    ...jobSummary(job, counts),
    options: job.options,
    partitions: shown,
    partitionCount,
    partitionsNext: partitionCount > shown.length ? (shown.at(-1)?.task ?? null) : null,
    totals,
    exitCode: exitCodeFor(counts),
  };
}

/** One page of a job's partitions in task-id (time) order, and where the next begins. */
export async function partitionPage(
  store: Store,
  job: JobRow,
  page: { after?: string; limit?: number },
): Promise<S.PartitionPage> {
  const limit = page.limit ?? JOB_VIEW_PARTITIONS;
  // One more than asked tells whether a next page exists without a second read.
  const rows = await store.listTasks(job.id, {
    ...(page.after !== undefined ? { afterId: page.after } : {}),
    limit: limit + 1,
  });
  const items = rows.slice(0, limit).map((t) => partitionReport(t));
  return { items, next: rows.length > limit ? (items.at(-1)?.task ?? null) : null };
}
