// DataSketches over Broker SQL (the druid-datasketches extension the real-Druid stage loads): every query below was
// run on a real Druid 33.0.0 and the expectation is what it answered — names, native and SQL types and rows. At
// these sizes the sketches are exact (src/sim/sql-sketches.ts), so the emulator answers the same. Registered in
// broker-sql-cases.ts, so they run on a live Druid (broker-sql.conformance.ts) and on the emulator
// (test/sim/broker-sql-conformance.test.ts). Two small datasources of the same rows serve them: plain columns, and
// rolled up into sketch metrics.
import { beforeAll, describe, expect, it } from "vitest";
import {
  type ConformanceTarget,
  call,
  eventually,
  freshId,
  ingestServed,
  json,
  writeInput,
} from "./support.js";

/** Eight rows over two days; one `user` is empty text and one missing (null), two rows have no `n` or `d`. */
const ROWS = [
  { time: "2026-03-01T00:00:00Z", page: "Main", user: "alice", n: 1, d: 1.5 },
  { time: "2026-03-01T01:00:00Z", page: "Main", user: "bob", n: 2, d: 2.5 },
  { time: "2026-03-01T02:00:00Z", page: "Main", user: "alice", n: 3, d: 1.5 },
  { time: "2026-03-01T03:00:00Z", page: "Talk", user: "carol", n: 1 },
  { time: "2026-03-01T04:00:00Z", page: "Talk", user: "" },
  { time: "2026-03-01T05:00:00Z", page: "Talk" },
  { time: "2026-03-02T00:00:00Z", page: "Main", user: "dave", n: 5, d: 0.5 },
  { time: "2026-03-02T01:00:00Z", page: "Help", user: "alice", n: 1 },
];
const INTERVAL = "2026-03-01T00:00:00.000Z/2026-03-03T00:00:00.000Z";

/**
 * Plain columns, or (`sketches`) rolled up by day and page into `HLLSketchBuild` and `thetaSketch` metrics of
 * `user` and a count.
 */
function spec(id: string, dataSource: string, baseDir: string, sketches = false): Record<string, unknown> {
  return {
    type: "index_parallel",
    id,
    spec: {
      dataSchema: {
        dataSource,
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: {
          dimensions: sketches
            ? ["page"]
            : ["page", "user", { type: "long", name: "n" }, { type: "double", name: "d" }],
        },
        ...(sketches
          ? {
              metricsSpec: [
                { type: "count", name: "cnt" },
                { type: "HLLSketchBuild", name: "user_hll", fieldName: "user" },
                { type: "thetaSketch", name: "user_theta", fieldName: "user" },
              ],
            }
          : {}),
        granularitySpec: sketches
          ? { segmentGranularity: "day", queryGranularity: "day", rollup: true }
          : { segmentGranularity: "day", queryGranularity: "none", rollup: false },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "local", baseDir, filter: "*.json" },
        inputFormat: { type: "json" },
      },
      tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic" } },
    },
  };
}

