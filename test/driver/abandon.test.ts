import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { Driver } from "../../src/driver/driver.js";
import { TaskProgress } from "../../src/driver/signals.js";
import { openStore } from "../../src/ledger/open.js";
import type { SqlStore } from "../../src/ledger/sql-store.js";

/**
 * A task that leaves a driver without its terminal commit there — its lease taken over by another host
 * (this one was paused past it, or cut off from the ledger), or handed back at shutdown — must not keep
 * what the runner holds for it in this process: an admission reservation kept for work another host now
 * owns held this host's slots for good (three hosts stuck at 170 of 240 partitions with Druid idle).
 */
async function setup() {
  const clock = new ManualClock(1_000);
  const store = await openStore("sqlite::memory:", { clock });
  await store.createJob({ id: "j", kind: "test" }, [
    { id: "a", kind: "k" },
    { id: "b", kind: "k" },
  ]);
  const held = new Set<string>();
  const abandoned: string[] = [];
  const driver = new Driver({
    store,
    clock,
    pollMs: 10,
    leaseMs: 600,
    heartbeatMs: 100,
    runners: [
      {
        kind: "k",
        concurrency: 2,
        maxRetry: 0,
        handler: async (task) => {
          held.add(task.id);
          if (task.id === "b") return; // done here
          throw new TaskProgress("holding", 60_000);
        },
        onFinish: (task) => {
          held.delete(task.id);
        },
        abandon: (id, why) => {
          held.delete(id);
          abandoned.push(`${id} ${why}`);
        },
      },
    ],
  });
  return { clock, store, held, abandoned, driver };
}

describe("a task that leaves a driver unfinished", () => {
  it("taken over by another host: the runner is told to let go of it; a task done here is not", async () => {
    const { clock, store, held, abandoned, driver } = await setup();
    driver.start();
    for (let i = 0; i < 200 && !(held.has("a") && (await store.getTask("b"))?.state === "done"); i++)
      await clock.advance(5);
    expect(held.has("a")).toBe(true);
    // Another host takes the task over (as after this one's lease lapsed during a pause).
    await (store as SqlStore).executor.query({
      text: "UPDATE tasks SET lease_owner = 'other-host', version = version + 1 WHERE id = 'a'",
      values: [],
    });
    for (let i = 0; i < 200 && abandoned.length === 0; i++) await clock.advance(20);
    expect(abandoned).toEqual(["a lost"]);
    expect([...held]).toEqual([]);
    await driver.stop();
    await store.close();
  });

  it("handed back at shutdown: the runner is told to let go of it", async () => {
    const { clock, store, held, abandoned, driver } = await setup();
    driver.start();
    for (let i = 0; i < 200 && !held.has("a"); i++) await clock.advance(5);
    await driver.stop();
    expect(abandoned).toEqual(["a handed-back"]);
    expect((await store.getTask("a"))?.state).toBe("suspended");
    await store.close();
  });
});
