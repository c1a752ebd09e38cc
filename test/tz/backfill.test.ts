import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/core/canonical-json.js";
import { systemClock } from "../../src/core/clock.js";
import { parseGranularity, parseInstantInZone } from "../../src/core/granularity.js";
import { formatInterval, parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestPayload, IngestProgress } from "../../src/ingest/types.js";
import { runIngestJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { InvalidSpecError } from "../../src/spec/index.js";
import { auditTimeline } from "../../src/work/audit.js";
import { toTimelineSegment } from "../../src/work/segments.js";

/**
 * A backfill over local days in America/Los_Angeles across the 2026 spring DST change (2026-03-08 has 23
 * hours): planned from a template whose segmentGranularity is the period object, then run on the emulator,
 * which buckets with the same core functions, and audited per local day.
 */

const LA = "America/Los_Angeles";
const laDay = { type: "period", period: "P1D", timeZone: LA } as const;
const HOUR = 3_600_000;

/** One row per hour, on the hour (UTC), over [from, to). */
function writeHourlyDataset(from: number, to: number): string {
  const dir = mkdtempSync(join(tmpdir(), "segops-tz-"));
  const lines: string[] = [];
  for (let t = from, i = 0; t < to; t += HOUR, i++) {
    lines.push(JSON.stringify({ ts: new Date(t).toISOString(), channel: `#c${i % 3}`, added: (i % 7) + 1 }));
  }
  writeFileSync(join(dir, "events.json"), `${lines.join("\n")}\n`);
  return dir;
}

function localDayTemplate(datasource: string): { [key: string]: JsonValue } {
  return {
    type: "index_parallel",
    spec: {
      dataSchema: {
        dataSource: datasource,
        timestampSpec: { column: "ts", format: "iso" },
        dimensionsSpec: { dimensions: ["channel"] },
        metricsSpec: [
          { type: "count", name: "count" },
          { type: "longSum", name: "added", fieldName: "added" },
        ],
        granularitySpec: { segmentGranularity: { ...laDay }, queryGranularity: "none", rollup: false },
      },
      ioConfig: {
        type: "index_parallel",
        // Every partition reads the whole file; rows outside its interval are dropped.
        inputSource: { type: "local", baseDir: "{{var.dataDir}}", filter: "events.json" },
        inputFormat: { type: "json" },
        appendToExisting: false,
        dropExisting: true,
      },
      tuningConfig: {
        type: "index_parallel",
        maxNumConcurrentSubTasks: 1,
        partitionsSpec: { type: "dynamic" },
      },
    },
  };
}

// 2026-03-06 .. 2026-03-10, local days: [Mar 6 00:00 PST, Mar 10 00:00 PDT).
const range = {
  start: parseInstantInZone("2026-03-06", LA),
  end: parseInstantInZone("2026-03-10", LA),
};
const expectedPartitions = [
  "2026-03-06T08:00:00.000Z/2026-03-07T08:00:00.000Z",
  "2026-03-07T08:00:00.000Z/2026-03-08T08:00:00.000Z",
  "2026-03-08T08:00:00.000Z/2026-03-09T07:00:00.000Z", // 23 hours: clocks go forward at 02:00
  "2026-03-09T07:00:00.000Z/2026-03-10T07:00:00.000Z",
];

let sim: SimHandle | undefined;
let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
  client = undefined;
  store = undefined;
  sim = undefined;
});