export function brokerSqlSketchSuite(target: ConformanceTarget): void {
  const post = (path: string, body: unknown) => call(target, "POST", path, body);
  const ds = freshId("sk_sketch");
  const rolled = freshId("sk_rolled");
  const q = (text: string) => text.replaceAll("$ds", `"${ds}"`).replaceAll("$rolled", `"${rolled}"`);

  async function answer(query: string): Promise<unknown> {
    const ex = await post("/druid/v2/sql", {
      query: q(query),
      resultFormat: "array",
      header: true,
      typesHeader: true,
      sqlTypesHeader: true,
    });
    if (ex.status !== 200) throw new Error(`${ex.status}: ${ex.text}`);
    return json(ex);
  }

  const LONG = ["LONG", "BIGINT"];
  const DOUBLE = ["DOUBLE", "DOUBLE"];
  const V = ["STRING", "VARCHAR"];
  const typed = (...pairs: string[][]) => [pairs.map((p) => p[0]), pairs.map((p) => p[1])];
  const id = freshId("sk_sketch_load");
  const rolledId = freshId("sk_rolled_load");

  describe(`Broker SQL with DataSketches (HLL, Theta): ${target.name}`, () => {
    beforeAll(async () => {
      const dir = writeInput(target.dataDir(), { "rows.json": ROWS });
      for (const [taskId, dataSource, sketches] of [
        [id, ds, false],
        [rolledId, rolled, true],
      ] as const) {
        await ingestServed(target, spec(taskId, dataSource, dir, sketches), dataSource, INTERVAL);
      }
      // Rolled up: 2026-03-01 Main, 2026-03-01 Talk, 2026-03-02 Help, 2026-03-02 Main.
      for (const [table, rows] of [
        ["$ds", 8],
        ["$rolled", 4],
      ] as const) {
        await eventually(target, `SQL to see ${table}'s rows`, async () => {
          const ex = await post("/druid/v2/sql", { query: q(`SELECT COUNT(*) AS c FROM ${table}`) });
          return ex.status === 200 && JSON.stringify(json(ex)) === `[{"c":${rows}}]` ? true : undefined;
        });
      }
    });

    it("counts distinct text per group with APPROX_COUNT_DISTINCT_DS_HLL and _THETA; null and '' are not counted", async () => {
      expect(
        await answer(
          'SELECT page, APPROX_COUNT_DISTINCT_DS_HLL("user") AS h, APPROX_COUNT_DISTINCT_DS_THETA("user") AS t FROM $ds GROUP BY page',
        ),
      ).toEqual([
        ["page", "h", "t"],
        ...typed(V, LONG, LONG),
        ["Help", 1, 1],
        ["Main", 3, 3],
        ["Talk", 1, 1],
      ]);
    });

    it("counts distinct numbers, takes lgK, tgtHllType and size, and honours FILTER", async () => {
      expect(
        await answer(
          `SELECT APPROX_COUNT_DISTINCT_DS_HLL(n), APPROX_COUNT_DISTINCT_DS_THETA(d),
             APPROX_COUNT_DISTINCT_DS_HLL("user", 10, 'HLL_8'), APPROX_COUNT_DISTINCT_DS_THETA("user", 1024),
             APPROX_COUNT_DISTINCT_DS_HLL("user") FILTER (WHERE page = 'Main') FROM $ds`,
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4"],
        ...typed(LONG, LONG, LONG, LONG, LONG),
        [4, 3, 4, 4, 3],
      ]);
    });

    it("estimates DS_THETA and a rounded DS_HLL as DOUBLEs, per day", async () => {
      expect(
        await answer(
          `SELECT FLOOR(__time TO DAY) AS "day", THETA_SKETCH_ESTIMATE(DS_THETA("user")) AS t,
             HLL_SKETCH_ESTIMATE(DS_HLL("user"), TRUE) AS h FROM $ds GROUP BY 1`,
        ),
      ).toEqual([
        ["day", "t", "h"],
        ...typed(["LONG", "TIMESTAMP"], DOUBLE, DOUBLE),
        ["2026-03-01T00:00:00.000Z", 3, 3],
        ["2026-03-02T00:00:00.000Z", 2, 2],
      ]);
      // Unrounded, an HLL sketch of one distinct value estimates exactly 1.
      expect(
        await answer(
          `SELECT page, HLL_SKETCH_ESTIMATE(DS_HLL("user")) FROM $ds WHERE page <> 'Main' GROUP BY page`,
        ),
      ).toEqual([["page", "EXPR$1"], ...typed(V, DOUBLE), ["Help", 1], ["Talk", 1]]);
    });

    it("counts 0 over no rows", async () => {
      expect(
        await answer(
          `SELECT APPROX_COUNT_DISTINCT_DS_HLL(page), APPROX_COUNT_DISTINCT_DS_THETA(page),
             THETA_SKETCH_ESTIMATE(DS_THETA(page)), HLL_SKETCH_ESTIMATE(DS_HLL(page), TRUE)
           FROM $ds WHERE page = 'none'`,
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3"],
        ...typed(LONG, LONG, DOUBLE, DOUBLE),
        [0, 0, 0, 0],
      ]);
    });

    it("merges stored HLLSketchBuild and thetaSketch metrics, and estimates them row by row", async () => {
      expect(
        await answer(
          "SELECT page, SUM(cnt) AS n, APPROX_COUNT_DISTINCT_DS_HLL(user_hll) AS h, APPROX_COUNT_DISTINCT_DS_THETA(user_theta) AS t FROM $rolled GROUP BY page",
        ),
      ).toEqual([
        ["page", "n", "h", "t"],
        ...typed(V, LONG, LONG, LONG),
        ["Help", 1, 1, 1],
        ["Main", 4, 3, 3],
        ["Talk", 3, 1, 1],
      ]);
      expect(
        await answer(
          `SELECT __time, page, THETA_SKETCH_ESTIMATE(user_theta) AS t, HLL_SKETCH_ESTIMATE(user_hll, TRUE) AS h
           FROM $rolled WHERE page <> 'Help'`,
        ),
      ).toEqual([
        ["__time", "page", "t", "h"],
        ...typed(["LONG", "TIMESTAMP"], V, DOUBLE, DOUBLE),
        ["2026-03-01T00:00:00.000Z", "Main", 2, 2],
        ["2026-03-01T00:00:00.000Z", "Talk", 1, 1],
        ["2026-03-02T00:00:00.000Z", "Main", 1, 1],
      ]);
    });
  });
}
