import { describe, expect, it } from "vitest";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService, type TestService } from "../helpers/serve.js";

/**
 * The compaction-candidate rule end to end on the emulator: a small datasource's days appended to once (two
 * small segments a day) are candidates under Druid's default rows cap, and `compact` plans them; with the
 * datasource's auto-compaction config capping a segment at 10 rows, the 15 rows of a day need two segments,
 * so neither the audit nor `compact` flags them; a cap of 100 flags them again. The config is set through the
 * emulator's Coordinator API and read by segops from the cluster compaction config.
 */

const DS = "audit_cfg";
const RANGE = "2026-01-01/2026-01-04";

async function ended(t: TestService, res: { status: number; text: string; json: { id: string } }) {
  expect(res.status, res.text).toBeLessThan(300);
  const waited = await t.call(`/api/v1/jobs/${encodeURIComponent(res.json.id)}/wait?timeout=120`);
  expect(waited.json.job.state, waited.text).toBe("done");
}

async function setConfig(t: TestService, maxRowsPerSegment: number): Promise<void> {
  const res = await fetch(`${t.sim.url}/druid/coordinator/v1/config/compaction`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      dataSource: DS,
      // Far back: the emulator's own auto-compaction leaves these days alone while the test reads them.
      skipOffsetFromLatest: "P10000D",
      tuningConfig: { partitionsSpec: { type: "dynamic", maxRowsPerSegment } },
    }),
  });
  expect(res.status).toBe(200);
}

describe("compaction candidates with the datasource's auto-compaction config", () => {
  it("the audit and compact's plan follow the config's rows cap", async () => {
    const t = await startTestService();
    const backfill = (dataDir: string, extra: Record<string, unknown> = {}) =>
      t.call("/api/v1/backfills", {
        json: {
          template: dailyTemplate({ datasource: DS }),
          from: "2026-01-01",
          to: "2026-01-04",
          vars: { dataDir },
          ...extra,
        },
      });
    await ended(t, await backfill(writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 10 })));
    await ended(
      t,
      await backfill(writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 }), {
        template: dailyTemplate({ datasource: DS, append: true }),
        specVersion: "append",
      }),
    );
    const audit = async () => (await t.call(`/api/v1/audit?datasource=${DS}&interval=${RANGE}`)).json;
    const plan = async () =>
      (await t.call("/api/v1/compactions", { json: { datasource: DS, interval: RANGE, dryRun: true } })).json;

    // No config: Druid's default cap (5 M rows) holds a day's 15 rows in one segment.
    const before = await audit();
    expect(before.chunks.map((c: { segments: number }) => c.segments)).toEqual([2, 2, 2]);
    expect(before.compactionCandidates.map((c: { reason: string }) => c.reason)).toEqual(
      Array(6).fill("small"),
    );
    expect((await plan()).tasks).toBe(3);

    // A cap of 10 rows: 15 rows need two segments, as they are.
    await setConfig(t, 10);
    expect((await audit()).compactionCandidates).toEqual([]);
    expect((await plan()).tasks).toBe(0);

    // A cap of 100: one segment would do again.
    await setConfig(t, 100);
    expect((await audit()).compactionCandidates).toHaveLength(6);
    expect((await plan()).tasks).toBe(3);
  }, 300_000);
});
