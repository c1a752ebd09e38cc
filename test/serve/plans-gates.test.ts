import { describe, expect, it } from "vitest";
import { dailyTemplate, writeCorruptDay, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService } from "../helpers/serve.js";

/**
 * The routes clients ask instead of restating segops' rules: a planned run or backfill (the granularity's
 * buckets, each partition's rendered input sources, the gates) and a job's gate verdicts.
 */

const jobPath = (id: string, rest = "") => `/api/v1/jobs/${encodeURIComponent(id)}${rest}`;

describe("segops serve: plans", () => {
  it("a backfill's plan names the job POST /backfills creates, the buckets and the rendered input sources, and stores nothing", async () => {
    const t = await startTestService();
    const localDay = { type: "period", period: "P1D", timeZone: "America/Los_Angeles" };
    const template = dailyTemplate({ datasource: "plan_events" });
    (template.spec as { dataSchema: { granularitySpec: object } }).dataSchema.granularitySpec = {
      segmentGranularity: localDay,
      queryGranularity: "none",
      rollup: false,
    };
    const body = {
      template,
      from: "2026-03-07T08:00:00Z",
      to: "2026-03-10T07:00:00Z",
      granularity: JSON.stringify(localDay),
      vars: { dataDir: "/data/in" },
      minRows: 5,
      maxUnparseable: "0.5%",
    };
    const plan = await t.call("/api/v1/backfills/plan", { json: body });
    expect(plan.status, plan.text).toBe(200);
    // The day of the DST change is 23 hours in Los Angeles, as Druid buckets it.
    expect(plan.json.partitions.map((p: { interval: string }) => p.interval)).toEqual([
      "2026-03-07T08:00:00.000Z/2026-03-08T08:00:00.000Z",
      "2026-03-08T08:00:00.000Z/2026-03-09T07:00:00.000Z",
      "2026-03-09T07:00:00.000Z/2026-03-10T07:00:00.000Z",
    ]);
    expect(plan.json.partitions[1].inputSources).toEqual([
      { type: "local", baseDir: "/data/in", filter: "events-2026-03-08.json" },
    ]);
    expect(plan.json).toMatchObject({
      kind: "backfill",
      datasource: "plan_events",
      gates: { maxUnparseable: "0.5%", minRows: 5, maxRowDrop: null },
    });
    expect((await t.call("/api/v1/jobs")).json.items).toEqual([]);
    const created = await t.call("/api/v1/backfills", { json: body });
    expect(created.status).toBe(201);
    expect(created.json.id).toBe(plan.json.jobId);
  });

  it("a run's plan refuses what the run would, naming the field", async () => {
    const t = await startTestService();
    const bad = await t.call("/api/v1/runs/plan", {
      json: { template: dailyTemplate({ datasource: "x" }), interval: "2026-01-02/2026-01-01" },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.type).toBe("/problems/invalid-request");
    const ok = await t.call("/api/v1/runs/plan", {
      json: {
        template: dailyTemplate({ datasource: "x" }),
        interval: "2026-01-01/2026-01-02",
        vars: { dataDir: "/d" },
      },
    });
    expect(ok.status).toBe(200);
    expect(ok.json.partitions).toHaveLength(1);
    expect(ok.json.gates).toEqual({ maxUnparseable: "0", minRows: 0, maxRowDrop: null });
  });
});

describe("segops serve: gate verdicts", () => {
  it("each partition's row counters judged by its job's gates, a page at a time", async () => {
    const t = await startTestService();
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 4 });
    writeCorruptDay(dataDir, "2026-01-02");
    const created = await t.call("/api/v1/backfills", {
      json: {
        template: dailyTemplate({ datasource: "gate_events" }),
        from: "2026-01-01",
        to: "2026-01-04",
        vars: { dataDir },
        minRows: 4,
      },
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect((await t.call(jobPath(id, "/wait?timeout=60"))).json.ended).toBe(true);
    const first = await t.call(jobPath(id, "/gates?limit=2"));
    expect(first.status).toBe(200);
    expect(first.json.items).toHaveLength(2);
    expect(first.json.items[0]).toMatchObject({
      interval: "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
      gates: { maxUnparseable: "0", minRows: 4, maxRowDrop: null },
      passed: true,
      verdict: null,
    });
    expect(first.json.items[1].passed).toBe(false);
    expect(first.json.items[1].verdict).toMatch(/parse errors|none was ingested|no row counters/);
    const rest = await t.call(jobPath(id, `/gates?after=${encodeURIComponent(first.json.next)}`));
    expect(rest.json.items.map((p: { passed: boolean }) => p.passed)).toEqual([true]);
    expect(rest.json.next).toBeNull();
    expect((await t.call(jobPath("nope", "/gates"))).status).toBe(404);
  });
});
