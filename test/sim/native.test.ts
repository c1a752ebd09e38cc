// Native queries on the emulator beyond the conformance cases (test/sim/native-conformance.test.ts): that they read
// the rows Broker SQL reads once a replace overshadows part of a datasource, multi-value dimensions, the
// granularity `none` departure and the query types the emulator does not answer.
import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

const lines = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join("\n");

async function ingest(t: TestSim, id: string, rows: object[], intervals: string[], dimensions: unknown[]) {
  const task = parallelTask({
    id,
    intervals,
    inputSource: { type: "inline", data: lines(rows) },
    dataSchema: { dimensionsSpec: { dimensions }, metricsSpec: [] },
    context: {},
  });
  expect((await t.post("/druid/indexer/v1/task", task)).status).toBe(200);
  for (let i = 0; i < 200; i++) {
    const status = (await t.get(`/druid/indexer/v1/task/${id}/status`)).json.status.statusCode;
    if (status === "SUCCESS") break;
    expect(status).not.toBe("FAILED");
    await t.advance(1000);
  }
  // The handoff: the segments load a few sim seconds after SUCCESS.
  await t.advance(60_000);
}

const query = async (t: TestSim, q: object) => {
  const res = await t.post("/druid/v2/", { dataSource: "wiki", ...q });
  expect(res.status, res.text).toBe(200);
  return res.json;
};

describe("native queries on the emulator", () => {
  it("read the rows SQL reads when a replace overshadows one of two days", async () => {
    const t = await startTestSim();
    const day = (d: string, n: number, page: string) =>
      Array.from({ length: n }, (_, i) => ({ time: `${d}T0${i}:00:00Z`, page }));
    await ingest(
      t,
      "v1",
      [...day("2026-01-01", 3, "old"), ...day("2026-01-02", 2, "old")],
      ["2026-01-01/2026-01-03"],
      ["page"],
    );
    await ingest(t, "v2", day("2026-01-01", 1, "new"), ["2026-01-01/2026-01-02"], ["page"]);

    const sql = await t.post("/druid/v2/sql", {
      query: 'SELECT "page", COUNT(*) FROM "wiki" GROUP BY 1 ORDER BY 1',
      resultFormat: "array",
    });
    expect(sql.json).toEqual([
      ["new", 1],
      ["old", 2],
    ]);
    const grouped = await query(t, {
      queryType: "groupBy",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-03"],
      dimensions: ["page"],
      aggregations: [{ type: "count", name: "n" }],
    });
    expect(grouped.map((r: { event: unknown }) => r.event)).toEqual([
      { page: "new", n: 1 },
      { page: "old", n: 2 },
    ]);
    // One batch per visible segment: the replaced day's old segment is not read.
    const scan = await query(t, {
      queryType: "scan",
      intervals: ["2026-01-01/2026-01-03"],
      columns: ["page"],
    });
    expect(
      scan.map((b: { segmentId: string; events: unknown[] }) => [b.segmentId.split("_")[1], b.events]),
    ).toEqual([
      ["2026-01-01T00:00:00.000Z", [{ page: "new" }]],
      ["2026-01-02T00:00:00.000Z", [{ page: "old" }, { page: "old" }]],
    ]);
  });

  it("explode a multi-value dimension into its values in topN and groupBy, and match a filter on any value", async () => {
    const t = await startTestSim();
    const rows = [
      { time: "2026-01-01T01:00:00Z", tags: ["a", "b"] },
      { time: "2026-01-01T02:00:00Z", tags: ["b"] },
      { time: "2026-01-01T03:00:00Z", tags: "c" },
    ];
    await ingest(t, "mv", rows, ["2026-01-01/2026-01-02"], ["tags"]);
    const top = await query(t, {
      queryType: "topN",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-02"],
      dimension: "tags",
      metric: "n",
      threshold: 5,
      aggregations: [{ type: "count", name: "n" }],
    });
    expect(top[0].result).toEqual([
      { tags: "b", n: 2 },
      { tags: "a", n: 1 },
      { tags: "c", n: 1 },
    ]);
    const filtered = await query(t, {
      queryType: "timeseries",
      granularity: "all",
      intervals: ["2026-01-01/2026-01-02"],
      filter: { type: "selector", dimension: "tags", value: "a" },
      aggregations: [{ type: "count", name: "n" }],
    });
    expect(filtered[0].result).toEqual({ n: 1 });
  });

  it("keep only the milliseconds that hold rows in a timeseries under granularity none", async () => {
    const t = await startTestSim();
    const rows = [
      { time: "2026-01-01T01:00:00Z", page: "x" },
      { time: "2026-01-01T01:00:00Z", page: "y" },
      { time: "2026-01-01T05:30:00Z", page: "x" },
    ];
    await ingest(t, "none", rows, ["2026-01-01/2026-01-02"], ["page"]);
    const series = await query(t, {
      queryType: "timeseries",
      granularity: "none",
      intervals: ["2026-01-01/2026-01-02"],
      aggregations: [{ type: "count", name: "n" }],
    });
    expect(series).toEqual([
      { timestamp: "2026-01-01T01:00:00.000Z", result: { n: 2 } },
      { timestamp: "2026-01-01T05:30:00.000Z", result: { n: 1 } },
    ]);
  });

  it("refuses a query type Druid has that the emulator does not answer, naming the ones it does", async () => {
    const t = await startTestSim();
    const res = await t.post("/druid/v2", {
      queryType: "search",
      dataSource: "wiki",
      intervals: ["2026-01-01/2026-01-02"],
    });
    expect(res.status).toBe(400);
    expect(res.json.errorMessage).toBe(
      "Query type [search] is not supported by the segops emulator (it answers timeseries, topN, groupBy, scan, segmentMetadata, timeBoundary)",
    );
  });

  it("answer malformed queries with a 400 naming what could not be bound, never the emulator's own 500", async () => {
    const t = await startTestSim();
    const base = '"queryType":"timeseries","dataSource":"wiki","intervals":["2026-01-01/2026-01-02"]';
    const cases: [string, string][] = [
      ["null", "from non-Object value (token `JsonToken.VALUE_NULL`)"],
      [`{${base},"aggregations":{"n":1}}`, "aggregations must be a list"],
      [`{${base},"filter":{"type":"regex","dimension":"page","pattern":"("}}`, "RegexDimFilter`, problem:"],
      [
        `{${base},"filter":{"type":"interval","dimension":"__time","intervals":["x"]}}`,
        "IntervalDimFilter`, problem:",
      ],
      [`{${base},"granularity":{"type":"period","period":"soon"}}`, "Granularity`, problem:"],
    ];
    for (const [body, says] of cases) {
      const res = await t.post("/druid/v2", body);
      expect([res.status, res.json.error], body).toEqual([400, "Unknown exception"]);
      expect(res.json.errorMessage, body).toContain(says);
    }
  });
});
