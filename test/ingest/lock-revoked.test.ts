import { afterEach, describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/core/canonical-json.js";
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
 * A task that FAILS because its lock was revoked (apache/druid #18182: from Druid 34 a task action under a
 * revoked lock fails the task at once, in AbstractBatchIndexTask's words here) is resubmitted as a new attempt
 * and never counted toward the poison rule, even with a poison rule of one failure.
 */

let sim: SimHandle | undefined;
let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
});

describe("a revoked ingestion on an emulated Druid 34", () => {
  it("is retried under a new attempt id and finishes; the failure is lock-revoked, not poison", async () => {
    sim = await startSim({
      druidVersion: 34,
      timeScale: 100,
      capacity: 4,
      handoffDelayMs: 500,
      baseDurationMs: 2000,
    });
    client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    const dataDir = writeDailyDataset({ from: "2026-02-01", days: 2, rowsPerDay: 10 });
    const template = dailyTemplate({ datasource: "revoked" }) as { [key: string]: JsonValue };
    template.context = {
      simFail: "Lock for interval [2026-02-01T00:00:00.000Z/2026-02-02T00:00:00.000Z] was revoked.",
      simFailAttempts: 1,
    };
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: template },
      templateName: "t.json",
      range: parseInterval("2026-02-01/2026-02-03"),
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
      poisonAfter: 1,
    });
    expect(result.counts).toMatchObject({ done: 2, dead: 0, failed: 0 });
    for (const task of await store.listTasks(plan.job.id)) {
      const p = task.progress as IngestProgress;
      expect(task.attempt).toBe(2);
      expect(p.failures?.map((f) => [f.failureClass, f.deterministic])).toEqual([["lock-revoked", false]]);
      expect(p.taskIds?.map((id) => id.slice(-3))).toEqual(["_a1", "_a2"]);
    }
  }, 60_000);
});
