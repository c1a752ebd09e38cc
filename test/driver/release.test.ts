import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { Driver } from "../../src/driver/driver.js";
import { TaskProgress } from "../../src/driver/signals.js";
import type { DruidClient } from "../../src/druid/client.js";
import { openStore } from "../../src/ledger/open.js";
import { AdmissionTracker } from "../../src/work/admission-tracker.js";

/**
 * Two hosts starting together both find the same partitions eligible; each reserves admission slots for
 * them, and only one claims each. A reservation for a partition another driver got must be released, or
 * the host ends up with its whole budget reserved for work it will never run (seen: a second host that
 * never did anything in the shared-ledger test).
 */
describe("eligible but not claimed", () => {
  it("tells the runner which eligible tasks it did not get, so their reservations are released", async () => {
    const clock = new ManualClock(1_000);
    const store = await openStore("sqlite::memory:", { clock });
    await store.createJob(
      { id: "j", kind: "test" },
      ["a", "b", "c"].map((id) => ({ id, kind: "k" })),
    );
    const reserved = new Set<string>();
    const released: string[] = [];
    let started = 0;
    const driver = new Driver({
      store,
      clock,
      pollMs: 10,
      runners: [
        {
          kind: "k",
          concurrency: 1, // the claim limit cuts two of the three eligible tasks
          maxRetry: 0,
          isEligible: (t) => {
            reserved.add(t.id);
            return true;
          },
          release: (id) => {
            reserved.delete(id);
            released.push(id);
          },
          handler: async () => {
            started++;
            throw new TaskProgress("holding", 60_000);
          },
        },
      ],
    });
    driver.start();
    for (let i = 0; i < 200 && started === 0; i++) await clock.advance(5);
    await driver.stop();
    await store.close();
    expect(started).toBe(1);
    expect(released.sort()).toEqual(["b", "c"]);
    expect([...reserved]).toEqual(["a"]);
  });

  it("the admission tracker drops a reservation that never became a submission, and keeps submitted ones", async () => {
    const clock = new ManualClock(0);
    const client = {
      workers: async () => [{ worker: { capacity: 3, disabled: false }, currCapacityUsed: 0 }],
      tasks: async () => [],
    } as unknown as DruidClient;
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 2, tickMs: 1 });
    expect(tracker.admit("p1", 1)).toBe(false); // no capacity known yet
    await clock.advance(5);
    await tracker.refresh();
    expect(tracker.admit("p1", 1)).toBe(true);
    expect(tracker.admit("p2", 1)).toBe(true);
    expect(tracker.admit("p3", 1)).toBe(false); // max-concurrency: both reserved
    tracker.track("p1", 1, "druid_p1");
    tracker.release("p1"); // submitted: stays
    tracker.release("p2"); // went to another host: released
    expect(tracker.inFlight).toBe(1);
    expect(tracker.admit("p3", 1)).toBe(true);
  });
});
