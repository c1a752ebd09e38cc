import type { Command } from "commander";
import { systemClock } from "../../core/clock.js";
import { DEFAULTS } from "../../core/defaults.js";
import { UsageError } from "../../core/errors.js";
import { OutageMonitor } from "../../druid/outage.js";
import type { Store } from "../../ledger/store.js";
import { openLedger } from "../context.js";
import { addDruidOptions, addLedgerOption, type DruidFlags } from "../options.js";
import { addRunControlOptions, connectWatched, driveJob, type IngestFlags } from "./ingest-common.js";

type ResumeFlags = DruidFlags &
  Pick<
    IngestFlags,
    | "maxConcurrency"
    | "poisonAfter"
    | "handoffTimeout"
    | "druidOutageTimeout"
    | "tick"
    | "lease"
    | "deadline"
    | "json"
    | "ledger"
  >;

/**
 * `segops resume JOB`: runs a stored job from where it stopped. Its partitions carry their rendered specs,
 * so neither the template nor the command line is needed: the way back for a `--new` job, whose command
 * would plan yet another job.
 */
export function registerResume(program: Command): void {
  const command = program
    .command("resume <job>")
    .description(
      "run a stored job (run or backfill) from where it stopped, against the cluster it belongs to",
    );
  addDruidOptions(command);
  addLedgerOption(command);
  addRunControlOptions(command, { fromJob: true }).action(
    async (jobId: string, flags: ResumeFlags & { maxConcurrency?: number; poisonAfter?: number }) => {
      let store: Store | undefined;
      try {
        store = await openLedger(flags.ledger);
        const job = await store.getJob(jobId);
        if (!job) throw new UsageError(`no job ${jobId} in the ledger ${flags.ledger} (see \`segops jobs\`)`);
        if (job.kind !== "run" && job.kind !== "backfill")
          throw new UsageError(`job ${jobId} is a ${job.kind} job; resume runs run and backfill jobs`);
        const stored = (key: string, fallback: number) =>
          typeof job.options[key] === "number" ? (job.options[key] as number) : fallback;
        const counts = await store.countTasks(jobId);
        const total = Object.values(counts).reduce((a, b) => a + b, 0);
        const monitor = new OutageMonitor(systemClock);
        const client = await connectWatched(flags, monitor);
        try {
          if (!flags.json)
            process.stderr.write(`resuming job ${jobId}: ${total} partition(s), ledger ${flags.ledger}\n`);
          process.exitCode = await driveJob({
            store,
            client,
            monitor,
            jobId,
            total,
            flags: {
              ...flags,
              maxConcurrency: flags.maxConcurrency ?? stored("maxConcurrency", DEFAULTS.maxConcurrency),
              poisonAfter: flags.poisonAfter ?? stored("poisonAfter", DEFAULTS.poisonAfter),
            },
          });
        } finally {
          await client.close();
        }
      } finally {
        await store?.close();
      }
    },
  );
}
