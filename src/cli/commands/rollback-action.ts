import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import { formatInterval, parseInstant, parseInterval } from "../../core/interval.js";
import { clusterOf } from "../../druid/cluster.js";
import { OutageMonitor } from "../../druid/outage.js";
import { inspectRollback, planRollback } from "../../ops/index.js";
import { connectWatched, runPlannedJob } from "./ingest-common.js";
import type { ResumeFlags } from "./resume-action.js";

/** What `segops rollback` does (its flags are in rollback.ts); loaded when the command runs. */

export type RollbackFlags = ResumeFlags & {
  interval: string;
  toVersion?: string;
  before?: string;
  dryRun?: boolean;
};

/** An instant flag, its error naming the flag (the parser's message names only the value). */
function instantOfFlag(flag: string, text: string): number {
  try {
    return parseInstant(text);
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`, { flag });
  }
}

export async function rollbackAction(datasource: string, flags: RollbackFlags): Promise<void> {
  const interval = parseInterval(flags.interval);
  if ((flags.toVersion === undefined) === (flags.before === undefined))
    throw new UsageError("give exactly one of --to-version V and --before INSTANT");
  const target =
    flags.toVersion !== undefined
      ? { version: flags.toVersion }
      : { before: new Date(instantOfFlag("--before", flags.before as string)).toISOString() };
  const monitor = new OutageMonitor(systemClock);
  const client = await connectWatched(flags, monitor);
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
    process.exitCode = await runPlannedJob({
      plan,
      client,
      monitor,
      flags,
      what: `${plan.tasks.length} chunk(s) of ${datasource} to roll back\n${lines.map((l) => `  ${l}`).join("\n")}`,
    });
  } finally {
    await client.close();
  }
}
