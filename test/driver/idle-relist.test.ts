import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { Driver, IDLE_RELIST_POLLS } from "../../src/driver/driver.js";
import type { DruidClient } from "../../src/druid/client.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { AdmissionTracker } from "../../src/work/admission-tracker.js";

/**
 * A runner that refuses every due partition (admission full) made the driver read up to 100 due rows every
 * poll to hear no again. With an `eligibilityEpoch`, the driver reads the due list again only once the epoch
 * changed (a slot freed), a task left it, or `IDLE_RELIST_POLLS` polls passed.
 */
describe("the due list while nothing is eligible", () => {
  async function setUp() {
    const clock = new ManualClock(1_000);
    const store = await openStore("sqlite::memory:", { clock });
    await store.createJob(
      { id: "j", kind: "test" },
      ["a", "b", "c"].map((id) => ({ id, kind: "k" })),
    );
    let lists = 0;
    const counted = new Proxy(store, {
      get(target, prop) {
        if (prop === "listDue")
          return (o: Parameters<Store["listDue"]>[0]) => {
            lists++;
            return target.listDue(o);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { clock, store, counted, lists: () => lists };
  }

  it("is read again only when the epoch changes or IDLE_RELIST_POLLS polls passed", async () => {
    const { clock, store, counted, lists } = await setUp();
    let open = false;
    let epoch = 0;
    const started: string[] = [];
    const driver = new Driver({
      store: counted,
      clock,
      pollMs: 10,
      runners: [
        {
          kind: "k",
          concurrency: 1,
          maxRetry: 0,
          isEligible: () => open,
          eligibilityEpoch: () => epoch,
          handler: async (t) => {
            started.push(t.id);
          },
        },
      ],
    });
    driver.start();
    // 40 polls of refusals: the list is read about once every IDLE_RELIST_POLLS polls, not 40 times.
    for (let i = 0; i < 40; i++) await clock.advance(10);
    expect(started).toEqual([]);
    expect(lists()).toBeGreaterThanOrEqual(40 / IDLE_RELIST_POLLS - 1);
    expect(lists()).toBeLessThanOrEqual(40 / IDLE_RELIST_POLLS + 2);
    // A slot frees: the epoch changes and the very next poll reads the list and claims.
    open = true;
    epoch++;
    const before = lists();
    await clock.advance(10);
    for (let i = 0; i < 20 && started.length === 0; i++) await clock.advance(1);
    expect(lists()).toBeGreaterThan(before);
    expect(started[0]).toBe("a");
    await driver.stop();
    await store.close();
  });

  it("still sees what changes by time alone within IDLE_RELIST_POLLS polls (the epoch unchanged)", async () => {
    const { clock, store, counted } = await setUp();
    let open = false;
    const started: string[] = [];
    const driver = new Driver({
      store: counted,
      clock,
      pollMs: 10,
      runners: [
        {
          kind: "k",
          concurrency: 1,
          maxRetry: 0,
          isEligible: () => open,
          eligibilityEpoch: () => 0,
          handler: async (t) => {
            started.push(t.id);
          },
        },
      ],
    });
    driver.start();
    for (let i = 0; i < 10; i++) await clock.advance(10);
    open = true;
    const openedAt = clock.now();
    while (started.length === 0 && clock.now() - openedAt <= 10 * (IDLE_RELIST_POLLS + 2))
      await clock.advance(1);
    expect(started[0]).toBe("a");
    await driver.stop();
    await store.close();
  });

  it("reads the list every poll for a runner without an epoch, as before", async () => {
    const { clock, store, counted, lists } = await setUp();
    const driver = new Driver({
      store: counted,
      clock,
      pollMs: 10,
      runners: [{ kind: "k", concurrency: 1, maxRetry: 0, isEligible: () => false, handler: async () => {} }],
    });
    driver.start();
    for (let i = 0; i < 20; i++) await clock.advance(10);
    expect(lists()).toBeGreaterThanOrEqual(19);
    await driver.stop();
    await store.close();
  });
});

describe("admission's epoch (the ingest runner's eligibilityEpoch)", () => {
  it("changes when one of ours leaves, a snapshot is read or a pause runs out; not on a refusal", async () => {
    const clock = new ManualClock(0);
    const client = {
      workers: async () => [{ worker: { capacity: 2, disabled: false }, currCapacityUsed: 0 }],
      tasks: async () => [],
    } as unknown as DruidClient;
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 1, tickMs: 1 });
    const e0 = tracker.epoch;
    expect(tracker.admit("p1", 1)).toBe(false); // no capacity known yet
    expect(tracker.epoch).toBe(e0);
    await clock.advance(5);
    await tracker.refresh();
    const e1 = tracker.epoch;
    expect(e1).not.toBe(e0);
    expect(tracker.admit("p1", 1)).toBe(true);
    tracker.track("p1", 1, "druid_p1");
    expect(tracker.admit("p2", 1)).toBe(false); // max-concurrency
    expect(tracker.epoch).toBe(e1);
    tracker.untrack("p1");
    const e2 = tracker.epoch;
    expect(e2).not.toBe(e1);
    tracker.untrack("p1"); // nothing left to untrack: no change
    expect(tracker.epoch).toBe(e2);
    tracker.pause(clock.now() + 100);
    const paused = tracker.epoch;
    await clock.advance(100);
    expect(tracker.epoch).not.toBe(paused);
  });
});
