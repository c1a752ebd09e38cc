import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/core/canonical-json.js";
import { systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestProgress } from "../../src/ingest/types.js";
import { type EngineOptions, runIngestJob } from "../../src/jobs/engine.js";
import { exitCodeFor, partitionReport } from "../../src/jobs/report.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { type SimHandle, type SimOptions, startSim } from "../../src/sim/index.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

let sim: SimHandle | undefined;
let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
  sim = undefined;
  store = undefined;
  client = undefined;
});

async function setup(simOptions: SimOptions = {}) {
  sim = await startSim({
    timeScale: 100,
    capacity: 8,
    handoffDelayMs: 1000,
    baseDurationMs: 2000,
    seed: 5,
    ...simOptions,
  });
  client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
  store = await openStore("sqlite::memory:");
  return { sim, client, store };
}

async function backfill(
  template: { [key: string]: JsonValue },
  range: string,
  vars: Record<string, string>,
  extra: Partial<EngineOptions> & { nonce?: string } = {},
) {
  const s = store as Store;
  const plan = planIngestJob({
    kind: "backfill",
    template: { kind: "task", value: template },
    templateName: "t.json",
    range: parseInterval(range),
    vars,
    ...(extra.nonce ? { nonce: extra.nonce } : {}),
  });
  await s.createJob(plan.job, plan.tasks);
  const result = await runIngestJob({
    store: s,
    client: client as DruidClient,
    clock: systemClock,
    jobId: plan.job.id,
    tickMs: 20,
    leaseMs: 5000,
    ...extra,
  });
  const tasks = await s.listTasks(plan.job.id);
  const byDay = new Map(tasks.map((t) => [(t.payload as { interval: string }).interval.slice(0, 10), t]));
  return { plan, result, tasks, byDay };
}

const progress = (t: TaskRow | undefined) => t?.progress as IngestProgress;

