import type { Command } from "commander";
import { systemClock } from "../../core/clock.js";
import { ExitCode, UsageError } from "../../core/errors.js";
import { formatInterval, type Interval, parseInterval } from "../../core/interval.js";
import { checkTaskId } from "../../core/task-id.js";
import type { DruidClient } from "../../druid/client.js";
import { describeOutage, OutageGuard, OutageMonitor } from "../../druid/outage.js";
import { buildSegmentsStats, rowsIngestedOf } from "../../ingest/runner.js";
import { statusLookupFor } from "../../jobs/engine.js";
import { pollTasks } from "../../jobs/poll.js";
import { HandoffChecker, type HandoffVerdict, proveSoleTask } from "../../work/handoff.js";
import { StatusBatcher } from "../../work/status-batcher.js";
import { connectDruid } from "../context.js";
import type { DruidFlags } from "../options.js";
import { watchOutageLines } from "../progress.js";
import { writers } from "./render.js";

/** What `segops wait` does (its flags are in wait.ts); loaded when the command runs. */

export interface WaitFlags extends DruidFlags {
  datasource?: string;
  interval?: string;
  handoff?: boolean;
  timeout?: number;
  tick: number;
  druidOutageTimeout: number;
  json?: boolean;
}

/** The datasource and interval of a task, from the flags or else from its payload (docs/druid-api.md §2.6). */
async function target(
  client: DruidClient,
  taskId: string,
  flags: WaitFlags,
): Promise<{ datasource: string; interval: Interval }> {
  if (flags.datasource && flags.interval)
    return { datasource: flags.datasource, interval: parseInterval(flags.interval) };
  const { payload } = await client.taskPayload(taskId);
  const schema = (
    payload.spec as { dataSchema?: { dataSource?: string; granularitySpec?: { intervals?: string[] } } }
  )?.dataSchema;
  const datasource = flags.datasource ?? schema?.dataSource;
  const intervals = flags.interval ? [flags.interval] : (schema?.granularitySpec?.intervals ?? []);
  if (!datasource || intervals.length !== 1) {
    throw new UsageError(`cannot tell which interval ${taskId} writes: pass --datasource and --interval`);
  }
  return { datasource, interval: parseInterval(intervals[0] as string) };
}

