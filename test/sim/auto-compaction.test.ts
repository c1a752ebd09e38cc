import { describe, expect, it } from "vitest";
import { WORKER_LAUNCH_DELAY_MS } from "../../src/sim/engine.js";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

/**
 * The emulated auto-compaction (src/sim/auto-compact.ts): the datasource compaction config API, and a duty that
 * compacts the newest chunk needing it, honouring `skipIntervals` from Druid 39 (apache/druid #19792,
 * `DataSourceCompactionConfig.getSkipIntervals`) and dropping the field before; its task ids start
 * `coordinator-issued_` up to 36 and `auto_` from 37 (apache/druid #19252); the Overlord's compaction supervisors
 * (`autocompact`) in its place while the cluster config says `useSupervisors`; MSQ compactions (`MSQCompactionRunner`)
 * holding `maxNumTasks` slots.
 */

const CO = "/druid/coordinator/v1";
const rows = (days: string[]) => days.map((d) => `{"time":"${d}T01:00:00Z","page":"p"}`).join("\n");
const DAYS = ["2026-01-01", "2026-01-02", "2026-01-03"];

/** Sim time moves only with `advance`, and the emulator acts at its next request: one look of the duty. */
async function look(s: TestSim, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) {
    await s.advance(1000);
    await s.get("/druid/indexer/v1/tasks");
  }
}

async function seeded(druidVersion: number) {
  const s = await startTestSim({
    druidVersion,
    handoffDelayMs: 0,
    compactionPeriodMs: 1000,
    baseDurationMs: 200,
  });
  await s.post(
    "/druid/indexer/v1/task",
    parallelTask({
      id: "seed",
      intervals: ["2026-01-01/2026-01-04"],
      inputSource: { type: "inline", data: rows(DAYS) },
      context: { simDurationMs: 10 },
    }),
  );
  await s.advance(10);
  return s;
}

const compactions = (s: Awaited<ReturnType<typeof seeded>>) =>
  [...s.sim.engine.tasks.values()]
    .filter((t) => /^(coordinator-issued|auto)_compact_wiki_/.test(t.id))
    .map((t) => t.plan.compact?.interval);

