import type { Clock } from "../core/clock.js";
import { describeOutage, type OutageGuard } from "../druid/outage.js";
import type { StatusBatcher } from "../work/status-batcher.js";

/**
 * Watches existing Druid tasks until each is terminal, through the shared status batcher: wall time
 * follows the slowest task (plus about one tick), and the Overlord sees one bulk request per tick.
 */

/** `UNREACHABLE`: Druid stopped answering, for longer than allowed or when the time ran out. */
export type PollOutcome = "SUCCESS" | "FAILED" | "UNKNOWN" | "TIMEOUT" | "DEADLINE" | "UNREACHABLE";

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
  /**
   * Stops watching once Druid has not answered for the guard's timeout; tasks left then, or at the
   * deadline while Druid is not answering, end `UNREACHABLE` (the honest answer, not the task's time).
   */
  outage?: OutageGuard;
}

export async function pollTasks(ids: readonly string[], options: PollOptions): Promise<PolledTask[]> {
  const started = options.clock.now();
  const unknownLimit = options.unknownLimit ?? 3;
  const stopAll = new AbortController();
  const signals = [
    stopAll.signal,
    ...(options.signal ? [options.signal] : []),
    ...(options.outage ? [options.outage.signal] : []),
  ];
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

  const done = (t: PolledTask): PolledTask => {
    options.onTerminal?.(t);
    return t;
  };
  // One loop for every task: each round asks the batcher for all the tasks still watched at once (one
  // promise and one abort listener a tick, whatever the count), then settles those that ended.
  const signal = signals.length === 1 ? stopAll.signal : AbortSignal.any(signals);
  const watching = new Map([...new Set(ids)].map((id) => [id, 0])); // id → "unknown" answers in a row
  const results = new Map<string, PolledTask>();
  const watchAll = async (): Promise<void> => {
    while (watching.size > 0) {
      let answers: Map<string, Awaited<ReturnType<StatusBatcher["get"]>>>;
      try {
        answers = await options.batcher.getMany(watching.keys(), signal);
      } catch (error) {
        if (!signal.aborted) throw error;
        const elapsedMs = options.clock.now() - started;
        const outage = options.outage?.current() ?? null;
        const outcome = outage ? "UNREACHABLE" : outcomeAtLimit;
        const errorMsg = outage ? describeOutage(outage) : null;
        for (const id of watching.keys())
          results.set(id, { id, outcome, elapsedMs, duration: null, errorMsg });
        watching.clear();
        return;
      }
      for (const [id, status] of answers) {
        if (status.state === "RUNNING") {
          watching.set(id, 0);
          continue;
        }
        if (status.state === "UNKNOWN") {
          const unknown = (watching.get(id) ?? 0) + 1;
          if (unknown < unknownLimit) {
            watching.set(id, unknown);
            continue;
          }
          watching.delete(id);
          results.set(
            id,
            done({
              id,
              outcome: "UNKNOWN",
              elapsedMs: options.clock.now() - started,
              duration: null,
              errorMsg: "Druid does not know this task id",
            }),
          );
          continue;
        }
        watching.delete(id);
        results.set(
          id,
          done({
            id,
            outcome: status.state,
            elapsedMs: options.clock.now() - started,
            duration: status.duration,
            errorMsg: status.errorMsg,
          }),
        );
      }
    }
  };
  try {
    await watchAll();
    return [...new Set(ids)].map((id) => results.get(id) as PolledTask);
  } finally {
    stopAll.abort();
    await overall;
  }
}
