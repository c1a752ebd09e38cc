import { readFileSync } from "node:fs";
import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import { checkTaskId } from "../../core/task-id.js";
import { StatusBatcher } from "../../ingest/status-batcher.js";
import { statusLookupFor } from "../../jobs/engine.js";
import { type PolledTask, pollTasks } from "../../jobs/poll.js";
import { connectDruid } from "../context.js";
import type { DruidFlags } from "../options.js";

/** `segops poll`'s implementation, loaded when the command runs (its flags are in poll.ts). */

export interface PollFlags extends DruidFlags {
  file?: string;
  maxConcurrency: number;
  deadline?: number;
  perTaskTimeout?: number;
  tick: number;
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
  const client = await connectDruid(flags, {
    check: false,
    client: { statusFallbackConcurrency: flags.maxConcurrency, connections: flags.maxConcurrency },
  });
  const batcher = new StatusBatcher({
    lookup: statusLookupFor(client),
    clock: systemClock,
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
      clock: systemClock,
      ...(flags.deadline !== undefined ? { deadlineMs: flags.deadline * 1000 } : {}),
      ...(flags.perTaskTimeout !== undefined ? { perTaskTimeoutMs: flags.perTaskTimeout * 1000 } : {}),
      onTerminal: print,
    });
  } finally {
    await batcher.stop();
    await client.close();
  }
  for (const t of results) if (t.outcome === "DEADLINE" || t.outcome === "TIMEOUT") print(t);
  const bad = results.filter((t) => t.outcome !== "SUCCESS");
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ ok: bad.length === 0, tasks: results, statusRequests: batcher.stats.lookups }, null, 2)}\n`,
    );
  } else if (bad.length === 0) {
    process.stdout.write(`ALL ${results.length} TASKS SUCCEEDED\n`);
  } else {
    process.stdout.write(
      `NON-SUCCESS TASKS: ${bad.map((t) => `${t.id} (${t.outcome}${t.errorMsg ? `: ${t.errorMsg}` : ""})`).join(", ")}\n`,
    );
  }
  process.exitCode =
    bad.length === 0 ? 0 : bad.every((t) => t.outcome === "DEADLINE" || t.outcome === "TIMEOUT") ? 3 : 1;
}
