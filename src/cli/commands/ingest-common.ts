import { type Command, Option } from "commander";
import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import type { Interval } from "../../core/interval.js";
import type { DruidClient } from "../../druid/client.js";
import { runIngestJob } from "../../jobs/engine.js";
import { type IngestJobInput, planIngestJob } from "../../jobs/plan.js";
import { formatJobReport, jobReport } from "../../jobs/report.js";
import type { Store } from "../../ledger/store.js";
import { parseVars, readTemplateFile } from "../../spec/index.js";
import { connectDruid, openLedger } from "../context.js";
import {
  addDruidOptions,
  addLedgerOption,
  type DruidFlags,
  positiveInt,
  positiveNumber,
} from "../options.js";
import { progressMode, startProgress } from "../progress.js";
import { collect } from "./render.js";

/** Flags shared by `run` and `backfill`. */
export interface IngestFlags extends DruidFlags {
  var: string[];
  specVersion?: string;
  prefix?: string;
  maxConcurrency: number;
  poisonAfter: number;
  handoffTimeout: number;
  tick: number;
  lease: number;
  deadline?: number;
  new?: boolean;
  json?: boolean;
  ledger: string;
}

export function addIngestOptions(command: Command): Command {
  addDruidOptions(command);
  addLedgerOption(command);
  return command
    .option("--var <k=v>", "template variable (repeatable)", collect, [])
    .option("--spec-version <v>", "spec version: changing it forces new Druid task ids")
    .option("--prefix <p>", "Druid task id prefix", "segops")
    .option("--max-concurrency <n>", "partitions in flight at once", positiveInt("--max-concurrency"), 8)
    .option("--poison-after <n>", "dead-letter after N same-class failures", positiveInt("--poison-after"), 3)
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
      new Option("--lease <ms>", "ledger lease: how long a crashed process's partitions stay locked")
        .argParser(positiveInt("--lease"))
        .default(30_000)
        .hideHelp(),
    )
    .option(
      "--deadline <s>",
      "stop after S seconds, leaving the job resumable (exit 3)",
      positiveNumber("--deadline"),
    )
    .option("--new", "start a new job (new Druid task ids) instead of resuming the one these inputs name")
    .option("--json", "print the final report as JSON (no progress display)");
}

/**
 * Plans (validating every partition), checks Druid and the ledger, stores the job (or finds it again),
 * runs it to completion with a progress display, prints the report and returns the exit code.
 * Nothing is written or submitted until every check has passed.
 */
export async function executeIngest(
  kind: IngestJobInput["kind"],
  templatePath: string,
  range: Interval,
  flags: IngestFlags,
  extra: { granularity?: string } = {},
): Promise<number> {
  const template = await readTemplateFile(templatePath);
  const vars = parseVars(flags.var);
  const plan = planIngestJob({
    kind,
    template,
    templateName: templatePath,
    range,
    vars,
    ...(extra.granularity ? { granularity: extra.granularity } : {}),
    ...(flags.specVersion ? { specVersion: flags.specVersion } : {}),
    ...(flags.prefix ? { idPrefix: flags.prefix } : {}),
    ...(flags.new ? { nonce: Date.now().toString(36) } : {}),
    options: { maxConcurrency: flags.maxConcurrency, poisonAfter: flags.poisonAfter },
  });
  for (const w of plan.warnings) process.stderr.write(`warning: ${w.path}: ${w.message}\n`);
  const client = await connectDruid(flags);
  let store: Store | undefined;
  try {
    store = await openLedger(flags.ledger);
    const { created } = await store.createJob(plan.job, plan.tasks, "cli");
    if (!flags.json) {
      process.stderr.write(
        `${created ? "job" : "resuming job"} ${plan.job.id}: ${plan.tasks.length} partition(s) of ${plan.datasource}, ledger ${flags.ledger}\n`,
      );
    }
    return await driveJob({ store, client, jobId: plan.job.id, total: plan.tasks.length, flags });
  } finally {
    await store?.close();
    await client.close();
  }
}

/** Runs a stored job to the end (or deadline / Ctrl-C) and prints its report; returns the exit code. */
export async function driveJob(options: {
  store: Store;
  client: DruidClient;
  jobId: string;
  total: number;
  flags: Pick<
    IngestFlags,
    "maxConcurrency" | "poisonAfter" | "handoffTimeout" | "tick" | "lease" | "deadline" | "json"
  >;
}): Promise<number> {
  const { store, client, jobId, flags } = options;
  const clock = systemClock;
  const interrupt = new AbortController();
  const onSignal = () => {
    // stderr even with --json: stdout carries only the report.
    process.stderr.write("\ninterrupted: handing work back; rerun the same command to resume\n");
    interrupt.abort();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const progress = startProgress({
    mode: progressMode(flags.json === true),
    store,
    jobId,
    total: options.total,
    clock,
  });
  try {
    await runIngestJob({
      store,
      client,
      clock,
      jobId,
      tickMs: flags.tick,
      leaseMs: flags.lease,
      maxConcurrency: flags.maxConcurrency,
      poisonAfter: flags.poisonAfter,
      handoffTimeoutMs: flags.handoffTimeout * 1000,
      signal: interrupt.signal,
      ...(flags.deadline !== undefined ? { deadline: clock.now() + flags.deadline * 1000 } : {}),
      onStep: (task, step, detail) => progress.step(task, step, detail),
    });
  } finally {
    await progress.stop();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  const job = await store.getJob(jobId);
  if (!job) throw new UsageError(`job ${jobId} vanished from the ledger`);
  const report = await jobReport(store, job);
  const state = report.exitCode === 0 ? "done" : report.exitCode === 1 ? "failed" : "open";
  if (job.state !== state) await store.setJobState(jobId, state, `run ended: exit ${report.exitCode}`, "cli");
  process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatJobReport(report)}\n`);
  return report.exitCode;
}
