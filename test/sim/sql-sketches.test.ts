// DataSketches in the emulator's Broker SQL (src/sim/sql-sketches.ts, src/sim/sql-sketch-aggregates.ts): what it
// refuses rather than answer unlike Druid. test/conformance/broker-sql-sketch-cases.ts holds what it answers to a
// real Druid 33 with druid-datasketches.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { startSim } from "../../src/sim/index.js";
import { startTestSim, T0, type TestSim } from "../helpers/sim.js";

/** Six rows of `x`: a, b, '', null, a, c (3 distinct non-empty values). */
const INSERT = `INSERT INTO t
SELECT TIME_PARSE("ts") AS __time, x
FROM TABLE(EXTERN('{"type":"inline","data":"{\\"ts\\":\\"2026-01-01\\",\\"x\\":\\"a\\"}\\n{\\"ts\\":\\"2026-01-01\\",\\"x\\":\\"b\\"}\\n{\\"ts\\":\\"2026-01-01\\",\\"x\\":\\"\\"}\\n{\\"ts\\":\\"2026-01-01\\"}\\n{\\"ts\\":\\"2026-01-01\\",\\"x\\":\\"a\\"}\\n{\\"ts\\":\\"2026-01-01\\",\\"x\\":\\"c\\"}"}', '{"type":"json"}', '[{"name":"ts","type":"string"},{"name":"x","type":"string"}]'))
PARTITIONED BY DAY`;

/** A fresh emulator (the helper stops it after each test) holding `t`; answers one Broker query. */
async function sql(query: string): Promise<{ status: number; body: unknown }> {
  const s: TestSim = await startTestSim({ handoffDelayMs: 0 });
  const res = await s.post("/druid/v2/sql/task", { query: INSERT, context: { simDurationMs: 1_000 } });
  expect(res.status, JSON.stringify(res.json)).toBe(202);
  await s.advance(3_000);
  const count = await s.post("/druid/v2/sql", { query: "SELECT COUNT(*) FROM t", resultFormat: "array" });
  expect(count.json).toEqual([[6]]);
  const answer = await s.post("/druid/v2/sql", { query, resultFormat: "array" });
  return { status: answer.status, body: answer.json };
}

const VALUES = "t";

describe("DataSketches over Broker SQL in the emulator", () => {
  it("counts the distinct non-empty values, as the sketches do below their exact-mode sizes", async () => {
    const r = await sql(
      `SELECT APPROX_COUNT_DISTINCT_DS_HLL(x), APPROX_COUNT_DISTINCT_DS_THETA(x), THETA_SKETCH_ESTIMATE(DS_THETA(x)), HLL_SKETCH_ESTIMATE(DS_HLL(x), TRUE) FROM ${VALUES}`,
    );
    expect(r).toEqual({ status: 200, body: [[3, 3, 3, 3]] });
  });

  it("refuses a sketch in a result: Druid prints its serialized bytes, which the emulator does not make", async () => {
    const r = await sql(`SELECT DS_HLL(x) FROM ${VALUES}`);
    expect(r.status).toBe(501);
    expect(JSON.stringify(r.body)).toMatch(/A DS_HLL sketch in a result .*is not supported by the emulator/);
  });

  it("refuses an unrounded HLL estimate of more than one value (Druid interpolates, e.g. 3.000000014901161)", async () => {
    const r = await sql(`SELECT HLL_SKETCH_ESTIMATE(DS_HLL(x)) FROM ${VALUES}`);
    expect(r.status).toBe(501);
    expect(JSON.stringify(r.body)).toMatch(/HLL_SKETCH_ESTIMATE without rounding/);
  });

  it("refuses the arguments Druid's sketch factories refuse: lgK outside 4..21, a size not a power of 2", async () => {
    const lgK = await sql(`SELECT APPROX_COUNT_DISTINCT_DS_HLL(x, 2) FROM ${VALUES}`);
    expect(lgK.status).toBe(501);
    expect(JSON.stringify(lgK.body)).toMatch(/Log K must be between 4 and 21/);
    const size = await sql(`SELECT APPROX_COUNT_DISTINCT_DS_THETA(x, 3) FROM ${VALUES}`);
    expect(size.status).toBe(501);
    expect(JSON.stringify(size.body)).toMatch(/positive integer-power of 2/);
  });

  it("refuses an estimate of a sketch of the other kind", async () => {
    const r = await sql(`SELECT THETA_SKETCH_ESTIMATE(DS_HLL(x)) FROM ${VALUES}`);
    expect(r.status).toBe(501);
  });
});

