import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { TransientError } from "../../src/druid/errors.js";
import { OutageMonitor } from "../../src/druid/outage.js";
import { StatusBatcher, type StatusLookup, type TaskStatusSnapshot } from "../../src/work/status-batcher.js";

function fakeDruid(states: Record<string, TaskStatusSnapshot["state"]>) {
  const calls: string[][] = [];
  const lookup: StatusLookup = async (ids) => {
    calls.push([...ids]);
    const out = new Map<string, TaskStatusSnapshot>();
    for (const id of ids) {
      const state = states[id];
      if (state) out.set(id, { id, state, duration: state === "RUNNING" ? -1 : 10, errorMsg: null });
    }
    return out;
  };
  return { lookup, calls };
}

describe("status batcher", () => {
  it("answers every task asked for in one tick with a single bulk lookup", async () => {
    const clock = new ManualClock(0);
    const druid = fakeDruid(
      Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`t${i}`, "RUNNING" as const])),
    );
    const batcher = new StatusBatcher({ lookup: druid.lookup, clock, tickMs: 1000 });
    const answers = Promise.all(Array.from({ length: 300 }, (_, i) => batcher.get(`t${i}`)));
    await clock.advance(1000);
    const results = await answers;
    expect(druid.calls).toHaveLength(1);
    expect(druid.calls[0]).toHaveLength(300);
    expect(results.every((r) => r.state === "RUNNING")).toBe(true);
    await batcher.stop();
  });

  it("looks a task up within the gathering pause after a quiet spell, then at most once a tick", async () => {
    const clock = new ManualClock(0);
    const calls: number[] = [];
    const batcher = new StatusBatcher({
      clock,
      tickMs: 1000,
      lookup: async (ids) => {
        calls.push(clock.now());
        return new Map(
          ids.map((id) => [id, { id, state: "RUNNING" as const, duration: -1, errorMsg: null }]),
        );
      },
    });
    // Idle: the first question is looked up 50 ms later (with whatever else was asked by then), not a tick.
    const first = batcher.get("a");
    await clock.advance(20);
    const second = batcher.get("b");
    await clock.advance(30);
    await Promise.all([first, second]);
    expect(calls).toEqual([50]);
    // Asked again at once: the next lookup waits for the tick since the last one ended.
    const again = batcher.get("a");
    await clock.advance(500);
    expect(calls).toEqual([50]);
    await clock.advance(500);
    await again;
    expect(calls).toEqual([50, 1050]);
    await batcher.stop();
  });

  it("keeps a tick from start to start whatever each lookup's latency, and half a tick after a slow one", async () => {
    const clock = new ManualClock(0);
    const starts: number[] = [];
    let latencyMs = 400;
    const batcher = new StatusBatcher({
      clock,
      tickMs: 1000,
      lookup: async (ids) => {
        starts.push(clock.now());
        await clock.sleep(latencyMs);
        return new Map(
          ids.map((id) => [id, { id, state: "RUNNING" as const, duration: -1, errorMsg: null }]),
        );
      },
    });
    // A watcher rides every lookup: 400 ms answers still come a tick apart (a period of 1,400 ms before).
    const watching = batcher.getEnded("a");
    for (let i = 0; i < 40; i++) await clock.advance(50);
    expect(starts).toEqual([50, 1050]);
    // An answer slower than the tick: the next lookup leaves Druid half a tick after it, not at once.
    latencyMs = 1500;
    for (let i = 0; i < 80; i++) await clock.advance(50);
    expect(starts).toEqual([50, 1050, 2050, 4050]);
    await batcher.stop();
    await watching.catch(() => {});
  });

  it("reports an id Druid omits as UNKNOWN, not FAILED", async () => {
    const clock = new ManualClock(0);
    const batcher = new StatusBatcher({ lookup: fakeDruid({ a: "SUCCESS" }).lookup, clock, tickMs: 500 });
    const both = Promise.all([batcher.get("a"), batcher.get("ghost")]);
    await clock.advance(500);
    expect((await both).map((r) => r.state)).toEqual(["SUCCESS", "UNKNOWN"]);
    await batcher.stop();
  });

  it("backs off as a whole on a retryable failure and keeps the waiters", async () => {
    const clock = new ManualClock(0);
    let failNext = 2;
    const calls: number[] = [];
    const batcher = new StatusBatcher({
      clock,
      tickMs: 1000,
      random: () => 0.999,
      lookup: async (ids) => {
        calls.push(clock.now());
        if (failNext-- > 0) throw Object.assign(new Error("503"), { retryable: true });
        return new Map(ids.map((id) => [id, { id, state: "SUCCESS" as const, duration: 1, errorMsg: null }]));
      },
    });
    const answer = batcher.get("x");
    await clock.advance(1000); // first lookup (after the gathering pause) fails
    await clock.advance(1000); // still backing off: the pause after a failure is longer than a tick
    expect(calls).toEqual([50]);
    await clock.advance(60_000);
    expect((await answer).state).toBe("SUCCESS");
    expect(calls.length).toBe(3);
    expect(calls[2]! - calls[1]!).toBeGreaterThan(calls[1]! - calls[0]!);
    await batcher.stop();
  });

  it("shares the host's backoff while Druid does not answer: nothing sent but the probes, and the tick after the gate opens polls", async () => {
    const clock = new ManualClock(0);
    const monitor = new OutageMonitor(clock, undefined, { random: () => 0 });
    const call = {
      origin: "http://druid:8888",
      endpoint: "POST /druid/indexer/v1/taskStatus",
      route: "POST /druid/indexer/v1/taskStatus",
    };
    let down = true;
    const sent: number[] = [];
    // The client's part, on the injected clock: the gate admits or refuses before sending, and every attempt's
    // outcome is recorded (what DruidHttp does with `gate` and `onAttempt`).
    const batcher = new StatusBatcher({
      clock,
      tickMs: 1000,
      lookup: async (ids) => {
        monitor.admit(call);
        sent.push(clock.now());
        if (down) {
          const error = new TransientError({
            endpoint: call.endpoint,
            druidMessage: "connection refused",
            requestSent: false,
          });
          monitor.record({
            reachable: false,
            endpoint: call.endpoint,
            route: call.route,
            status: null,
            error,
            origin: call.origin,
          });
          throw monitor.giveUp(call, error);
        }
        monitor.record({
          reachable: true,
          endpoint: call.endpoint,
          route: call.route,
          status: 200,
          origin: call.origin,
        });
        return new Map(ids.map((id) => [id, { id, state: "SUCCESS" as const, duration: 1, errorMsg: null }]));
      },
    });
    const answer = batcher.get("x");
    // Three unanswered lookups take the host down (the first two backed off as any failure); from then on one
    // probe per step (1, 2, 4, 8, 16 s) is sent.
    for (let t = 0; t < 40; t++) await clock.advance(1000);
    // Once the host is down the batcher backs off no more on its own: it asks every tick, and the gate refuses
    // all but the probes before anything is sent.
    expect(monitor.refusedTotal).toBeGreaterThan(25);
    const probes = sent.slice(3);
    expect(probes.length).toBeGreaterThanOrEqual(3);
    expect(probes.length).toBeLessThanOrEqual(5);
    expect(monitor.hostOutage()).not.toBeNull();
    // Another caller's answer opens the gate at 40.3 s (Druid is back): the batcher's next tick polls and succeeds,
    // where a backoff of its own (up to 30 s) would have waited on.
    down = false;
    await clock.advance(300);
    monitor.record({
      reachable: true,
      endpoint: "GET /druid/indexer/v1/workers",
      route: "GET /druid/indexer/v1/workers",
      status: 200,
      origin: call.origin,
    });
    const opened = clock.now();
    await clock.advance(1000);
    expect((await answer).state).toBe("SUCCESS");
    expect(sent.at(-1)! - opened).toBeLessThanOrEqual(1000);
    await batcher.stop();
  });

  it("rejects the waiters of a lookup that failed for good", async () => {
    const clock = new ManualClock(0);
    const batcher = new StatusBatcher({
      clock,
      lookup: async () => {
        throw Object.assign(new Error("401 Unauthorized"), { retryable: false });
      },
    });
    const answer = batcher.get("x");
    const assertion = expect(answer).rejects.toThrow("401 Unauthorized");
    await clock.advance(1000);
    await assertion;
    await batcher.stop();
  });

  it("getEnded keeps one waiter through RUNNING answers and resolves with the first other one", async () => {
    const clock = new ManualClock(0);
    const states: Record<string, TaskStatusSnapshot["state"]> = { a: "RUNNING", b: "RUNNING" };
    const druid = fakeDruid(states);
    const batcher = new StatusBatcher({ lookup: druid.lookup, clock, tickMs: 1000 });
    let ended: string | null = null;
    const watching = batcher.getEnded("a").then((r) => {
      ended = r.state;
      return r;
    });
    // A plain ask rides the same lookups and is answered each time, RUNNING or not.
    const once = batcher.get("a");
    await clock.advance(1000);
    expect((await once).state).toBe("RUNNING");
    await clock.advance(1000);
    await clock.advance(1000);
    expect(ended).toBeNull();
    expect(druid.calls).toEqual([["a"], ["a"], ["a"]]);
    states.a = "SUCCESS";
    await clock.advance(1000);
    expect(await watching).toMatchObject({ id: "a", state: "SUCCESS" });
    // Nobody waits any more: no further lookups.
    await clock.advance(5000);
    expect(druid.calls).toHaveLength(4);
    // An id Druid forgot ends the wait too (UNKNOWN), so the caller can resubmit.
    const forgotten = batcher.getEnded("gone");
    await clock.advance(1000);
    expect(await forgotten).toEqual({ id: "gone", state: "UNKNOWN" });
    await batcher.stop();
  });

  it("a getEnded whose signal aborts during a lookup is not asked about again", async () => {
    const clock = new ManualClock(0);
    const calls: string[][] = [];
    let release: (() => void) | null = null;
    const lookup: StatusLookup = async (ids) => {
      calls.push([...ids]);
      // The first lookup hangs until the test lets it go: the abort lands while it is in flight.
      if (calls.length === 1) await new Promise<void>((r) => (release = r));
      return new Map(ids.map((id) => [id, { id, state: "RUNNING" as const, duration: -1, errorMsg: null }]));
    };
    const batcher = new StatusBatcher({ lookup, clock, tickMs: 1000 });
    const stop = new AbortController();
    const watching = batcher.getEnded("a", stop.signal);
    watching.catch(() => undefined);
    await clock.advance(1000);
    expect(calls).toEqual([["a"]]);
    stop.abort(new Error("canceled"));
    await expect(watching).rejects.toThrow("canceled");
    (release as (() => void) | null)?.();
    for (let i = 0; i < 5; i++) await clock.advance(1000);
    expect(calls).toEqual([["a"]]);
    await batcher.stop();
  });
});
