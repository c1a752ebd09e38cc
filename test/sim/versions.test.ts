import { describe, expect, it } from "vitest";
import { flagsFor } from "../../src/druid/capabilities.js";
import { versionTraits } from "../../src/sim/versions.js";
import { parallelTask, startTestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";

describe("version-specific shapes (docs/druid-api.md §8)", () => {
  const task = parallelTask({
    id: "v",
    inputSource: {
      type: "inline",
      data: '{"time":"2026-01-01T01:00:00Z","page":"a","user":"u"}\n{"time":"2025-01-01T00:00:00Z","page":"x","user":"u"}\n',
    },
    context: { simDurationMs: 10 },
  });

  it("matches a real Druid 33: no DataSegment totalRows, no thrownAwayByReason", async () => {
    const s = await startTestSim({ druidVersion: 33, handoffDelayMs: 0 });
    await s.post(`${V1}/task`, task);
    await s.advance(10);
    const seg = (await s.get("/druid/coordinator/v1/metadata/datasources/wiki/segments?full")).json[0];
    expect(seg).not.toHaveProperty("totalRows");
    const build = (await s.get(`${V1}/task/v/reports`)).json.ingestionStatsAndErrors.payload.rowStats
      .buildSegments;
    expect(build).toEqual({
      processed: 1,
      processedBytes: expect.any(Number),
      processedWithError: 0,
      thrownAway: 1,
      unparseable: 0,
    });
    expect((await s.post(`${V1}/task`, task)).json.errorCode).toBe("entryAlreadyExists");
  });

  it("adds totalRows and thrownAwayByReason for current Druid", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await s.post(`${V1}/task`, task);
    await s.advance(10);
    const seg = (await s.get("/druid/coordinator/v1/metadata/datasources/wiki/segments?full")).json[0];
    expect(seg.totalRows).toBe(1);
    const build = (await s.get(`${V1}/task/v/reports`)).json.ingestionStatsAndErrors.payload.rowStats
      .determinePartitions;
    expect(build.thrownAwayByReason).toEqual({});
  });
});

describe("Druid 33 vs the contract (versions.ts; docs/real-druid.md conformance table)", () => {
  const SUBMIT = `${V1}/task`;
  const CO = "/druid/coordinator/v1";
  const inline = (id: string, intervals: string[], data: string, ioConfig: Record<string, unknown> = {}) =>
    parallelTask({
      id,
      intervals,
      inputSource: { type: "inline", data },
      ioConfig,
      context: { simDurationMs: 10 },
    });

  it.each([
    [33, "problem: timestampSpec"],
    [38, "problem: timestampSpec must not be null"],
  ])("words a missing timestampSpec for Druid %i as '%s'", async (druidVersion, tail) => {
    const s = await startTestSim({ druidVersion });
    const spec = parallelTask({ dataSchema: { timestampSpec: undefined } });
    const res = await s.post(SUBMIT, spec);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(new RegExp(`${tail.replace(/[.*]/g, "\\$&")}$`));
  });

  it("rejects a task id with '/' in the constructor for Druid 33 and in TaskQueue.add (invalidInput) later", async () => {
    const old = await startTestSim({ druidVersion: 33 });
    const a = await old.post(SUBMIT, parallelTask({ id: "a/b" }));
    expect(a.status).toBe(400);
    expect(a.json).toEqual({
      error:
        "Cannot construct instance of `org.apache.druid.indexing.common.task.batch.parallel.ParallelIndexSupervisorTask`, problem: Invalid value for field [task ID]: Value [a/b] cannot contain '/'.",
    });
    const current = await startTestSim({ druidVersion: 38 });
    const b = await current.post(SUBMIT, parallelTask({ id: "a/b" }));
    expect(b.status).toBe(400);
    expect(b.json).toMatchObject({
      errorCode: "invalidInput",
      errorMessage: "Invalid value for field [Task ID]: Value [a/b] cannot contain '/'.",
    });
  });

  it("rejects an ioConfig without type for every version", async () => {
    for (const druidVersion of [33, 38]) {
      const s = await startTestSim({ druidVersion });
      const res = await s.post(SUBMIT, parallelTask({ ioConfig: { type: undefined } }));
      expect(res.status).toBe(400);
      expect(res.json.error).toContain("missing type id property 'type' (for POJO property 'ioConfig')");
      expect(s.sim.engine.tasks.size).toBe(0);
    }
  });

  it.each([
    [33, 200, "No used segment found for the given datasource and interval"],
    [38, 204, ""],
  ])("answers loadstatus of an empty interval for Druid %i with %i", async (druidVersion, status, body) => {
    const s = await startTestSim({ druidVersion, handoffDelayMs: 0 });
    await s.post(
      SUBMIT,
      inline("t", ["2026-01-01/2026-01-02"], '{"time":"2026-01-01T01:00:00Z","page":"a"}\n'),
    );
    await s.advance(10);
    const res = await s.get(
      `${CO}/datasources/wiki/loadstatus?forceMetadataRefresh=true&interval=2000-01-01_2000-01-02`,
    );
    expect(res.status).toBe(status);
    expect(res.text).toBe(body);
  });

  it.each([
    [33, 0, false],
    [38, 1, true],
  ])(
    "writes tombstones for Druid %i with partitions %i (sys.segments projections: %s)",
    async (druidVersion, partitions, projections) => {
      const s = await startTestSim({ druidVersion, handoffDelayMs: 0 });
      const two = '{"time":"2026-01-01T01:00:00Z","page":"a"}\n{"time":"2026-01-02T01:00:00Z","page":"b"}\n';
      await s.post(SUBMIT, inline("v1", ["2026-01-01/2026-01-03"], two));
      await s.advance(10);
      const one = '{"time":"2026-01-01T02:00:00Z","page":"c"}\n';
      await s.post(SUBMIT, inline("v2", ["2026-01-01/2026-01-03"], one, { dropExisting: true }));
      await s.advance(10);
      const segs = (await s.get(`${CO}/metadata/datasources/wiki/segments?full`)).json as Array<{
        shardSpec: { type: string; partitions: number };
      }>;
      const tombstones = segs.filter((x) => x.shardSpec.type === "tombstone");
      expect(tombstones.map((t) => t.shardSpec)).toEqual([
        { type: "tombstone", partitionNum: 0, partitions },
      ]);
      const sql = await s.post("/druid/v2/sql", {
        query: `SELECT * FROM sys.segments WHERE "shard_spec" LIKE '%tombstone%'`,
      });
      expect(sql.status).toBe(200);
      expect(JSON.parse(sql.json[0].shard_spec)).toEqual({ type: "tombstone", partitionNum: 0, partitions });
      expect("projections" in sql.json[0]).toBe(projections);
    },
  );

  it("keeps duration -1 for a task ended by shutdown, in both status views", async () => {
    const s = await startTestSim({ druidVersion: 33 });
    await s.post(SUBMIT, parallelTask({ id: "sd", context: { simDurationMs: 60_000 } }));
    await s.advance(1000);
    expect((await s.get(`${V1}/task/sd/status`)).json.status.statusCode).toBe("RUNNING");
    await s.post(`${V1}/task/sd/shutdown`, "");
    await s.advance(1000);
    expect((await s.get(`${V1}/task/sd/status`)).json.status).toMatchObject({
      statusCode: "FAILED",
      errorMsg: "Shutdown request from user",
      duration: -1,
    });
    expect((await s.post(`${V1}/taskStatus`, ["sd"])).json.sd).toMatchObject({
      status: "FAILED",
      duration: -1,
    });
  });
});

