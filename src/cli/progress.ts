import cliProgress from "cli-progress";
import type { Clock } from "../core/clock.js";
import type { OutageMonitor } from "../druid/outage.js";
import type { Store } from "../ledger/store.js";
import type { TaskRow } from "../ledger/types.js";

/**
 * The backfill's live view: on a TTY a progress bar with done/running/pending/failed/dead and an ETA;
 * otherwise (pipes, CI logs) one plain line per step event, so logs stay readable. `--json` shows neither.
 */
export interface ProgressView {
  step(task: TaskRow, step: string, detail: string): void;
  stop(): Promise<void>;
}

export type ProgressMode = "bar" | "lines" | "none";

export function progressMode(json: boolean, stream: NodeJS.WriteStream = process.stderr): ProgressMode {
  if (json) return "none";
  return stream.isTTY ? "bar" : "lines";
}

function intervalLabel(task: TaskRow): string {
  const interval = (task.payload as { interval?: string }).interval ?? task.id;
  return interval.replace(/T00:00:00\.000Z/g, "").replace(/\.000Z/g, "Z");
}

export function startProgress(options: {
  mode: ProgressMode;
  store: Store;
  jobId: string;
  total: number;
  clock: Clock;
  stream?: NodeJS.WritableStream;
  refreshMs?: number;
  /** Shows a Druid outage as it happens (a silent hang is the worst thing a long run can do). */
  outage?: OutageMonitor;
}): ProgressView {
  const stream = options.stream ?? process.stderr;
  const started = options.clock.now();
  const elapsed = () => ((options.clock.now() - started) / 1000).toFixed(1).padStart(6);
  if (options.mode === "none") return { step: () => {}, stop: async () => {} };
  if (options.mode === "lines") {
    const watcher = options.outage
      ? watchOutageLines(options.outage, options.clock, (line) => stream.write(`[${elapsed()}s] ${line}\n`))
      : null;
    return {
      step: (task, step, detail) =>
        stream.write(`[${elapsed()}s] ${intervalLabel(task)} ${step} ${detail}\n`),
      stop: async () => {
        await watcher?.stop();
      },
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format:
        "{bar} {value}/{total} done | running {running} | pending {pending} | failed {failed} | dead {dead} | ETA {eta_formatted}{druid}",
      hideCursor: true,
      stream: stream as NodeJS.WriteStream,
      etaBuffer: 20,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(options.total, 0, { running: 0, pending: options.total, failed: 0, dead: 0, druid: "" });
  const druid = () => {
    const ms = options.outage?.outageMs() ?? 0;
    return ms > 0 ? ` | DRUID UNREACHABLE ${Math.round(ms / 1000)}s` : "";
  };
  // The bar reads the ledger, not in-memory state: it shows work done by other hosts on the same job too.
  const refresh = async () => {
    const c = await options.store.countTasks(options.jobId).catch(() => null);
    if (c)
      bar.update(c.done, {
        running: c.running,
        pending: c.new + c.suspended,
        failed: c.failed,
        dead: c.dead,
        druid: druid(),
      });
  };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await refresh();
      await options.clock.sleep(options.refreshMs ?? 250).catch(() => {});
    }
  })();
  return {
    step: () => {},
    stop: async () => {
      stopped = true;
      await loop;
      await refresh();
      bar.stop();
    },
  };
}

/**
 * Plain-line mode: one line when Druid stops answering (with since when and the last error), a reminder
 * every `remindMs` while it lasts, one line when it answers again.
 */
export function watchOutageLines(
  monitor: OutageMonitor,
  clock: Clock,
  write: (line: string) => void,
  options: { checkMs?: number; remindMs?: number } = {},
): { stop(): Promise<void> } {
  const stop = new AbortController();
  const loop = (async () => {
    let shownAt: number | null = null;
    let since: number | null = null;
    while (!stop.signal.aborted) {
      const now = clock.now();
      if (monitor.since !== null) {
        if (since !== monitor.since || shownAt === null || now - shownAt >= (options.remindMs ?? 30_000)) {
          write(monitor.describe() ?? "Druid unreachable");
          shownAt = now;
        }
        since = monitor.since;
      } else if (since !== null) {
        write(`Druid answering again after ${Math.round((now - since) / 1000)}s`);
        since = null;
        shownAt = null;
      }
      await clock.sleep(options.checkMs ?? 1000, stop.signal).catch(() => undefined);
    }
  })();
  return {
    stop: async () => {
      stop.abort();
      await loop;
    },
  };
}
