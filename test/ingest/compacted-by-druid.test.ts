import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestProgress } from "../../src/ingest/types.js";
import { runIngestJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * A backfill on a Druid whose auto-compaction rewrites each day between the partition's SUCCESS and its audit
 * (before 39 nothing keeps it away: no skipIntervals). Druid's compaction of our version is ours compacted
 * (src/work/compacted.ts): every partition ends done with a note naming the compaction task — the Coordinator's
 * `coordinator-issued_compact_…` on 33, a compaction supervisor's `auto_compact_…` on 37 (apache/druid #19252) —
 * instead of superseded.
 */

let sim: SimHandle | undefined;
let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
});

const DS = "compacted";
const DAYS = ["2026-04-01", "2026-04-02", "2026-04-03"];

async function post(url: string, body: unknown): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "Content-Type": "application/json" },
  });
  await res.text();
  return res.status;
}

describe.each([
  [33, "coordinator-issued_compact_", "the Coordinator's duty"],
  [37, "auto_compact_", "a compaction supervisor"],
])("a backfill on an emulated Druid %i compacted by Druid as it is audited", (version, prefix, how) => {
  it(`ends every partition done, noting the compaction by ${how}`, async () => {
    sim = await startSim({
      druidVersion: version,
      timeScale: 100,
      capacity: 4,
      // The compacted day loads long after the compaction: the gate sees Druid's version before ours is served.
      handoffDelayMs: 5000,
      baseDurationMs: 200,
      compactionPeriodMs: 300,
      seed: version,
    });
    const handle = sim;
    const config = { dataSource: DS, skipOffsetFromLatest: "PT0S" };
    if (version >= 37) {
      expect(
        await post(`${handle.url}/druid/indexer/v1/compaction/config/cluster`, { useSupervisors: true }),
      ).toBe(200);
      expect(
        await post(`${handle.url}/druid/indexer/v1/supervisor`, { type: "autocompact", spec: config }),
      ).toBe(200);
    } else {
      expect(await post(`${handle.url}/druid/coordinator/v1/config/compaction`, config)).toBe(200);
    }
    client = new DruidClient({ url: handle.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    const dataDir = writeDailyDataset({ from: DAYS[0] as string, days: DAYS.length, rowsPerDay: 10 });
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
      templateName: "t.json",
      range: parseInterval(`${DAYS[0]}/2026-04-04`),
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
      maxConcurrency: 1,
    });
    expect(result.counts).toMatchObject({ done: DAYS.length, dead: 0, failed: 0 });

    const compactions = [...handle.engine.tasks.values()].filter((t) => t.type === "compact");
    for (const t of await store.listTasks(plan.job.id)) {
      const p = t.progress as IngestProgress;
      const day = (t.payload as { interval: string }).interval;
      expect(p.step, day).toBe("done");
      expect(p.outcome ?? null, day).toBeNull();
      const by = p.compactedBy?.by ?? [];
      expect(by.length, day).toBeGreaterThan(0);
      for (const b of by) {
        expect(b.taskId.startsWith(`${prefix}${DS}_`), b.taskId).toBe(true);
        const task = compactions.find((c) => c.id === b.taskId);
        expect(task?.phase).toBe("success");
        expect(task?.version).toBe(b.version);
      }
      expect(p.compactedBy?.note).toMatch(
        new RegExp(`^compacted by Druid from ours: our version ${p.version}`),
      );
      // The version live over the day now is the compaction's, and it is served.
      const live = handle.engine.served(DS).filter((s) => s.interval.start === parseInterval(day).start);
      expect(live.map((s) => s.version)).toContain(by[by.length - 1]?.version);
    }
  }, 120_000);
});
