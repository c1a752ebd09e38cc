/**
 * Backoff math and retry budgets, pure: no clock, no I/O. Randomness is a parameter so tests can pin it.
 *
 * Terminology:
 * - **attempt**: one try of an operation; the first try is attempt 1.
 * - **retry index**: how many retries have already been made (0 before the first retry).
 * - **budget**: how many attempts in total, and how much total waiting, one operation may use.
 */

/** Shape of the exponential curve. */
export interface BackoffOptions {
  /**
   * Ceiling of the first retry's delay, in milliseconds.
   * @default 250
   */
  baseMs?: number;
  /**
   * Upper bound of any single delay, in milliseconds.
   * @default 30000
   */
  capMs?: number;
  /**
   * Growth factor of the ceiling per retry.
   * @default 2
   */
  multiplier?: number;
}

/** Limits on one operation's retries. */
export interface RetryBudget {
  /**
   * Attempts in total, the first one included (1 = never retry).
   * @default 5
   */
  maxAttempts?: number;
  /**
   * Total time spent waiting between attempts, in milliseconds; a retry that would exceed it is not made.
   * @default 60000
   */
  maxTotalWaitMs?: number;
}

export type RetryPolicy = BackoffOptions & RetryBudget;

export const DEFAULT_BACKOFF: Required<BackoffOptions> = { baseMs: 250, capMs: 30_000, multiplier: 2 };
export const DEFAULT_RETRY_BUDGET: Required<RetryBudget> = { maxAttempts: 5, maxTotalWaitMs: 60_000 };

/** What is known about an operation when one of its attempts has just failed. */
export interface RetryContext {
  /** Attempts made so far, including the one that just failed (≥ 1). */
  attemptsMade: number;
  /** Milliseconds already spent waiting between earlier attempts. */
  waitedMs: number;
  /** A server's own hint (e.g. `Retry-After`), in milliseconds; the delay is never shorter. */
  retryAfterMs?: number;
}

export type RetryDecision =
  | { retry: true; delayMs: number }
  | { retry: false; reason: "attempts" | "wait"; delayMs?: undefined };

function requireFinite(name: string, value: number, min: number): void {
  if (!Number.isFinite(value) || value < min) {
    throw new RangeError(`Expected \`${name}\` to be a finite number from ${min} and up, got ${value}`);
  }
}

function resolveBackoff(options: BackoffOptions): Required<BackoffOptions> {
  const resolved = { ...DEFAULT_BACKOFF, ...definedOnly(options) };
  requireFinite("baseMs", resolved.baseMs, 0);
  requireFinite("capMs", resolved.capMs, 0);
  requireFinite("multiplier", resolved.multiplier, 1);
  return resolved;
}

function resolveBudget(budget: RetryBudget): Required<RetryBudget> {
  const resolved = { ...DEFAULT_RETRY_BUDGET, ...definedOnly(budget) };
  if (!Number.isInteger(resolved.maxAttempts) || resolved.maxAttempts < 1) {
    throw new RangeError(
      `Expected \`maxAttempts\` to be an integer from 1 and up, got ${String(resolved.maxAttempts)}`,
    );
  }
  requireFinite("maxTotalWaitMs", resolved.maxTotalWaitMs, 0);
  return resolved;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The ceiling of the delay before retry number `retryIndex + 1`: `min(cap, base * multiplier^retryIndex)`. */
export function backoffCeiling(retryIndex: number, options: BackoffOptions = {}): number {
  const { baseMs, capMs, multiplier } = resolveBackoff(options);
  // Exponentiation overflows to Infinity for large indexes; min() then yields the cap, as intended.
  // A zero base stays zero (0 * Infinity would be NaN).
  if (baseMs === 0) return 0;
  return Math.min(capMs, baseMs * multiplier ** Math.max(0, retryIndex));
}

/**
 * Capped exponential backoff with full jitter: a uniform whole number of milliseconds in
 * `[0, backoffCeiling(retryIndex)]`. Full jitter spreads clients that failed together (e.g. on a
 * leader change) instead of having them retry in lockstep.
 */
export function backoffDelay(
  retryIndex: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const ceiling = Math.floor(backoffCeiling(retryIndex, options));
  const r = random();
  // Guard against a random source outside [0, 1): the result must stay inside the documented range.
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.min(ceiling, Math.floor(unit * (ceiling + 1)));
}

/**
 * Decides whether to retry after a failed attempt and how long to wait first, within the budget:
 * never more than `maxAttempts` attempts, never more than `maxTotalWaitMs` of waiting in total.
 * A server hint (`retryAfterMs`) raises the delay; if honouring it would break the budget, stop.
 */
export function nextRetry(
  context: RetryContext,
  policy: RetryPolicy = {},
  random: () => number = Math.random,
): RetryDecision {
  const { maxAttempts, maxTotalWaitMs } = resolveBudget(policy);
  if (context.attemptsMade >= maxAttempts) return { retry: false, reason: "attempts" };
  const remaining = maxTotalWaitMs - context.waitedMs;
  if (remaining < 0) return { retry: false, reason: "wait" };
  const hint = context.retryAfterMs !== undefined && context.retryAfterMs > 0 ? context.retryAfterMs : 0;
  if (hint > remaining) return { retry: false, reason: "wait" };
  const jittered = backoffDelay(context.attemptsMade - 1, policy, random);
  // Clamp the jittered part to what is left: a shorter last wait beats giving up early.
  return { retry: true, delayMs: Math.min(Math.max(jittered, hint), remaining) };
}