describe("the emulator's auto-compaction", () => {
  it("serves the datasource configs: added with Druid's defaults, read, listed, deleted", async () => {
    const s = await startTestSim({ druidVersion: 39 });
    expect((await s.post(`${CO}/config/compaction`, { skipOffsetFromLatest: "PT0S" })).status).toBe(400);
    const body = {
      dataSource: "wiki",
      skipOffsetFromLatest: "PT0S",
      skipIntervals: ["2026-01-02/2026-01-03"],
    };
    expect((await s.post(`${CO}/config/compaction`, body)).status).toBe(200);
    const one = await s.get(`${CO}/config/compaction/wiki`);
    expect(one.json).toMatchObject({ ...body, taskPriority: 25 });
    expect((await s.get(`${CO}/config/compaction`)).json.compactionConfigs).toEqual([one.json]);
    expect((await s.get(`${CO}/config/compaction/other`)).status).toBe(404);
    const bad = await s.post(`${CO}/config/compaction`, { ...body, skipIntervals: ["yesterday"] });
    expect(bad.status).toBe(400);
    const deleted = await fetch(`${s.url}${CO}/config/compaction/wiki`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect((await s.get(`${CO}/config/compaction`)).json.compactionConfigs).toEqual([]);
  });

  it("compacts nothing while no datasource has a config", async () => {
    const s = await seeded(39);
    await look(s, 10);
    expect(compactions(s)).toEqual([]);
  });

  it("on Druid 39 compacts every chunk but the skipped one, newest first, at compaction priority", async () => {
    const s = await seeded(39);
    await s.post(`${CO}/config/compaction`, {
      dataSource: "wiki",
      skipOffsetFromLatest: "PT0S",
      skipIntervals: ["2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z"],
    });
    await look(s, 10);
    const done = compactions(s);
    expect(done.map((i) => new Date(i?.start ?? 0).toISOString().slice(0, 10))).toEqual([
      "2026-01-03",
      "2026-01-01",
    ]);
    const task = [...s.sim.engine.tasks.values()].find((t) => t.id.startsWith("auto_compact_"));
    expect(task?.plan.priority).toBe(25);
    // Out of the skip list, the day is compacted at the next look.
    await s.post(`${CO}/config/compaction`, {
      dataSource: "wiki",
      skipOffsetFromLatest: "PT0S",
      skipIntervals: [],
    });
    await look(s, 3);
    expect(compactions(s)).toHaveLength(3);
  });

  it("before Druid 39 drops skipIntervals from the config and compacts the interval anyway", async () => {
    const s = await seeded(38);
    await s.post(`${CO}/config/compaction`, {
      dataSource: "wiki",
      skipOffsetFromLatest: "PT0S",
      skipIntervals: ["2026-01-02/2026-01-03"],
    });
    expect((await s.get(`${CO}/config/compaction/wiki`)).json).not.toHaveProperty("skipIntervals");
    await look(s, 10);
    expect(compactions(s)).toHaveLength(3);
  });

  it("leaves the newest day to skipOffsetFromLatest (P1D by default) and a chunk an ingestion locks", async () => {
    const s = await seeded(39);
    await s.post("/druid/indexer/v1/task", {
      ...parallelTask({
        id: "busy",
        intervals: ["2026-01-01/2026-01-02"],
        inputSource: { type: "inline", data: rows(["2026-01-01"]) },
        context: { simDurationMs: 60_000 },
      }),
    });
    await s.post(`${CO}/config/compaction`, { dataSource: "wiki" });
    await look(s, 10);
    // Jan 3 ends at the newest segment's end (within P1D of it), Jan 1 is locked by "busy": only Jan 2.
    expect(compactions(s).map((i) => new Date(i?.start ?? 0).toISOString().slice(0, 10))).toEqual([
      "2026-01-02",
    ]);
  });

  it.each([
    [33, "coordinator-issued_compact_wiki_"],
    [36, "coordinator-issued_compact_wiki_"],
    [37, "auto_compact_wiki_"],
  ])("names its tasks as Druid %i does: %s…", async (version, prefix) => {
    const s = await seeded(version);
    await s.post(`${CO}/config/compaction`, { dataSource: "wiki", skipOffsetFromLatest: "PT0S" });
    await look(s);
    const ids = [...s.sim.engine.tasks.values()].filter((t) => t.type === "compact").map((t) => t.id);
    expect(ids).toHaveLength(1);
    expect(ids[0]?.startsWith(prefix)).toBe(true);
    const listed = (await s.get("/druid/indexer/v1/tasks")).json as Array<{ id: string; type: string }>;
    expect(listed.find((t) => t.id === ids[0])?.type).toBe("compact");
  });
});

describe("compaction supervisors on the emulated Overlord (Druid 37)", () => {
  it("run an autocompact supervisor instead of the Coordinator's duty while useSupervisors is on", async () => {
    const s = await seeded(37);
    const set = await s.post("/druid/indexer/v1/compaction/config/cluster", { useSupervisors: true });
    expect(set).toMatchObject({ status: 200, json: { success: true } });
    await s.post(`${CO}/config/compaction`, { dataSource: "wiki", skipOffsetFromLatest: "PT0S" });
    expect((await s.get("/druid/indexer/v1/compaction/config/cluster")).json).toEqual({
      compactionTaskSlotRatio: 0.1,
      maxCompactionTaskSlots: 2147483647,
      compactionPolicy: { type: "newestSegmentFirst", priorityDatasource: null },
      useSupervisors: true,
      engine: "native",
    });
    // The Coordinator's config alone compacts nothing now: its duty is off.
    await look(s, 5);
    expect(compactions(s)).toEqual([]);
    const spec = { type: "autocompact", spec: { dataSource: "wiki", skipOffsetFromLatest: "PT0S" } };
    const posted = await s.post("/druid/indexer/v1/supervisor", spec);
    expect(posted).toMatchObject({ status: 200, json: { id: "autocompact__wiki" } });
    expect((await s.get("/druid/indexer/v1/supervisor")).json).toEqual(["autocompact__wiki"]);
    // As a real Druid 33 answers (observed): the spec with Druid's defaults, no id.
    expect((await s.get("/druid/indexer/v1/supervisor/autocompact__wiki")).json).toEqual({
      type: "autocompact",
      suspended: false,
      spec: {
        type: "inline",
        dataSource: "wiki",
        taskPriority: 25,
        inputSegmentSizeBytes: 100_000_000_000_000,
        maxRowsPerSegment: null,
        skipOffsetFromLatest: "PT0S",
        tuningConfig: null,
        granularitySpec: null,
        dimensionsSpec: null,
        metricsSpec: null,
        transformSpec: null,
        projections: null,
        ioConfig: null,
        engine: null,
        taskContext: null,
      },
    });
    await look(s, 10);
    const ids = [...s.sim.engine.tasks.values()].filter((t) => t.type === "compact").map((t) => t.id);
    expect(ids).toHaveLength(3);
    expect(ids.every((id) => id.startsWith("auto_compact_wiki_"))).toBe(true);
    // Suspended, it submits nothing more; terminated, it is gone.
    expect((await s.post("/druid/indexer/v1/supervisor/autocompact__wiki/suspend", {})).status).toBe(200);
    expect((await s.post("/druid/indexer/v1/supervisor/autocompact__wiki/terminate", {})).status).toBe(200);
    expect((await s.get("/druid/indexer/v1/supervisor")).json).toEqual([]);
    expect((await s.get("/druid/indexer/v1/supervisor/autocompact__wiki")).status).toBe(404);
  });

  it("refuses a supervisor that is not an autocompact one, or has no datasource, in Druid 33's words", async () => {
    const s = await startTestSim({ druidVersion: 37 });
    const kafka = await s.post("/druid/indexer/v1/supervisor", { type: "kafka", spec: {} });
    expect(kafka.status).toBe(400);
    expect(kafka.json.error).toMatch(
      /^Please make sure to load all the necessary extensions and jars with type 'kafka' .* known type ids = \[NoopSupervisorSpec, autocompact, scheduled_batch\]$/,
    );
    const none = await s.post("/druid/indexer/v1/supervisor", { type: "autocompact", spec: {} });
    expect(none).toMatchObject({
      status: 400,
      json: {
        error:
          "Cannot construct instance of `org.apache.druid.server.coordinator.InlineSchemaDataSourceCompactionConfig`, problem: dataSource",
      },
    });
    const unknown = await s.get("/druid/indexer/v1/supervisor/nope");
    expect(unknown).toMatchObject({ status: 404, text: "Cannot find any supervisor with id: [nope]" });
    expect(unknown.contentType).toMatch(/^text\/plain/);
  });

  it("runs an MSQ compaction as the compact task plus maxNumTasks - 1 query_worker tasks, a slot each", async () => {
    const s = await startTestSim({
      druidVersion: 37,
      handoffDelayMs: 0,
      compactionPeriodMs: 1000,
      workers: 1,
      capacity: 4,
    });
    await s.post(
      "/druid/indexer/v1/task",
      parallelTask({
        id: "seed",
        intervals: ["2026-01-01/2026-01-02"],
        inputSource: { type: "inline", data: rows(["2026-01-01"]) },
        context: { simDurationMs: 10 },
      }),
    );
    await s.advance(10);
    // Another task holds two of the four slots: the compaction's controller starts, one worker waits.
    await s.post(
      "/druid/indexer/v1/task",
      parallelTask({
        id: "other",
        dataSource: "other",
        intervals: ["2026-01-01/2026-01-02"],
        inputSource: { type: "inline", data: rows(["2026-01-01"]) },
        tuningConfig: { type: "index_parallel", maxNumConcurrentSubTasks: 1 },
        context: { simDurationMs: 5000 },
      }),
    );
    await s.post(
      "/druid/indexer/v1/task",
      parallelTask({
        id: "other2",
        dataSource: "other",
        intervals: ["2026-01-02/2026-01-03"],
        inputSource: { type: "inline", data: rows(["2026-01-02"]) },
        context: { simDurationMs: 5000 },
      }),
    );
    await s.post("/druid/indexer/v1/compaction/config/cluster", {
      useSupervisors: true,
      compactionTaskSlotRatio: 1,
    });
    await s.post("/druid/indexer/v1/supervisor", {
      type: "autocompact",
      spec: {
        dataSource: "wiki",
        skipOffsetFromLatest: "PT0S",
        engine: "msq",
        taskContext: { maxNumTasks: 3, simDurationMs: 2000 },
      },
    });
    await look(s);
    const compact = [...s.sim.engine.tasks.values()].find((t) => t.type === "compact");
    expect(compact?.id).toMatch(/^auto_compact_wiki_/);
    expect(compact?.payload).toMatchObject({ compactionRunner: { type: "msq" } });
    const id = compact?.id as string;
    const byId = async () =>
      new Map(
        (
          (await s.get("/druid/indexer/v1/tasks")).json as Array<{
            id: string;
            type: string;
            status: string;
            runnerStatusCode: string;
            groupId: string;
          }>
        ).map((t) => [t.id, t]),
      );
    let listed = await byId();
    expect(listed.get(id)).toMatchObject({ type: "compact", runnerStatusCode: "RUNNING" });
    // Its peon starts and plans first: no worker yet, and Druid counts the compaction's one slot only.
    expect(listed.has(`${id}-worker0_0`)).toBe(false);
    const early = (await s.get("/druid/indexer/v1/workers")).json as Array<{ currCapacityUsed: number }>;
    expect(early[0]?.currCapacityUsed).toBe(3);
    await s.advance(WORKER_LAUNCH_DELAY_MS);
    listed = await byId();
    expect(listed.get(`${id}-worker0_0`)).toMatchObject({
      type: "query_worker",
      runnerStatusCode: "RUNNING",
      groupId: id,
    });
    expect(listed.get(`${id}-worker1_0`)).toMatchObject({
      type: "query_worker",
      runnerStatusCode: "PENDING",
    });
    // It waits for its last worker: still running past its own 2 s.
    await s.advance(2500);
    listed = await byId();
    expect(listed.get(id)?.status).toBe("RUNNING");
    // The other tasks end; the last worker gets its slot, and the compaction holds three slots until it ends.
    await s.advance(1500);
    const workers = (await s.get("/druid/indexer/v1/workers")).json as Array<{
      currCapacityUsed: number;
      currCapacityUsedByTaskType?: Record<string, number>;
    }>;
    expect(workers[0]?.currCapacityUsed).toBe(3);
    expect(workers[0]?.currCapacityUsedByTaskType).toEqual({ compact: 1, query_worker: 2 });
    await s.advance(1500);
    listed = await byId();
    expect(listed.get(id)?.status).toBe("SUCCESS");
    expect(listed.get(`${id}-worker1_0`)?.status).toBe("SUCCESS");
    expect(
      ((await s.get("/druid/indexer/v1/workers")).json as Array<{ currCapacityUsed: number }>)[0]
        ?.currCapacityUsed,
    ).toBe(0);
  });

  it("refuses an MSQ compaction with maxNumTasks below 2 (a controller and a worker)", async () => {
    const s = await startTestSim({ druidVersion: 37 });
    const res = await s.post("/druid/indexer/v1/task", {
      type: "compact",
      dataSource: "wiki",
      ioConfig: { type: "compact", inputSpec: { type: "interval", interval: "2026-01-01/2026-01-02" } },
      compactionRunner: { type: "msq" },
      context: { maxNumTasks: 1 },
    });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/maxNumTasks\[1\]/);
  });
});
