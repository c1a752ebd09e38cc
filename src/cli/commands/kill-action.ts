import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import { formatInterval, parseInterval, parsePeriodMs } from "../../core/interval.js";
import { clusterOf } from "../../druid/cluster.js";
import { OutageMonitor } from "../../druid/outage.js";
import { NoLedgerError } from "../../ledger/open.js";
import { inspectKill, planKill, readKillBudget } from "../../ops/index.js";
import { segmentId } from "../../work/segments.js";
import { openLedger } from "../context.js";
import { connectWatched, openJobIdIn, runPlannedJob } from "./ingest-common.js";
import { type ResumeFlags, resumeJob } from "./resume-action.js";

/** What `segops kill` does (its flags are in kill.ts); loaded when the command runs. */

export type KillFlags = ResumeFlags & {
  interval: string;
  olderThan?: string;
  version: string[];
  batchSize: number;
  yes?: boolean;
};

function periodMs(text: string): number {
  try {
    return parsePeriodMs(text);
  } catch (error) {
    throw new UsageError(`--older-than: ${(error as Error).message}`, { flag: "--older-than" });
  }
}

export async function killAction(datasource: string, flags: KillFlags): Promise<void> {
  const interval = parseInterval(flags.interval);
  const olderThanMs = flags.olderThan !== undefined ? periodMs(flags.olderThan) : 0;
  const monitor = new OutageMonitor(systemClock);
  const client = await connectWatched(flags, monitor);
  try {
    // The ledger says which chunks a rollback left between its marks (no used version until it finishes):
    // those are refused. A ledger that does not exist yet holds no rollback.
    const ledger = await openLedger(flags.ledger, { mustExist: true }).catch((error: unknown) => {
      if (error instanceof NoLedgerError) return null;
      throw error;
    });
    let facts: Awaited<ReturnType<typeof inspectKill>>;
    try {
      facts = await inspectKill(
        client,
        {
          datasource,
          interval,
          olderThanMs,
          ...(flags.version.length > 0 ? { versions: flags.version } : {}),
          batchSize: flags.batchSize,
          cluster: clusterOf(client),
        },
        systemClock.now(),
        ledger ?? undefined,
      );
    } finally {
      await ledger?.close();
    }
    const plan = planKill(facts);
    const segments = plan.batches.reduce((n, b) => n + b.segmentIds.length, 0);
    const bytes = plan.batches.reduce((n, b) => n + b.bytes, 0);
    const planned = new Set(plan.batches.flatMap((b) => b.segmentIds));
    const versions = [
      ...new Set(facts.unused.filter((u) => planned.has(segmentId(u.segment))).map((u) => u.segment.version)),
    ];
    const summary = {
      job: plan.job.id,
      dryRun: !flags.yes,
      segments,
      bytes,
      batches: plan.batches.map((b) => ({
        interval: b.interval,
        segments: b.segmentIds.length,
        bytes: b.bytes,
        taskId: b.taskId,
      })),
      keptUsed: facts.used.length,
    };
    if (!flags.yes) {
      process.stdout.write(
        flags.json
          ? `${JSON.stringify({ ...summary, segmentIds: plan.batches.flatMap((b) => b.segmentIds) }, null, 2)}\n`
          : `kill in ${datasource} ${formatInterval(interval)} (dry run, nothing deleted; --yes to delete):\n  ${segments} unused segment(s), ${bytes} bytes, versions ${versions.sort().join(", ") || "-"}, in ${plan.batches.length} kill task(s)\n  ${facts.used.length} used segment(s) stay\n${plan.batches
              .flatMap((b) => b.segmentIds)
              .map((id) => `  - ${id}`)
              .join("\n")}\n`,
      );
      return;
    }
    // Druid's own budget for kill tasks caps how many run at once (never every slot).
    const budget = await readKillBudget(client);
    const maxConcurrency = budget === null ? flags.maxConcurrency : Math.min(flags.maxConcurrency, budget);
    if (!flags.json && budget !== null && budget < flags.maxConcurrency)
      process.stderr.write(
        `at most ${budget} kill task(s) at once (Druid's killTaskSlotRatio / maxKillTaskSlots)\n`,
      );
    // A kill of the same request still open in the ledger (a run that crashed) is resumed: its kill tasks
    // in flight keep their ids, and nothing is submitted twice.
    const open = await openJobIdIn(flags.ledger, "kill", plan.job.options?.requestKey);
    if (open) {
      await resumeJob(open, { ...flags, maxConcurrency });
      return;
    }
    if (plan.tasks.length === 0) {
      process.stdout.write(flags.json ? `${JSON.stringify(summary, null, 2)}\n` : "nothing to kill\n");
      return;
    }
    process.exitCode = await runPlannedJob({
      plan,
      client,
      monitor,
      flags: { ...flags, maxConcurrency },
      what: `${segments} unused segment(s) of ${datasource} in ${plan.tasks.length} kill task(s)`,
    });
  } finally {
    await client.close();
  }
}
