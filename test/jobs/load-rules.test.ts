import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { clusterOf } from "../../src/druid/cluster.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { runJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/** An interval excluded by a drop rule fails at once with "never queryable", on the emulator. */

let sim: SimHandle | undefined;
let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
});

describe("load rules on the emulator", () => {
  it("fails a partition a drop rule excludes at once with 'never queryable', not at the handoff timeout", async () => {
    sim = await startSim({
      timeScale: 200,
      capacity: 4,
      handoffDelayMs: 1000,
      baseDurationMs: 2000,
      seed: 31,
    });
    client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    const rules = [
      { type: "dropByInterval", interval: "2026-09-02T00:00:00.000Z/2026-09-03T00:00:00.000Z" },
      { type: "loadForever", tieredReplicants: { _default_tier: 1 } },
    ];
    const set = await fetch(`${sim.url}/druid/coordinator/v1/rules/dropped`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(rules),
    });
    expect(set.status).toBe(200);
    const dataDir = writeDailyDataset({ from: "2026-09-01", days: 2, rowsPerDay: 8 });
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: "dropped" }) },
      templateName: "t.json",
      range: parseInterval("2026-09-01/2026-09-03"),
      vars: { dataDir },
      cluster: clusterOf(client),
    });
    await store.createJob(plan.job, plan.tasks);
    // A handoff timeout far beyond the run: only the rules can end the dropped day this early.
    const result = await runJob({
      store,
      client,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      handoffTimeoutMs: 3_600_000,
    });
    expect(result.counts).toMatchObject({ done: 1, failed: 1 });
    const tasks = await store.listTasks(plan.job.id);
    const dropped = tasks.find((t) => (t.payload as { interval: string }).interval.startsWith("2026-09-02"));
    expect(dropped?.lastError).toMatch(/never queryable under the load rules/);
  }, 60_000);
});
