import { type BackoffOptions, backoffCeiling } from "../core/backoff.js";

/** The ledger-task retry curve: slower than an HTTP call's (tasks retry whole Druid ingestions). */
export const TASK_BACKOFF: Required<BackoffOptions> = { baseMs: 1000, capMs: 300_000, multiplier: 2 };

/**
 * Delay before a task's next run after its `retry`-th failure (counts from 1): the capped exponential
 * ceiling of `core/backoff`, with "equal jitter" — half fixed, half random — so tasks that failed
 * together spread out, yet a task is never retried immediately (unlike full jitter, which can yield 0).
 * Pure: randomness is injected.
 *
 * @example taskBackoff()(3, () => 0.5) // ceiling 4000 → 2000 + 0.5 * 2000 = 3000
 */
export function taskBackoff(
  options: BackoffOptions = TASK_BACKOFF,
): (retry: number, random: () => number) => number {
  const resolved = { ...TASK_BACKOFF, ...options };
  return (retry, random) => {
    const ceiling = backoffCeiling(Math.max(0, retry - 1), resolved);
    return Math.round(ceiling / 2 + (ceiling / 2) * Math.min(1, Math.max(0, random())));
  };
}

export const defaultTaskBackoff = taskBackoff();
