import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { DEFAULT_STALL_TIMEOUT_MS, ProgressWatch } from "../../src/jobs/progress-watch.js";

/**
 * When a worker is stalled: partitions due for it, none held, nothing claimed or committed, nothing that
 * excuses it, for the whole stall timeout. Driven by a manual clock, one look per "tick".
 */

const MINUTE = 60_000;
const idle = { excuse: null, held: 0 } as const;

function watch(stallAfterMs = 5 * MINUTE, dueCheckMs = 10_000) {
  const clock = new ManualClock();
  const start = clock.now();
  const w = new ProgressWatch({ clock, stallAfterMs, dueCheckMs });
  /** Moves the clock by `ms`, looking every `tickMs` as the worker does (due answered when asked). */
  const idleFor = (ms: number, due: boolean, tickMs = 1000) => {
    for (let t = 0; t < ms; t += tickMs) {
      clock.set(clock.now() + tickMs);
      w.observe(w.wantsDue(idle) ? { ...idle, due } : idle);
    }
  };
  return { clock, start, w, idleFor };
}

describe("ProgressWatch", () => {
  it("an idle worker with due partitions is stalled once the timeout has passed, since the first look that saw them", () => {
    const { clock, start, w, idleFor } = watch();
    expect(w.state).toEqual({ stalled: false, since: null, lastProgressAt: start });
    idleFor(1000, true);
    const since = clock.now();
    idleFor(5 * MINUTE - 1000, true);
    expect(w.state.stalled).toBe(false);
    idleFor(1000, true);
    expect(w.state).toEqual({ stalled: true, since, lastProgressAt: start });
    expect(clock.now() - since).toBe(5 * MINUTE);
  });

  it("a claim or a commit ends the stall; staying idle afterwards takes a whole timeout again", () => {
    const { clock, w, idleFor } = watch();
    idleFor(6 * MINUTE, true);
    expect(w.state.stalled).toBe(true);
    w.progressed();
    const moved = clock.now();
    expect(w.state).toEqual({ stalled: false, since: null, lastProgressAt: moved });
    idleFor(4 * MINUTE, true);
    expect(w.state.stalled).toBe(false);
    idleFor(2 * MINUTE, true);
    expect(w.state.stalled).toBe(true);
    expect(w.state.lastProgressAt).toBe(moved);
  });

  it("a worker holding partitions is busy, not stalled, however long they take while others wait", () => {
    const { clock, start, w } = watch();
    for (let i = 0; i < 600; i++) {
      clock.set(clock.now() + 10_000);
      expect(w.wantsDue({ excuse: null, held: 8 })).toBe(false);
      w.observe({ excuse: null, held: 8, due: true });
    }
    expect(w.state).toEqual({ stalled: false, since: null, lastProgressAt: start });
  });

  it("nothing due: never stalled; partitions that become due start the span at the read that saw them", () => {
    const { clock, w, idleFor } = watch();
    idleFor(30 * MINUTE, false);
    expect(w.state.stalled).toBe(false);
    idleFor(1000, true);
    const seen = clock.now();
    idleFor(5 * MINUTE, true);
    expect(w.state).toMatchObject({ stalled: true, since: seen });
  });

  it("an excuse (a pause, an outage, a slot shortage) is never a stall, and the span starts anew after it", () => {
    const { clock, w, idleFor } = watch();
    idleFor(4 * MINUTE, true);
    for (let i = 0; i < 20 * 60; i++) {
      clock.set(clock.now() + 1000);
      expect(w.wantsDue({ excuse: "paused (druid)", held: 0 })).toBe(false);
      w.observe({ excuse: "paused (druid)", held: 0 });
    }
    expect(w.state.stalled).toBe(false);
    // The 4 minutes before the pause do not count: the first idle look after it starts over.
    idleFor(4 * MINUTE, true);
    expect(w.state.stalled).toBe(false);
    idleFor(1 * MINUTE + 1000, true);
    expect(w.state.stalled).toBe(true);
  });

  it("the ledger is asked whether partitions are due once per dueCheckMs while idle, and at once after a busy or excused look", () => {
    const { clock, w } = watch(5 * MINUTE, 10_000);
    expect(w.wantsDue(idle)).toBe(true);
    w.observe({ ...idle, due: true });
    const asked: number[] = [];
    for (let i = 0; i < 30; i++) {
      clock.set(clock.now() + 1000);
      if (w.wantsDue(idle)) {
        asked.push(i);
        w.observe({ ...idle, due: true });
      } else w.observe(idle);
    }
    expect(asked).toEqual([9, 19, 29]);
    w.observe({ excuse: null, held: 1 });
    expect(w.wantsDue(idle)).toBe(true);
    // Between reads the last answer stands: idle looks without one keep the span going.
    w.observe({ ...idle, due: true });
    const since = clock.now();
    clock.set(clock.now() + 5 * MINUTE);
    w.observe(idle);
    expect(w.state).toMatchObject({ stalled: true, since });
    // A read that finds nothing due ends the span.
    w.observe({ ...idle, due: false });
    expect(w.state.stalled).toBe(false);
  });

  it("defaults: five minutes, and a due read at most every 10 s", () => {
    const clock = new ManualClock();
    const w = new ProgressWatch({ clock });
    expect(w.stallAfterMs).toBe(DEFAULT_STALL_TIMEOUT_MS);
    expect(DEFAULT_STALL_TIMEOUT_MS).toBe(5 * MINUTE);
    w.observe({ ...idle, due: true });
    clock.set(clock.now() + 9_999);
    expect(w.wantsDue(idle)).toBe(false);
    clock.set(clock.now() + 1);
    expect(w.wantsDue(idle)).toBe(true);
  });
});