describe("worker entries by version (docs/druid-api.md §2.9)", () => {
  it.each([
    [33, false],
    [35, false],
    [37, false],
    [38, true],
    [39, true],
  ])("lists worker.disabled for Druid %i: %s", async (druidVersion, present) => {
    const s = await startTestSim({ druidVersion });
    const [entry] = (await s.get(`${V1}/workers`)).json as Array<{ worker: Record<string, unknown> }>;
    expect("disabled" in (entry?.worker ?? {})).toBe(present);
    expect(entry?.worker.capacity).toBe(4);
  });

  it("agrees with segops' own table on which releases flag a disabled worker", () => {
    for (let major = 33; major <= 40; major++)
      expect(versionTraits(major).workerDisabledField).toBe(flagsFor(major).workerDisabledFlag);
  });

  it.each([
    [37, { version: "" }],
    [38, { version: "0", disabled: true }],
  ])("announces a disabled MiddleManager on Druid %i as %j", async (druidVersion, shape) => {
    const s = await startTestSim({ druidVersion, workers: 2 });
    const off = await s.post("/__sim/workers/1/disable", "");
    expect([off.status, off.json]).toEqual([200, { "localhost:8092": "disabled" }]);
    const list = (await s.get(`${V1}/workers`)).json as Array<{ worker: Record<string, unknown> }>;
    expect(list[0]?.worker).toMatchObject({ version: "0" });
    expect(list[0]?.worker.disabled ?? false).toBe(false);
    expect(list[1]?.worker).toMatchObject(shape);
    if (druidVersion < 38) expect(list[1]?.worker).not.toHaveProperty("disabled");
    expect((await s.post("/__sim/workers/2/disable", "")).status).toBe(404);
  });

  it("gives a disabled worker no new task, lets its running one finish, and takes tasks again once enabled", async () => {
    const s = await startTestSim({ druidVersion: 37, workers: 2, capacity: 1 });
    const one = (id: string) =>
      parallelTask({
        id,
        dataSource: `ds_${id}`, // no two share a lock
        tuningConfig: { maxNumConcurrentSubTasks: 1 },
        context: { simDurationMs: 10_000 },
      });
    await s.post(`${V1}/task`, one("a"));
    await s.post(`${V1}/task`, one("b")); // both workers busy
    s.sim.setWorkerEnabled(1, false);
    await s.post(`${V1}/task`, one("c"));
    await s.advance(10_000); // a and b end: only worker 0 takes c
    const status = async (id: string) => (await s.get(`${V1}/task/${id}/status`)).json.status;
    expect([(await status("a")).status, (await status("b")).status]).toEqual(["SUCCESS", "SUCCESS"]);
    expect((await status("c")).runnerStatusCode).toBe("RUNNING");
    await s.post(`${V1}/task`, one("d"));
    expect((await status("d")).runnerStatusCode).toBe("PENDING"); // a free slot, on a disabled worker
    s.sim.setWorkerEnabled(1, true);
    expect((await status("d")).runnerStatusCode).toBe("RUNNING");
  });
});
