import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  backoffCeiling,
  backoffDelay,
  DEFAULT_BACKOFF,
  DEFAULT_RETRY_BUDGET,
  nextRetry,
} from "../../src/core/backoff.js";

const options = fc.record({
  baseMs: fc.integer({ min: 0, max: 10_000 }),
  capMs: fc.integer({ min: 0, max: 120_000 }),
  multiplier: fc.double({ min: 1, max: 5, noNaN: true }),
});
const unitRandom = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe("backoffDelay", () => {
  it("grows the ceiling exponentially from the base until the cap", () => {
    const o = { baseMs: 100, capMs: 1000, multiplier: 2 };
    expect([0, 1, 2, 3, 4, 5].map((i) => backoffCeiling(i, o))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it("uses the documented defaults when no options are given", () => {
    expect(DEFAULT_BACKOFF).toEqual({ baseMs: 250, capMs: 30_000, multiplier: 2 });
    expect(backoffCeiling(0)).toBe(250);
    expect(backoffCeiling(3)).toBe(2000);
    expect(backoffCeiling(100)).toBe(30_000);
  });

  it("never waits with a zero base, even at huge attempt numbers", () => {
    expect(backoffDelay(5000, { baseMs: 0, capMs: 1000, multiplier: 3 }, () => 0.9)).toBe(0);
  });

  it("spans the whole range: random 0 gives 0 and random just below 1 gives the ceiling", () => {
    const o = { baseMs: 100, capMs: 10_000, multiplier: 3 };
    expect(backoffDelay(2, o, () => 0)).toBe(0);
    expect(backoffDelay(2, o, () => 0.999_999_999)).toBe(900);
    expect(backoffDelay(2, o, () => 0.5)).toBe(450);
  });

  it("keeps every delay within [0, min(cap, base * multiplier^attempt)]", () => {
    fc.assert(
      fc.property(fc.nat({ max: 2000 }), options, unitRandom, (attempt, o, r) => {
        const delay = backoffDelay(attempt, o, () => r);
        // A zero base means no wait at all, however large the attempt (0 * Infinity is not a bound).
        const bound = o.baseMs === 0 ? 0 : Math.min(o.capMs, o.baseMs * o.multiplier ** attempt);
        expect(Number.isInteger(delay)).toBe(true);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(bound);
      }),
    );
  });

  it("stays in range even with a misbehaving random source", () => {
    const o = { baseMs: 100, capMs: 1000, multiplier: 2 };
    expect(backoffDelay(1, o, () => 1)).toBe(200);
    expect(backoffDelay(1, o, () => 7)).toBe(200);
    expect(backoffDelay(1, o, () => -3)).toBe(0);
    expect(backoffDelay(1, o, () => Number.NaN)).toBe(0);
  });

  it("rejects nonsense options with a precise message", () => {
    expect(() => backoffDelay(0, { baseMs: -1 })).toThrow(
      "Expected `baseMs` to be a finite number from 0 and up, got -1",
    );
    expect(() => backoffDelay(0, { multiplier: 0.5 })).toThrow("`multiplier`");
  });
});

describe("nextRetry", () => {
  it("retries until maxAttempts attempts have been made, then stops with reason 'attempts'", () => {
    const policy = { maxAttempts: 3, maxTotalWaitMs: 1_000_000 };
    expect(nextRetry({ attemptsMade: 1, waitedMs: 0 }, policy, () => 0.5).retry).toBe(true);
    expect(nextRetry({ attemptsMade: 2, waitedMs: 0 }, policy, () => 0.5).retry).toBe(true);
    expect(nextRetry({ attemptsMade: 3, waitedMs: 0 }, policy, () => 0.5)).toEqual({
      retry: false,
      reason: "attempts",
    });
  });

  it("derives the delay from the number of retries already made", () => {
    const policy = { baseMs: 100, capMs: 100_000, multiplier: 2 };
    const nearlyOne = () => 0.999_999;
    expect(nextRetry({ attemptsMade: 1, waitedMs: 0 }, policy, nearlyOne).delayMs).toBe(100);
    expect(nextRetry({ attemptsMade: 3, waitedMs: 0 }, policy, nearlyOne).delayMs).toBe(400);
  });

  it("never waits less than the server's Retry-After hint", () => {
    const decision = nextRetry({ attemptsMade: 1, waitedMs: 0, retryAfterMs: 5000 }, {}, () => 0);
    expect(decision).toEqual({ retry: true, delayMs: 5000 });
  });

  it("stops when honouring Retry-After would exceed the wait budget", () => {
    const decision = nextRetry(
      { attemptsMade: 1, waitedMs: 9000, retryAfterMs: 2000 },
      { maxTotalWaitMs: 10_000 },
      () => 0,
    );
    expect(decision).toEqual({ retry: false, reason: "wait" });
  });

  it("shortens the last jittered wait to what is left of the budget", () => {
    const decision = nextRetry(
      { attemptsMade: 4, waitedMs: 9900 },
      { baseMs: 1000, maxTotalWaitMs: 10_000 },
      () => 0.99,
    );
    expect(decision).toEqual({ retry: true, delayMs: 100 });
  });

  it("uses the documented default budget", () => {
    expect(DEFAULT_RETRY_BUDGET).toEqual({ maxAttempts: 5, maxTotalWaitMs: 60_000 });
    expect(nextRetry({ attemptsMade: 5, waitedMs: 0 }).retry).toBe(false);
    expect(nextRetry({ attemptsMade: 4, waitedMs: 0 }).retry).toBe(true);
  });

  it("never exceeds the budget over a whole simulated operation", () => {
    fc.assert(
      fc.property(
        options,
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.array(fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: undefined }), { maxLength: 30 }),
        fc.array(unitRandom, { minLength: 1, maxLength: 30 }),
        (o, maxAttempts, maxTotalWaitMs, hints, randoms) => {
          const policy = { ...o, maxAttempts, maxTotalWaitMs };
          let attemptsMade = 1;
          let waitedMs = 0;
          for (let i = 0; ; i++) {
            const retryAfterMs = hints[i % Math.max(1, hints.length)];
            const decision = nextRetry(
              { attemptsMade, waitedMs, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
              policy,
              () => randoms[i % randoms.length] ?? 0,
            );
            if (!decision.retry) break;
            expect(decision.delayMs).toBeGreaterThanOrEqual(retryAfterMs ?? 0);
            waitedMs += decision.delayMs;
            attemptsMade += 1;
            expect(attemptsMade).toBeLessThanOrEqual(maxAttempts);
            expect(waitedMs).toBeLessThanOrEqual(maxTotalWaitMs);
          }
          expect(attemptsMade).toBeLessThanOrEqual(maxAttempts);
          expect(waitedMs).toBeLessThanOrEqual(maxTotalWaitMs);
        },
      ),
    );
  });
});
