import { UsageError } from "../core/errors.js";
import { type Interval, parseInterval } from "../core/interval.js";

/** Parses a user-given partition interval, turning any parse problem into a usage error (exit code 2). */
export function parsePartitionInterval(text: string): Interval {
  try {
    return parseInterval(text);
  } catch (e) {
    throw new UsageError(`--interval: ${(e as Error).message}`, { interval: text });
  }
}

/** Parses `--attempt`: a whole number from 1 up. */
export function parseAttempt(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`--attempt: expected a whole number from 1 up, got "${text}"`, { attempt: text });
  }
  return n;
}
