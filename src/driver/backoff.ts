/** Options of `exponentialBackoff`. */
export interface BackoffOptions {
  /** Delay before the first retry. @default 1000 */
  readonly baseMs?: number;
  /** Upper bound of any delay. @default 300000 (5 minutes) */
  readonly capMs?: number;
  /** Growth per retry. @default 2 */
  readonly factor?: number;
}

/**
 * Capped exponential backoff with "equal jitter": half the capped delay is fixed, half is random, so
 * hosts retrying the same failure spread out but never retry immediately. `retry` counts from 1.
 * Pure: randomness is injected.
 *
 * @example exponentialBackoff()(3, () => 0.5) // 4000 * (0.5 + 0.25) = 3000
 */
export function exponentialBackoff(
  options: BackoffOptions = {},
): (retry: number, random: () => number) => number {
  const base = options.baseMs ?? 1000;
  const cap = options.capMs ?? 300_000;
  const factor = options.factor ?? 2;
  return (retry, random) => {
    const capped = Math.min(cap, base * factor ** Math.max(0, retry - 1));
    return Math.round(capped / 2 + (capped / 2) * random());
  };
}

export const defaultBackoff = exponentialBackoff();
