import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient, type TaskSpec } from "../../src/druid/client.js";
import { type CreatedTimeSource, CreatedTimes } from "../../src/ingest/created-times.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestPayload } from "../../src/ingest/types.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/** An Overlord's task storage as the two reads see it: active tasks per datasource, and each task's status. */
function overlord() {
  const active = new Map<string, { datasource: string; createdTime: string }>();
  const calls = { lists: [] as Array<{ datasource: string; max: number }>, statuses: [] as string[] };
  let listGate: Promise<void> | null = null;
  const source: CreatedTimeSource = {
    async tasks(filter) {
      calls.lists.push(filter);
      const answer = [...active]
        .filter(([, t]) => t.datasource === filter.datasource)
        .map(([id, t]) => ({ id, createdTime: t.createdTime }));
      if (listGate) await listGate;
      return answer;
    },
    async taskStatus(id) {
      calls.statuses.push(id);
      const t = active.get(id);
      return t ? { status: { createdTime: t.createdTime } } : null;
    },
  };
  return {
    source,
    active,
    calls,
    holdLists(): () => void {
      let open = () => {};
      listGate = new Promise<void>((r) => {
        open = r;
      });
      return () => {
        listGate = null;
        open();
      };
    },
  };
}

describe("Druid's createdTime of running tasks", () => {
  it("learns every running task's createdTime from one list of the datasource's active tasks (max=0)", async () => {
    const clock = new ManualClock();
    const o = overlord();
    for (const [id, t] of [
      ["a", "2026-01-01T00:00:01.000Z"],
      ["b", "2026-01-01T00:00:02.000Z"],
      ["c", "2026-01-01T00:00:03.000Z"],
      ["theirs", "2026-01-01T00:00:04.000Z"],
    ] as const)
      o.active.set(id, { datasource: "events", createdTime: t });
    const times = new CreatedTimes({ source: o.source, clock, listEveryMs: 30_000 });
    for (const id of ["a", "b", "c"]) times.watch("events", id);
    await clock.advance(29_999);
    expect(o.calls.lists).toEqual([]);
    await clock.advance(1);
    expect(o.calls.lists).toEqual([{ datasource: "events", max: 0 }]);
    // The tasks end: each answer is the list's, and no status GET is sent.
    o.active.clear();
    expect(await times.take("a")).toBe("2026-01-01T00:00:01.000Z");
    expect(await times.take("b")).toBe("2026-01-01T00:00:02.000Z");
    expect(await times.take("c")).toBe("2026-01-01T00:00:03.000Z");
    expect(o.calls.statuses).toEqual([]);
    expect(times.stats).toMatchObject({ lists: 1, fromList: 3, fromStatus: 0 });
    // Nothing lacks a createdTime: no more lists, no sleeper left behind.
    await clock.advance(120_000);
    expect(o.calls.lists).toHaveLength(1);
    expect(clock.pendingSleeps).toBe(0);
  });

  it("asks a task's own status when it ended before a list saw it", async () => {
    const clock = new ManualClock();
    const o = overlord();
    o.active.set("quick", { datasource: "events", createdTime: "2026-01-01T00:00:05.000Z" });
    const times = new CreatedTimes({ source: o.source, clock, listEveryMs: 30_000 });
    times.watch("events", "quick");
    await clock.advance(10_000);
    expect(await times.take("quick")).toBe("2026-01-01T00:00:05.000Z");
    expect(o.calls).toEqual({ lists: [], statuses: ["quick"] });
    await clock.advance(60_000);
    expect(o.calls.lists).toEqual([]);
  });

  it("lists only the datasources that have a task without a createdTime, one list each", async () => {
    const clock = new ManualClock();
    const o = overlord();
    o.active.set("a1", { datasource: "a", createdTime: "2026-01-01T00:00:01.000Z" });
    o.active.set("b1", { datasource: "b", createdTime: "2026-01-01T00:00:02.000Z" });
    const times = new CreatedTimes({ source: o.source, clock, listEveryMs: 30_000 });
    times.watch("a", "a1");
    times.watch("b", "b1");
    await clock.advance(30_000);
    expect(o.calls.lists.map((l) => l.datasource).sort()).toEqual(["a", "b"]);
    o.active.set("a2", { datasource: "a", createdTime: "2026-01-01T00:00:31.000Z" });
    times.watch("a", "a2");
    await clock.advance(30_000);
    expect(o.calls.lists.map((l) => l.datasource)).toEqual(["a", "b", "a"]);
    expect(await times.take("a2")).toBe("2026-01-01T00:00:31.000Z");
  });

  it("does not keep a createdTime across a resubmission of the same id (a new insert, a new createdTime)", async () => {
    const clock = new ManualClock();
    const o = overlord();
    o.active.set("t", { datasource: "events", createdTime: "2026-01-01T00:00:01.000Z" });
    const times = new CreatedTimes({ source: o.source, clock, listEveryMs: 30_000 });
    times.watch("events", "t");
    await clock.advance(30_000);
    // Druid forgot the task; the wait ended and the same id was submitted again, created later.
    times.forget("t");
    o.active.set("t", { datasource: "events", createdTime: "2026-01-01T00:01:00.000Z" });
    times.watch("events", "t");
    expect(await times.take("t")).toBe("2026-01-01T00:01:00.000Z");
    expect(o.calls.statuses).toEqual(["t"]);
  });

  it("drops a list's answer for a task forgotten and watched again while the list was on its way", async () => {
    const clock = new ManualClock();
    const o = overlord();
    o.active.set("t", { datasource: "events", createdTime: "2026-01-01T00:00:01.000Z" });
    const times = new CreatedTimes({ source: o.source, clock, listEveryMs: 30_000 });
    times.watch("events", "t");
    const open = o.holdLists();
    await clock.advance(30_000);
    expect(o.calls.lists).toHaveLength(1);
    times.forget("t");
    o.active.set("t", { datasource: "events", createdTime: "2026-01-01T00:01:00.000Z" });
    times.watch("events", "t");
    open();
    await clock.advance(0);
    // The list held the first insert's createdTime: not this watch's.
    expect(await times.take("t")).toBe("2026-01-01T00:01:00.000Z");
    expect(o.calls.statuses).toEqual(["t"]);
  });

  it("stops watching when the partition's claim ends (its signal aborts), and stops listing", async () => {
    const clock = new ManualClock();
    const o = overlord();
    const claim = new AbortController();
    const times = new CreatedTimes({ source: o.source, clock, listEveryMs: 30_000 });
    times.watch("events", "t", claim.signal);
    claim.abort();
    await clock.advance(120_000);
    expect(o.calls.lists).toEqual([]);
    expect(clock.pendingSleeps).toBe(0);
  });

  it("keeps asking while a task is not in the list yet, and survives a failed list", async () => {
    const clock = new ManualClock();
    const o = overlord();
    let lists = 0;
    const source: CreatedTimeSource = {
      ...o.source,
      tasks: async (filter) => {
        if (++lists === 1) throw new Error("503");
        return o.source.tasks(filter);
      },
    };
    const times = new CreatedTimes({ source, clock, listEveryMs: 30_000 });
    times.watch("events", "t");
    await clock.advance(30_000); // fails
    await clock.advance(30_000); // not listed yet (WAITING tasks are listed; this one is not stored yet)
    o.active.set("t", { datasource: "events", createdTime: "2026-01-01T00:01:10.000Z" });
    await clock.advance(30_000);
    expect(lists).toBe(3);
    expect(await times.take("t")).toBe("2026-01-01T00:01:10.000Z");
    expect(o.calls.statuses).toEqual([]);
  });

  it("stops listing for a task two lists in a row leave out (it ended, or its partition went elsewhere)", async () => {
    const clock = new ManualClock();
    const o = overlord();
    const times = new CreatedTimes({ source: o.source, clock, listEveryMs: 30_000 });
    times.watch("events", "gone");
    await clock.advance(30_000);
    await clock.advance(30_000);
    expect(o.calls.lists).toHaveLength(2);
    await clock.advance(120_000);
    expect(o.calls.lists).toHaveLength(2);
    expect(clock.pendingSleeps).toBe(0);
    // Its end still gets Druid's createdTime, from its own status.
    o.active.set("gone", { datasource: "events", createdTime: "2026-01-01T00:00:05.000Z" });
    expect(await times.take("gone")).toBe("2026-01-01T00:00:05.000Z");
    expect(o.calls.statuses).toEqual(["gone"]);
  });

  it("close ends the lists, aborting one that waits on Druid, and watches nothing more", async () => {
    const clock = new ManualClock();
    const o = overlord();
    const signals: Array<AbortSignal | undefined> = [];
    const source: CreatedTimeSource = {
      ...o.source,
      // Druid down behind the outage gate: the list waits until its signal aborts.
      tasks: (filter, options) => {
        o.calls.lists.push(filter);
        signals.push(options?.signal);
        return new Promise((_, reject) =>
          options?.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
        );
      },
    };
    const times = new CreatedTimes({ source, clock, listEveryMs: 30_000 });
    times.watch("events", "t");
    await clock.advance(30_000);
    expect(o.calls.lists).toHaveLength(1);
    times.close();
    expect(signals[0]?.aborted).toBe(true);
    times.watch("events", "u");
    await clock.advance(120_000);
    expect(o.calls.lists).toHaveLength(1);
    expect(clock.pendingSleeps).toBe(0);
  });

  it("refuses a list period that is not a positive number of ms", () => {
    const o = overlord();
    expect(() => new CreatedTimes({ source: o.source, clock: new ManualClock(), listEveryMs: 0 })).toThrow(
      /listEveryMs: expected a positive number of ms, got 0/,
    );
  });
});

