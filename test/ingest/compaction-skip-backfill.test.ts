import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { formatInterval, type Interval, overlaps, parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestProgress } from "../../src/ingest/types.js";
import { runIngestJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * Compaction skipIntervals (apache/druid #19792, `DataSourceCompactionConfig.getSkipIntervals`, Druid 39): a
 * backfill on an emulated Druid 39 whose datasource has auto-compaction puts each partition's interval in the
 * config's skipIntervals before submitting, takes it out after the partition's audit, keeps the rest of the config
 * as it was, and the Coordinator's duty never compacts a day while the backfill writes it — but does once it is
 * out of the list.
 */

let sim: SimHandle | undefined;
let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
});

const DS = "skipped";
const CO = "/druid/coordinator/v1";
const DAYS = ["2026-04-01", "2026-04-02", "2026-04-03", "2026-04-04"];

/** When each interval entered and left the datasource's skipIntervals (sim ms), from the Coordinator's history. */
function skipWindows(handle: SimHandle): Map<string, { from: number; to: number }[]> {
  const windows = new Map<string, { from: number; to: number }[]>();
  const open = new Map<string, number>();
  for (const change of handle.engine.compactionConfigs.history) {
    if (change.dataSource !== DS) continue;
    const now = new Set(
      ((change.config?.skipIntervals ?? []) as string[]).map((i) => formatInterval(parseInterval(i))),
    );
    for (const i of now) if (!open.has(i)) open.set(i, change.at);
    for (const [i, from] of open) {
      if (now.has(i)) continue;
      windows.set(i, [...(windows.get(i) ?? []), { from, to: change.at }]);
      open.delete(i);
    }
  }
  for (const [i, from] of open)
    windows.set(i, [...(windows.get(i) ?? []), { from, to: Number.POSITIVE_INFINITY }]);
  return windows;
}

// Druid 39 names its automatic compaction tasks `auto_compact_…` (apache/druid #19252, from 37).
const autoCompactions = (handle: SimHandle) =>
  [...handle.engine.tasks.values()].filter((t) => t.id.startsWith(`auto_compact_${DS}_`));

describe("a backfill on an emulated Druid 39 with auto-compaction on", () => {
  it("adds and removes its skipIntervals, and compaction never runs inside an interval while the backfill writes it", async () => {
    sim = await startSim({
      druidVersion: 39,
      timeScale: 200,
      capacity: 4,
      handoffDelayMs: 3000,
      baseDurationMs: 2000,
      compactionPeriodMs: 500,
      seed: 39,
    });
    const handle = sim;
    client = new DruidClient({ url: handle.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    const dataDir = writeDailyDataset({ from: DAYS[0] as string, days: DAYS.length, rowsPerDay: 10 });

    // Auto-compaction of the datasource, with a field of the operator's that segops must keep.
    const config = { dataSource: DS, skipOffsetFromLatest: "PT0S", taskContext: { owner: "ops" } };
    expect(
      (
        await fetch(`${handle.url}${CO}/config/compaction`, {
          method: "POST",
          body: JSON.stringify(config),
          headers: { "Content-Type": "application/json" },
        })
      ).status,
    ).toBe(200);

    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
      templateName: "t.json",
      range: parseInterval(`${DAYS[0]}/2026-04-05`),
      vars: { dataDir },
    });
    await store.createJob(plan.job, plan.tasks);
    const result = await runIngestJob({
      store,
      client,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      leaseMs: 5000,
      maxConcurrency: 2,
    });
    expect(result.counts).toMatchObject({ done: DAYS.length, dead: 0, failed: 0 });

    // Each partition recorded the day it put in the list, and the list is empty again, the rest as it was.
    const tasks = await store.listTasks(plan.job.id);
    const days = tasks.map((t) => (t.payload as { interval: string }).interval).sort();
    for (const t of tasks)
      expect((t.progress as IngestProgress).compactionSkip).toBe(
        (t.payload as { interval: string }).interval,
      );
    const after = handle.engine.compactionConfigs.get(DS);
    expect(after?.skipIntervals).toEqual([]);
    expect(after).toMatchObject(config);

    // Every day was in the list from before its task was submitted until after its segments were served.
    const windows = skipWindows(handle);
    const ours = [...handle.engine.tasks.values()].filter(
      (t) => t.dataSource === DS && t.type === "index_parallel",
    );
    for (const day of days) {
      const spans = windows.get(day) ?? [];
      expect(spans, day).toHaveLength(1);
      const span = spans[0] as { from: number; to: number };
      const interval = parseInterval(day);
      const writers = ours.filter(
        (t) =>
          t.plan.ingest &&
          overlaps(
            interval,
            parseInterval(
              String(
                (t.payload.spec as { dataSchema: { granularitySpec: { intervals: string[] } } }).dataSchema
                  .granularitySpec.intervals[0],
              ),
            ),
          ),
      );
      expect(writers.length, day).toBeGreaterThan(0);
      for (const w of writers) expect(w.createdAt, day).toBeGreaterThanOrEqual(span.from);
      const served = handle.engine.store
        .all(DS)
        .filter((s) => writers.some((w) => w.id === s.taskId))
        .map((s) => s.servedAt ?? Number.POSITIVE_INFINITY);
      expect(Math.max(...served), day).toBeLessThanOrEqual(span.to);
      // No compaction of the day was queued or ran while it was in the list.
      for (const c of autoCompactions(handle)) {
        const ci = c.plan.compact?.interval as Interval;
        if (!overlaps(ci, interval)) continue;
        const ran = { start: c.createdAt, end: c.finishedAt ?? Number.POSITIVE_INFINITY };
        expect(overlaps(ran, { start: span.from, end: span.to }), `${c.id} over ${day}`).toBe(false);
      }
    }

    // Out of the list, the duty compacts every day the backfill wrote.
    // The emulator acts when asked: each look is a request.
    await until(
      "auto-compaction of every backfilled day",
      async () => {
        await fetch(`${handle.url}/druid/indexer/v1/tasks`);
        return days.every((d) =>
          autoCompactions(handle).some(
            (c) => c.phase === "success" && formatInterval(c.plan.compact?.interval as Interval) === d,
          ),
        );
      },
      { timeoutMs: 60_000 },
    );
  }, 120_000);
});
