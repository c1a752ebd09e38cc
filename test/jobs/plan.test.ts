import { describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/core/canonical-json.js";
import { parseGranularity } from "../../src/core/granularity.js";
import { parseInterval } from "../../src/core/interval.js";
import { deriveTaskId } from "../../src/core/task-id.js";
import { planIngestJob, planIngestJobYielding } from "../../src/ingest/plan.js";
import type { IngestPayload } from "../../src/ingest/types.js";
import { InvalidSpecError } from "../../src/spec/index.js";
import { dailyTemplate } from "../helpers/dataset.js";

const template = (value: { [key: string]: JsonValue }) => ({ kind: "task" as const, value });
const base = {
  kind: "backfill" as const,
  templateName: "t.json",
  range: parseInterval("2026-01-01/2026-01-04"),
  vars: { dataDir: "/data" },
};

describe("job planning", () => {
  it("plans the same job a piece at a time, pausing between pieces, for native and SQL templates", async () => {
    const sql = [
      `REPLACE INTO "plan_sql" OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}'`,
      `SELECT TIME_PARSE("ts") AS __time, "channel" FROM TABLE(EXTERN('{"type":"local","baseDir":"/data","filter":"e-{{start:yyyy-MM-dd}}.json"}', '{"type":"json"}', '[{"name":"ts","type":"string"},{"name":"channel","type":"string"}]'))`,
      "PARTITIONED BY DAY",
    ].join("\n");
    for (const t of [template(dailyTemplate({ datasource: "plan" })), { kind: "sql" as const, text: sql }]) {
      // 1,000 days: paused after every 250 partitions, so three times.
      const input = { ...base, template: t, range: parseInterval("2020-01-01/2022-09-27") };
      let pauses = 0;
      const yielded = await planIngestJobYielding(input, async () => {
        pauses++;
      });
      expect(yielded.tasks).toHaveLength(1000);
      expect(pauses).toBe(3);
      expect(yielded).toEqual(planIngestJob(input));
    }
  });

  it("refuses a range cut into more partitions than its cap, naming the cap", () => {
    const input = { ...base, template: template(dailyTemplate({ datasource: "plan" })), maxPartitions: 2 };
    expect(() => planIngestJob(input)).toThrow(/gives more than 2 partitions/);
    expect(planIngestJob({ ...input, maxPartitions: 3 }).tasks).toHaveLength(3);
  });

  it("names the same job for the same inputs, and a new one with --new or another spec version", () => {
    const t = template(dailyTemplate({ datasource: "plan" }));
    const a = planIngestJob({ ...base, template: t });
    const b = planIngestJob({ ...base, template: template(dailyTemplate({ datasource: "plan" })) });
    expect(b.job.id).toBe(a.job.id);
    expect(planIngestJob({ ...base, template: t, nonce: "x" }).job.id).not.toBe(a.job.id);
    expect(planIngestJob({ ...base, template: t, specVersion: "2" }).job.id).not.toBe(a.job.id);
    expect(a.tasks.map((task) => (task.payload as unknown as IngestPayload).interval)).toEqual([
      "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
      "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
      "2026-01-03T00:00:00.000Z/2026-01-04T00:00:00.000Z",
    ]);
    expect(a.tasks[0]?.exclusionKey).toBe("plan|2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z");
  });

  it("keeps a period-object segmentGranularity usable by the runner", () => {
    const value = dailyTemplate({ datasource: "plan" }) as {
      spec: { dataSchema: { granularitySpec: Record<string, JsonValue> } };
    };
    value.spec.dataSchema.granularitySpec.segmentGranularity = { type: "period", period: "P1D" };
    const plan = planIngestJob({ ...base, template: template(value as { [key: string]: JsonValue }) });
    expect(plan.tasks).toHaveLength(3);
    const payload = plan.tasks[0]?.payload as unknown as IngestPayload;
    expect(parseGranularity(payload.segmentGranularity)).toMatchObject({
      kind: "period",
      period: { days: 1 },
    });
  });

  it("collects every partition's validation errors, prefixed with its interval, before anything is written", () => {
    const value = dailyTemplate({ datasource: "plan" }) as { spec: { ioConfig: Record<string, JsonValue> } };
    value.spec.ioConfig.appendToExisting = true; // with dropExisting: rejected by Druid (docs/druid-api.md §4.3)
    try {
      planIngestJob({ ...base, template: template(value as { [key: string]: JsonValue }) });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidSpecError);
      const errors = (error as InvalidSpecError).errors;
      expect(errors.length).toBeGreaterThanOrEqual(3);
      expect(errors[0]?.path).toMatch(/^spec\.ioConfig/);
      expect(errors[0]?.message).toMatch(/^2026-01-01T00:00:00\.000Z\/2026-01-02T00:00:00\.000Z: /);
    }
  });

  it("refuses an SQL template that cannot run a partition safely, naming the field", () => {
    // MSQ templates run (test/ingest/msq-backfill.test.ts); one without PARTITIONED BY or with OVERWRITE ALL does not.
    expect(() =>
      planIngestJob({ ...base, template: { kind: "sql", text: "REPLACE INTO x OVERWRITE ALL SELECT 1" } }),
    ).toThrow(/query\.partitionedBy: Operation \[REPLACE\] requires a PARTITIONED BY/);
    expect(() =>
      planIngestJob({
        ...base,
        template: { kind: "sql", text: "REPLACE INTO x OVERWRITE ALL SELECT 1 PARTITIONED BY DAY" },
      }),
    ).toThrow(/query\.overwrite: .*OVERWRITE ALL replaces the whole datasource/);
  });
});

