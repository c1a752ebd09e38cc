import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import type { IngestProgress } from "../../ingest/runner.js";
import { formatJobReport, jobReport, partitionReport } from "../../jobs/report.js";
import type { Store } from "../../ledger/store.js";
import { isTerminal } from "../../ledger/types.js";
import { connectDruid, openLedger } from "../context.js";
import { addDruidOptions, addLedgerOption, type DruidFlags } from "../options.js";
import { writers } from "./render.js";

/** `jobs`, `status`, `cancel` and `dlq`: the ledger seen from another shell while a job runs. */

interface LedgerFlags {
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

function ledgerCommand(program: Command, name: string, description: string): Command {
  return addLedgerOption(program.command(name).description(description).option("--json", "print JSON"));
}

export function registerLedgerCommands(program: Command): void {
  ledgerCommand(program, "jobs", "list jobs in the ledger with their partition counts").action(
    async (flags: LedgerFlags, cmd: Command) => {
      const { out } = writers(cmd);
      await withLedger(flags, async (store) => {
        const jobs = await store.listJobs({ limit: 100 });
        const rows = await Promise.all(
          jobs.map(async (j) => ({ ...j, counts: await store.countTasks(j.id) })),
        );
        if (flags.json) return out(`${JSON.stringify(rows, null, 2)}\n`);
        if (rows.length === 0) return out(`no jobs in ${flags.ledger}\n`);
        for (const j of rows) {
          const c = j.counts;
          out(
            `${j.id}  ${j.state}  done ${c.done} running ${c.running} pending ${c.new + c.suspended} failed ${c.failed} dead ${c.dead}  ${new Date(j.createdAt).toISOString()}\n`,
          );
        }
      });
    },
  );

  ledgerCommand(program, "status", "show a job's partitions (default: the newest job)")
    .argument("[job]", "job id")
    .action(async (jobId: string | undefined, flags: LedgerFlags, cmd: Command) => {
      const { out } = writers(cmd);
      await withLedger(flags, async (store) => {
        const job = jobId ? await store.getJob(jobId) : (await store.listJobs({ limit: 1 }))[0];
        if (!job)
          throw new UsageError(jobId ? `no job ${jobId} in ${flags.ledger}` : `no jobs in ${flags.ledger}`);
        const report = await jobReport(store, job);
        out(flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatJobReport(report)}\n`);
      });
    });

  addDruidOptions(
    ledgerCommand(
      program,
      "cancel",
      "cancel a job or one partition (works while the job runs in another shell)",
    )
      .argument("<id>", "job id or ledger task id")
      .option(
        "--shutdown",
        "also ask Druid to shut down the canceled partitions' running tasks (needs --druid)",
      ),
  ).action(async (id: string, flags: LedgerFlags & DruidFlags & { shutdown?: boolean }, cmd: Command) => {
    const { out } = writers(cmd);
    await withLedger(flags, async (store) => {
      const job = await store.getJob(id);
      const tasks = job ? await store.listTasks(id) : [await store.getTask(id)].filter((t) => t !== null);
      if (!job && tasks.length === 0) throw new UsageError(`no job or task ${id} in ${flags.ledger}`);
      const flagged = job
        ? await store.cancelJob(id, "canceled by user", "cli")
        : (await store.cancelTask(id, "canceled by user", "cli"))
          ? 1
          : 0;
      out(
        `canceled ${flagged} unfinished partition(s) of ${id}; a running driver finishes them at its next step\n`,
      );
      if (!flags.shutdown) return;
      const running = tasks.filter((t) => {
        const p = t.progress as unknown as IngestProgress;
        return !isTerminal(t.state) && p.taskId && p.druidState !== "FAILED" && p.step === "running";
      });
      if (running.length === 0) return;
      const client = await connectDruid(flags);
      try {
        for (const t of running) {
          const druidId = (t.progress as unknown as IngestProgress).taskId as string;
          await client.shutdownTask(druidId);
          out(`asked Druid to shut down ${druidId}\n`);
        }
      } finally {
        await client.close();
      }
    });
  });

  ledgerCommand(
    program,
    "retry",
    "send a job's failed, canceled and dead-lettered partitions (or one partition) back to run",
  )
    .argument("<id>", "job id or ledger task id")
    .action(async (id: string, flags: LedgerFlags, cmd: Command) => {
      const { out } = writers(cmd);
      await withLedger(flags, async (store) => {
        const job = await store.getJob(id);
        const ids = job
          ? (await store.listTasks(id))
              .filter((t) => t.state === "failed" || t.state === "dead")
              .map((t) => t.id)
          : [id];
        const sent: string[] = [];
        for (const taskId of ids) if (await store.retryTask(taskId, "cli")) sent.push(taskId);
        if (!job && sent.length === 0) {
          throw new UsageError(
            `${id} is neither a job nor a failed or dead-lettered partition in ${flags.ledger}`,
          );
        }
        const jobId = job?.id ?? (await store.getTask(id))?.jobId;
        if (job && job.state !== "open" && sent.length > 0)
          await store.setJobState(job.id, "open", "partitions retried", "cli");
        out(
          `${sent.length} partition(s) sent back to run; rerun the job's command to run them (job ${jobId})\n`,
        );
      });
    });

  const dlq = program.command("dlq").description("dead-lettered partitions: list, show, retry, drop");
  ledgerCommand(dlq, "list", "list dead-lettered partitions")
    .option("--job <id>", "only this job's")
    .action(async (flags: LedgerFlags & { job?: string }, cmd: Command) => {
      const { out } = writers(cmd);
      await withLedger(flags, async (store) => {
        const dead = (await store.listDead(flags.job)).map(partitionReport);
        if (flags.json) return out(`${JSON.stringify(dead, null, 2)}\n`);
        if (dead.length === 0) return out("no dead-lettered partitions\n");
        for (const d of dead) out(`${d.task}  attempts ${d.attempts}  ${d.error ?? ""}\n`);
      });
    });
  ledgerCommand(dlq, "show", "show one dead-lettered partition with its failure history")
    .argument("<id>", "ledger task id")
    .action(async (id: string, flags: LedgerFlags, cmd: Command) => {
      const { out } = writers(cmd);
      await withLedger(flags, async (store) => {
        const task = await store.getTask(id);
        if (task?.state !== "dead") throw new UsageError(`${id} is not a dead-lettered partition`);
        const p = task.progress as unknown as IngestProgress;
        const shown = {
          ...partitionReport(task),
          failures: p.failures ?? [],
          events: await store.listEvents({ taskId: id }),
        };
        out(`${JSON.stringify(shown, null, 2)}\n`);
      });
    });
  for (const [name, verb, description] of [
    ["retry", "sent back to run", "send a dead-lettered partition back to run (after fixing its input)"],
    ["drop", "dropped", "give up on a dead-lettered partition for good (kept as failed)"],
  ] as const) {
    ledgerCommand(dlq, name, description)
      .argument("<id>", "ledger task id")
      .action(async (id: string, flags: LedgerFlags, cmd: Command) => {
        const { out } = writers(cmd);
        await withLedger(flags, async (store) => {
          const row = name === "retry" ? await store.retryDead(id, "cli") : await store.dropDead(id, "cli");
          if (!row) throw new UsageError(`${id} is not a dead-lettered partition (see segops dlq list)`);
          out(
            `${id} ${verb}${name === "retry" ? `; rerun the job's command (or segops backfill …) to run it: job ${row.jobId}` : ""}\n`,
          );
        });
      });
  }
}
