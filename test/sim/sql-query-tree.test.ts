// Broker SQL as tools write it (src/sim/sql*.ts): table-qualified columns, DISTINCT, HAVING, CASE, subqueries,
// WITH, JOIN, OFFSET, EXPLAIN and the functions the web console, pydruid and SQLAlchemy send. Every expectation is
// what a real Druid 33 answered (test/conformance/broker-sql-cases.ts runs the same queries on both).
import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";
const DATA = [
  '{"time":"2026-01-01T01:00:00Z","page":"a","added":5}',
  '{"time":"2026-01-01T02:00:00Z","page":"b","added":7}',
  '{"time":"2026-01-02T03:00:00Z","page":"a","added":2}',
].join("\n");

async function withData(): Promise<TestSim> {
  const s = await startTestSim({ handoffDelayMs: 0 });
  const task = parallelTask({
    id: "load",
    intervals: ["2026-01-01/2026-01-03"],
    inputSource: { type: "inline", data: DATA },
    dataSchema: {
      dimensionsSpec: { dimensions: ["page", { type: "long", name: "added" }] },
      metricsSpec: [],
    },
    context: { simDurationMs: 1000 },
  });
  expect((await s.post(`${V1}/task`, task)).status).toBe(200);
  await s.advance(1000);
  return s;
}

const sql = (s: TestSim, query: string) => s.post("/druid/v2/sql", { query, resultFormat: "array" });

describe("table-qualified columns", () => {
  it("reads a column qualified by the table, by schema and table, or by the table's alias", async () => {
    const s = await withData();
    const ds = "wiki";
    expect((await sql(s, `SELECT "${ds}"."page", "${ds}".added FROM "${ds}" LIMIT 2`)).json).toEqual([
      ["a", 5],
      ["b", 7],
    ]);
    expect((await sql(s, `SELECT druid."${ds}"."page" FROM druid."${ds}" LIMIT 1`)).json).toEqual([["a"]]);
    expect((await sql(s, `SELECT t.page FROM "${ds}" t LIMIT 1`)).json).toEqual([["a"]]);
    expect(
      (
        await sql(
          s,
          `SELECT "${ds}"."page", COUNT(*) FROM "${ds}" GROUP BY "${ds}"."page" ORDER BY "${ds}"."page"`,
        )
      ).json,
    ).toEqual([
      ["a", 2],
      ["b", 1],
    ]);
    expect((await sql(s, `SELECT "${ds}".* FROM "${ds}" LIMIT 1`)).json).toEqual([
      ["2026-01-01T01:00:00.000Z", "a", 5],
    ]);
  });

  it("refuses a qualifier that names no table in FROM, and an unknown column of the table, as Calcite does", async () => {
    const s = await withData();
    const ds = "wiki";
    const aliased = await sql(s, `SELECT "${ds}".page FROM "${ds}" t LIMIT 2`);
    expect([aliased.status, aliased.json.errorMessage, aliased.json.context]).toEqual([
      400,
      `Table '${ds}' not found (line [1], column [8])`,
      { sourceType: "sql", line: "1", column: "8", endLine: "1", endColumn: String(8 + ds.length + 1) },
    ]);
    const twoParts = await sql(s, `SELECT x.y.page FROM "${ds}"`);
    expect([twoParts.json.errorMessage, twoParts.json.context.endColumn]).toEqual([
      "Table 'x.y' not found (line [1], column [8])",
      "10",
    ]);
    const column = await sql(s, `SELECT "${ds}".nope FROM "${ds}"`);
    expect([column.json.errorMessage, column.json.context.endColumn]).toEqual([
      `Column 'nope' not found in table '${ds}' (line [1], column [${8 + ds.length + 3}])`,
      String(8 + ds.length + 6),
    ]);
  });
});
