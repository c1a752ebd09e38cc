import { readFileSync } from "node:fs";
import { systemClock } from "../../core/clock.js";
import { ExitCode, UsageError } from "../../core/errors.js";
import { checkTaskId } from "../../core/task-id.js";
import { OutageGuard, OutageMonitor } from "../../druid/outage.js";
import { statusLookupFor } from "../../jobs/engine.js";
import { type PolledTask, pollTasks } from "../../jobs/poll.js";
import { StatusBatcher } from "../../work/status-batcher.js";
import { connectWatched } from "../connect-watched.js";
import type { DruidFlags } from "../options.js";
import { watchOutageLines } from "../progress.js";

/** `segops poll`'s implementation, loaded when the command runs (its flags are in poll.ts). */

export interface PollFlags extends DruidFlags {
  file?: string;
  maxConcurrency: number;
  deadline?: number;
  perTaskTimeout?: number;
  tick: number;
  druidOutageTimeout: number;
  json?: boolean;
}

function readIds(ids: string[], file: string | undefined): string[] {
  const all = ids.map((id, i) => checkTaskId(id, `task id #${i + 1}`));
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new UsageError(
        `cannot read --file ${file}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
      );
    }
    for (const [i, line] of text.split("\n").entries()) {
      // "#" starts a comment to the end of the line.
      for (const id of line.replace(/(^|\s)#.*/, "").split(/\s+/)) {
        if (id !== "") all.push(checkTaskId(id, `--file ${file} line ${i + 1}:`));
      }
    }
  }
  if (all.length === 0)
    throw new UsageError("no task ids: pass ids as arguments or --file FILE (one per line)");
  return all;
}

export async function pollAction(ids: string[], flags: PollFlags): Promise<void> {
  const taskIds = readIds(ids, flags.file);
  const clock = systemClock;
  const started = clock.now();
  // Every attempt feeds the monitor: an unreachable Druid is said, and bounded, instead of a silent wait; its
  // one backoff per host paces every call meanwhile.
  const monitor = new OutageMonitor(clock);
  const client = await connectWatched(flags, monitor, {
    check: false,
    client: { statusFallbackConcurrency: flags.maxConcurrency, connections: flags.maxConcurrency },
  });
  const outage = new OutageGuard(monitor, clock, flags.druidOutageTimeout * 1000);
  const elapsed = () => ((clock.now() - started) / 1000).toFixed(1).padStart(6);
  // stderr, so that --json's stdout stays one document.
  const lines = watchOutageLines(monitor, clock, (line) => process.stderr.write(`[${elapsed()}s] ${line}\n`));
  const batcher = new StatusBatcher({
    lookup: statusLookupFor(client),
    clock,
    tickMs: flags.tick,
  });
  const print = (t: PolledTask) => {
    if (!flags.json)
      process.stdout.write(`[${(t.elapsedMs / 1000).toFixed(1).padStart(6)}s] ${t.id} -> ${t.outcome}\n`);
  };
  let results: PolledTask[];
  try {
    results = await pollTasks(taskIds, {
      batcher,
      clock,
      outage,
      ...(flags.deadline !== undefined ? { deadlineMs: flags.deadline * 1000 } : {}),
      ...(flags.perTaskTimeout !== undefined ? { perTaskTimeoutMs: flags.perTaskTimeout * 1000 } : {}),
      onTerminal: print,
    });
  } finally {
    await lines.stop();
    await outage.stop();
    await batcher.stop();
    await client.close();
  }
  const unfinished = new Set(["DEADLINE", "TIMEOUT", "UNREACHABLE"]);
  for (const t of results) if (unfinished.has(t.outcome)) print(t);
  const bad = results.filter((t) => t.outcome !== "SUCCESS");
  const unreachable = bad.find((t) => t.outcome === "UNREACHABLE");
  if (unreachable) {
    const why = outage.tripped
      ? `for longer than --druid-outage-timeout ${flags.druidOutageTimeout} s`
      : "when the deadline came";
    process.stderr.write(`cannot reach Druid: ${unreachable.errorMsg}, ${why}\n`);
  }
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ ok: bad.length === 0, tasks: results, statusRequests: batcher.stats.lookups }, null, 2)}\n`,
    );
  } else if (bad.length === 0) {
    process.stdout.write(`ALL ${results.length} TASKS SUCCEEDED\n`);
  } else {
    // The outage is said once (above), not once per task.
    const why = (t: PolledTask) => (t.errorMsg && t.outcome !== "UNREACHABLE" ? `: ${t.errorMsg}` : "");
    process.stdout.write(
      `NON-SUCCESS TASKS: ${bad.map((t) => `${t.id} (${t.outcome}${why(t)})`).join(", ")}\n`,
    );
  }
  // A task that ended badly is the definite answer (1); else Druid not answering (4) before the time (3).
  process.exitCode =
    bad.length === 0
      ? ExitCode.Ok
      : !bad.every((t) => unfinished.has(t.outcome))
        ? ExitCode.SomeFailed
        : unreachable
          ? ExitCode.Unreachable
          : ExitCode.Deadline;
}
