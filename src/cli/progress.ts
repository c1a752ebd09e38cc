import cliProgress from "cli-progress";
import type { Clock } from "../core/clock.js";
import type { OutageMonitor } from "../druid/outage.js";
import type { Store } from "../ledger/store.js";
import type { TaskRow } from "../ledger/types.js";
import type { AdmissionTracker } from "../work/admission-tracker.js";

/**
 * The backfill's live view: on a TTY a progress bar with done/running/pending/failed/dead and an ETA;
 * otherwise (pipes, CI logs) one plain line per step event, so logs stay readable. `--json` shows neither.
 */
export interface ProgressView {
  step(task: TaskRow, step: string, detail: string): void;
  /** Ends the display (a bar is cleared from the screen); more calls wait for the first. */
  stop(): Promise<void>;
  /**
   * Ends the display, then writes `line` (Ctrl-C's "interrupted: …"): written while a bar still redraws,
   * the line was overwritten, and the report after it was drawn over by the bar's last frame.
   */
  say(line: string): Promise<void>;
}

export type ProgressMode = "bar" | "lines" | "none";

/** Something a long run shows while it lasts: since when (null: not now), and what it is, in words. */
export interface Condition {
  readonly since: number | null;
  describe(): string | null;
}

/**
 * The run's "blocked by the cluster" state (`AdmissionTracker.blockedSince`) as a `Condition`, readable
 * before the run has built its tracker: `attach` it from the engine's `onAdmission`.
 */
export class BlockedCondition implements Condition {
  #tracker: AdmissionTracker | null = null;
  attach(tracker: AdmissionTracker): void {
    this.#tracker = tracker;
  }
  get since(): number | null {
    return this.#tracker?.blockedSince ?? null;
  }
  describe(): string | null {
    return this.#tracker?.describeBlocked() ?? null;
  }
}

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
  /** Shows a run that nothing moves because the cluster's slots are taken by other tasks. */
  blocked?: Condition;
}): ProgressView {
  const stream = options.stream ?? process.stderr;
  const started = options.clock.now();
  const elapsed = () => ((options.clock.now() - started) / 1000).toFixed(1).padStart(6);
  const view = (step: ProgressView["step"], end: () => Promise<void>): ProgressView => {
    let ended: Promise<void> | undefined;
    const stop = () => {
      ended ??= end();
      return ended;
    };
    return {
      step,
      stop,
      say: async (line) => {
        await stop();
        stream.write(`${line}\n`);
      },
    };
  };
  if (options.mode === "none")
    return view(
      () => {},
      async () => {},
    );
  if (options.mode === "lines") {
    const write = (line: string) => stream.write(`[${elapsed()}s] ${line}\n`);
    const watchers = [
      ...(options.outage ? [watchOutageLines(options.outage, options.clock, write)] : []),
      ...(options.blocked ? [watchBlockedLines(options.blocked, options.clock, write)] : []),
    ];
    return view(
      (task, step, detail) => write(`${intervalLabel(task)} ${step} ${detail}`),
      async () => {
        for (const w of watchers) await w.stop();
      },
    );
  }
  const bar = new cliProgress.SingleBar(
    {
      format:
        "{bar} {value}/{total} done | running {running} | pending {pending} | failed {failed} | dead {dead} | ETA {eta_formatted}{druid}{blocked}",
      hideCursor: true,
      // Cleared when it stops: the report that follows says the same counts, on a clean screen.
      clearOnComplete: true,
      stream: stream as NodeJS.WriteStream,
      etaBuffer: 20,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(options.total, 0, {
    running: 0,
    pending: options.total,
    failed: 0,
    dead: 0,
    druid: "",
    blocked: "",
  });
  const druid = () => {
    const ms = options.outage?.outageMs() ?? 0;
    return ms > 0 ? ` | DRUID UNREACHABLE ${Math.round(ms / 1000)}s` : "";
  };
  const blocked = () => {
    const since = options.blocked?.since ?? null;
    return since === null ? "" : ` | WAITING FOR SLOTS ${Math.round((options.clock.now() - since) / 1000)}s`;
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
        blocked: blocked(),
      });
  };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await refresh();
      await options.clock.sleep(options.refreshMs ?? 250).catch(() => {});
    }
  })();
  return view(
    () => {},
    async () => {
      stopped = true;
      await loop;
      await refresh();
      bar.stop();
    },
  );
}

export interface WatchOptions {
  /** How often the condition is looked at. @default 1000 */
  checkMs?: number;
  /** How often a lasting condition is said again. @default 30000 */
  remindMs?: number;
}

/**
 * Plain-line mode: one line when Druid stops answering (with since when and the last error), a reminder
 * every `remindMs` while it lasts, one line when it answers again.
 */
export function watchOutageLines(
  monitor: OutageMonitor,
  clock: Clock,
  write: (line: string) => void,
  options: WatchOptions = {},
): { stop(): Promise<void> } {
  return watchLines(monitor, clock, write, {
    ...options,
    fallback: "Druid unreachable",
    ended: (s) => `Druid answering again after ${s}s`,
  });
}

/** Plain-line mode: when the run is blocked by the cluster's slots, what on and for how long; and when it moves. */
export function watchBlockedLines(
  blocked: Condition,
  clock: Clock,
  write: (line: string) => void,
  options: WatchOptions = {},
): { stop(): Promise<void> } {
  return watchLines(blocked, clock, write, {
    ...options,
    fallback: "waiting for Druid worker slots",
    said: (line, s) => `${line} (for ${s}s)`,
    ended: (s) => `no longer waiting for worker slots (after ${s}s)`,
  });
}

function watchLines(
  condition: Condition,
  clock: Clock,
  write: (line: string) => void,
  options: WatchOptions & {
    fallback: string;
    said?: (line: string, seconds: number) => string;
    ended: (seconds: number) => string;
  },
): { stop(): Promise<void> } {
  const stop = new AbortController();
  let shownAt: number | null = null;
  let since: number | null = null;
  const look = (final: boolean) => {
    const now = clock.now();
    const current = condition.since;
    if (current !== null) {
      if (final) return; // still on at the end: the run's own report says what is left
      if (since !== current || shownAt === null || now - shownAt >= (options.remindMs ?? 30_000)) {
        const line = condition.describe() ?? options.fallback;
        write(options.said ? options.said(line, Math.round((now - current) / 1000)) : line);
        shownAt = now;
      }
      since = current;
    } else if (since !== null) {
      write(options.ended(Math.round((now - since) / 1000)));
      since = null;
      shownAt = null;
    }
  };
  const loop = (async () => {
    while (!stop.signal.aborted) {
      look(false);
      await clock.sleep(options.checkMs ?? 1000, stop.signal).catch(() => undefined);
    }
    // A condition that ended since the last look (the run finished within a check) is still said.
    look(true);
  })();
  return {
    stop: async () => {
      stop.abort();
      await loop;
    },
  };
}
