import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";

describe("ManualClock", () => {
  it("wakes sleepers in time order only when advanced past their wake time", async () => {
    const clock = new ManualClock(0);
    const woke: string[] = [];
    void clock.sleep(200).then(() => woke.push(`b@${clock.now()}`));
    void clock.sleep(100).then(() => woke.push(`a@${clock.now()}`));
    await clock.advance(50);
    expect(woke).toEqual([]);
    await clock.advance(200);
    expect(woke).toEqual(["a@100", "b@200"]);
    expect(clock.now()).toBe(250);
  });

  it("rejects an aborted sleep and forgets it", async () => {
    const clock = new ManualClock(0);
    const ac = new AbortController();
    const p = clock.sleep(1000, ac.signal);
    ac.abort(new Error("stop"));
    await expect(p).rejects.toThrow("stop");
    expect(clock.pendingSleeps).toBe(0);
  });
});
