import { type Command, Option } from "commander";
import { UsageError } from "../../core/errors.js";
import type { Store } from "../../ledger/store.js";
import { connectDruid, openLedger } from "../context.js";
import {
  addDruidOptions,
  addLedgerOption,
  type DruidFlags,
  positiveInt,
  positiveNumber,
} from "../options.js";
import { driveJob, type IngestFlags } from "./ingest-common.js";

type ResumeFlags = DruidFlags &
  Pick<
    IngestFlags,
    "maxConcurrency" | "poisonAfter" | "handoffTimeout" | "tick" | "lease" | "deadline" | "json" | "ledger"
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
  command
    .option(
      "--max-concurrency <n>",
      "partitions in flight at once (default: the job's)",
      positiveInt("--max-concurrency"),
    )
    .option(
      "--poison-after <n>",
      "dead-letter after N same-class failures (default: the job's)",
      positiveInt("--poison-after"),
    )
    .option(
      "--handoff-timeout <s>",
      "fail a partition not queryable this long after SUCCESS",
      positiveNumber("--handoff-timeout"),
      900,
    )
    .addOption(
      new Option("--tick <ms>", "polling cadence in ms")
        .argParser(positiveInt("--tick"))
        .default(1000)
        .hideHelp(),
    )
    .addOption(
      new Option("--lease <ms>", "ledger lease").argParser(positiveInt("--lease")).default(30_000).hideHelp(),
    )
    .option(
      "--deadline <s>",
      "stop after S seconds, leaving the job resumable (exit 3)",
      positiveNumber("--deadline"),
    )
    .option("--json", "print the final report as JSON (no progress display)")
    .action(async (jobId: string, flags: ResumeFlags & { maxConcurrency?: number; poisonAfter?: number }) => {
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
        const client = await connectDruid(flags);
        try {
          if (!flags.json)
            process.stderr.write(`resuming job ${jobId}: ${total} partition(s), ledger ${flags.ledger}\n`);
          process.exitCode = await driveJob({
            store,
            client,
            jobId,
            total,
            flags: {
              ...flags,
              maxConcurrency: flags.maxConcurrency ?? stored("maxConcurrency", 8),
              poisonAfter: flags.poisonAfter ?? stored("poisonAfter", 3),
            },
          });
        } finally {
          await client.close();
        }
      } finally {
        await store?.close();
      }
    });
}
