import type { Command } from "commander";
import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import { cancelWork, dropDeadLetter, retryDeadLetter, retryWork } from "../../jobs/actions.js";
import { KINDS } from "../../jobs/kinds.js";
import {
  formatJobReport,
  type JobReport,
  jobReport,
  partitionReport,
  shownState,
} from "../../jobs/report.js";
import { NoLedgerError } from "../../ledger/open.js";
import type { Store } from "../../ledger/store.js";
import type { TaskRow } from "../../ledger/types.js";
import { connectDruid, openLedger } from "../context.js";
import type { DruidFlags } from "../options.js";
import { formatDeadLetter } from "./dlq-view.js";
import { writers } from "./render.js";

/**
 * What `jobs`, `status`, `cancel`, `retry` and `dlq` do — the ledger seen from another shell while a job
 * runs. Their flags are in ledger-commands.ts; this module loads when one of them runs.
 */

export interface LedgerFlags {
  ledger: string;
  json?: boolean;
}

async function withLedger<T>(flags: LedgerFlags, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openLedger(flags.ledger);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * For read-only commands: opens the ledger only if it exists (a SQLite file is never created), else
 * answers with `missing`, given "no ledger at PATH (nothing has run here yet)".
 */
async function withExistingLedger<T>(
  flags: LedgerFlags,
  missing: (note: string) => T,
  fn: (store: Store) => Promise<T>,
): Promise<T> {
  let store: Store;
  try {
    store = await openLedger(flags.ledger, { mustExist: true });
  } catch (error) {
    if (error instanceof NoLedgerError) return missing(error.message);
    throw error;
  }
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** An empty listing for a ledger that does not exist yet; with --json, stdout stays parseable. */
function emptyListing(flags: LedgerFlags, note: string, out: (s: string) => void, err: (s: string) => void) {
  if (!flags.json) return out(`${note}\n`);
  out("[]\n");
  err(`${note}\n`);
}

/** Partitions another process holds right now (running under a lease that has not expired). */
function leasedNow(tasks: readonly TaskRow[], now: number): TaskRow[] {
  return tasks.filter(
    (t) =>
      t.state === "running" && t.leaseOwner !== null && t.leaseExpiresAt !== null && t.leaseExpiresAt > now,
  );
}

/** The verdict for a job being run right now: who holds it, instead of a hint to resume it. */
function runningVerdict(report: JobReport, leased: readonly TaskRow[]): string {
  const until = new Map<string, number>();
  for (const t of leased) {
    const owner = t.leaseOwner as string;
    until.set(owner, Math.max(until.get(owner) ?? 0, t.leaseExpiresAt as number));
  }
  const holders = [...until].map(([owner, ms]) => `leased by ${owner} until ${new Date(ms).toISOString()}`);
  const c = report.counts;
  const waiting = c.new + c.suspended + c.running - leased.length;
  const failures = c.failed + c.dead > 0 ? `; so far ${c.failed} failed, ${c.dead} dead-lettered` : "";
  return `RUNNING: ${leased.length} partition(s) running (${holders.join(", ")}), ${waiting} waiting${failures}; another process is running this job`;
}

export async function jobs(flags: LedgerFlags, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  await withExistingLedger(
    flags,
    (note) => emptyListing(flags, note, out, err),
    async (store) => {
      const jobs = await store.listJobs({ limit: 100 });
      const rows = await Promise.all(
        jobs.map(async (j) => {
          const counts = await store.countTasks(j.id);
          return { ...j, state: shownState(j.state, counts), counts };
        }),
      );
      if (flags.json) return out(`${JSON.stringify(rows, null, 2)}\n`);
      if (rows.length === 0) return out(`no jobs in ${flags.ledger}\n`);
      for (const j of rows) {
        const c = j.counts;
        out(
          `${j.id}  ${j.state}  done ${c.done} running ${c.running} pending ${c.new + c.suspended} failed ${c.failed} dead ${c.dead}  ${new Date(j.createdAt).toISOString()}\n`,
        );
      }
    },
  );
}

export async function status(jobId: string | undefined, flags: LedgerFlags, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  const nothing = (note: string) => {
    if (jobId) throw new UsageError(note, { jobId });
    if (flags.json) {
      out("null\n");
      err(`${note}\n`);
    } else out(`${note}\n`);
  };
  await withExistingLedger(flags, nothing, async (store) => {
    const job = jobId ? await store.getJob(jobId) : (await store.listJobs({ limit: 1 }))[0];
    if (!job) return nothing(jobId ? `no job ${jobId} in ${flags.ledger}` : `no jobs in ${flags.ledger}`);
    const report = await jobReport(store, job);
    if (flags.json) {
      out(`${JSON.stringify({ ...report, state: shownState(report.state, report.counts) }, null, 2)}\n`);
      return;
    }
    const lines = formatJobReport(report).split("\n");
    const leased = leasedNow(await store.listTasks(job.id), systemClock.now());
    // The last line is the verdict; while another process holds partitions, "resume" would mislead.
    if (leased.length > 0) lines[lines.length - 1] = runningVerdict(report, leased);
    out(`${lines.join("\n")}\n`);
  });
}

export async function cancel(
  id: string,
  flags: LedgerFlags & DruidFlags & { shutdown?: boolean },
  cmd: Command,
): Promise<void> {
  const { out } = writers(cmd);
  await withLedger(flags, async (store) => {
    const client = flags.shutdown ? await connectDruid(flags) : undefined;
    try {
      const result = await cancelWork(store, id, { actor: "cli", ...(client ? { client } : {}) });
      out(
        `canceled ${result.flagged} unfinished partition(s) of ${id}; a running driver finishes them at its next step\n`,
      );
      for (const druidId of result.shutdown) out(`asked Druid to shut down ${druidId}\n`);
    } finally {
      await client?.close();
    }
  });
}

export async function retry(id: string, flags: LedgerFlags, cmd: Command): Promise<void> {
  const { out } = writers(cmd);
  await withLedger(flags, async (store) => {
    const { jobId, sent } = await retryWork(store, id, "cli");
    out(`${sent.length} partition(s) sent back to run; run them with segops resume ${jobId}\n`);
  });
}

export async function dlqList(flags: LedgerFlags & { job?: string }, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  await withExistingLedger(
    flags,
    (note) => emptyListing(flags, note, out, err),
    async (store) => {
      const dead = (await store.listDead(flags.job)).map((t) => partitionReport(t));
      if (flags.json) return out(`${JSON.stringify(dead, null, 2)}\n`);
      if (dead.length === 0) return out("no dead-lettered partitions\n");
      for (const d of dead) out(`${d.task}  attempts ${d.attempts}  ${d.error ?? ""}\n`);
    },
  );
}

export async function dlqShow(id: string, flags: LedgerFlags, cmd: Command): Promise<void> {
  const { out } = writers(cmd);
  const missing = (note: string): never => {
    throw new UsageError(note, { taskId: id });
  };
  await withExistingLedger(flags, missing, async (store) => {
    const task = await store.getTask(id);
    if (task?.state !== "dead") throw new UsageError(`${id} is not a dead-lettered partition`);
    const shown = {
      ...partitionReport(task),
      failures: KINDS.find((k) => k.name === task.kind)?.describe(task).failures ?? [],
      events: await store.listEvents({ taskId: id }),
    };
    out(flags.json ? `${JSON.stringify(shown, null, 2)}\n` : formatDeadLetter(shown));
  });
}

export async function dlqRetryOrDrop(
  name: "retry" | "drop",
  verb: string,
  id: string,
  flags: LedgerFlags,
  cmd: Command,
): Promise<void> {
  const { out } = writers(cmd);
  await withLedger(flags, async (store) => {
    const row =
      name === "retry" ? await retryDeadLetter(store, id, "cli") : await dropDeadLetter(store, id, "cli");
    out(`${id} ${verb}${name === "retry" ? `; run it with segops resume ${row.jobId}` : ""}\n`);
  });
}