describe("Druid's createdTime from the active-task list, on the emulator", () => {
  let sim: SimHandle | undefined;
  let client: DruidClient | undefined;
  afterEach(async () => {
    await client?.close();
    await sim?.close();
  });

  it("is the createdTime the task's own status answers (both are the task's stored created_date)", async () => {
    sim = await startSim({ capacity: 2 });
    const druid = new DruidClient({ url: sim.url });
    client = druid;
    const dataDir = writeDailyDataset({ from: "2026-03-01", days: 1, rowsPerDay: 5 });
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: "createdtimes" }) },
      templateName: "t.json",
      range: parseInterval("2026-03-01/2026-03-02"),
      vars: { dataDir },
    });
    const [task] = plan.tasks;
    if (!task) throw new Error("the plan has no partition");
    const spec = (task.payload as unknown as IngestPayload).spec as unknown as TaskSpec;
    // Runs for an emulated hour: still active when listed.
    const id = "createdtimes_list_vs_status";
    await druid.submitTask({ ...spec, id, context: { simDurationMs: 3_600_000 } } as TaskSpec);
    let listed = false;
    const clock = new ManualClock();
    const times = new CreatedTimes({
      clock,
      listEveryMs: 1000,
      source: {
        tasks: async (filter) => {
          const active = await druid.tasks(filter);
          listed = true;
          return active;
        },
        taskStatus: (taskId) => druid.taskStatus(taskId),
      },
    });
    times.watch("createdtimes", id);
    await clock.advance(1000);
    await until("the active-task list answered", () => listed);
    await new Promise((r) => setImmediate(r));
    const fromList = await times.take(id);
    expect(times.stats).toMatchObject({ lists: 1, fromList: 1, fromStatus: 0 });
    const status = await druid.taskStatus(id);
    expect(fromList).toBe(status.status?.createdTime);
    expect(fromList).toMatch(/^\d{4}-\d\d-\d\dT/);
    await druid.shutdownTask(id);
  }, 60_000);
});
