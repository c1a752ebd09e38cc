import { afterEach, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { DruidClient } from "../../src/druid/client.js";
import { seedHistory } from "../../src/sim/history.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";

/**
 * A seeded history is what a Druid that has run for a day answers: complete tasks within the last 24 h on the task
 * list (bounded by `createdTimeInterval` and `max` as Druid bounds them), served segments of whole days per
 * datasource, and nothing that runs or holds a slot.
 */

let sim: SimHandle | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
  sim = undefined;
  client = undefined;
});

it("seeds complete tasks over the last day and served segments of whole days, as the APIs then list them", async () => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  sim = await startSim({ clock, capacity: 4 });
  const seeded = seedHistory(sim.engine, {
    tasks: 1000,
    segments: 4000,
    dataSources: 5,
    names: ["events"],
    segmentsBefore: Date.UTC(2026, 0, 1),
  });
  expect(seeded).toEqual({
    tasks: 1000,
    segments: 4000,
    dataSources: ["events", "history_01", "history_02", "history_03", "history_04"],
  });
  client = new DruidClient({ url: sim.url });

  const day = await client.tasks({ datasource: "events" });
  expect(day).toHaveLength(200);
  expect(new Set(day.map((t) => t.statusCode))).toEqual(new Set(["SUCCESS", "FAILED"]));
  expect(day.every((t) => t.runnerStatusCode === "NONE")).toBe(true);
  // The last two hours of a day's even spread: about a twelfth, far from all of them.
  const recent = await client.tasks({
    datasource: "events",
    createdTimeInterval: "2000-01-01T00:00:00Z/2000-01-01T02:00:00Z",
  });
  expect(recent.length).toBeGreaterThan(10);
  expect(recent.length).toBeLessThan(30);
  expect(await client.tasks({ datasource: "events", max: 0 })).toEqual([]);
  expect(await client.tasks({ state: "running" })).toEqual([]);

  // 4,000 segments over 5 datasources of 4 a day: 200 days each, ending the day before 2026-01-01, all served.
  const lastDay = await client.metadataSegments("events", ["2025-12-31/2026-01-01"]);
  expect(lastDay.map((s) => s.shardSpec.partitionNum).sort()).toEqual([0, 1, 2, 3]);
  expect(await client.metadataSegments("events", ["2026-01-01/2026-01-02"])).toEqual([]);
  expect(await client.metadataSegments("events", ["2025-06-15/2025-06-16"])).toHaveLength(4);
  expect(await client.metadataSegments("events", ["2025-06-14/2025-06-15"])).toEqual([]);
  expect(await client.servedSegments("history_04")).toHaveLength(800);
  const served = await client.servedInInterval("events", "2025-12-31/2026-01-01");
  expect(served).toHaveLength(4);

  // Nothing of the history runs: the cluster's slots are all free.
  expect((await client.workers()).reduce((n, w) => n + w.currCapacityUsed, 0)).toBe(0);
});

it("refuses a size that is not a whole number, naming it", () => {
  const engine = { now: 0 } as unknown as Parameters<typeof seedHistory>[0];
  expect(() => seedHistory(engine, { tasks: 1.5, segments: 0, dataSources: 1 })).toThrow(/history `tasks`/);
  expect(() => seedHistory(engine, { tasks: 0, segments: 0, dataSources: 0 })).toThrow(
    /history `dataSources`/,
  );
});