describe("DataSketches written by MSQ in the emulator", () => {
  const FIXTURE = join(
    import.meta.dirname,
    "../fixtures/druid-specs/sql/docs--tutorials--tutorial-sketches-theta--L102.sql",
  );

  async function ingest(query: string): Promise<TestSim> {
    const s = await startTestSim({ handoffDelayMs: 0 });
    const res = await s.post("/druid/v2/sql/task", { query, context: { simDurationMs: 1_000 } });
    expect(res.status, JSON.stringify(res.json)).toBe(202);
    await s.advance(3_000);
    const st = (await s.get(`/druid/indexer/v1/task/${res.json.taskId}/status`)).json.status;
    expect(st.statusCode, st.errorMsg).toBe("SUCCESS");
    return s;
  }

  const rows = async (s: TestSim, query: string) =>
    (await s.post("/druid/v2/sql", { query, resultFormat: "array", header: true, sqlTypesHeader: true }))
      .json;

  it("the Theta tutorial's DS_THETA column: its sketches merge per show and estimate per row", async () => {
    const s = await ingest(readFileSync(FIXTURE, "utf8"));
    // The tutorial's users per show: Game of Thrones alice, bob, erin; Bridgerton alice, bob, carol, dan, erin.
    expect(
      await rows(
        s,
        'SELECT "show", APPROX_COUNT_DISTINCT_DS_THETA(theta_uid) AS users, THETA_SKETCH_ESTIMATE(DS_THETA(theta_uid)) AS est FROM ts_tutorial GROUP BY 1',
      ),
    ).toEqual([
      ["show", "users", "est"],
      ["VARCHAR", "BIGINT", "DOUBLE"],
      ["Bridgerton", 5, 5],
      ["Game of Thrones", 3, 3],
    ]);
    // One row per day, show and episode; its sketch holds that group's users (2022-05-22, Bridgerton: S1E1 bob twice, S1E2 carol and erin).
    expect(
      await rows(
        s,
        'SELECT "episode", THETA_SKETCH_ESTIMATE(theta_uid) AS e, "count" FROM ts_tutorial WHERE __time = TIMESTAMP \'2022-05-22 00:00:00\' AND "show" = \'Bridgerton\'',
      ),
    ).toEqual([
      ["episode", "e", "count"],
      ["VARCHAR", "DOUBLE", "BIGINT"],
      ["S1E1", 1, 2],
      ["S1E2", 2, 2],
    ]);
    const raw = await s.post("/druid/v2/sql", { query: "SELECT theta_uid FROM ts_tutorial" });
    expect(raw.status).toBe(501);
    const hll = await s.post("/druid/v2/sql", {
      query: "SELECT APPROX_COUNT_DISTINCT_DS_HLL(theta_uid) FROM ts_tutorial",
    });
    expect(hll.status).toBe(501);
  });

  it("APPROX_COUNT_DISTINCT_DS_HLL in an INSERT is written as its count, a BIGINT (finalizeAggregations)", async () => {
    const s = await ingest(`INSERT INTO c
SELECT TIME_PARSE("ts") AS __time, g, APPROX_COUNT_DISTINCT_DS_HLL(x) AS n, DS_HLL(x) AS h
FROM TABLE(EXTERN('{"type":"inline","data":"ts,g,x\\n2026-01-01,a,p\\n2026-01-01,a,q\\n2026-01-01,a,p\\n2026-01-01,b,\\n2026-01-01,b,r"}', '{"type":"csv","findColumnsFromHeader":true}', '[{"name":"ts","type":"string"},{"name":"g","type":"string"},{"name":"x","type":"string"}]'))
GROUP BY 1, 2
PARTITIONED BY DAY`);
    expect(await rows(s, "SELECT g, n, HLL_SKETCH_ESTIMATE(h, TRUE) AS e FROM c")).toEqual([
      ["g", "n", "e"],
      ["VARCHAR", "BIGINT", "DOUBLE"],
      ["a", 2, 2],
      ["b", 1, 1],
    ]);
  });
});

