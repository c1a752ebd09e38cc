import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import { formatInterval, parseInterval } from "../../core/interval.js";
import { clusterOf } from "../../druid/cluster.js";
import { OutageMonitor } from "../../druid/outage.js";
import { inspectCompaction, planCompaction } from "../../ops/index.js";
import { connectWatched, openJobIdIn, runPlannedJob } from "./ingest-common.js";
import type { ResumeFlags } from "./resume-action.js";
import { resumeJob } from "./resume-action.js";

/** What `segops compact` does (its flags are in compact.ts); loaded when the command runs. */

export type CompactFlags = ResumeFlags & {
  interval: string;
  all?: boolean;
  minSegmentMb: number;
  maxSegmentMb: number;
  maxRowsPerSegment: number;
  dryRun?: boolean;
};

const MB = 1024 * 1024;

export async function compactAction(datasource: string, flags: CompactFlags): Promise<void> {
  const interval = parseInterval(flags.interval);
  if (flags.minSegmentMb >= flags.maxSegmentMb)
    throw new UsageError(
      `--min-segment-mb (${flags.minSegmentMb}) must be below --max-segment-mb (${flags.maxSegmentMb})`,
      { flag: "--min-segment-mb" },
    );
  const monitor = new OutageMonitor(systemClock);
  const client = await connectWatched(flags, monitor);
  try {
    const plan = planCompaction(
      await inspectCompaction(client, {
        datasource,
        interval,
        all: flags.all === true,
        sizeBand: {
          minBytes: flags.minSegmentMb * MB,
          maxBytes: flags.maxSegmentMb * MB,
          maxRows: flags.maxRowsPerSegment,
        },
        maxRowsPerSegment: flags.maxRowsPerSegment,
        cluster: clusterOf(client),
      }),
    );
    const lines = [
      ...plan.chunks.map(
        (c) =>
          `${c.interval}: ${c.inputs.length} segment(s), ${c.bytes} bytes (${c.reasons.join("; ") || "--all"})`,
      ),
      ...plan.skipped.map((s) => `${s.interval}: skipped, a running task holds a lock on ${s.lockedBy}`),
    ];
    const summary = () =>
      flags.json
        ? `${JSON.stringify({ job: plan.job.id, dryRun: flags.dryRun === true, chunks: plan.chunks, skipped: plan.skipped }, null, 2)}\n`
        : `compaction of ${datasource} ${formatInterval(interval)}${flags.dryRun ? " (dry run, nothing changed)" : ""}: ${plan.tasks.length === 0 ? "no chunk to compact" : `${plan.tasks.length} chunk(s)`}\n${lines.map((l) => `  ${l}\n`).join("")}`;
    if (flags.dryRun) {
      process.stdout.write(summary());
      return;
    }
    // A compaction of the same request still open in the ledger (a run that crashed) is resumed, not
    // planned anew: its chunks in flight keep their Druid task ids.
    const open = await openJobIdIn(flags.ledger, "compact", plan.job.options?.requestKey);
    if (open) {
      await resumeJob(open, flags);
      return;
    }
    if (plan.tasks.length === 0) {
      process.stdout.write(summary());
      return;
    }
    process.exitCode = await runPlannedJob({
      plan,
      client,
      monitor,
      flags,
      what: `${plan.tasks.length} chunk(s) of ${datasource} to compact\n${lines.map((l) => `  ${l}`).join("\n")}`,
    });
  } finally {
    await client.close();
  }
}
