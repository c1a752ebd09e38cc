// The emulator's Overlord honours the worker select strategy's taskLimits (apache/druid #16889) from Druid 33 on.
import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";

const strategy = (taskLimits: unknown) => ({
  type: "default",
  selectStrategy: { type: "equalDistribution", taskLimits },
  autoScaler: null,
});

/** A one-slot index_parallel task on its own datasource (no shared locks), running 10 s. */
const one = (id: string, type = "index_parallel") =>
  parallelTask({
    id,
    type,
    dataSource: `ds_${id}`,
    tuningConfig: { maxNumConcurrentSubTasks: 1 },
    context: { simDurationMs: 10_000 },
  });

describe("the dynamic worker config (GET/POST /druid/indexer/v1/worker)", () => {
  it("answers empty until one is set, then the config as set", async () => {
    const s = await startTestSim();
    const none = await s.get(`${V1}/worker`);
    expect([none.status, none.text]).toEqual([200, ""]);
    const set = await s.post(`${V1}/worker`, strategy({ maxSlotCountByType: { index_parallel: 2 } }));
    expect([set.status, set.text]).toEqual([200, ""]);
    expect((await s.get(`${V1}/worker`)).json).toEqual(
      strategy({ maxSlotCountByType: { index_parallel: 2 } }),
    );
    expect((await s.post(`${V1}/worker`, "[1]")).status).toBe(400);
  });

  it("drops taskLimits on a Druid before 33, where select strategies had none", async () => {
    const s = await startTestSim({ druidVersion: 32 });
    await s.post(`${V1}/worker`, strategy({ maxSlotCountByType: { index_parallel: 1 } }));
    expect((await s.get(`${V1}/worker`)).json.selectStrategy).toEqual({ type: "equalDistribution" });
  });
});

describe("per-type task slot limits", () => {
  const state = async (s: Awaited<ReturnType<typeof startTestSim>>, id: string) =>
    (await s.get(`${V1}/task/${id}/status`)).json.status.runnerStatusCode as string;

  it.each([33, 35, 37, 39])(
    "keeps a task PENDING while its type is at its limit on Druid %i, however many slots are free",
    async (druidVersion) => {
      const s = await startTestSim({ druidVersion, capacity: 8 });
      await s.post(`${V1}/worker`, strategy({ maxSlotCountByType: { index_parallel: 2 } }));
      for (const id of ["a", "b", "c"]) await s.post(`${V1}/task`, one(id));
      await s.post(`${V1}/task`, one("i", "index")); // another type: not limited
      expect([await state(s, "a"), await state(s, "b"), await state(s, "c"), await state(s, "i")]).toEqual([
        "RUNNING",
        "RUNNING",
        "PENDING",
        "RUNNING",
      ]);
      const [w] = (await s.get(`${V1}/workers`)).json;
      expect(w.currCapacityUsedByTaskType).toEqual({ index_parallel: 2, index: 1 });
      await s.advance(10_000); // a and b end: c takes a place under the limit
      expect(await state(s, "c")).toBe("RUNNING");
    },
  );

  it("limits by a ratio of the capacity, and frees pending tasks when the limit is raised", async () => {
    const s = await startTestSim({ capacity: 8 });
    await s.post(`${V1}/worker`, strategy({ maxSlotRatioByType: { index_parallel: 0.125 } })); // 1 of 8
    for (const id of ["a", "b"]) await s.post(`${V1}/task`, one(id));
    expect([await state(s, "a"), await state(s, "b")]).toEqual(["RUNNING", "PENDING"]);
    await s.post(`${V1}/worker`, strategy({ maxSlotCountByType: { index_parallel: 4 } }));
    expect(await state(s, "b")).toBe("RUNNING");
  });

  it("counts an index_parallel supervisor's own slot against its type, not its sub-tasks'", async () => {
    const s = await startTestSim({ capacity: 8 });
    await s.post(`${V1}/worker`, strategy({ maxSlotCountByType: { index_parallel: 2 } }));
    const wide = (id: string) =>
      parallelTask({
        id,
        dataSource: `ds_${id}`,
        tuningConfig: { maxNumConcurrentSubTasks: 2 },
        context: { simDurationMs: 10_000 },
      });
    for (const id of ["a", "b"]) await s.post(`${V1}/task`, wide(id)); // 3 slots each, 1 as index_parallel
    expect([await state(s, "a"), await state(s, "b")]).toEqual(["RUNNING", "RUNNING"]);
    const [w] = (await s.get(`${V1}/workers`)).json;
    expect(w).toMatchObject({
      currCapacityUsed: 6,
      currParallelIndexCapacityUsed: 2,
      currCapacityUsedByTaskType: { index_parallel: 2, single_phase_sub_task: 4 },
    });
  });

  it("ignores taskLimits on a Druid before 33", async () => {
    const s = await startTestSim({ druidVersion: 32, capacity: 8 });
    await s.post(`${V1}/worker`, strategy({ maxSlotCountByType: { index_parallel: 1 } }));
    for (const id of ["a", "b"]) await s.post(`${V1}/task`, one(id));
    expect([await state(s, "a"), await state(s, "b")]).toEqual(["RUNNING", "RUNNING"]);
  });
});
