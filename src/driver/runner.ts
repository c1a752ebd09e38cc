import type { Clock } from "../core/clock.js";
import { SegopsError } from "../core/errors.js";
import type { JsonObject, TaskRow } from "../ledger/types.js";

/** What a handler gets besides its task. */
export interface TaskContext {
  /** Aborted when the task is canceled, taken over by another driver, or the driver shuts down. */
  readonly signal: AbortSignal;
  /** The driver's lease owner id (for logs and derived names). */
  readonly owner: string;
  readonly clock: Clock;
  /**
   * Merges `progress` into the committed row (CAS) right after a step succeeded, e.g.
   * `{ druidTaskId }` before submitting. Returns the fresh row, or null when the task was canceled,
   * taken over or finished: then stop and return (or throw) promptly; nothing you do will be committed.
   */
  checkpoint(progress: JsonObject): Promise<TaskRow | null>;
}

/** A declared runner: domain work only; the driver owns the loop, lease, retries and every state write. */
export interface Runner {
  /** Which ledger tasks (`tasks.kind`) this runner drives. */
  readonly kind: string;
  /** Domain work for one step: return = done; throw a signal (or any error = retry). Never writes state. */
  handler(task: TaskRow, ctx: TaskContext): Promise<void>;
  /** Pure pre-run gate: false → not claimed this cycle (no write, no retry used). @default always true */
  isEligible?(task: TaskRow): boolean;
  /**
   * Called for a task `isEligible` passed that this driver then did not claim (another host got it, or the
   * cycle's claim limit cut it): undo what the gate reserved for it. @default nothing to undo
   */
  release?(taskId: string): void;
  /**
   * A number that changes whenever `isEligible` could answer yes where it answered no (a slot freed, fresh capacity
   * read). While it stays the same and the last due list held nothing eligible and nothing canceled, the driver does
   * not read the due list again for up to `IDLE_RELIST_POLLS` polls: a list of up to 100 rows a poll, each parsed,
   * only to hear no again was most of a blocked backfill's CPU. @default none (the due list is read every poll)
   */
  eligibilityEpoch?(): number;
  /**
   * The driver has stopped (every handler settled): end what the runner keeps running between handler runs (loops,
   * timers, calls waiting on Druid), so the process can exit. Called once. @default nothing to end
   */
  close?(): void;
  /** Maximum handlers of this kind in flight in this process (integer ≥ 1). */
  readonly concurrency: number;
  /** Delay after the `retry`-th failure (counts from 1). @default capped exponential with jitter, 1 s … 5 min */
  backoff?(retry: number): number;
  /** Retry ceiling when the task row has none (`tasks.max_retry`); negative = unbounded. */
  readonly maxRetry: number;
  /** Delay before the next step after `TaskProgress` without a delay. @default DEFAULTS.tickMs (1000) */
  readonly progressDelayMs?: number;
  /**
   * Poison rule: called for a retry-class failure (`TaskRetry` or any other error) with the committed
   * row before this failure; true moves the task to the dead-letter state (`dead`) instead of retrying.
   * @default never poison
   */
  isPoison?(task: TaskRow, error: unknown): boolean;
  /** Runs after a terminal commit (done/failed/dead), only in the driver that won it. Must be idempotent. */
  onFinish?(task: TaskRow): Promise<void> | void;
  /**
   * The task left this driver without its terminal commit here: its lease was lost (another host took it
   * over after a pause or a cut from the ledger), or it was handed back or put back to wait. Whatever the
   * runner holds for it in this process (admission slots, a budget) must go, or this host would count work
   * it no longer owns for good; a later claim of the task here takes it again. `why`: `lost` (another
   * driver holds it now), `handed-back` (suspended at shutdown or an outage), `waiting` (put back to wait:
   * a retry or a deferral, its Druid task possibly still running). @default nothing held
   */
  abandon?(taskId: string, why: "lost" | "handed-back" | "waiting"): void;
  /** Per-cycle upkeep not tied to a task (e.g. refresh worker capacity); failures are logged. */
  onCycle?(): Promise<void> | void;
}

/** A mistake in how the driver was configured (a programming error, caught before anything runs). */
export class DriverConfigError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("Driver", message, details);
  }
}

/** Eager validation with precise messages. */
export function validateRunners(runners: readonly Runner[]): void {
  if (runners.length === 0) throw new DriverConfigError("Expected at least one runner, got none");
  const kinds = new Set<string>();
  for (const s of runners) {
    if (typeof s.kind !== "string" || s.kind === "") {
      throw new DriverConfigError(
        `Expected \`kind\` to be a non-empty string, got ${JSON.stringify(s.kind)}`,
      );
    }
    if (kinds.has(s.kind)) throw new DriverConfigError(`Two runners for kind "${s.kind}"`, { kind: s.kind });
    kinds.add(s.kind);
    if (!Number.isInteger(s.concurrency) || s.concurrency < 1) {
      throw new DriverConfigError(
        `Expected \`concurrency\` of runner "${s.kind}" to be an integer from 1 and up, got ${s.concurrency}`,
        { kind: s.kind },
      );
    }
    if (!Number.isInteger(s.maxRetry)) {
      throw new DriverConfigError(
        `Expected \`maxRetry\` of runner "${s.kind}" to be an integer (negative = unbounded), got ${s.maxRetry}`,
        { kind: s.kind },
      );
    }
  }
}
