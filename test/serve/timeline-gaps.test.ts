import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService, type TestService } from "../helpers/serve.js";

/**
 * The timeline route's gaps (src/serve/dashboard/timeline.ts), through real HTTP against the service on the
 * emulator: a backfill whose two corrupt days are dead-lettered shows both days as gaps with the ledger's
 * reason, job and partition; without an interval, only the stretch between the first and last segment.
 */

const enc = encodeURIComponent;
const day = (d: string) => `${d}T00:00:00.000Z`;

async function ended(t: TestService, id: string) {
  const res = await t.call(`/api/v1/jobs/${enc(id)}/wait?timeout=60`);
  expect(res.json.ended).toBe(true);
  return res.json;
}

describe("the segment timeline's gaps", () => {
  it("two dead-lettered days of a backfill are gaps with the reason, job and partition; the rest is live", async () => {
    const t = await startTestService();
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 6, rowsPerDay: 5 });
    for (const d of ["2026-01-02", "2026-01-05"])
      writeFileSync(join(dataDir, `events-${d}.json`), "{broken\n{broken\n");
    const created = await t.call("/api/v1/backfills", {
      json: {
        template: dailyTemplate({ datasource: "tl_gaps" }),
        templateName: "daily.json",
        from: "2026-01-01",
        to: "2026-01-07",
        vars: { dataDir },
      },
    });
    const id = created.json.id as string;
    expect((await ended(t, id)).job.counts).toMatchObject({ done: 4, dead: 2 });

    const tl = await t.call(`/api/v1/datasources/tl_gaps/timeline?interval=2026-01-01/2026-01-08`);
    expect(tl.status).toBe(200);
    expect(tl.json.audit).toMatchObject({ ok: true });
    expect(tl.json.audit.gaps).toBeUndefined();
    expect(tl.json.gaps).toEqual([
      {
        interval: `${day("2026-01-02")}/${day("2026-01-03")}`,
        reason: "dead-lettered",
        job: id,
        task: `${id}/20260102-20260103`,
        error: expect.stringMatching(/parse exceptions/i),
      },
      {
        interval: `${day("2026-01-05")}/${day("2026-01-06")}`,
        reason: "dead-lettered",
        job: id,
        task: `${id}/20260105-20260106`,
        error: expect.any(String),
      },
      // After the backfill's range: no partition there, so no reason but Druid's.
      { interval: `${day("2026-01-07")}/${day("2026-01-08")}`, reason: "no-segments" },
    ]);

    // All time: the centuries around the data are not gaps.
    const all = await t.call("/api/v1/datasources/tl_gaps/timeline");
    expect(all.json.gaps.map((g: { interval: string }) => g.interval)).toEqual([
      `${day("2026-01-02")}/${day("2026-01-03")}`,
      `${day("2026-01-05")}/${day("2026-01-06")}`,
    ]);

    // A datasource with nothing: no segments, and nothing to call a gap without a range.
    const none = await t.call("/api/v1/datasources/nothing/timeline");
    expect(none.json).toMatchObject({ segments: [], gaps: [], audit: { noSegments: true } });
    const ranged = await t.call("/api/v1/datasources/nothing/timeline?interval=2026-01-01/2026-01-03");
    expect(ranged.json.gaps).toEqual([
      { interval: `${day("2026-01-01")}/${day("2026-01-03")}`, reason: "no-segments" },
    ]);
  });
});
