import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { Driver } from "../../src/driver/driver.js";
import { TaskProgress } from "../../src/driver/signals.js";
import { openStore } from "../../src/ledger/open.js";

/**
 * A runner may keep work going between its handler runs (the ingest runner's createdTime lists); when the driver
 * stops it must end that work, or a stopped service never exits (seen: `segops serve` on SIGTERM with Druid gone,
 * its list waiting out the outage for ever).
 */
describe("a stopping driver closes its runners", () => {
  it("calls close once, after every handler has settled", async () => {
    const clock = new ManualClock(1_000);
    const store = await openStore("sqlite::memory:", { clock });
    await store.createJob({ id: "j", kind: "test" }, [{ id: "a", kind: "k" }]);
    const events: string[] = [];
    let started = 0;
    const driver = new Driver({
      store,
      clock,
      pollMs: 10,
      runners: [
        {
          kind: "k",
          concurrency: 1,
          maxRetry: 0,
          handler: async (_task, ctx) => {
            started++;
            await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
            events.push("handler settled");
            throw new TaskProgress("holding", 60_000);
          },
          close: () => events.push("close"),
        },
      ],
    });
    driver.start();
    for (let i = 0; i < 200 && started === 0; i++) await clock.advance(5);
    expect(started).toBe(1);
    expect(events).toEqual([]);
    await driver.stop();
    await store.close();
    expect(events).toEqual(["handler settled", "close"]);
  });
});
