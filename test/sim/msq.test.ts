import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { LOST_WORKER_MESSAGE, startSim } from "../../src/sim/index.js";
import { writeDailyDataset } from "../helpers/dataset.js";
import { startTestSim, T0, type TestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";
const SIGNATURE =
  '[{"name":"ts","type":"string"},{"name":"channel","type":"string"},{"name":"page","type":"string"},{"name":"added","type":"long"}]';

/** A REPLACE of one day over EXTERN of that day's file (docs/druid-api.md §6). */
function replaceDay(
  dir: string,
  day: string,
  next: string,
  opts: { clustered?: boolean; format?: string; file?: string } = {},
): string {
  const source = JSON.stringify({ type: "local", baseDir: dir, filter: opts.file ?? `events-${day}.json` });
  const format = opts.format ?? '{"type":"json"}';
  return [
    `REPLACE INTO "events" OVERWRITE WHERE __time >= TIMESTAMP '${day} 00:00:00' AND __time < TIMESTAMP '${next} 00:00:00'`,
    `SELECT TIME_PARSE("ts") AS __time, "channel", "page", "added"`,
    `FROM TABLE(EXTERN('${source}', '${format}', '${SIGNATURE}'))`,
    "PARTITIONED BY DAY",
    ...(opts.clustered ? ['CLUSTERED BY "channel"'] : []),
  ].join("\n");
}

async function submitSql(s: TestSim, query: string, context: Record<string, unknown> = {}) {
  return s.post("/druid/v2/sql/task", { query, context: { simDurationMs: 10_000, ...context } });
}

async function count(s: TestSim, where = ""): Promise<number> {
  const res = await s.post("/druid/v2/sql", { query: `SELECT COUNT(*) AS n FROM events ${where}` });
  return res.json[0]?.n ?? 0;
}

describe("MSQ: POST /druid/v2/sql/task and the query_controller task (docs/druid-api.md §6)", () => {
  it("accepts a REPLACE with 202 {taskId, state}, runs a controller with its workers in their slots, publishes and serves the day", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 40 });
    const s = await startTestSim({ handoffDelayMs: 1_000 });
    const res = await submitSql(s, replaceDay(dir, "2026-01-01", "2026-01-02"), {
      sqlQueryId: "q1",
      maxNumTasks: 3,
    });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ taskId: "query-q1", state: "RUNNING" });

    const status = (await s.get(`${V1}/task/query-q1/status`)).json.status;
    expect(status).toMatchObject({
      id: "query-q1",
      type: "query_controller",
      statusCode: "RUNNING",
      dataSource: "events",
    });
    const tasks = (await s.get(`${V1}/tasks?datasource=events`)).json as Array<Record<string, unknown>>;
    const workers = tasks.filter((t) => t.type === "query_worker");
    expect(workers.map((t) => t.id).sort()).toEqual(["query-q1-worker0_0", "query-q1-worker1_0"]);
    expect(workers.every((t) => t.groupId === "query-q1" && t.statusCode === "RUNNING")).toBe(true);
    // The controller and its two workers: maxNumTasks = 3 slots.
    expect(s.sim.stats().slots.used).toBe(3);
    const running = (await s.get("/druid/v2/sql/statements/query-q1")).json;
    expect(running).toMatchObject({ queryId: "query-q1", state: "RUNNING", durationMs: 0 });

    await s.advance(10_000);
    expect((await s.get(`${V1}/task/query-q1/status`)).json.status).toMatchObject({
      statusCode: "SUCCESS",
      errorMsg: null,
    });
    const after = (await s.get(`${V1}/tasks?datasource=events&state=complete`)).json as Array<
      Record<string, unknown>
    >;
    expect(after.filter((t) => t.type === "query_worker").every((t) => t.statusCode === "SUCCESS")).toBe(
      true,
    );
    expect(s.sim.stats().slots.used).toBe(0);

    const report = (await s.get(`${V1}/task/query-q1/reports`)).json.multiStageQuery;
    expect(report.taskId).toBe("query-q1");
    expect(report.payload.status).toMatchObject({ status: "SUCCESS", durationMs: 10_000 });
    expect(report.payload.status.errorReport).toBeUndefined();
    const stage1 = report.payload.counters["1"] as Record<
      string,
      { segmentGenerationProgress: { rowsProcessed: number } }
    >;
    const processed = Object.values(stage1).reduce(
      (n, w) => n + w.segmentGenerationProgress.rowsProcessed,
      0,
    );
    expect(processed).toBe(40);
    expect(Object.keys(report.payload.counters["0"])).toEqual(["0", "1"]);
    // Workers have no reports of their own.
    expect((await s.get(`${V1}/task/query-q1-worker0_0/reports`)).status).toBe(404);

    const done = (await s.get("/druid/v2/sql/statements/query-q1?detail=true")).json;
    expect(done).toMatchObject({ queryId: "query-q1", state: "SUCCESS", durationMs: 10_000 });
    expect(done.counters).toEqual(report.payload.counters);
    expect(done.errorDetails).toBeUndefined();

    await s.advance(1_000);
    expect(await count(s)).toBe(40);
  });

  it("REPLACE replaces: a second query over the same day swaps the data, CLUSTERED BY makes range segments", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 30 });
    const s = await startTestSim({ handoffDelayMs: 0 });
    await submitSql(s, replaceDay(dir, "2026-01-01", "2026-01-02"), { sqlQueryId: "a" });
    await s.advance(10_000);
    expect(await count(s)).toBe(30);
    const other = mkdtempSync(join(tmpdir(), "segops-msq-"));
    writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 12, dir: other });
    await submitSql(s, replaceDay(other, "2026-01-01", "2026-01-02", { clustered: true }), {
      sqlQueryId: "b",
      rowsPerSegment: 5,
    });
    await s.advance(10_000);
    expect(await count(s)).toBe(12);
    const all = (await s.get("/druid/coordinator/v1/datasources/events/segments?full")).json as Array<{
      version: string;
      shardSpec: { type: string; dimensions?: string[] };
    }>;
    const newest = all
      .map((x) => x.version)
      .sort()
      .at(-1);
    const segments = all.filter((x) => x.version === newest);
    // 12 rows at rowsPerSegment 5: three range partitions of the new version.
    expect(segments.length).toBe(3);
    expect(
      segments.every((x) => x.shardSpec.type === "range" && x.shardSpec.dimensions?.[0] === "channel"),
    ).toBe(true);
  });

  it("reads CSV through EXTERN", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segops-msq-"));
    writeFileSync(join(dir, "d.csv"), "2026-01-01T01:00:00Z,#a,p1,3\n2026-01-01T02:00:00Z,#b,p2,4\n");
    const s = await startTestSim({ handoffDelayMs: 0 });
    const q = replaceDay(dir, "2026-01-01", "2026-01-02", {
      file: "d.csv",
      format: '{"type":"csv","columns":["ts","channel","page","added"]}',
    });
    expect((await submitSql(s, q)).status).toBe(202);
    await s.advance(10_000);
    expect(await count(s)).toBe(2);
    const sum = await s.post("/druid/v2/sql", { query: "SELECT SUM(added) AS a FROM events" });
    expect(sum.json[0].a).toBe(7);
  });

  it("a corrupt input over maxParseExceptions (default 0) fails with TooManyWarnings, its report and statement say why", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 10 });
    appendFileSync(join(dir, "events-2026-01-01.json"), "{not json\n{also not\n");
    const s = await startTestSim({ handoffDelayMs: 0 });
    await submitSql(s, replaceDay(dir, "2026-01-01", "2026-01-02"), { sqlQueryId: "bad" });
    await s.advance(10_000);
    const message = "TooManyWarnings: Too many warnings of type CannotParseExternalData generated (max = 0)";
    expect((await s.get(`${V1}/task/query-bad/status`)).json.status).toMatchObject({
      statusCode: "FAILED",
      errorMsg: message,
    });
    const worker = (await s.get(`${V1}/task/query-bad-worker0_0/status`)).json.status;
    expect(worker.statusCode).toBe("FAILED");
    const status = (await s.get(`${V1}/task/query-bad/reports`)).json.multiStageQuery.payload.status;
    expect(status.status).toBe("FAILED");
    expect(status.errorReport.error).toEqual({
      errorCode: "TooManyWarnings",
      maxWarnings: 0,
      rootErrorCode: "CannotParseExternalData",
      errorMessage: "Too many warnings of type CannotParseExternalData generated (max = 0)",
    });
    expect(status.warnings.map((w: { error: { errorCode: string } }) => w.error.errorCode)).toEqual([
      "CannotParseExternalData",
      "CannotParseExternalData",
    ]);
    const stmt = (await s.get("/druid/v2/sql/statements/query-bad")).json;
    expect(stmt.state).toBe("FAILED");
    expect(stmt.errorDetails).toMatchObject({ errorCode: "TooManyWarnings", errorMessage: message });
    expect(await count(s)).toBe(0);
  });

  it("with maxParseExceptions -1 the query succeeds and counts the warnings", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 10 });
    appendFileSync(join(dir, "events-2026-01-01.json"), "{not json\n");
    const s = await startTestSim({ handoffDelayMs: 0 });
    await submitSql(s, replaceDay(dir, "2026-01-01", "2026-01-02"), {
      sqlQueryId: "lenient",
      maxParseExceptions: -1,
    });
    await s.advance(10_000);
    const payload = (await s.get(`${V1}/task/query-lenient/reports`)).json.multiStageQuery.payload;
    expect(payload.status.status).toBe("SUCCESS");
    expect(payload.counters["0"]["0"].warnings).toEqual({ type: "warnings", CannotParseExternalData: 1 });
    expect(await count(s)).toBe(10);
  });

  it("SET statements set context keys", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 10 });
    appendFileSync(join(dir, "events-2026-01-01.json"), "{not json\n");
    const s = await startTestSim({ handoffDelayMs: 0 });
    await submitSql(s, `SET maxParseExceptions = 1;\n${replaceDay(dir, "2026-01-01", "2026-01-02")}`, {
      sqlQueryId: "set",
    });
    await s.advance(10_000);
    expect((await s.get(`${V1}/task/query-set/status`)).json.status.statusCode).toBe("SUCCESS");
  });

  it("before Druid 34 a SET statement makes several statements, which the planner refuses", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 1 });
    const s = await startTestSim({ druidVersion: 33 });
    const query = `SET maxParseExceptions = 1;\n${replaceDay(dir, "2026-01-01", "2026-01-02")}`;
    const res = await submitSql(s, query, { sqlQueryId: "old" });
    expect(res.status).toBe(400);
    expect(res.json.error.errorMessage).toBe(
      `Multiple statements detected in SQL string[${query}], but only a single statement is supported`,
    );
    expect(s.sim.engine.tasks.size).toBe(0);
  });

  it("a second submission with the same sqlQueryId is the Overlord's duplicate, wrapped in a 500 SqlTaskStatus; nothing runs twice", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 5 });
    const s = await startTestSim({ handoffDelayMs: 0 });
    const q = replaceDay(dir, "2026-01-01", "2026-01-02");
    expect((await submitSql(s, q, { sqlQueryId: "dup" })).status).toBe(202);
    const again = await submitSql(s, q, { sqlQueryId: "dup" });
    expect(again.status).toBe(500);
    expect(again.json.taskId).toBe("dup");
    expect(again.json.state).toBe("FAILED");
    expect(again.json.error).toMatchObject({
      error: "druidException",
      persona: "DEVELOPER",
      category: "UNCATEGORIZED",
    });
    expect(again.json.error.errorMessage).toContain("Server error [400 Bad Request]");
    expect(again.json.error.errorMessage).toContain("Task[query-dup] already exists");
    const log = s.sim.stats().submissions.filter((x) => x.id === "query-dup");
    expect(log.map((x) => [x.accepted, x.status])).toEqual([
      [true, 202],
      [false, 500],
    ]);
  });

  it("planning errors are 400 SqlTaskStatus bodies with Druid's messages, and nothing is queued", async () => {
    const s = await startTestSim();
    const base =
      'SELECT TIME_PARSE("ts") AS __time, "page" FROM TABLE(EXTERN(\'{"type":"inline","data":""}\', \'{"type":"json"}\', \'[{"name":"ts","type":"string"},{"name":"page","type":"string"}]\'))';
    const noOverwrite = await submitSql(s, `REPLACE INTO events ${base} PARTITIONED BY DAY`, {
      sqlQueryId: "e1",
    });
    expect(noOverwrite.status).toBe(400);
    expect(noOverwrite.json).toMatchObject({ taskId: "e1", state: "FAILED" });
    expect(noOverwrite.json.error).toMatchObject({ errorCode: "invalidInput", category: "INVALID_INPUT" });
    expect(noOverwrite.json.error.errorMessage).toMatch(
      /^Missing time chunk information in OVERWRITE clause for REPLACE/,
    );

    const misaligned = await submitSql(
      s,
      `REPLACE INTO events OVERWRITE WHERE __time >= TIMESTAMP '2026-01-01 06:00:00' AND __time < TIMESTAMP '2026-01-02 00:00:00' ${base} PARTITIONED BY DAY`,
    );
    expect(misaligned.status).toBe(400);
    expect(misaligned.json.error.errorMessage).toBe(
      // The granularity as Druid prints it (`PeriodGranularity#toString`; CalciteReplaceDmlTest).
      "OVERWRITE WHERE clause identified interval [2026-01-01T06:00:00.000Z/2026-01-02T00:00:00.000Z] which is not aligned with PARTITIONED BY granularity [{type=period, period=P1D, timeZone=UTC, origin=null}]",
    );
    const noPartition = await submitSql(s, `INSERT INTO events ${base}`);
    expect(noPartition.json.error.errorMessage).toBe(
      "Operation [INSERT] requires a PARTITIONED BY to be explicitly defined, but none was found.",
    );
    expect(s.sim.engine.tasks.size).toBe(0);
    expect((await s.get("/druid/v2/sql/task/enabled")).json).toEqual({ enabled: true });
    const missing = await s.get("/druid/v2/sql/statements/query-nope");
    expect(missing.status).toBe(404);
    expect(missing.json.errorMessage).toBe(
      "Query [query-nope] was not found. The query details are no longer present or might not be of the type [query_controller]. Verify that the id is correct.",
    );
  });

  it("a shutdown of the controller cancels the query and its workers", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 5 });
    const s = await startTestSim();
    await submitSql(s, replaceDay(dir, "2026-01-01", "2026-01-02"), { sqlQueryId: "c" });
    await s.post(`${V1}/task/query-c/shutdown`, "");
    expect((await s.get(`${V1}/task/query-c/status`)).json.status.statusCode).toBe("FAILED");
    expect((await s.get(`${V1}/task/query-c-worker0_0/status`)).json.status.errorMsg).toBe(
      "Canceled: Query canceled by user or by task shutdown.",
    );
    const stmt = (await s.get("/druid/v2/sql/statements/query-c")).json;
    expect(stmt).toMatchObject({ state: "FAILED", errorDetails: { errorCode: "Canceled" } });
  });

  it("reads EXTERN's two-argument form with EXTEND column types", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 6 });
    const s = await startTestSim({ handoffDelayMs: 0 });
    const source = JSON.stringify({ type: "local", baseDir: dir, filter: "events-2026-01-01.json" });
    const q = [
      "REPLACE INTO events OVERWRITE WHERE __time >= TIMESTAMP '2026-01-01 00:00:00' AND __time < TIMESTAMP '2026-01-02 00:00:00'",
      'SELECT TIME_PARSE("ts") AS __time, "page", "added"',
      `FROM TABLE(EXTERN('${source}', '{"type":"json"}')) EXTEND ("ts" VARCHAR, "page" VARCHAR, "added" BIGINT)`,
      "PARTITIONED BY DAY",
    ].join("\n");
    expect((await submitSql(s, q)).status).toBe(202);
    await s.advance(10_000);
    expect(await count(s)).toBe(6);
    const cols = await s.post("/druid/v2/sql", {
      query:
        "SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'events' AND COLUMN_NAME = 'added'",
    });
    expect(cols.json).toEqual([{ COLUMN_NAME: "added", DATA_TYPE: "BIGINT" }]);
  });

  it("rows outside OVERWRITE WHERE fail the REPLACE with InsertTimeOutOfBounds, unless the SELECT filters them", async () => {
    const dir = writeDailyDataset({ from: "2026-01-01", days: 2, rowsPerDay: 4 });
    const s = await startTestSim({ handoffDelayMs: 0 });
    const both = replaceDay(dir, "2026-01-01", "2026-01-02", { file: "events-*.json" });
    await submitSql(s, both, { sqlQueryId: "oob" });
    await s.advance(10_000);
    const status = (await s.get(`${V1}/task/query-oob/status`)).json.status;
    expect(status.statusCode).toBe("FAILED");
    expect(status.errorMsg).toBe(
      "InsertTimeOutOfBounds: Inserted data contains time chunk[2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z] outside of bounds specified by OVERWRITE WHERE[[2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z]]. If you want to include this data, expand your OVERWRITE WHERE. If you do not want to include this data, use SELECT ... WHERE to filter it from your inserted data.",
    );
    const error = (await s.get(`${V1}/task/query-oob/reports`)).json.multiStageQuery.payload.status
      .errorReport.error;
    expect(error).toMatchObject({
      errorCode: "InsertTimeOutOfBounds",
      interval: "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
    });

    const filtered = both.replace(
      "PARTITIONED BY DAY",
      // WHERE is evaluated before the SELECT's aliases exist: it filters on the input's column.
      `WHERE TIME_PARSE("ts") >= TIMESTAMP '2026-01-01 00:00:00' AND TIME_PARSE("ts") < TIMESTAMP '2026-01-02 00:00:00'\nPARTITIONED BY DAY`,
    );
    await submitSql(s, filtered, { sqlQueryId: "filtered" });
    await s.advance(10_000);
    expect((await s.get(`${V1}/task/query-filtered/status`)).json.status.statusCode).toBe("SUCCESS");
    const counters = (await s.get(`${V1}/task/query-filtered/reports`)).json.multiStageQuery.payload.counters;
    expect(counters["0"]["0"].input0.rows).toEqual([8]);
    expect(counters["0"]["0"].output.rows).toEqual([4]);
    expect(await count(s)).toBe(4);
  });

  it("with dataDir, a restart keeps finished queries (and their ids: a resubmit is a duplicate); running ones fail as lost", async () => {
    const data = writeDailyDataset({ from: "2026-01-01", days: 2, rowsPerDay: 5 });
    const state = mkdtempSync(join(tmpdir(), "segops-msq-state-"));
    const clock = new ManualClock(T0);
    const body = (day: string, next: string, id: string, ms: number) =>
      JSON.stringify({ query: replaceDay(data, day, next), context: { sqlQueryId: id, simDurationMs: ms } });
    const send = (url: string, b: string) =>
      fetch(`${url}/druid/v2/sql/task`, {
        method: "POST",
        body: b,
        headers: { "Content-Type": "application/json" },
      });
    const first = await startSim({ clock, dataDir: state, handoffDelayMs: 0 });
    expect((await send(first.url, body("2026-01-01", "2026-01-02", "done", 10))).status).toBe(202);
    await clock.advance(10);
    expect((await send(first.url, body("2026-01-02", "2026-01-03", "running", 10_000))).status).toBe(202);
    await first.close();

    const second = await startSim({ clock, dataDir: state, handoffDelayMs: 0 });
    try {
      const status = async (id: string) =>
        (
          (await (await fetch(`${second.url}${V1}/task/${id}/status`)).json()) as {
            status: Record<string, unknown>;
          }
        ).status;
      expect(await status("query-done")).toMatchObject({ type: "query_controller", statusCode: "SUCCESS" });
      expect(await status("query-running")).toMatchObject({
        statusCode: "FAILED",
        errorMsg: LOST_WORKER_MESSAGE,
      });
      expect((await status("query-running-worker0_0")).statusCode).toBe("FAILED");
      const again = await send(second.url, body("2026-01-01", "2026-01-02", "done", 10));
      expect(again.status).toBe(500);
      expect(((await again.json()) as { error: { errorMessage: string } }).error.errorMessage).toContain(
        "Task[query-done] already exists",
      );
      const report = (await (await fetch(`${second.url}${V1}/task/query-done/reports`)).json()) as {
        multiStageQuery: { payload: { status: { status: string } } };
      };
      expect(report.multiStageQuery.payload.status.status).toBe("SUCCESS");
    } finally {
      await second.close();
    }
  });
  it("OVERWRITE ALL by DAY over a datasource holding an ALL-granularity segment stays bounded (no walk over eternity)", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    const inline = (rows: string[]) =>
      `TABLE(EXTERN('${JSON.stringify({ type: "inline", data: rows.join("\n") })}', '{"type":"json"}')) EXTEND ("ts" VARCHAR, "v" BIGINT)`;
    const a = await submitSql(
      s,
      `INSERT INTO e SELECT TIME_PARSE("ts") AS __time, "v" FROM ${inline(['{"ts":"2026-01-01T01:00:00Z","v":1}'])} PARTITIONED BY ALL`,
      { sqlQueryId: "all" },
    );
    expect(a.status, JSON.stringify(a.json)).toBe(202);
    await s.advance(10_000);
    const b = await submitSql(
      s,
      `REPLACE INTO e OVERWRITE ALL SELECT TIME_PARSE("ts") AS __time, "v" FROM ${inline(['{"ts":"2026-01-02T01:00:00Z","v":2}'])} PARTITIONED BY DAY`,
      { sqlQueryId: "day" },
    );
    expect(b.status, JSON.stringify(b.json)).toBe(202);
    await s.advance(10_000);
    expect((await s.get(`${V1}/task/query-day/status`)).json.status.statusCode).toBe("SUCCESS");
    const day = s.sim.engine.store
      .visible("e", s.sim.engine.now)
      .filter((seg) => seg.interval.start === Date.UTC(2026, 0, 2));
    expect(day.flatMap((seg) => seg.rows ?? [])).toEqual([{ __time: Date.UTC(2026, 0, 2, 1), v: 2 }]);
  });
});
