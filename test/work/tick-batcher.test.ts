import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { TickBatcher } from "../../src/work/tick-batcher.js";

/**
 * A flush may answer every key with a request of its own at once (the handoff checker: one per datasource).
 * Each listens for the stop: they listen on a signal of that flush, so many keys do not pile listeners on
 * the batcher's long-lived one (Node's MaxListenersExceededWarning), and a stop still reaches them.
 */
describe("TickBatcher flush signal", () => {
  it("gives each flush its own stop signal: 30 concurrent listeners warn nothing and leave none behind", async () => {
    const clock = new ManualClock(0);
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    let seen: AbortSignal | undefined;
    const batcher = new TickBatcher<string, null, string>({
      clock,
      name: "test batcher",
      nextDelay: () => 100,
      flush: async (batch, signal) => {
        seen = signal;
        await Promise.all(
          [...batch].map(async ([key, waiters]) => {
            // What an HTTP request does with its signal while it is in flight.
            const listener = () => undefined;
            signal.addEventListener("abort", listener);
            await Promise.resolve();
            signal.removeEventListener("abort", listener);
            for (const w of waiters) w.resolve(`answer ${key}`);
          }),
        );
      },
    });
    try {
      const asked = Array.from({ length: 30 }, (_, i) => batcher.ask(`k${i}`, null));
      await clock.advance(100);
      expect(await Promise.all(asked)).toEqual(Array.from({ length: 30 }, (_, i) => `answer k${i}`));
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain("MaxListenersExceededWarning");
      expect(seen && getEventListeners(seen, "abort")).toHaveLength(0);
    } finally {
      process.off("warning", onWarning);
      await batcher.stop();
    }
  });

  it("aborts a flush in progress when the batcher stops", async () => {
    const clock = new ManualClock(0);
    let flushSignal: AbortSignal | undefined;
    const batcher = new TickBatcher<string, null, string>({
      clock,
      name: "test batcher",
      nextDelay: () => 100,
      // Like the real flushes: on the stop, the questions of the batch get the stop's reason.
      flush: (batch, signal) => {
        flushSignal = signal;
        return new Promise<void>((resolve) => {
          const onAbort = () => {
            for (const waiters of batch.values()) for (const w of waiters) w.reject(signal.reason);
            resolve();
          };
          signal.addEventListener("abort", onAbort, { once: true });
        });
      },
    });
    const pending = batcher.ask("k", null).catch((e: Error) => e.message);
    await clock.advance(100);
    for (let i = 0; i < 20 && !flushSignal; i++) await new Promise((r) => setImmediate(r));
    expect(flushSignal?.aborted).toBe(false);
    await batcher.stop();
    expect(flushSignal?.aborted).toBe(true);
    expect(await pending).toMatch(/stopped/);
  });
});

/**
 * `askMany` asks under many keys with one promise and one abort listener, so a poll of 10,000
 * tasks does not create 10,000 promises and listeners a tick; its keys ride the same flush as `ask`'s.
 */
describe("TickBatcher.askMany", () => {
  const answering = (clock: ManualClock, flushed: string[][]) =>
    new TickBatcher<string, null, string>({
      clock,
      name: "test batcher",
      nextDelay: () => 100,
      flush: async (batch) => {
        flushed.push([...batch.keys()]);
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(`answer ${key}`);
      },
    });

  it("answers every distinct key in one flush, shared with a single ask of the same key", async () => {
    const clock = new ManualClock(0);
    const flushed: string[][] = [];
    const batcher = answering(clock, flushed);
    try {
      const stop = new AbortController();
      const many = batcher.askMany(["a", "b", "a", "c"], null, stop.signal);
      const one = batcher.ask("b", null);
      await clock.advance(100);
      expect(await many).toEqual(
        new Map([
          ["a", "answer a"],
          ["b", "answer b"],
          ["c", "answer c"],
        ]),
      );
      expect(await one).toBe("answer b");
      expect(flushed).toEqual([["a", "b", "c"]]);
      expect(getEventListeners(stop.signal, "abort")).toHaveLength(0);
      expect(await batcher.askMany([], null)).toEqual(new Map());
    } finally {
      await batcher.stop();
    }
  });

  it("an abort takes its keys out of the next flush and rejects with the reason", async () => {
    const clock = new ManualClock(0);
    const flushed: string[][] = [];
    const batcher = answering(clock, flushed);
    try {
      const stop = new AbortController();
      const many = batcher.askMany(["a", "b"], null, stop.signal);
      const other = batcher.ask("b", null);
      const reason = new Error("deadline");
      stop.abort(reason);
      await expect(many).rejects.toBe(reason);
      await clock.advance(100);
      expect(await other).toBe("answer b");
      expect(flushed).toEqual([["b"]]);
    } finally {
      await batcher.stop();
    }
  });

  it("rejects when the flush rejects its keys, and when the batcher stops", async () => {
    const clock = new ManualClock(0);
    const failing = new TickBatcher<string, null, string>({
      clock,
      name: "test batcher",
      nextDelay: () => 100,
      flush: async (batch) => {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(new Error("401"));
      },
    });
    const many = failing.askMany(["a", "b"], null).catch((e: unknown) => e);
    await clock.advance(100);
    expect(await many).toMatchObject({ message: "401" });
    const pending = failing.askMany(["c"], null);
    await failing.stop();
    await expect(pending).rejects.toThrow("test batcher stopped");
    await expect(failing.askMany(["d"], null)).rejects.toThrow("test batcher is stopped");
  });
});

/**
 * A partition asks once a tick under the same signal for as long as its task runs: one abort listener for the
 * signal's life, not one added and removed per ask (a tenth of a backfill's allocations).
 */
describe("TickBatcher abort listeners", () => {
  it("holds one listener per signal across asks, and an abort still rejects and dequeues only its own asks", async () => {
    const clock = new ManualClock(0);
    const flushed: string[][] = [];
    const batcher = new TickBatcher<string, null, string>({
      clock,
      name: "test batcher",
      nextDelay: () => 100,
      flush: async (batch) => {
        flushed.push([...batch.keys()]);
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(`answer ${key}`);
      },
    });
    const mine = new AbortController();
    const other = new AbortController();
    try {
      for (let tick = 0; tick < 3; tick++) {
        const a = batcher.ask("a", null, mine.signal);
        expect(getEventListeners(mine.signal, "abort")).toHaveLength(1);
        await clock.advance(100);
        expect(await a).toBe("answer a");
      }
      const a = batcher.ask("a", null, mine.signal);
      const b = batcher.ask("b", null, mine.signal);
      const c = batcher.ask("a", null, other.signal);
      expect(getEventListeners(mine.signal, "abort")).toHaveLength(1);
      mine.abort(new Error("stop"));
      await expect(a).rejects.toThrow("stop");
      await expect(b).rejects.toThrow("stop");
      await clock.advance(100);
      expect(await c).toBe("answer a");
      expect(flushed.at(-1)).toEqual(["a"]);
      // A fresh ask under an aborted signal is refused at once, as before.
      await expect(batcher.ask("a", null, mine.signal)).rejects.toThrow("stop");
    } finally {
      await batcher.stop();
    }
  });
});
