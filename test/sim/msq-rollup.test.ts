import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startTestSim, type TestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";
const SIGNATURE =
  '[{"name":"time","type":"string"},{"name":"country","type":"string"},{"name":"device","type":"string"},{"name":"bytes","type":"long"}]';

/**
 * 48 rows on 2026-01-01 at 12 distinct hours; country and device follow the hour, so the rows make 12 groups
 * of (time, country, device) and 6 of (country, device). bytes = row number + 1 (sum 1176).
 */
function writeDay(): string {
  const dir = mkdtempSync(join(tmpdir(), "segops-msq-rollup-"));
  const lines = Array.from({ length: 48 }, (_, i) =>
    JSON.stringify({
      time: `2026-01-01T${String(i % 12).padStart(2, "0")}:00:00Z`,
      country: ["US", "FR", "DE"][i % 3],
      device: ["mobile", "desktop"][i % 2],
      bytes: i + 1,
    }),
  );
  writeFileSync(join(dir, "day.json"), `${lines.join("\n")}\n`);
  return dir;
}

function rollup(dir: string, select: string, groupBy: string): string {
  const source = JSON.stringify({ type: "local", baseDir: dir, filter: "day.json" });
  return [
    "REPLACE INTO t OVERWRITE WHERE __time >= TIMESTAMP '2026-01-01 00:00:00' AND __time < TIMESTAMP '2026-01-02 00:00:00'",
    `SELECT ${select}`,
    `FROM TABLE(EXTERN('${source}', '{"type":"json"}', '${SIGNATURE}'))`,
    groupBy,
    "PARTITIONED BY DAY",
  ].join("\n");
}

async function runQuery(s: TestSim, query: string, id: string): Promise<Record<string, unknown>> {
  const res = await s.post("/druid/v2/sql/task", {
    query,
    context: { sqlQueryId: id, simDurationMs: 1_000 },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(202);
  await s.advance(3_000);
  return (await s.get(`${V1}/task/query-${id}/status`)).json.status;
}

async function sql(s: TestSim, query: string): Promise<Array<Record<string, unknown>>> {
  return (await s.post("/druid/v2/sql", { query })).json;
}

describe("MSQ rollup ingestion: GROUP BY with aggregates (docs/multi-stage-query/concepts.md, Rollup)", () => {
  it("the most common shape — GROUP BY 1, 2, 3 with SUM and COUNT(*) — writes one row per group, the totals kept", async () => {
    const s = await startTestSim({ handoffDelayMs: 1_000 });
    const status = await runQuery(
      s,
      rollup(
        writeDay(),
        'TIME_PARSE("time") AS __time, country, device, SUM(bytes) AS bytes, COUNT(*) AS "rows"',
        "GROUP BY 1, 2, 3",
      ),
      "r1",
    );
    expect(status).toMatchObject({ statusCode: "SUCCESS" });
    expect(await sql(s, 'SELECT COUNT(*) AS n, SUM("rows") AS r, SUM(bytes) AS b FROM t')).toEqual([
      { n: 12, r: 48, b: 1176 },
    ]);
    // One group: the rows at 00:00 (i = 0, 12, 24, 36: US, mobile).
    expect(
      await sql(
        s,
        `SELECT country, device, bytes, "rows" FROM t WHERE __time = TIMESTAMP '2026-01-01 00:00:00'`,
      ),
    ).toEqual([{ country: "US", device: "mobile", bytes: 1 + 13 + 25 + 37, rows: 4 }]);
  });

  it("TIME_FLOOR(…, 'P1D') AS __time is the query granularity: GROUP BY names and aliases, MIN and MAX", async () => {
    const s = await startTestSim({ handoffDelayMs: 1_000 });
    const status = await runQuery(
      s,
      rollup(
        writeDay(),
        `TIME_FLOOR(TIME_PARSE("time"), 'P1D') AS __time, "country", device, MIN(bytes) AS lo, MAX(bytes) AS hi, COUNT(*) AS n`,
        'GROUP BY __time, "country", device',
      ),
      "r2",
    );
    expect(status).toMatchObject({ statusCode: "SUCCESS" });
    const rows = (await sql(s, "SELECT __time, country, device, lo, hi, n FROM t")).sort(
      (a, b) => Number(a.lo) - Number(b.lo),
    );
    expect(rows).toHaveLength(6);
    expect(rows[0]).toEqual({
      __time: "2026-01-01T00:00:00.000Z",
      country: "US",
      device: "mobile",
      lo: 1,
      hi: 43,
      n: 8,
    });
  });

  it("Calcite's grouping rules are the planner's 400s, and nothing is queued", async () => {
    const s = await startTestSim();
    const dir = writeDay();
    const refused = async (select: string, groupBy: string) => {
      const res = await s.post("/druid/v2/sql/task", { query: rollup(dir, select, groupBy) });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ errorCode: "invalidInput" });
      return res.json.error.errorMessage as string;
    };
    expect(
      await refused('TIME_PARSE("time") AS __time, country, device, SUM(bytes) AS b', "GROUP BY 1, 2"),
      // Calcite's errors point at the offending identifier: line 2 is the SELECT, `device` its 47th character.
    ).toBe("Expression 'device' is not being grouped (line [2], column [47])");
    // Calcite's AggChecker walks into an ungrouped call and names the column in it.
    expect(await refused('TIME_PARSE("time") AS __time, country, SUM(bytes) AS b', "")).toBe(
      "Expression 'time' is not being grouped (line [2], column [19])",
    );
    // Druid 33's MAX aggregator takes numbers only (a real Druid 33 refused MAX(page) so on the Broker).
    expect(await refused('TIME_PARSE("time") AS __time, MAX(country) AS c', "GROUP BY 1")).toBe(
      "Aggregation [MAX] does not support type [STRING], column [v0]",
    );
    expect(await refused('TIME_PARSE("time") AS __time, SUM(bytes) AS b', "GROUP BY 1, 2")).toMatch(
      /^Aggregate expression is illegal in GROUP BY clause \(line \[\d+\], column \[\d+\]\)$/,
    );
    expect(await refused('TIME_PARSE("time") AS __time, country', "GROUP BY 1, 5")).toMatch(
      /^Ordinal out of range \(line \[\d+\], column \[\d+\]\)$/,
    );
    expect(s.sim.engine.tasks.size).toBe(0);
  });
});
