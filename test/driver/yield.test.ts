import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { Driver } from "../../src/driver/driver.js";
import { TaskDefer } from "../../src/driver/signals.js";
import { openStore } from "../../src/ledger/open.js";

/**
 * A driver that claims something every cycle must still let timers and sockets run. On SQLite every await
 * of a cycle can resolve as a microtask (the driver is synchronous under its promises), so tasks deferred
 * a tick and claimed again at once kept the loop from ever reaching the event loop: a compaction waiting
 * for its Druid status (a socket) and the lease heartbeat (a timer) stalled until the lease lapsed, and a
 * month's compaction took 60 s instead of 4 (seen in CI). Counted in cycles, not timed.
 */
describe("the driver's loop yields to the event loop", () => {
  it("a handler waiting for a timer finishes while other tasks are deferred and claimed again every cycle", async () => {
    const clock = new ManualClock(1_000);
    const store = await openStore("sqlite::memory:", { clock });
    await store.createJob(
      { id: "j", kind: "test" },
      ["a-holder", "d1", "d2", "d3"].map((id) => ({ id, kind: "k" })),
    );
    let holderDone = false;
    let deferrals = 0;
    let deferralsWhenDone = -1;
    const driver = new Driver({
      store,
      clock,
      pollMs: 10,
      runners: [
        {
          kind: "k",
          concurrency: 2,
          maxRetry: 0,
          handler: async (task) => {
            if (task.id === "a-holder") {
              // Like a status answer from Druid: it arrives on the event loop, not as a microtask.
              await new Promise((resolve) => setTimeout(resolve, 1));
              holderDone = true;
              deferralsWhenDone = deferrals;
              return;
            }
            // Waiting for what the holder has (a budget): due again at once, without moving the clock.
            // Bounded, so the loop ends on the old code too and the test fails instead of hanging.
            if (!holderDone && ++deferrals < 20_000) throw new TaskDefer("the budget is in use", 0);
          },
        },
      ],
    });
    driver.start();
    for (let i = 0; i < 1000 && !holderDone; i++) await new Promise((r) => setTimeout(r, 1));
    await driver.stop();
    await store.close();
    expect(holderDone).toBe(true);
    // A few cycles at most go by before the timer fires; without the yield, every one of the 20,000.
    expect(deferralsWhenDone).toBeLessThan(1000);
  });
});
