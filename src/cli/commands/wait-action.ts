import type { Command } from "commander";
import { type Clock, systemClock } from "../../core/clock.js";
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
import { connectWatched } from "../connect-watched.js";
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

/** What a wait holds open (the Druid client, the outage guard, the pollers), closed in one place. */
interface Waiting {
  readonly client: DruidClient;
  readonly clock: Clock;
  readonly started: number;
  readonly outage: OutageGuard;
  readonly batcher: StatusBatcher;
  readonly handoff: HandoffChecker;
  /** Aborted by `--timeout` or by the outage guard, whichever comes first. */
  readonly stop: AbortSignal;
  close(): Promise<void>;
}

async function openWaiting(flags: WaitFlags, err: (text: string) => void): Promise<Waiting> {
  const clock = systemClock;
  const started = clock.now();
  // Every attempt feeds the monitor: an unreachable Druid is said, and bounded, instead of a silent wait.
  const monitor = new OutageMonitor(clock);
  const client = await connectWatched(flags, monitor);
  const outage = new OutageGuard(monitor, clock, flags.druidOutageTimeout * 1000);
  const lines = watchOutageLines(monitor, clock, (line) => err(`${line}\n`));
  const batcher = new StatusBatcher({ lookup: statusLookupFor(client), clock, tickMs: flags.tick });
  const handoff = new HandoffChecker({ source: client, clock, tickMs: flags.tick });
  const timeout = new AbortController();
  const timer =
    flags.timeout !== undefined ? setTimeout(() => timeout.abort(), flags.timeout * 1000) : undefined;
  const stop = AbortSignal.any([timeout.signal, outage.signal]);
  const close = async () => {
    if (timer) clearTimeout(timer);
    await lines.stop();
    await outage.stop();
    await batcher.stop();
    await handoff.stop();
    await client.close();
  };
  return { client, clock, started, outage, batcher, handoff, stop, close };
}

/** Says the outcome (a line, or JSON with --json) and sets the exit code. */
type Finish = (code: number, outcome: string, detail: Record<string, unknown>) => void;

function finisher(taskId: string, flags: WaitFlags, out: (text: string) => void): Finish {
  return (code, outcome, detail) => {
    if (flags.json) out(`${JSON.stringify({ taskId, outcome, ...detail })}\n`);
    else out(`${taskId} -> ${outcome}${detail.errorMsg ? `: ${detail.errorMsg}` : ""}\n`);
    process.exitCode = code;
  };
}

/**
 * Stopped before an answer: Druid not answering is the honest reason (exit 4), even when the
 * --timeout came first during the outage; else the timeout (exit 3).
 */
function stopper(w: Waiting, flags: WaitFlags, finish: Finish): (detail: Record<string, unknown>) => void {
  return (detail) => {
    const seen = w.outage.current();
    if (!seen)
      return finish(ExitCode.Deadline, "TIMEOUT", { ...detail, waitedMs: w.clock.now() - w.started });
    const why = w.outage.tripped
      ? `for longer than --druid-outage-timeout ${flags.druidOutageTimeout} s`
      : `when --timeout ${flags.timeout} s ran out`;
    return finish(ExitCode.Unreachable, "UNREACHABLE", {
      ...detail,
      errorMsg: `cannot reach Druid: ${describeOutage(seen)}, ${why}`,
      since: new Date(seen.since).toISOString(),
      waitedMs: w.clock.now() - w.started,
    });
  };
}

/** What the handoff check of a task we did not submit goes on: its interval, lifetime and row count. */
interface HandoffTarget {
  readonly datasource: string;
  readonly interval: Interval;
  readonly createdTime: string | null;
  readonly notAfter: string | null;
  readonly rowsIngested: ReturnType<typeof rowsIngestedOf>;
}

async function handoffTarget(client: DruidClient, taskId: string, flags: WaitFlags): Promise<HandoffTarget> {
  const { datasource, interval } = await target(client, taskId, flags);
  const status = (await client.taskStatus(taskId)).status;
  const createdTime = status?.createdTime ?? null;
  const created = createdTime ? Date.parse(createdTime) : Number.NaN;
  const notAfter =
    Number.isFinite(created) && typeof status?.duration === "number" && status.duration >= 0
      ? new Date(created + status.duration).toISOString()
      : null;
  const report = await client.taskReports(taskId).catch(() => null);
  const rowsIngested = rowsIngestedOf(buildSegmentsStats(report?.ingestionStatsAndErrors?.payload.rowStats));
  return { datasource, interval, createdTime, notAfter, rowsIngested };
}