describe("DataSketches metrics of a native ingestion in the emulator", () => {
  it("HLLSketchBuild and thetaSketch roll up into sketches the SQL sketch functions read", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    // The rows and metricsSpec a real Druid 33 with druid-datasketches ingested (rollup by day and page): it
    // answered Main 3 and 3, Talk 1 and 1 (carol; a row without user is not counted) for the query below.
    const data = [
      '{"time":"2026-03-01T00:00:00Z","page":"Main","user":"alice"}',
      '{"time":"2026-03-01T01:00:00Z","page":"Main","user":"bob"}',
      '{"time":"2026-03-01T02:00:00Z","page":"Main","user":"alice"}',
      '{"time":"2026-03-01T03:00:00Z","page":"Talk","user":"carol"}',
      '{"time":"2026-03-01T04:00:00Z","page":"Talk"}',
      '{"time":"2026-03-02T00:00:00Z","page":"Main","user":"dave"}',
    ].join("\n");
    const submit = await s.post("/druid/indexer/v1/task", {
      type: "index_parallel",
      id: "sk_native",
      spec: {
        dataSchema: {
          dataSource: "sk_native",
          timestampSpec: { column: "time", format: "iso" },
          dimensionsSpec: { dimensions: ["page"] },
          metricsSpec: [
            { type: "count", name: "cnt" },
            { type: "HLLSketchBuild", name: "user_hll", fieldName: "user" },
            { type: "thetaSketch", name: "user_theta", fieldName: "user" },
          ],
          granularitySpec: { segmentGranularity: "day", queryGranularity: "day", rollup: true },
        },
        ioConfig: {
          type: "index_parallel",
          inputSource: { type: "inline", data },
          inputFormat: { type: "json" },
        },
      },
      context: { simDurationMs: 10 },
    });
    expect(submit.status, JSON.stringify(submit.json)).toBe(200);
    await s.advance(1_000);
    const res = await s.post("/druid/v2/sql", {
      query:
        "SELECT page, APPROX_COUNT_DISTINCT_DS_HLL(user_hll) AS h, APPROX_COUNT_DISTINCT_DS_THETA(user_theta) AS t FROM sk_native GROUP BY page",
      resultFormat: "array",
    });
    expect(res.json).toEqual([
      ["Main", 3, 3],
      ["Talk", 1, 1],
    ]);
  });
});

describe("native queries over the emulator's sketch columns", () => {
  it("are refused as the emulator's gap (501), never read as numbers or objects", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    const submit = await s.post("/druid/indexer/v1/task", {
      type: "index_parallel",
      id: "sk_native_gap",
      spec: {
        dataSchema: {
          dataSource: "sk_gap",
          timestampSpec: { column: "time", format: "iso" },
          dimensionsSpec: { dimensions: ["page"] },
          metricsSpec: [{ type: "thetaSketch", name: "u", fieldName: "user" }],
          granularitySpec: { segmentGranularity: "day", queryGranularity: "day", rollup: true },
        },
        ioConfig: {
          type: "index_parallel",
          inputSource: {
            type: "inline",
            data: '{"time":"2026-03-01T00:00:00Z","page":"Main","user":"alice"}',
          },
          inputFormat: { type: "json" },
        },
      },
      context: { simDurationMs: 10 },
    });
    expect(submit.status).toBe(200);
    await s.advance(1_000);
    const interval = ["2026-03-01/2026-03-02"];
    const sum = await s.post("/druid/v2", {
      queryType: "timeseries",
      dataSource: "sk_gap",
      intervals: interval,
      granularity: "all",
      aggregations: [{ type: "longSum", name: "x", fieldName: "u" }],
    });
    expect(sum.status).toBe(501);
    expect(sum.json.errorMessage).toMatch(/^Emulator: native queries do not read the sketch column/);
    const scan = await s.post("/druid/v2", { queryType: "scan", dataSource: "sk_gap", intervals: interval });
    expect(scan.status).toBe(501);
  });
});

describe("the emulator's sketch columns across a restart (dataDir)", () => {
  it("keeps each row's sketch, so the counts after a restart are those before", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segops-sim-sketch-"));
    const clock = new ManualClock(T0);
    const first = await startSim({ clock, dataDir: dir, handoffDelayMs: 0 });
    const post = async (url: string, path: string, body: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "Content-Type": "application/json" },
      });
      return { status: res.status, json: (await res.json()) as unknown };
    };
    const data = ["alice", "bob", "alice"]
      .map((u) => JSON.stringify({ time: "2026-01-01T00:00:00Z", page: "Main", user: u }))
      .join("\n");
    const submit = await post(first.url, "/druid/indexer/v1/task", {
      type: "index_parallel",
      id: "sk_persist",
      spec: {
        dataSchema: {
          dataSource: "sk_persist",
          timestampSpec: { column: "time", format: "iso" },
          dimensionsSpec: { dimensions: ["page"] },
          metricsSpec: [{ type: "HLLSketchBuild", name: "u", fieldName: "user" }],
          granularitySpec: { segmentGranularity: "day", queryGranularity: "day", rollup: true },
        },
        ioConfig: {
          type: "index_parallel",
          inputSource: { type: "inline", data },
          inputFormat: { type: "json" },
        },
      },
      context: { simDurationMs: 10 },
    });
    expect(submit.status).toBe(200);
    await clock.advance(1_000);
    const query = { query: "SELECT APPROX_COUNT_DISTINCT_DS_HLL(u) FROM sk_persist", resultFormat: "array" };
    expect((await post(first.url, "/druid/v2/sql", query)).json).toEqual([[2]]);
    await first.close();
    const second = await startSim({ clock: new ManualClock(T0 + 1_000), dataDir: dir, handoffDelayMs: 0 });
    try {
      expect((await post(second.url, "/druid/v2/sql", query)).json).toEqual([[2]]);
    } finally {
      await second.close();
    }
  });
});