describe("ingestion outcomes on the emulator", () => {
  it("retries a FAILED attempt under a new id, dead-letters a poison partition, and dlq retry finishes it once fixed", async () => {
    const { sim } = await setup();
    const dataDir = writeDailyDataset({ from: "2026-02-01", days: 5, rowsPerDay: 20 });
    // Day 3 has a broken row; with maxParseExceptions 0 every attempt fails the same deterministic way.
    appendFileSync(join(dataDir, "events-2026-02-03.json"), "{not json\n");
    const template = dailyTemplate({ datasource: "outcomes" }) as {
      [key: string]: { [key: string]: JsonValue };
    };
    template.context = { simFail: "Lock revoked: [TimeChunkLock{dataSource=outcomes}]", simFailAttempts: 1 };
    (template.spec as { tuningConfig: { [key: string]: JsonValue } }).tuningConfig.maxParseExceptions = 0;

    const first = await backfill(template, "2026-02-01/2026-02-06", { dataDir }, { poisonAfter: 3 });
    expect(first.result.counts).toMatchObject({ done: 4, dead: 1, failed: 0 });
    expect(exitCodeFor(first.result.counts)).toBe(1);

    const healthy = first.byDay.get("2026-02-01");
    expect(healthy?.state).toBe("done");
    expect(healthy?.attempt).toBe(2);
    const ids = progress(healthy).taskIds ?? [];
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/_a1$/);
    expect(ids[1]).toMatch(/_a2$/);
    const accepted = sim.stats().submissions.filter((s) => s.accepted);
    expect(accepted.filter((s) => s.id === ids[0] || s.id === ids[1])).toHaveLength(2);

    const poison = first.byDay.get("2026-02-03");
    expect(poison?.state).toBe("dead");
    expect(poison?.lastError).toMatch(/poison.*Max parse exceptions\[0\] exceeded/);
    expect(progress(poison).failures?.map((f) => f.failureClass)).toEqual([
      "parse-exceptions",
      "parse-exceptions",
      "parse-exceptions",
    ]);

    // Fix the input, send the dead letter back, rerun the same job.
    writeDailyDataset({ from: "2026-02-03", days: 1, rowsPerDay: 20, dir: dataDir });
    expect(await (store as Store).retryDead(poison?.id as string, "test")).not.toBeNull();
    const result = await runIngestJob({
      store: store as Store,
      client: client as DruidClient,
      clock: systemClock,
      jobId: first.plan.job.id,
      tickMs: 20,
      leaseMs: 5000,
    });
    expect(result.counts).toMatchObject({ done: 5, dead: 0, failed: 0 });
    const fixed = await (store as Store).getTask(poison?.id as string);
    expect(progress(fixed ?? undefined).summary?.rows).toBe(20);
    // The failed ids were never resubmitted: every accepted id is distinct.
    const all = sim
      .stats()
      .submissions.filter((s) => s.accepted)
      .map((s) => s.id);
    expect(new Set(all).size).toBe(all.length);
  }, 60_000);

  it("fails a task that succeeds but whose segments are never served, saying what is missing", async () => {
    const { sim } = await setup();
    sim.setNeverLoad("unserved", true);
    const dataDir = writeDailyDataset({ from: "2026-04-01", days: 1, rowsPerDay: 10 });
    const run = await backfill(
      dailyTemplate({ datasource: "unserved" }),
      "2026-04-01/2026-04-02",
      { dataDir },
      {
        handoffTimeoutMs: 300,
      },
    );
    expect(run.result.counts.failed).toBe(1);
    const task = run.tasks[0];
    expect(task?.lastError).toMatch(
      /^SUCCESS but never queryable: segops_unserved_20260401-20260402_\w+_a1 succeeded/,
    );
    expect(task?.lastError).toMatch(
      /missing: unserved_2026-04-01T00:00:00\.000Z_2026-04-02T00:00:00\.000Z_.* not served/,
    );
    expect(progress(task).druidState).toBe("SUCCESS");
  }, 30_000);

  it("catches an append that doubles rows in the audit", async () => {
    await setup();
    const dataDir = writeDailyDataset({ from: "2026-05-01", days: 2, rowsPerDay: 25 });
    const append = dailyTemplate({ datasource: "appended", append: true });
    const first = await backfill(append, "2026-05-01/2026-05-03", { dataDir });
    expect(first.result.counts.done).toBe(2);
    // The same data appended again by a second job (`--new`): the rows are now counted twice.
    const second = await backfill(append, "2026-05-01/2026-05-03", { dataDir }, { nonce: "again" });
    expect(second.result.counts.failed).toBe(2);
    const task = second.byDay.get("2026-05-01");
    expect(task?.lastError).toMatch(
      /audit failed .* duplicate-append: appended segment .* duplicates .* \(25 rows/,
    );
  }, 30_000);

  it("stays exactly-once under faults: resets, 5xx, 429, 503, leader failover", async () => {
    const { sim } = await setup({
      faults: [
        { path: "/druid/indexer/v1/task", method: "POST", kind: "reset", count: 3 },
        { path: "/druid/indexer/v1/task", method: "POST", kind: "status", status: 429, count: 2 },
        { path: "/druid/indexer/v1/taskStatus", kind: "status", status: 503, rate: 0.3, count: 10 },
        { path: "/druid/indexer/v1/taskStatus", kind: "failover", count: 4 },
        { path: "/druid/coordinator/v1", kind: "status", status: 500, rate: 0.2, count: 10 },
        { path: "/druid/indexer/v1/workers", kind: "reset", count: 2 },
      ],
    });
    const dataDir = writeDailyDataset({ from: "2026-06-01", days: 8, rowsPerDay: 15 });
    const run = await backfill(dailyTemplate({ datasource: "faulty" }), "2026-06-01/2026-06-09", { dataDir });
    expect(run.result.counts.done).toBe(8);
    const stats = sim.stats();
    expect(stats.faultsInjected).toBeGreaterThanOrEqual(10);
    const accepted = stats.submissions.filter((s) => s.accepted).map((s) => s.id);
    expect(accepted).toHaveLength(8);
    expect(new Set(accepted).size).toBe(8);
    for (const t of run.tasks) expect(progress(t).summary?.rows).toBe(15);
  }, 60_000);

  it("falls back to the report's row counts on Druid versions whose segment metadata has no totalRows", async () => {
    await setup({ druidVersion: 33 });
    const dataDir = writeDailyDataset({ from: "2026-07-01", days: 2, rowsPerDay: 15 });
    const run = await backfill(dailyTemplate({ datasource: "old" }), "2026-07-01/2026-07-03", { dataDir });
    expect(run.result.counts.done).toBe(2);
    for (const t of run.tasks) {
      expect(progress(t).summary).toMatchObject({ rows: null, rowsIngested: 15 });
      expect(partitionReport(t).rows).toBe(15);
    }
  }, 30_000);

  it("a partition canceled while Druid runs it ends failed as canceled, never done", async () => {
    await setup();
    const dataDir = writeDailyDataset({ from: "2026-08-01", days: 3, rowsPerDay: 5 });
    const slow = dailyTemplate({ datasource: "cancelme" }) as { [key: string]: JsonValue };
    slow.context = { simDurationMs: 3_600_000 };
    const s = store as Store;
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: slow },
      templateName: "t.json",
      range: parseInterval("2026-08-01/2026-08-04"),
      vars: { dataDir },
    });
    await s.createJob(plan.job, plan.tasks);
    const running = runIngestJob({
      store: s,
      client: client as DruidClient,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      leaseMs: 5000,
    });
    for (let i = 0; i < 500; i++) {
      const steps = (await s.listTasks(plan.job.id)).map((t) => progress(t).step);
      if (steps.every((step) => step === "running")) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(await s.cancelJob(plan.job.id, "operator said stop", "test")).toBe(3);
    const result = await running;
    expect(result.counts).toMatchObject({ done: 0, failed: 3 });
    for (const t of await s.listTasks(plan.job.id)) expect(t.lastError ?? t.reason).toMatch(/canceled/);
  }, 30_000);
});