describe("job planning with data gates", () => {
  const t = template(dailyTemplate({ datasource: "plan" }));
  const payloads = (gates?: Parameters<typeof planIngestJob>[0]["gates"]) =>
    planIngestJob({ ...base, template: t, ...(gates ? { gates } : {}) }).tasks.map(
      (task) => task.payload as unknown as IngestPayload,
    );
  const ids = (ps: IngestPayload[]) =>
    ps.map((p) =>
      deriveTaskId({
        spec: p.spec,
        interval: parseInterval(p.interval),
        specVersion: p.specVersion,
        attempt: 1,
        prefix: p.idPrefix,
        datasource: p.datasource,
      }),
    );

  it("renders the gate into the spec Druid gets, so the rendered value is part of the task id", () => {
    const strict = payloads();
    const tuning = (p: IngestPayload) =>
      (p.spec.spec as { tuningConfig: Record<string, unknown> }).tuningConfig;
    expect(tuning(strict[0] as IngestPayload)).toMatchObject({
      maxParseExceptions: 0,
      maxSavedParseExceptions: 5,
    });
    const lenient = payloads({ maxUnparseable: { kind: "count", max: 5 }, minRows: 0 });
    expect(tuning(lenient[0] as IngestPayload).maxParseExceptions).toBe(5);
    expect(ids(lenient)).not.toEqual(ids(strict));
    // A percentage cannot be handed to Druid: nothing rendered, checked after the task.
    const pct = payloads({ maxUnparseable: { kind: "percent", max: 1 }, minRows: 0 });
    expect(tuning(pct[0] as IngestPayload).maxParseExceptions).toBeUndefined();
  });

  it("names another job for other gates, the same job for the default ones", () => {
    const a = planIngestJob({ ...base, template: t });
    expect(
      planIngestJob({
        ...base,
        template: t,
        gates: { maxUnparseable: { kind: "count", max: 0 }, minRows: 0 },
      }).job.id,
    ).toBe(a.job.id);
    expect(
      planIngestJob({
        ...base,
        template: t,
        gates: { maxUnparseable: { kind: "count", max: 9 }, minRows: 0 },
      }).job.id,
    ).not.toBe(a.job.id);
  });
});

describe("job planning reads the spec as Druid does", () => {
  it('plans an append for appendToExisting: "true" (Jackson coerces the string)', () => {
    const t = dailyTemplate({ datasource: "plan", append: true }) as {
      spec: { ioConfig: Record<string, JsonValue> };
    };
    t.spec.ioConfig.appendToExisting = "true";
    const plan = planIngestJob({ ...base, template: template(t as { [key: string]: JsonValue }) });
    expect((plan.tasks[0]?.payload as unknown as IngestPayload | undefined)?.mode).toBe("append");
  });
});
