import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import { formatInterval, parseInstant, parseInterval } from "../../core/interval.js";
import { clusterOf } from "../../druid/cluster.js";
import { OutageMonitor } from "../../druid/outage.js";
import type { Store } from "../../ledger/store.js";
import { inspectRollback, planRollback } from "../../ops/index.js";
import { openLedger } from "../context.js";
import { connectWatched, driveJob } from "./ingest-common.js";
import type { ResumeFlags } from "./resume-action.js";

/** What `segops rollback` does (its flags are in rollback.ts); loaded when the command runs. */

export type RollbackFlags = ResumeFlags & {
  interval: string;
  toVersion?: string;
  before?: string;
  dryRun?: boolean;
};

export async function rollbackAction(datasource: string, flags: RollbackFlags): Promise<void> {
  const interval = parseInterval(flags.interval);
  if ((flags.toVersion === undefined) === (flags.before === undefined))
    throw new UsageError("give exactly one of --to-version V and --before INSTANT");
  const target =
    flags.toVersion !== undefined
      ? { version: flags.toVersion }
      : { before: new Date(parseInstant(flags.before as string)).toISOString() };
  const monitor = new OutageMonitor(systemClock);
  const client = await connectWatched(flags, monitor);
  let store: Store | undefined;
  try {
    // Everything that makes the rollback impossible is found here, before any segment changes.
    const facts = await inspectRollback(client, {
      datasource,
      interval,
      target,
      cluster: clusterOf(client),
    });
    const plan = planRollback(facts);
    const lines = plan.chunks.map(
      (c) =>
        `${c.interval}: ${c.newerVersions.length > 0 ? `mark ${c.newerVersions.join(", ")} unused, ` : ""}mark ${c.toVersion} used (${c.segmentIds.length} segment(s))`,
    );
    if (flags.dryRun) {
      process.stdout.write(
        flags.json
          ? `${JSON.stringify({ job: plan.job.id, dryRun: true, chunks: plan.chunks }, null, 2)}\n`
          : `rollback of ${datasource} ${formatInterval(interval)} (dry run, nothing changed):\n${lines.map((l) => `  ${l}`).join("\n")}\n`,
      );
      return;
    }
    store = await openLedger(flags.ledger);
    const { created } = await store.createJob(plan.job, plan.tasks, "cli");
    if (!flags.json) {
      process.stderr.write(
        `${created ? "job" : "resuming job"} ${plan.job.id}: ${plan.tasks.length} chunk(s) of ${datasource} to roll back\n${lines.map((l) => `  ${l}\n`).join("")}`,
      );
    }
    process.exitCode = await driveJob({
      store,
      client,
      monitor,
      jobId: plan.job.id,
      total: plan.tasks.length,
      flags,
    });
  } finally {
    await store?.close();
    await client.close();
  }
}