export async function waitFor(taskId: string, flags: WaitFlags, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  checkTaskId(taskId);
  const clock = systemClock;
  const started = clock.now();
  // Every attempt feeds the monitor: an unreachable Druid is said, and bounded, instead of a silent wait.
  const monitor = new OutageMonitor(clock);
  const client = await connectDruid(flags, { client: { onAttempt: monitor.record } });
  const outage = new OutageGuard(monitor, clock, flags.druidOutageTimeout * 1000);
  const lines = watchOutageLines(monitor, clock, (line) => err(`${line}\n`));
  const batcher = new StatusBatcher({ lookup: statusLookupFor(client), clock, tickMs: flags.tick });
  const handoff = new HandoffChecker({ source: client, clock, tickMs: flags.tick });
  const timeout = new AbortController();
  const timer =
    flags.timeout !== undefined ? setTimeout(() => timeout.abort(), flags.timeout * 1000) : undefined;
  const stop = AbortSignal.any([timeout.signal, outage.signal]);
  const finish = (code: number, outcome: string, detail: Record<string, unknown>) => {
    if (flags.json) out(`${JSON.stringify({ taskId, outcome, ...detail })}\n`);
    else out(`${taskId} -> ${outcome}${detail.errorMsg ? `: ${detail.errorMsg}` : ""}\n`);
    process.exitCode = code;
  };
  // Stopped before an answer: Druid not answering is the honest reason (exit 4), even when the
  // --timeout came first during the outage; else the timeout (exit 3).
  const stopped = (detail: Record<string, unknown>) => {
    const seen = outage.current();
    if (!seen) return finish(ExitCode.Deadline, "TIMEOUT", { ...detail, waitedMs: clock.now() - started });
    const why = outage.tripped
      ? `for longer than --druid-outage-timeout ${flags.druidOutageTimeout} s`
      : `when --timeout ${flags.timeout} s ran out`;
    return finish(ExitCode.Unreachable, "UNREACHABLE", {
      ...detail,
      errorMsg: `cannot reach Druid: ${describeOutage(seen)}, ${why}`,
      since: new Date(seen.since).toISOString(),
      waitedMs: clock.now() - started,
    });
  };
  try {
    const [result] = await pollTasks([taskId], { batcher, clock, signal: stop, unknownLimit: 3 });
    if (!result || stop.aborted) return stopped({});
    if (result.outcome === "FAILED") {
      const reports = await client.taskReports(taskId).catch(() => null);
      const errorMsg = reports?.ingestionStatsAndErrors?.payload.errorMsg ?? result.errorMsg;
      return finish(1, "FAILED", { errorMsg });
    }
    if (result.outcome !== "SUCCESS") return finish(1, result.outcome, { errorMsg: result.errorMsg });
    if (!flags.handoff) return finish(0, "SUCCESS", { duration: result.duration });
    const { datasource, interval } = await target(client, taskId, flags);
    const status = (await client.taskStatus(taskId)).status;
    const createdTime = status?.createdTime ?? null;
    const created = createdTime ? Date.parse(createdTime) : Number.NaN;
    const notAfter =
      Number.isFinite(created) && typeof status?.duration === "number" && status.duration >= 0
        ? new Date(created + status.duration).toISOString()
        : null;
    const report = await client.taskReports(taskId).catch(() => null);
    const rowsIngested = rowsIngestedOf(
      buildSegmentsStats(report?.ingestionStatsAndErrors?.payload.rowStats),
    );
    if (!flags.json) err(`SUCCESS; waiting for handoff of ${datasource} ${formatInterval(interval)}\n`);
    let version: string | null = null;
    for (;;) {
      // No baseline for a task we did not submit: its version is the oldest one not older than the task,
      // within its lifetime (or proven by no other task having been created in between).
      const verdict: HandoffVerdict | null = await handoff
        .check(
          datasource,
          {
            interval,
            mode: "replace",
            baseline: { versions: [], segmentIds: [] },
            baselineTrusted: false,
            version,
            notBefore: createdTime,
            notAfter,
            rowsIngested,
          },
          stop,
        )
        .catch((error) => {
          if (stop.aborted) return null;
          throw error;
        });
      if (verdict === null) return stopped({ stage: "handoff" });
      if (verdict.state === "handed-off")
        return finish(0, "SUCCESS", { handoff: true, version: verdict.version });
      if (verdict.state === "superseded") {
        // Its own exit code: the task did its work, but what Druid serves there now is someone else's.
        return finish(ExitCode.Superseded, "SUPERSEDED", {
          version: verdict.version,
          errorMsg: `a later task replaced the interval: version ${verdict.liveVersions.join(", ")} is live over this task's ${verdict.version}`,
        });
      }
      if (verdict.state === "never-loaded")
        return finish(1, "NEVER_QUERYABLE", {
          errorMsg: `never queryable under the load rules: ${verdict.reason}`,
        });
      if (verdict.state === "lost") return finish(1, "LOST", { errorMsg: verdict.reason });
      if (verdict.state === "unproven") {
        const proven =
          verdict.candidate && createdTime
            ? await proveSoleTask(
                client,
                { datasource, taskId, createdTime, version: verdict.candidate, now: clock.now() },
                stop,
              )
            : null;
        if (proven === true) {
          version = verdict.candidate;
          continue;
        }
        return finish(1, "UNPROVEN", {
          errorMsg: `cannot prove that the data in ${formatInterval(interval)} came from ${taskId}: ${verdict.reason}${typeof proven === "string" ? `; ${proven}` : ""}`,
        });
      }
      if (verdict.version && !version) version = verdict.version;
    }
  } finally {
    if (timer) clearTimeout(timer);
    await lines.stop();
    await outage.stop();
    await batcher.stop();
    await handoff.stop();
    await client.close();
  }
}
