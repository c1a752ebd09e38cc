import { describe, expect, it } from "vitest";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService, type TestService } from "../helpers/serve.js";
import { until } from "./outage-helpers.js";

/**
 * The service plans a request with Druid 33's rules (it answers whether Druid does or not) and, once it has read
 * its cluster's release (at start), with that release's too: a template a Druid 37 refuses (a dynamic
 * partitionsSpec's maxRowsPerSegment of 0, refused from 36 on) is a 400 naming the field and the release, for a
 * backfill and for its plan, with no job stored and nothing submitted.
 */

/** Waits until the service's /metrics says which release it read (what it checks requests against). */
async function releaseRead(t: TestService, version: string): Promise<void> {
  const line = `segops_druid_release_info{version="${version}",behaves_as="${version.split(".")[0]}"} 1`;
  await until(`the service read Druid ${version}`, async () =>
    (await t.call("/metrics")).text.includes(line),
  );
}

function zeroRowsBackfill(dataDir: string) {
  const template = dailyTemplate({ datasource: "release_api" }) as {
    spec: { tuningConfig: Record<string, unknown> };
  };
  template.spec.tuningConfig.partitionsSpec = { type: "dynamic", maxRowsPerSegment: 0 };
  return {
    template,
    templateName: "zero-rows.json",
    from: "2026-06-01",
    to: "2026-06-03",
    vars: { dataDir },
  };
}

describe("the service checks a request against its cluster's release", () => {
  it("on a Druid 37: 400 for the backfill and its plan, naming the field and the release; nothing stored or submitted", async () => {
    const t = await startTestService({ sim: { druidVersion: 37 } });
    await releaseRead(t, "37.0.0");
    const dataDir = writeDailyDataset({ from: "2026-06-01", days: 2, rowsPerDay: 3 });
    for (const path of ["/api/v1/backfills", "/api/v1/backfills/plan"]) {
      const res = await t.call(path, { json: zeroRowsBackfill(dataDir) });
      expect(res.status, res.text).toBe(400);
      expect(res.text).toMatch(
        /maxRowsPerSegment must be greater than 0, found 0 \(the cluster runs Druid 37\)/,
      );
      expect(res.text).toContain("spec.tuningConfig.partitionsSpec.maxRowsPerSegment");
    }
    expect((await t.call("/api/v1/jobs")).json.items).toEqual([]);
    expect(t.sim.stats().submissions).toHaveLength(0);
  });

  it("on a Druid 33: the same backfill is created, with the warning that later releases refuse it", async () => {
    const t = await startTestService({ sim: { druidVersion: 33 } });
    await releaseRead(t, "33.0.0");
    const dataDir = writeDailyDataset({ from: "2026-06-01", days: 2, rowsPerDay: 3 });
    const plan = await t.call("/api/v1/backfills/plan", { json: zeroRowsBackfill(dataDir) });
    expect(plan.status, plan.text).toBe(200);
    expect(plan.text).toMatch(/Druid 36 and later refuse it/);
    const created = await t.call("/api/v1/backfills", { json: zeroRowsBackfill(dataDir) });
    expect(created.status, created.text).toBe(201);
  });
});
