import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startTestSim } from "../helpers/sim.js";

/**
 * The project's MSQ fixtures (test/fixtures/druid-specs/sql; see test/fixtures/druid-specs/SOURCES.md: SQL
 * blocks of Druid's docs, verbatim) submitted alone to a fresh emulator: every INSERT/REPLACE runs to SUCCESS (inputs the emulator does
 * not fetch, such as http, get synthetic rows), except those below, each with what happens and why. Druid runs
 * them all in the cluster the docs assume (the datasources an earlier example made, the files of a Druid
 * install).
 */

const DIR = join(import.meta.dirname, "../fixtures/druid-specs/sql");

/** What the emulator answers instead of SUCCESS, and why. */
const EXPECTED: Record<string, { answer: RegExp; why: string }> = {
  "docs--multi-stage-query--examples--L134.sql": {
    answer: /^400 Object 'w000' not found \(line \[\d+\], column \[\d+\]\)$/,
    why: "reads w000, which an earlier example writes: alone, Druid's validator refuses it the same way",
  },
  "docs--multi-stage-query--examples--L267.sql": {
    answer: /^400 Object 'w007' not found \(line \[\d+\], column \[\d+\]\)$/,
    why: "reads w007 (an earlier example's)",
  },
  "docs--multi-stage-query--examples--L291.sql": {
    answer: /^400 Object 'w000' not found \(line \[\d+\], column \[\d+\]\)$/,
    why: "reads w000 (an earlier example's)",
  },
  "docs--tutorials--tutorial-update-data--L208.sql": {
    answer: /^400 Object 'update_tutorial' not found \(line \[\d+\], column \[\d+\]\)$/,
    why: "reads update_tutorial, which the tutorial's first query writes",
  },
  "docs--multi-stage-query--reference--L467.sql": {
    answer: /^400 Object 'orders' not found \(line \[\d+\], column \[\d+\]\)$/,
    why: "joins orders, products and customers, datasources of the docs' cluster: alone, Druid's validator refuses it the same way",
  },
  "docs--multi-stage-query--examples--L92.sql": {
    answer: /^400 Aggregate expression is illegal in GROUP BY clause \(line \[24\], column \[3\]\)$/,
    why: "lacks a comma after browser_version, so its GROUP BY 10 names COUNT(*): Calcite refuses it (a real Druid 33 refused the same shape in Broker SQL)",
  },
  "docs--tutorials--index--L151.sql": {
    answer: /^202 FAILED Cannot read baseDir\[quickstart\/tutorial\/\]/,
    why: "reads quickstart/tutorial/ of a Druid install, absent here: the task fails as Druid's would without it",
  },
};

const files = readdirSync(DIR)
  .filter((f) => f.endsWith(".sql"))
  .sort()
  .filter((f) =>
    /^\s*(INSERT|REPLACE)\b/i.test(readFileSync(join(DIR, f), "utf8").replace(/--[^\n]*\n/g, "")),
  );

describe("MSQ: the project's SQL fixtures from Druid's docs (test/fixtures/druid-specs/sql)", () => {
  for (const file of files) {
    const expected = EXPECTED[file];
    it(`${file} — ${expected ? expected.why : "runs"}`, async () => {
      const s = await startTestSim({ handoffDelayMs: 0 });
      const query = readFileSync(join(DIR, file), "utf8");
      const res = await s.post("/druid/v2/sql/task", { query, context: { simDurationMs: 1_000 } });
      let answer = `${res.status} ${res.json.error?.errorMessage ?? ""}`;
      if (res.status === 202) {
        await s.advance(2_000);
        const st = (await s.get(`/druid/indexer/v1/task/${res.json.taskId}/status`)).json.status;
        answer = `202 ${st.statusCode} ${st.errorMsg ?? ""}`;
      }
      if (expected) expect(answer).toMatch(expected.answer);
      else expect(answer).toBe("202 SUCCESS ");
    });
  }

  it("covers every ingestion fixture, and each exception names one", () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
    for (const f of Object.keys(EXPECTED)) expect(files).toContain(f);
  });
});
