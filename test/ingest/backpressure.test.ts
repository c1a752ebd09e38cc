import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { runJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * Druid's 429 "task queue full" on submit is backpressure: admission pauses and the partition is deferred
 * (no retry used), so a burst of 429s slows the backfill down and it still finishes with nothing failed.
 */

let sim: SimHandle | undefined;
let client: DruidClient | undefined;
let store: Store | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
});

describe("a 429 burst on submit", () => {
  it("slows admission; the backfill finishes with no failed partition and no retry used", async () => {
    sim = await startSim({
      timeScale: 200,
      handoffDelayMs: 500,
      seed: 12,
      faults: [
        // Rules match by path prefix: let bulk status (POST /taskStatus) through; only submissions see 429.
        { path: "/druid/indexer/v1/taskStatus", kind: "latency", latencyMs: 0 },
        { path: "/druid/indexer/v1/task", method: "POST", kind: "status", status: 429, count: 12 },
      ],
    });
    // One attempt per call: every 429 reaches the runner instead of being retried inside the client.
    client = new DruidClient({ url: sim.url, retry: { maxAttempts: 1 } });
    store = await openStore("sqlite::memory:");
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: "busy" }) },
      templateName: "daily.json",
      range: parseInterval("2026-07-01/2026-07-09"),
      vars: { dataDir: writeDailyDataset({ from: "2026-07-01", days: 8, rowsPerDay: 5 }) },
    });
    await store.createJob(plan.job, plan.tasks);
    const result = await runJob({
      store,
      client,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      maxConcurrency: 4,
    });
    expect(result.job.state).toBe("done");
    expect(result.counts).toMatchObject({ done: 8, failed: 0, dead: 0 });
    const tasks = await store.listTasks(plan.job.id);
    expect(tasks.map((t) => t.retry)).toEqual(tasks.map(() => 0));
    const deferrals = (await store.listEvents({ jobId: plan.job.id, limit: 10_000 })).filter((e) =>
      e.reason.includes("task queue is full (429)"),
    );
    // Each 429 deferred its partition once (and paused admission); none became a failure or a retry.
    expect(deferrals).toHaveLength(12);
    const accepted = sim.stats().submissions.filter((s) => s.accepted);
    expect(new Set(accepted.map((s) => s.id)).size).toBe(8);
    expect(accepted).toHaveLength(8);
  });
});