/** One handoff check, or null when the wait was stopped meanwhile. */
function checkHandoff(w: Waiting, t: HandoffTarget, version: string | null): Promise<HandoffVerdict | null> {
  // No baseline for a task we did not submit: its version is the oldest one not older than the task,
  // within its lifetime (or proven by no other task having been created in between).
  return w.handoff
    .check(
      t.datasource,
      {
        interval: t.interval,
        mode: "replace",
        baseline: { versions: [], segmentIds: [] },
        baselineTrusted: false,
        version,
        notBefore: t.createdTime,
        notAfter: t.notAfter,
        rowsIngested: t.rowsIngested,
      },
      w.stop,
    )
    .catch((error) => {
      if (w.stop.aborted) return null;
      throw error;
    });
}

/** The end a verdict makes of the wait (exit code, outcome, detail), or undefined to check again. */
function verdictEnd(verdict: Exclude<HandoffVerdict, { state: "unproven" }>): Parameters<Finish> | undefined {
  if (verdict.state === "handed-off") return [0, "SUCCESS", { handoff: true, version: verdict.version }];
  if (verdict.state === "superseded") {
    // Its own exit code: the task did its work, but what Druid serves there now is someone else's.
    return [
      ExitCode.Superseded,
      "SUPERSEDED",
      {
        version: verdict.version,
        errorMsg: `a later task replaced the interval: version ${verdict.liveVersions.join(", ")} is live over this task's ${verdict.version}`,
      },
    ];
  }
  if (verdict.state === "never-loaded")
    return [1, "NEVER_QUERYABLE", { errorMsg: `never queryable under the load rules: ${verdict.reason}` }];
  if (verdict.state === "lost") return [1, "LOST", { errorMsg: verdict.reason }];
  return undefined;
}

/** Checks until the task's data is handed off (or cannot be), proving an unproven version by the task list. */
async function awaitHandoff(
  taskId: string,
  t: HandoffTarget,
  w: Waiting,
  finish: Finish,
  stopped: (detail: Record<string, unknown>) => void,
): Promise<void> {
  let version: string | null = null;
  for (;;) {
    const verdict = await checkHandoff(w, t, version);
    if (verdict === null) return stopped({ stage: "handoff" });
    if (verdict.state === "unproven") {
      const proven =
        verdict.candidate && t.createdTime
          ? await proveSoleTask(
              w.client,
              {
                datasource: t.datasource,
                taskId,
                createdTime: t.createdTime,
                version: verdict.candidate,
                now: w.clock.now(),
              },
              w.stop,
            )
          : null;
      if (proven === true) {
        version = verdict.candidate;
        continue;
      }
      return finish(1, "UNPROVEN", {
        errorMsg: `cannot prove that the data in ${formatInterval(t.interval)} came from ${taskId}: ${verdict.reason}${typeof proven === "string" ? `; ${proven}` : ""}`,
      });
    }
    const end = verdictEnd(verdict);
    if (end) return finish(...end);
    // Still waiting: the first version seen is the one to follow.
    if (verdict.state === "waiting" && verdict.version && !version) version = verdict.version;
  }
}

export async function waitFor(taskId: string, flags: WaitFlags, cmd: Command): Promise<void> {
  const { out, err } = writers(cmd);
  checkTaskId(taskId);
  const w = await openWaiting(flags, err);
  const finish = finisher(taskId, flags, out);
  const stopped = stopper(w, flags, finish);
  try {
    const [result] = await pollTasks([taskId], {
      batcher: w.batcher,
      clock: w.clock,
      signal: w.stop,
      unknownLimit: 3,
    });
    if (!result || w.stop.aborted) return stopped({});
    if (result.outcome === "FAILED") {
      const reports = await w.client.taskReports(taskId).catch(() => null);
      const errorMsg = reports?.ingestionStatsAndErrors?.payload.errorMsg ?? result.errorMsg;
      return finish(1, "FAILED", { errorMsg });
    }
    if (result.outcome !== "SUCCESS") return finish(1, result.outcome, { errorMsg: result.errorMsg });
    if (!flags.handoff) return finish(0, "SUCCESS", { duration: result.duration });
    const t = await handoffTarget(w.client, taskId, flags);
    if (!flags.json) err(`SUCCESS; waiting for handoff of ${t.datasource} ${formatInterval(t.interval)}\n`);
    return await awaitHandoff(taskId, t, w, finish, stopped);
  } finally {
    await w.close();
  }
}
