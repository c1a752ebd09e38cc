import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";

function dataDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "segops-sim-data-"));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

const LINES = [
  '{"time":"2026-01-01T01:00:00Z","page":"a","user":"u1","added":5}',
  '{"time":"2026-01-01T01:30:00Z","page":"a","user":"u1","added":7}',
  '{"time":"2026-01-01T02:00:00Z","page":"b","user":"u2","added":1}',
  '{"time":"2026-01-02T03:00:00Z","page":"c","user":"u3","added":2}',
  '{"time":"2026-02-01T00:00:00Z","page":"out","user":"u4","added":9}',
  "not json at all",
  '{"page":"no time","user":"u5"}',
];

const bytes = (lines: string[]) => lines.reduce((n, l) => n + Buffer.byteLength(l), 0);

describe("reading local data (docs/druid-api.md §2.7 row counters, §5)", () => {
  it("reads JSON lines from baseDir+filter (recursively) and counts processed, thrownAway, unparseable, bytes", async () => {
    const dir = dataDir({
      "part1.json": `${LINES.slice(0, 4).join("\n")}\n`,
      "sub/part2.json": LINES.slice(4).join("\n"),
      "skip.csv": "x",
    });
    const s = await startTestSim();
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "r",
        intervals: ["2026-01-01/2026-01-03"],
        inputSource: { type: "local", baseDir: dir, filter: "*.json" },
        tuningConfig: { maxNumConcurrentSubTasks: 2 },
        context: { simDurationMs: 1000 },
      }),
    );
    await s.advance(1000);
    const report = (await s.get(`${V1}/task/r/reports`)).json;
    expect(report.ingestionStatsAndErrors.payload.rowStats).toEqual({
      totals: {
        buildSegments: {
          processed: 4,
          // Like Druid, each record counts its line terminator (6 of the 7 lines end in one).
          processedBytes: bytes(LINES) + 6,
          processedWithError: 0,
          thrownAway: 1,
          thrownAwayByReason: { FILTERED: 1 },
          unparseable: 2,
        },
      },
    });
    expect(report.ingestionStatsAndErrors.payload).toMatchObject({
      ingestionState: "COMPLETED",
      unparseableEvents: { buildSegments: [] },
      errorMsg: null,
      segmentAvailabilityConfirmed: false,
      segmentAvailabilityWaitTimeMs: 0,
    });
    expect(report.taskContext).toEqual({
      type: "taskContext",
      taskId: "r",
      payload: {
        forceTimeChunkLock: true,
        useLineageBasedSegmentAllocation: true,
        simRows: 1000,
        simDurationMs: 1000,
      },
    });
  });

  it("uses the sequential rowStats shape for index and for index_parallel with k = 1", async () => {
    const dir = dataDir({ "a.json": LINES.slice(0, 2).join("\n") });
    const s = await startTestSim();
    for (const [id, type] of [
      ["seq", "index_parallel"],
      ["idx", "index"],
    ]) {
      await s.post(
        `${V1}/task`,
        parallelTask({
          id,
          type,
          dataSource: id,
          inputSource: { type: "local", baseDir: dir, filter: "*.json" },
          context: { simDurationMs: 10 },
        }),
      );
    }
    await s.advance(10);
    for (const id of ["seq", "idx"]) {
      const payload = (await s.get(`${V1}/task/${id}/reports`)).json.ingestionStatsAndErrors.payload;
      expect(Object.keys(payload.rowStats)).toEqual(["determinePartitions", "buildSegments"]);
      expect(payload.rowStats.buildSegments.processed).toBe(2);
      expect(payload.rowStats.determinePartitions.processed).toBe(0);
      expect(payload.unparseableEvents).toEqual({ determinePartitions: [], buildSegments: [] });
    }
  });

  it("saves parse-exception messages up to maxSavedParseExceptions", async () => {
    const dir = dataDir({ "a.json": LINES.join("\n") });
    const s = await startTestSim();
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "saved",
        inputSource: { type: "local", baseDir: dir, filter: "*.json" },
        tuningConfig: { maxSavedParseExceptions: 5 },
        context: { simDurationMs: 10 },
      }),
    );
    await s.advance(10);
    const payload = (await s.get(`${V1}/task/saved/reports`)).json.ingestionStatsAndErrors.payload;
    expect(payload.unparseableEvents.buildSegments).toEqual([
      "Unable to parse row [not json at all]",
      "Timestamp[null] is unparseable! Event: {page=no time, user=u5}",
    ]);
  });

  it("FAILs with 'Max parse exceptions[N] exceeded' when unparseable rows exceed maxParseExceptions", async () => {
    const dir = dataDir({ "a.json": LINES.join("\n") });
    const s = await startTestSim();
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "strict",
        inputSource: { type: "local", baseDir: dir, filter: "*.json" },
        tuningConfig: { maxParseExceptions: 1 },
        context: { simDurationMs: 10 },
      }),
    );
    await s.advance(10);
    expect((await s.get(`${V1}/task/strict/status`)).json.status).toMatchObject({
      statusCode: "FAILED",
      errorMsg: "Max parse exceptions[1] exceeded",
    });
    const payload = (await s.get(`${V1}/task/strict/reports`)).json.ingestionStatsAndErrors.payload;
    expect(payload.errorMsg).toBe("Max parse exceptions[1] exceeded");
    expect(payload.rowStats.buildSegments.unparseable).toBe(2);
    expect(s.sim.engine.store.all("wiki")).toEqual([]);
  });

  it("reads CSV with a header row and with explicit columns, and millis/posix timestamps", async () => {
    const dir = dataDir({
      "h.csv": 'ts,page,user\n1767229200000,"a, quoted",u1\n1767232800000,b,u2\n',
      "c.tsv": "1767229200\ta\tu1\n",
    });
    const s = await startTestSim();
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "csv",
        dataSchema: { timestampSpec: { column: "ts", format: "millis" } },
        inputSource: { type: "local", baseDir: dir, filter: "*.csv" },
        inputFormat: { type: "csv", findColumnsFromHeader: true },
        context: { simDurationMs: 10 },
      }),
    );
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "tsv",
        dataSource: "tsv",
        dataSchema: { timestampSpec: { column: "ts", format: "posix" } },
        inputSource: { type: "local", files: [join(dir, "c.tsv")] },
        inputFormat: { type: "tsv", columns: ["ts", "page", "user"] },
        context: { simDurationMs: 10 },
      }),
    );
    await s.advance(10);
    for (const [id, n] of [
      ["csv", 2],
      ["tsv", 1],
    ] as const) {
      const stats = (await s.get(`${V1}/task/${id}/reports`)).json.ingestionStatsAndErrors.payload.rowStats
        .buildSegments;
      expect([id, stats.processed, stats.unparseable, stats.thrownAway]).toEqual([id, n, 0, 0]);
    }
    const rows = s.sim.engine.store.liveRows("wiki", s.sim.engine.now);
    expect(rows.map((r) => r.page).sort()).toEqual(["a, quoted", "b"]);
  });

  it("rejects a csv inputFormat with neither columns nor findColumnsFromHeader", async () => {
    const s = await startTestSim();
    const res = await s.post(`${V1}/task`, parallelTask({ inputFormat: { type: "csv" } }));
    expect(res.status).toBe(400);
    expect(res.json.error).toBe(
      "Cannot construct instance of `org.apache.druid.data.input.impl.CsvInputFormat`, problem: If [columns] is not set, [findColumnsFromHeader] must be set.",
    );
  });

  it("FAILs a task whose baseDir does not exist", async () => {
    const s = await startTestSim();
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "nodir",
        inputSource: { type: "local", baseDir: "/nonexistent/segops", filter: "*" },
        context: { simDurationMs: 10 },
      }),
    );
    await s.advance(10);
    expect((await s.get(`${V1}/task/nodir/status`)).json.status.errorMsg).toBe(
      "Cannot read baseDir[/nonexistent/segops]: directory does not exist or is not readable",
    );
  });

  it("serves a live report while running with counters by progress, and 404 text before the task starts", async () => {
    const s = await startTestSim({ capacity: 1 });
    await s.post(`${V1}/task`, parallelTask({ id: "live", context: { simRows: 1000, simDurationMs: 1000 } }));
    await s.post(`${V1}/task`, parallelTask({ id: "queued", intervals: ["2026-01-05/2026-01-06"] }));
    const notYet = await s.get(`${V1}/task/queued/reports`);
    expect(notYet.status).toBe(404);
    expect(notYet.contentType).toBe("text/plain");
    expect(notYet.text).toBe(
      "No task reports were found for this task. The task may not exist, or it may not have completed yet.",
    );
    await s.advance(250);
    const payload = (await s.get(`${V1}/task/live/reports`)).json.ingestionStatsAndErrors.payload;
    expect(payload.ingestionState).toBe("BUILD_SEGMENTS");
    expect(payload.rowStats.buildSegments.processed).toBe(250);
    expect(payload.rowStats).toHaveProperty("movingAverages");
  });

  it("gives synthetic sources a seeded row count when simRows is absent", async () => {
    const count = async () => {
      const s = await startTestSim({ seed: 3 });
      await s.post(
        `${V1}/task`,
        parallelTask({ id: "syn", context: { simRows: undefined, simDurationMs: 1 } }),
      );
      await s.advance(1);
      return (await s.get(`${V1}/task/syn/reports`)).json.ingestionStatsAndErrors.payload.rowStats
        .buildSegments.processed;
    };
    const n = await count();
    expect(n).toBeGreaterThanOrEqual(1000);
    expect(await count()).toBe(n);
  });
});
