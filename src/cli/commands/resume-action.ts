import { systemClock } from "../../core/clock.js";
import { DEFAULTS } from "../../core/defaults.js";
import { UsageError } from "../../core/errors.js";
import type { KindOfWork } from "../../driver/kind.js";
import { OutageMonitor } from "../../druid/outage.js";
import { jobKinds } from "../../jobs/kinds.js";
import type { Store } from "../../ledger/store.js";
import type { DruidServices } from "../../work/services.js";
import { openLedger } from "../context.js";
import type { DruidFlags } from "../options.js";
import { connectWatched, driveJob } from "./ingest-common.js";
import type { IngestFlags } from "./ingest-flags.js";

/** What `segops resume` does (its flags are in resume.ts); loaded when the command runs. */

export type ResumeFlags = DruidFlags &
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

export async function resumeJob(
  jobId: string,
  flags: ResumeFlags & { maxConcurrency?: number; poisonAfter?: number },
  kinds?: readonly KindOfWork<DruidServices, never>[],
): Promise<void> {
  let store: Store | undefined;
  try {
    store = await openLedger(flags.ledger);
    const job = await store.getJob(jobId);
    if (!job) throw new UsageError(`no job ${jobId} in the ledger ${flags.ledger} (see \`segops jobs\`)`);
    const resumable = jobKinds(kinds);
    if (!resumable.includes(job.kind))
      throw new UsageError(
        `job ${jobId} is a ${job.kind} job; resume runs ${resumable.join(", ")} jobs (the kinds this build knows)`,
      );
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
        ...(kinds ? { kinds } : {}),
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
}
