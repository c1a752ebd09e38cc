import type { IngestPayload } from "../ingest/runner.js";
import { describeSourceChange } from "../ingest/source.js";
import type { Store } from "../ledger/store.js";
import type { JobRow, NewJob, NewTask } from "../ledger/types.js";

/**
 * What a rerun of a command means, in words, before anything runs: the same inputs from the same source
 * find their job again ("already done … nothing submitted"), changed input is a new job that says which
 * partitions changed and that the others reattach to the Druid tasks already run.
 */

/** Jobs read at most to find the last one over the same inputs. */
const PREDECESSOR_SCAN = 500;

/** The newest other job planned from the same inputs (template, range, variables, cluster), if any. */
export async function previousJob(store: Store, job: NewJob): Promise<JobRow | null> {
  const inputsId = job.options?.inputsId;
  if (typeof inputsId !== "string") return null;
  const jobs = await store.listJobs({ kind: job.kind, limit: PREDECESSOR_SCAN });
  return jobs.find((j) => j.id !== job.id && j.options.inputsId === inputsId) ?? null;
}

/**
 * Lines saying how a new job's sources differ from the previous job's over the same inputs: one per
 * changed partition, then how many are unchanged. Empty when there is no previous job.
 */
export async function sourceChanges(
  store: Store,
  plan: { job: NewJob; tasks: readonly NewTask[] },
): Promise<string[]> {
  const previous = await previousJob(store, plan.job);
  if (!previous) return [];
  const before = new Map(
    (await store.listTasks(previous.id)).map((t) => {
      const p = t.payload as unknown as IngestPayload;
      return [p.interval, p.source] as const;
    }),
  );
  const lines: string[] = [];
  let unchanged = 0;
  for (const t of plan.tasks) {
    const p = t.payload as unknown as IngestPayload;
    const old = before.get(p.interval);
    if (!p.source) continue;
    if (old?.version === p.source.version) unchanged++;
    else
      lines.push(
        `${p.interval.replace(/T00:00:00\.000Z/g, "")}: source changed (${describeSourceChange(old, p.source)}): ingested again`,
      );
  }
  if (lines.length > 0 && unchanged > 0)
    lines.push(
      `${unchanged} partition(s) unchanged since job ${previous.id}: they reattach to the Druid tasks already run, nothing submitted again`,
    );
  return lines;
}

/** For a rerun that found its job finished: what was done, when, and that nothing is submitted. */
export function alreadyFinished(job: JobRow): string | null {
  if (job.state === "open") return null;
  const when = new Date(job.updatedAt).toISOString();
  const retry =
    job.state === "done" ? "" : `; \`segops retry ${job.id}\` sends its failed partitions back to run`;
  return `job ${job.id} already ${job.state} on ${when}, from the same inputs and source: nothing submitted (changed input is new work${retry})`;
}
