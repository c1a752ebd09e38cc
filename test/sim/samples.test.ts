import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startTestSim } from "../helpers/sim.js";

const root = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

describe("samples/ (the README walk-through)", () => {
  it("ingests the sample spec with $PWD substituted: 300 rows, 3 daily segments, 100 rows per day", async () => {
    const spec = readFileSync(`${root}/samples/specs/wikipedia-index-parallel.json`, "utf8").replace(
      "$PWD",
      root,
    );
    const s = await startTestSim({ handoffDelayMs: 1000 });
    const id = (await s.post("/druid/indexer/v1/task", spec)).json.task as string;
    expect(id).toMatch(/^index_parallel_wikipedia_[a-p]{8}_/);
    await s.advance(60_000);
    const status = (await s.get(`/druid/indexer/v1/task/${encodeURIComponent(id)}/status`)).json.status;
    expect(status.statusCode).toBe("SUCCESS");
    const report = (await s.get(`/druid/indexer/v1/task/${encodeURIComponent(id)}/reports`)).json;
    // processedBytes equals what a real Druid 33 reported for these files.
    expect(report.ingestionStatsAndErrors.payload.rowStats.totals.buildSegments).toMatchObject({
      processed: 300,
      processedBytes: 45854,
    });
    const load = await s.get(
      "/druid/coordinator/v1/datasources/wikipedia/loadstatus?forceMetadataRefresh=true&interval=2016-06-27/2016-06-30",
    );
    expect(load.json).toEqual({ wikipedia: 100 });
    const daily = await s.post("/druid/v2/sql", {
      query:
        'SELECT TIME_FLOOR(__time, \'P1D\') AS "day", COUNT(*) AS "rows" FROM wikipedia GROUP BY 1 ORDER BY 1',
    });
    expect(daily.json).toEqual([
      { day: "2016-06-27T00:00:00.000Z", rows: 100 },
      { day: "2016-06-28T00:00:00.000Z", rows: 100 },
      { day: "2016-06-29T00:00:00.000Z", rows: 100 },
    ]);
  });
});