describe("a backfill over America/Los_Angeles local days", () => {
  it("plans one partition per local day, 23 hours on the DST day, and keeps the granularity as written", () => {
    expect(formatInterval(range)).toBe("2026-03-06T08:00:00.000Z/2026-03-10T07:00:00.000Z");
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: localDayTemplate("tz_plan") },
      templateName: "la-daily.json",
      range,
      vars: { dataDir: "/data" },
    });
    const payloads = plan.tasks.map((t) => t.payload as unknown as IngestPayload);
    expect(payloads.map((p) => p.interval)).toEqual(expectedPartitions);
    expect(
      payloads.map((p) => (parseInterval(p.interval).end - parseInterval(p.interval).start) / HOUR),
    ).toEqual([24, 24, 23, 24]);
    // Stored as written, and what the runner parses back buckets by the same local days.
    expect(payloads[0]?.segmentGranularity).toEqual(laDay);
    expect(plan.job.options?.granularity).toEqual(laDay);
    const g = parseGranularity(payloads[0]?.segmentGranularity);
    expect(g).toMatchObject({ kind: "period", type: "period", timeZone: LA, period: { days: 1 } });
    // The rendered spec's interval is the partition (validation accepted it as aligned to local midnight).
    const spec = payloads[2]?.spec as { spec: { dataSchema: { granularitySpec: { intervals: string[] } } } };
    expect(spec.spec.dataSchema.granularitySpec.intervals).toEqual([expectedPartitions[2]]);
  });

  it("refuses a range on UTC midnights, naming the local midnights either side", () => {
    const attempt = () =>
      planIngestJob({
        kind: "backfill",
        template: { kind: "task", value: localDayTemplate("tz_plan") },
        templateName: "la-daily.json",
        range: parseInterval("2026-03-06/2026-03-10"),
        vars: { dataDir: "/data" },
      });
    expect(attempt).toThrow(
      /the start 2026-03-06T00:00:00\.000Z \(2026-03-05T16:00:00\.000-08:00\) is not on a P1D in America\/Los_Angeles boundary \(nearest: 2026-03-05T08:00:00\.000Z \(2026-03-05T00:00:00\.000-08:00\) before, 2026-03-06T08:00:00\.000Z \(2026-03-06T00:00:00\.000-08:00\) after\)/,
    );
  });

  it("rejects a run whose interval is not on local midnights (spec validation through the same functions)", () => {
    const attempt = () =>
      planIngestJob({
        kind: "run",
        template: { kind: "task", value: localDayTemplate("tz_plan") },
        templateName: "la-daily.json",
        range: parseInterval("2026-03-07T00:00:00Z/2026-03-08T00:00:00Z"),
        vars: { dataDir: "/data" },
      });
    expect(attempt).toThrow(InvalidSpecError);
    // Local midnight PST is 08:00Z: accepted.
    const ok = planIngestJob({
      kind: "run",
      template: { kind: "task", value: localDayTemplate("tz_plan") },
      templateName: "la-daily.json",
      range: parseInterval("2026-03-07T08:00:00Z/2026-03-08T08:00:00Z"),
      vars: { dataDir: "/data" },
    });
    expect(ok.tasks).toHaveLength(1);
  });

  it("runs on the emulator: each local day is one time chunk with its own hours of rows", async () => {
    sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 2000, seed: 11 });
    client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    // Data from a day before to a day after the range: the partitions must drop what is not theirs.
    const dataDir = writeHourlyDataset(range.start - 24 * HOUR, range.end + 24 * HOUR);
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: localDayTemplate("tz_events") },
      templateName: "la-daily.json",
      range,
      vars: { dataDir },
    });
    await store.createJob(plan.job, plan.tasks);
    const result = await runIngestJob({
      store,
      client,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      maxConcurrency: 4,
      leaseMs: 5000,
    });
    expect(result.reason).toBe("idle");
    expect(result.counts.done).toBe(4);

    const tasks = await store.listTasks(plan.job.id);
    const byInterval = new Map(
      tasks.map((t) => [(t.payload as unknown as IngestPayload).interval, t.progress as IngestProgress]),
    );
    expect([...byInterval.keys()].sort()).toEqual(expectedPartitions);
    // The runner's audit chunks are the local days, one per partition, with 24/24/23/24 hourly rows.
    for (const [interval, hours] of expectedPartitions.map((iv, i) => [iv, [24, 24, 23, 24][i]] as const)) {
      const p = byInterval.get(interval);
      expect(p?.summary?.rows).toBe(hours);
      expect(p?.audit?.chunks.map((c) => [c.interval, c.rows, c.liveVersions])).toEqual([
        [interval, hours, [p?.version]],
      ]);
    }

    // The segments Druid (the emulator) published are the local-day buckets, and auditing the whole range
    // by the same granularity finds one live, served version per local day.
    const used = await client.metadataSegments("tz_events", [formatInterval(range)]);
    expect([...new Set(used.map((s) => s.interval))].sort()).toEqual(expectedPartitions);
    const served = new Set(await client.servedSegments("tz_events"));
    const audit = auditTimeline({
      datasource: "tz_events",
      interval: range,
      granularity: parseGranularity(laDay),
      segments: used.map((s) => toTimelineSegment(s, served)),
    });
    expect(audit.violations).toEqual([]);
    expect(audit.chunks.map((c) => [c.interval, c.rows, c.liveVersions.length])).toEqual(
      expectedPartitions.map((iv, i) => [iv, [24, 24, 23, 24][i], 1]),
    );
  }, 60_000);
});
