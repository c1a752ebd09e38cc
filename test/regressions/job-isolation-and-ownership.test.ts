import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/core/canonical-json.js";
import { systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { ClusterMismatchError, clusterOf } from "../../src/druid/cluster.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestProgress } from "../../src/ingest/types.js";
import { type EngineOptions, runIngestJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * A run never executes other jobs' partitions or runs a job against a
 * cluster other than its own, and "done" needs data that provably came from our attempt. Each scenario
 * runs under several emulator seeds (task durations and ids differ per seed).
 */

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

async function sim(seed: number, extra: Parameters<typeof startSim>[0] = {}) {
  const s = await startSim({
    timeScale: 200,
    capacity: 4,
    handoffDelayMs: 1000,
    baseDurationMs: 2000,
    seed,
    ...extra,
  });
  const client = new DruidClient({ url: s.url, retry: { baseMs: 5, capMs: 50 } });
  closers.push(async () => {
    await client.close();
    await s.close();
  });
  return { sim: s, client };
}

async function ledger(): Promise<Store> {
  const store = await openStore(`sqlite:${join(mkdtempSync(join(tmpdir(), "segops-i9-")), "ledger.db")}`);
  closers.push(() => store.close());
  return store;
}

function plan(
  template: { [key: string]: JsonValue },
  range: string,
  vars: Record<string, string>,
  client: DruidClient,
  extra: { nonce?: string } = {},
) {
  return planIngestJob({
    kind: "backfill",
    template: { kind: "task", value: template },
    templateName: "t.json",
    range: parseInterval(range),
    vars,
    cluster: clusterOf(client),
    ...extra,
  });
}

function run(store: Store, client: DruidClient, jobId: string, extra: Partial<EngineOptions> = {}) {
  return runIngestJob({
    store,
    client,
    clock: systemClock,
    jobId,
    tickMs: 20,
    leaseMs: 5000,
    maxConcurrency: 2,
    ...extra,
  });
}

/** Rows the emulator's Broker would count per day for a datasource (live, used segments). */
function liveRowsPerDay(s: SimHandle, datasource: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const row of s.engine.store.liveRows(datasource, s.engine.now)) {
    const day = new Date(row.__time as number).toISOString().slice(0, 10);
    out.set(day, (out.get(day) ?? 0) + 1);
  }
  return out;
}

const SEEDS = [1, 2, 3];
const prog = (t: TaskRow | undefined) => (t?.progress ?? {}) as IngestProgress;

describe("a run executes only its own job, against its own cluster", () => {
  it.each(SEEDS)(
    "other jobs' partitions in a shared ledger are never run against another Druid (seed %i)",
    async (seed) => {
      const a = await sim(seed);
      const b = await sim(seed + 100);
      const store = await ledger();
      const prodData = writeDailyDataset({ from: "2026-02-01", days: 20, rowsPerDay: 8 });
      const stageData = writeDailyDataset({ from: "2026-02-01", days: 2, rowsPerDay: 8 });
      const prod = plan(
        dailyTemplate({ datasource: "prod" }),
        "2026-02-01/2026-02-21",
        { dataDir: prodData },
        a.client,
      );
      await store.createJob(prod.job, prod.tasks);
      expect((await store.getJob(prod.job.id))?.options.cluster).toEqual(clusterOf(a.client));

      // Ctrl-C after a few partitions.
      const stop = new AbortController();
      let done = 0;
      const first = await run(store, a.client, prod.job.id, {
        signal: stop.signal,
        onStep: (_t, step) => {
          if (step === "done" && ++done >= 3) stop.abort();
        },
      });
      expect(first.reason).toBe("aborted");
      expect(first.counts.done).toBeLessThan(20);

      // Another job, another cluster, the same ledger.
      const stage = plan(
        dailyTemplate({ datasource: "stage" }),
        "2026-02-01/2026-02-03",
        { dataDir: stageData },
        b.client,
      );
      await store.createJob(stage.job, stage.tasks);
      const second = await run(store, b.client, stage.job.id);
      expect(second.counts.done).toBe(2);
      const toB = b.sim.stats().submissions.filter((s) => s.accepted);
      expect(toB).toHaveLength(2);
      expect(toB.every((s) => s.id?.includes("_stage_"))).toBe(true);
      expect((await store.getJob(stage.job.id))?.state).toBe("done");

      // The prod job refuses to run against B, and claims nothing there.
      await expect(run(store, b.client, prod.job.id)).rejects.toBeInstanceOf(ClusterMismatchError);
      expect(b.sim.stats().submissions.filter((s) => s.accepted)).toHaveLength(2);

      // Rerun prod against A: every day in A, 8 rows each.
      const third = await run(store, a.client, prod.job.id);
      expect(third.counts.done).toBe(20);
      expect(third.job.state).toBe("done");
      const rows = liveRowsPerDay(a.sim, "prod");
      expect(rows.size).toBe(20);
      expect([...rows.values()].every((n) => n === 8)).toBe(true);
      expect(liveRowsPerDay(b.sim, "prod").size).toBe(0);
    },
    60_000,
  );

  it("the same command against another cluster plans another job", async () => {
    const a = await sim(1);
    const b = await sim(2);
    const t = dailyTemplate({ datasource: "prod" });
    const range = "2026-02-01/2026-02-03";
    expect(plan(t, range, { dataDir: "/d" }, a.client).job.id).not.toBe(
      plan(t, range, { dataDir: "/d" }, b.client).job.id,
    );
    expect(plan(t, range, { dataDir: "/d" }, a.client).job.id).toBe(
      plan(t, range, { dataDir: "/d" }, a.client).job.id,
    );
  });
});

describe("done only with data that provably came from our attempt", () => {
  it.each(SEEDS)(
    "a task that SUCCEEDED and whose segments vanished before handoff is not done (seed %i)",
    async (seed) => {
      const a = await sim(seed, { handoffDelayMs: 30_000 });
      const store = await ledger();
      const data = writeDailyDataset({ from: "2026-03-01", days: 1, rowsPerDay: 8 });
      const job = plan(
        dailyTemplate({ datasource: "vanish" }),
        "2026-03-01/2026-03-02",
        { dataDir: data },
        a.client,
      );
      await store.createJob(job.job, job.tasks);
      const result = await run(store, a.client, job.job.id, {
        onStep: (_t, step) => {
          // The moment Druid says SUCCESS, its segments go unused (marked unused, or Druid forgot them).
          if (step === "succeeded")
            for (const s of a.sim.engine.store.all("vanish")) s.unusedAt = a.sim.engine.now;
        },
      });
      expect(result.counts).toMatchObject({ done: 0, failed: 1 });
      const [task] = await store.listTasks(job.job.id);
      expect(task?.lastError).toMatch(/SUCCEEDED but its data is gone: the task ingested 8 row\(s\)/);
      expect(prog(task).outcome).toBe("lost");
      expect(result.job.state).toBe("failed");
    },
    60_000,
  );

  it.each(SEEDS)(
    "a new job reattaching to old task ids of a day another spec replaced is not done (seed %i)",
    async (seed) => {
      const a = await sim(seed, { unusedDelayMs: 5_000 });
      const store = await ledger();
      const eight = writeDailyDataset({ from: "2026-03-01", days: 2, rowsPerDay: 8 });
      const one = writeDailyDataset({ from: "2026-03-01", days: 1, rowsPerDay: 1 });
      const t = dailyTemplate({ datasource: "adopt" });
      const x = plan(t, "2026-03-01/2026-03-02", { dataDir: eight }, a.client);
      await store.createJob(x.job, x.tasks);
      expect((await run(store, a.client, x.job.id)).counts.done).toBe(1);

      // Another spec (a different input) replaces the day from another ledger.
      const other = await ledger();
      const y = plan(t, "2026-03-01/2026-03-02", { dataDir: one }, a.client);
      await other.createJob(y.job, y.tasks);
      expect((await run(other, a.client, y.job.id)).counts.done).toBe(1);

      // A new job over two days: day 1 reattaches to X's old task id (Druid knows it: SUCCESS).
      const z = plan(t, "2026-03-01/2026-03-03", { dataDir: eight }, a.client);
      await store.createJob(z.job, z.tasks);
      const result = await run(store, a.client, z.job.id);
      const tasks = await store.listTasks(z.job.id);
      const day1 = tasks.find((task) =>
        (task.payload as { interval: string }).interval.startsWith("2026-03-01"),
      );
      const day2 = tasks.find((task) =>
        (task.payload as { interval: string }).interval.startsWith("2026-03-02"),
      );
      expect(day2?.state).toBe("done");
      expect(day1?.state).toBe("failed");
      expect(prog(day1).baselineTrusted).toBe(false);
      expect(day1?.lastError).toMatch(/superseded|cannot prove/);
      expect(result.job.state).toBe("failed");
      // The day still holds the other spec's single row: reported as not done, not as "no new data".
      expect(liveRowsPerDay(a.sim, "adopt").get("2026-03-01")).toBe(1);
    },
    60_000,
  );

  it.each(SEEDS)(
    "a job killed after submitting, whose day another ledger then replaced, is not done on rerun (seed %i)",
    async (seed) => {
      const a = await sim(seed, { unusedDelayMs: 2_000 });
      const store = await ledger();
      const eight = writeDailyDataset({ from: "2026-03-01", days: 1, rowsPerDay: 8 });
      const one = writeDailyDataset({ from: "2026-03-01", days: 1, rowsPerDay: 1 });
      const t = dailyTemplate({ datasource: "killed" });
      const jobA = plan(t, "2026-03-01/2026-03-02", { dataDir: eight }, a.client);
      await store.createJob(jobA.job, jobA.tasks);
      // A stops right after its submission (a crash would leave the same ledger row behind).
      const stop = new AbortController();
      await run(store, a.client, jobA.job.id, {
        signal: stop.signal,
        onStep: (_t, step) => {
          if (step === "submitted") stop.abort();
        },
      });
      const [row] = await store.listTasks(jobA.job.id);
      const aTaskId = prog(row).taskId as string;
      await until(
        "A's Druid task succeeded",
        async () => (await a.client.taskStatus(aTaskId)).status?.statusCode === "SUCCESS",
      );

      // Another ledger replaces that day; A's overshadowed segments become unused.
      const other = await ledger();
      const jobB = plan(t, "2026-03-01/2026-03-02", { dataDir: one }, a.client, { nonce: "other" });
      await other.createJob(jobB.job, jobB.tasks);
      expect((await run(other, a.client, jobB.job.id)).counts.done).toBe(1);
      await until("A's segments are unused", () => {
        a.sim.tick();
        return a.sim.engine.store.used("killed", a.sim.engine.now).every((s) => s.taskId !== aTaskId);
      });

      const rerun = await run(store, a.client, jobA.job.id);
      expect(rerun.counts).toMatchObject({ done: 0, failed: 1 });
      const [after] = await store.listTasks(jobA.job.id);
      // A's version, within its task's lifetime, is among the unused under B's: superseded, never done.
      expect(after?.lastError).toMatch(
        /^superseded: a newer version \(\S+\) replaced ours \(\S+\) in 2026-03-01/,
      );
      expect(prog(after)).toMatchObject({ outcome: "superseded" });
      expect(prog(after).version ?? null).toBeNull();
    },
    60_000,
  );
});
