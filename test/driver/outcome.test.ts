import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { taskBackoff } from "../../src/driver/backoff.js";
import { decide } from "../../src/driver/outcome.js";
import { DriverConfigError, type Runner, validateRunners } from "../../src/driver/runner.js";
import { asSignal, TaskAbort, TaskDefer, TaskProgress, TaskRetry } from "../../src/driver/signals.js";
import type { TaskRow } from "../../src/ledger/types.js";

const NOW = 1_000_000;
const task: TaskRow = {
  id: "t",
  jobId: "j",
  kind: "k",
  exclusionKey: null,
  payload: {},
  state: "running",
  attempt: 1,
  retry: 2,
  maxRetry: null,
  progress: {},
  leaseOwner: "me",
  leaseExpiresAt: NOW + 1,
  runAt: NOW,
  canceled: false,
  reason: "polling",
  lastError: null,
  version: 3,
  createdAt: 0,
  updatedAt: 0,
};
const runner: Runner = { kind: "k", concurrency: 1, maxRetry: 5, handler: async () => undefined };
const ctx = { task, runner, now: NOW, leaseMs: 30_000, stopping: false, random: () => 0.5 };

describe("signals", () => {
  it("a signal from another copy of the module is recognised by its brand and kind", () => {
    // What a second installed copy of signals.ts would throw: same global brand, different class.
    const foreign = Object.assign(new Error("x"), {
      [Symbol.for("segops.driver.signal")]: true,
      kind: "abort",
      reason: "bad spec",
    });
    expect(asSignal(foreign)?.kind).toBe("abort");
    expect(decide({ ok: false, error: foreign }, ctx)).toEqual({ to: "failed", reason: "bad spec" });
  });

  it("an error that merely has a kind property is not a signal", () => {
    expect(asSignal(Object.assign(new Error("x"), { kind: "abort", reason: "r" }))).toBeNull();
    expect(asSignal("abort")).toBeNull();
    expect(asSignal(null)).toBeNull();
  });
});

describe("decide", () => {
  it("maps each outcome to the contract's transition", () => {
    expect(decide({ ok: true }, ctx)).toEqual({ to: "done", reason: "completed" });
    expect(decide({ ok: false, error: new TaskDefer("later", 5000) }, ctx)).toEqual({
      to: "suspended",
      runAt: NOW + 5000,
      reason: "later",
    });
    expect(decide({ ok: false, error: new TaskProgress("polling", 2000) }, ctx)).toEqual({
      to: "progress",
      reason: "polling",
      runAt: NOW + 2000,
      leaseExpiresAt: NOW + 30_000,
      quiet: true,
    });
    expect(decide({ ok: false, error: new TaskRetry("flaky", { newAttempt: true }) }, ctx)).toMatchObject({
      to: "retry",
      ceiling: 5,
      newAttempt: true,
    });
    expect(decide({ ok: false, error: new TaskAbort("bad") }, ctx)).toEqual({ to: "failed", reason: "bad" });
  });

  it("any other error is a retry with the next backoff, using the task's own ceiling when it has one", () => {
    const change = decide(
      { ok: false, error: new RangeError("oops") },
      { ...ctx, task: { ...task, maxRetry: 0 }, runner: { ...runner, backoff: (r) => r * 100 } },
    );
    expect(change).toEqual({
      to: "retry",
      reason: "RangeError: oops",
      runAt: NOW + 300,
      ceiling: 0,
      newAttempt: false,
    });
  });

  it("the poison rule dead-letters a retry-class failure, and a throwing rule does not", () => {
    const poison = { ...runner, isPoison: (_t: TaskRow, e: unknown) => String(e).includes("Parse") };
    expect(decide({ ok: false, error: new Error("ParseException") }, { ...ctx, runner: poison })).toEqual({
      to: "dead",
      reason: "poison: Error: ParseException",
    });
    const broken = {
      ...runner,
      isPoison: () => {
        throw new Error("bug");
      },
    };
    expect(decide({ ok: false, error: new Error("x") }, { ...ctx, runner: broken }).to).toBe("retry");
  });

  it("while stopping, unfinished work is handed back due now without using a retry", () => {
    const stopping = { ...ctx, stopping: true };
    for (const error of [new TaskProgress("p"), new TaskRetry("r"), new Error("aborted")]) {
      expect(decide({ ok: false, error }, stopping)).toEqual({
        to: "suspended",
        runAt: NOW,
        reason: "handed back: driver shutting down",
      });
    }
    expect(decide({ ok: true }, stopping).to).toBe("done");
    expect(decide({ ok: false, error: new TaskDefer("d", 10) }, stopping)).toMatchObject({ runAt: NOW + 10 });
  });
});

describe("backoff", () => {
  it("stays within [half, full] of the capped exponential delay", () => {
    const backoff = taskBackoff({ baseMs: 1000, capMs: 60_000 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 1, noNaN: true }), (retry, r) => {
        const capped = Math.min(60_000, 1000 * 2 ** (retry - 1));
        const delay = backoff(retry, () => r);
        return delay >= Math.floor(capped / 2) && delay <= capped;
      }),
    );
  });

  it("never retries a task immediately, and grows to the cap", () => {
    const backoff = taskBackoff();
    expect(backoff(1, () => 0)).toBe(500);
    expect(backoff(3, () => 1)).toBe(4000);
    expect(backoff(40, () => 1)).toBe(300_000);
  });
});

describe("runner validation", () => {
  it("says precisely what is wrong", () => {
    expect(() => validateRunners([{ ...runner, concurrency: 0 }])).toThrow(
      'Expected `concurrency` of runner "k" to be an integer from 1 and up, got 0',
    );
    expect(() => validateRunners([runner, runner])).toThrow(DriverConfigError);
    expect(() => validateRunners([])).toThrow("at least one runner");
  });
});
