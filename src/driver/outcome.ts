import { DEFAULTS } from "../core/defaults.js";
import { isDruidUnreachable } from "../druid/host-backoff.js";
import type { TaskRow, Transition } from "../ledger/types.js";
import { defaultTaskBackoff } from "./backoff.js";
import type { Runner } from "./runner.js";
import { asSignal } from "./signals.js";

/** How one handler run ended: it returned, or it threw `error`. */
export type RunResult = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

export interface DecideContext {
  /** The committed row the handler ran on. */
  readonly task: TaskRow;
  readonly runner: Runner;
  readonly now: number;
  readonly leaseMs: number;
  /** The driver is shutting down: unfinished work is handed back instead of retried. */
  readonly stopping: boolean;
  readonly random: () => number;
}

const MAX_REASON = 2000;

/** A readable reason for any thrown value, bounded in size. */
export function reasonOf(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}

/** The effective retry ceiling of a task: its own, else its runner's; negative = unbounded. */
export function ceilingOf(task: TaskRow, runner: Runner): number {
  return task.maxRetry ?? runner.maxRetry;
}

/**
 * Maps a handler's result to the transition to commit (docs/ledger-and-driver.md, "Signals"). Pure apart
 * from calling the runner's own pure hooks (`backoff`, `isPoison`).
 */
export function decide(result: RunResult, c: DecideContext): Transition {
  if (result.ok) return { to: "done", reason: "completed" };
  const signal = asSignal(result.error);
  const handBack: Transition = { to: "suspended", runAt: c.now, reason: "handed back: driver shutting down" };
  switch (signal?.kind) {
    case "abort":
      return { to: "failed", reason: signal.reason };
    case "defer":
      return { to: "suspended", runAt: c.now + Math.max(0, signal.delayMs ?? 0), reason: signal.reason };
    case "progress": {
      if (c.stopping) return handBack;
      const delay = Math.max(0, signal.delayMs ?? c.runner.progressDelayMs ?? DEFAULTS.tickMs);
      return {
        to: "progress",
        reason: signal.reason,
        runAt: c.now + delay,
        // The heartbeat keeps extending the lease through the wait.
        leaseExpiresAt: c.now + c.leaseMs,
        quiet: signal.reason === c.task.reason,
      };
    }
    default: {
      // A retry-class failure during shutdown is most likely our own abort: hand back, count nothing.
      if (c.stopping) return handBack;
      if (isDruidUnreachable(result.error)) return awaitDruid(c, result.error.retryAt);
      const reason = signal?.kind === "retry" ? signal.reason : reasonOf(result.error);
      if (isPoison(c, result.error)) return { to: "dead", reason: `poison: ${reason}` };
      const retry = c.task.retry + 1;
      const delay = c.runner.backoff ? c.runner.backoff(retry) : defaultTaskBackoff(retry, c.random);
      return {
        to: "retry",
        reason,
        runAt: c.now + Math.max(0, delay),
        ceiling: ceilingOf(c.task, c.runner),
        newAttempt: signal?.kind === "retry" && signal.options.newAttempt === true,
      };
    }
  }
}

/** What a partition says while Druid does not answer (the same words each time, so the wait writes one event). */
export const AWAITING_DRUID = "Druid unreachable: waiting for it to answer (no retry counted)";

/**
 * Druid not answering is no failure of the partition: it keeps its lease and comes back when the next
 * probe may have found Druid back, counting no retry (its first such wait is one event, the rest quiet).
 */
function awaitDruid(c: DecideContext, retryAt: number): Transition {
  return {
    to: "progress",
    reason: AWAITING_DRUID,
    runAt: Math.max(c.now + (c.runner.progressDelayMs ?? DEFAULTS.tickMs), retryAt),
    leaseExpiresAt: c.now + c.leaseMs,
    quiet: c.task.reason === AWAITING_DRUID,
  };
}

function isPoison(c: DecideContext, error: unknown): boolean {
  try {
    return c.runner.isPoison?.(c.task, error) === true;
  } catch {
    // A broken poison rule must not dead-letter work; the retry ceiling still bounds it.
    return false;
  }
}
