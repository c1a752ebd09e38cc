import { afterEach, describe, expect, it } from "vitest";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import { parseGranularity } from "../../src/core/granularity.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestProgress } from "../../src/ingest/types.js";
import { runIngestJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { auditTimeline } from "../../src/work/audit.js";
import { toTimelineSegment } from "../../src/work/segments.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

let sim: SimHandle | undefined;
let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
});

describe("ingestion engine against the emulator", () => {
  it("backfills 30 days with capacity 4: one accepted submission and one live version per partition", async () => {
    sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 3000, seed: 7 });
    client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 30, rowsPerDay: 40 });
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: "events", k: 1 }) },
      templateName: "daily.json",
      range: parseInterval("2026-01-01/2026-01-31"),
      vars: { dataDir },
    });
    await store.createJob(plan.job, plan.tasks);
    const result = await runIngestJob({
      store,
      client,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      maxConcurrency: 8,
      leaseMs: 5000,
    });
    expect(result.reason).toBe("idle");
    expect(result.counts.done).toBe(30);
    const stats = sim.stats();
    const accepted = stats.submissions.filter((s) => s.accepted);
    expect(accepted).toHaveLength(30);
    expect(new Set(accepted.map((s) => s.id)).size).toBe(30);
    expect(stats.slots.maxUsed).toBeLessThanOrEqual(4);
    expect(stats.slots.maxUsed).toBeGreaterThan(1);
    const tasks = await store.listTasks(plan.job.id);
    for (const t of tasks) {
      const p = t.progress as IngestProgress;
      expect(p.summary?.rows).toBe(40);
      expect(p.audit?.chunks.map((c) => [c.rows, c.liveVersions])).toEqual([[40, [p.version]]]);
    }
    // Every interval of the range has exactly one live version, and it is served.
    const used = await client.metadataSegments("events", ["2026-01-01/2026-01-31"]);
    const served = new Set(await client.servedSegments("events"));
    const audit = auditTimeline({
      datasource: "events",
      interval: parseInterval("2026-01-01/2026-01-31"),
      granularity: parseGranularity("day"),
      segments: used.map((s) => toTimelineSegment(s, served)),
    });
    expect(audit.violations).toEqual([]);
    expect(audit.chunks).toHaveLength(30);
    expect(audit.chunks.every((c) => c.liveVersions.length === 1 && c.rows === 40)).toBe(true);
  }, 60_000);

  it("a partition waiting for handoff holds no submission slot: with --max-concurrency 1 the next one is submitted before the first is served", async () => {
    // Druid's time stands still unless the test moves it, so the first partition's segments cannot be
    // served while the second is submitted: only a driver that frees the slot at SUCCESS gets there.
    const simClock = new ManualClock(Date.UTC(2026, 5, 1));
    sim = await startSim({ clock: simClock, timeScale: 1, capacity: 4, handoffDelayMs: 600_000, seed: 7 });
    client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 10 });
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: "events", k: 1 }) },
      templateName: "daily.json",
      range: parseInterval("2026-01-01/2026-01-04"),
      vars: { dataDir },
    });
    await store.createJob(plan.job, plan.tasks);
    const notes: string[] = [];
    const run = runIngestJob({
      store,
      client,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      maxConcurrency: 1,
      leaseMs: 60_000,
      onStep: (task, step) => notes.push(`${task.id.slice(-17)} ${step}`),
    });
    const until = async (what: () => boolean, stepMs: number) => {
      while (!what()) {
        await simClock.advance(stepMs);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    // Tasks take seconds of Druid time; handoff ten minutes of it. Move Druid's clock a second at a time
    // until the second partition is submitted, and check the first one was not served by then.
    await until(() => notes.filter((n) => n.endsWith(" submitted")).length >= 2, 1_000);
    const firstHandedOff = notes.findIndex((n) => n.endsWith(" handed-off"));
    expect(firstHandedOff).toBe(-1);
    expect(notes.filter((n) => n.endsWith(" succeeded")).length).toBe(1);
    await until(() => notes.filter((n) => n.endsWith(" done")).length === 3, 20_000);
    const result = await run;
    expect(result.counts.done).toBe(3);
    // Still one partition's task at Druid at a time: the cap holds on the Druid side.
    expect(sim.stats().slots.maxUsed).toBe(1);
  }, 60_000);

  it("writes the ledger a bounded number of times per partition, not once a tick while it runs or waits for handoff", async () => {
    // Tasks of ~80 ticks and a handoff of ~30 ticks: per-tick progress writes would be ~100 a partition.
    // (Real time: the margin keeps more than 15 ticks even when a loaded machine runs them 5× late.)
    sim = await startSim({ timeScale: 5, capacity: 5, handoffDelayMs: 3000, seed: 7 });
    client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
    const inner = await openStore("sqlite::memory:");
    store = inner;
    const writes = { transition: 0, checkpoint: 0 };
    const counted = new Proxy(inner, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key === "transition" || key === "checkpoint")
          return (...args: unknown[]) => {
            writes[key]++;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 5, rowsPerDay: 40 });
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: "events", k: 1 }) },
      templateName: "daily.json",
      range: parseInterval("2026-01-01/2026-01-06"),
      vars: { dataDir },
    });
    await inner.createJob(plan.job, plan.tasks);
    const result = await runIngestJob({
      store: counted,
      client,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      maxConcurrency: 5,
      leaseMs: 60_000,
    });
    expect(result.counts.done).toBe(5);
    const ticksRunning = (sim.stats().requests["POST /druid/indexer/v1/taskStatus"] ?? 0) / 1;
    expect(ticksRunning).toBeGreaterThan(15);
    expect((writes.transition + writes.checkpoint) / 5).toBeLessThanOrEqual(12);
  }, 60_000);
});
