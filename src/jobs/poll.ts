import type { Clock } from "../core/clock.js";
import type { StatusBatcher } from "../ingest/status-batcher.js";

/**
 * Watches existing Druid tasks until each is terminal, through the shared status batcher: wall time
 * follows the slowest task (plus about one tick), and the Overlord sees one bulk request per tick.
 */

export type PollOutcome = "SUCCESS" | "FAILED" | "UNKNOWN" | "TIMEOUT" | "DEADLINE";

export interface PolledTask {
  id: string;
  outcome: PollOutcome;
  /** Since the poll started, when the outcome was seen. */
  elapsedMs: number;
  duration: number | null;
  errorMsg: string | null;
}

export interface PollOptions {
  batcher: StatusBatcher;
  clock: Clock;
  /** Stop watching everything at this many ms after the start. */
  deadlineMs?: number;
  /** Stop watching one task after this many ms. */
  perTaskTimeoutMs?: number;
  /** Consecutive "Druid does not know this id" answers before giving up on it. @default 3 */
  unknownLimit?: number;
  onTerminal?: (task: PolledTask) => void;
  signal?: AbortSignal;
}

export async function pollTasks(ids: readonly string[], options: PollOptions): Promise<PolledTask[]> {
  const started = options.clock.now();
  const unknownLimit = options.unknownLimit ?? 3;
  const stopAll = new AbortController();
  const signals = [stopAll.signal, ...(options.signal ? [options.signal] : [])];
  const limitMs = Math.min(
    options.deadlineMs ?? Number.POSITIVE_INFINITY,
    options.perTaskTimeoutMs ?? Number.POSITIVE_INFINITY,
  );
  const overall = Number.isFinite(limitMs)
    ? options.clock.sleep(limitMs, AbortSignal.any(signals)).then(
        () => stopAll.abort(),
        () => undefined,
      )
    : Promise.resolve();
  const outcomeAtLimit: PollOutcome =
    options.perTaskTimeoutMs !== undefined &&
    (options.deadlineMs ?? Number.POSITIVE_INFINITY) > options.perTaskTimeoutMs
      ? "TIMEOUT"
      : "DEADLINE";

  const watch = async (id: string): Promise<PolledTask> => {
    let unknown = 0;
    const signal = AbortSignal.any(signals);
    for (;;) {
      let status: Awaited<ReturnType<StatusBatcher["get"]>>;
      try {
        status = await options.batcher.get(id, signal);
      } catch (error) {
        if (signal.aborted) {
          return {
            id,
            outcome: outcomeAtLimit,
            elapsedMs: options.clock.now() - started,
            duration: null,
            errorMsg: null,
          };
        }
        throw error;
      }
      if (status.state === "UNKNOWN") {
        if (++unknown < unknownLimit) continue;
        return done({
          id,
          outcome: "UNKNOWN",
          elapsedMs: options.clock.now() - started,
          duration: null,
          errorMsg: "Druid does not know this task id",
        });
      }
      unknown = 0;
      if (status.state === "RUNNING") continue;
      return done({
        id,
        outcome: status.state,
        elapsedMs: options.clock.now() - started,
        duration: status.duration,
        errorMsg: status.errorMsg,
      });
    }
  };
  const done = (t: PolledTask): PolledTask => {
    options.onTerminal?.(t);
    return t;
  };
  try {
    return await Promise.all([...new Set(ids)].map(watch));
  } finally {
    stopAll.abort();
    await overall;
  }
}
