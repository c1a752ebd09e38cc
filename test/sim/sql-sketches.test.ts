// DataSketches in the emulator's Broker SQL (src/sim/sql-sketches.ts, src/sim/sql-sketch-aggregates.ts): what it
// refuses rather than answer unlike Druid. test/conformance/broker-sql-sketch-cases.ts holds what it answers to a
// real Druid 33 with druid-datasketches.
import { describe, expect, it } from "vitest";
import { startTestSim, type TestSim } from "../helpers/sim.js";

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
