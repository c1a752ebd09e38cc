import { afterEach, describe, expect, it } from "vitest";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import type { TaskListFilter } from "../../src/druid/types.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { runIngestJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { AdmissionTracker } from "../../src/work/admission-tracker.js";
import { until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { parallelTask } from "../helpers/sim.js";

/**
 * Admission budgets slots, not tasks (src/work/admission.ts): on an emulated Druid 37 whose compaction supervisor
 * runs MSQ compactions (`MSQCompactionRunner`: the compact task is the controller and launches `maxNumTasks - 1`
 * `query_worker` tasks, a slot each, once its peon is up), a backfill that starts while a compaction runs without
 * its workers yet never submits a task into the slots they are about to take: the workers start at once, and none
 * of the backfill's tasks waits PENDING at Druid for slots segops counted as free.
 */

let sim: SimHandle | undefined;
let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
});

const DS = "backfilled";
const DAYS = ["2026-05-01", "2026-05-02", "2026-05-03", "2026-05-04"];

async function post(url: string, body: unknown): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "Content-Type": "application/json" },
  });
  await res.text();
  return res.status;
}

/** Starts an emulated Druid 37 whose MSQ compaction of `other` runs its controller, its 2 workers held back. */
async function compactionUnderWay(): Promise<SimHandle> {
  const handle = await startSim({
    druidVersion: 37,
    timeScale: 1,
    workers: 1,
    capacity: 4,
    handoffDelayMs: 100,
    baseDurationMs: 1500,
    compactionPeriodMs: 50,
    seed: 37,
  });
  sim = handle;
  handle.engine.holdWorkerLaunches = true;
  const data = '{"time":"2026-01-01T01:00:00Z","page":"p"}';
  expect(
    await post(
      `${handle.url}/druid/indexer/v1/task`,
      parallelTask({
        id: "seed-other",
        dataSource: "other",
        intervals: ["2026-01-01/2026-01-02"],
        inputSource: { type: "inline", data },
        context: { simDurationMs: 10 },
      }),
    ),
  ).toBe(200);
  const cluster = { useSupervisors: true, compactionTaskSlotRatio: 1, engine: "msq" };
  expect(await post(`${handle.url}/druid/indexer/v1/compaction/config/cluster`, cluster)).toBe(200);
  const spec = {
    dataSource: "other",
    skipOffsetFromLatest: "PT0S",
    taskContext: { maxNumTasks: 3, simDurationMs: 2000 },
  };
  expect(await post(`${handle.url}/druid/indexer/v1/supervisor`, { type: "autocompact", spec })).toBe(200);
  // The compaction runs, holding one slot; its two workers are still to come.
  await until(
    "the MSQ compaction's controller runs",
    async () => {
      await fetch(`${handle.url}/druid/indexer/v1/tasks`);
      return [...handle.engine.tasks.values()].some((t) => t.type === "compact" && t.phase === "running");
    },
    { timeoutMs: 30_000 },
  );
  return handle;
}

describe("a backfill beside an MSQ compaction on an emulated Druid 37", () => {
  it("leaves the compaction's workers their slots, and none of its own tasks waits PENDING", async () => {
    // The compaction's controller is held before it launches its workers (a sim switch), so the backfill starts
    // inside that window on any machine; the workers launch once the backfill's first task has ended.
    const handle = await compactionUnderWay();
    client = new DruidClient({ url: handle.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    const dataDir = writeDailyDataset({ from: DAYS[0] as string, days: DAYS.length, rowsPerDay: 10 });
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
      templateName: "t.json",
      range: parseInterval(`${DAYS[0]}/2026-05-05`),
      vars: { dataDir },
    });
    await store.createJob(plan.job, plan.tasks);
    const running = runIngestJob({
      store,
      client,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      leaseMs: 5000,
      maxConcurrency: 4,
    });
    // By the end of its first task a backfill that counted free slots by tasks would have filled all three.
    await until(
      "the backfill's first task ends",
      async () => {
        await fetch(`${handle.url}/druid/indexer/v1/tasks`);
        return [...handle.engine.tasks.values()].some((t) => t.dataSource === DS && t.phase === "success");
      },
      { timeoutMs: 60_000 },
    );
    handle.engine.releaseWorkerLaunches();
    const result = await running;
    expect(result.counts).toMatchObject({ done: DAYS.length, dead: 0, failed: 0 });

    const tasks = [...handle.engine.tasks.values()];
    const compaction = tasks.find((t) => t.type === "compact" && t.dataSource === "other");
    expect(compaction?.id).toMatch(/^auto_compact_other_/);
    const workers = tasks.filter((t) => t.plan.controller === compaction?.id);
    expect(workers).toHaveLength(2);
    // Neither the compaction's workers nor segops' tasks waited PENDING: each started as Druid had it ready.
    for (const t of [...workers, ...tasks.filter((x) => x.dataSource === DS)]) {
      const events = handle.engine.stats.events.get(t.id) ?? [];
      const pending = events.find((e) => e.event === "pending")?.at;
      const running = events.find((e) => e.event === "running")?.at;
      expect(running, `${t.id} ran`).toBeDefined();
      expect(running, `${t.id} waited PENDING from ${pending}`).toBe(pending);
    }
  }, 120_000);

  it("budgets the workers as still to come when they start between the /workers read and the running list's", async () => {
    const handle = await compactionUnderWay();
    // Past the point where it would launch them: held, they launch at the first sync after the release.
    await until(
      "the controller holds its workers back",
      async () => {
        await fetch(`${handle.url}/druid/indexer/v1/tasks`);
        return [...handle.engine.tasks.values()].some(
          (t) => t.type === "compact" && t.launchingWorkers === true && t.endsAt === Number.POSITIVE_INFINITY,
        );
      },
      { timeoutMs: 30_000 },
    );
    const druid = new DruidClient({ url: handle.url, retry: { baseMs: 5, capMs: 50 } });
    client = druid;
    // The workers are let go once `/workers` has answered; the next request (the running list) finds them running.
    let release = true;
    const racing = {
      workers: async () => {
        const answer = await druid.workers();
        if (release) handle.engine.releaseWorkerLaunches();
        release = false;
        return answer;
      },
      tasks: (filter?: TaskListFilter) => druid.tasks(filter),
      totalWorkerCapacity: () => druid.totalWorkerCapacity(),
      taskPayload: (id: string) => druid.taskPayload(id),
    };
    const tracker = new AdmissionTracker({ client: racing, clock: new ManualClock(0), maxConcurrency: 4 });
    await tracker.refresh();
    const running = await druid.tasks({ state: "running" });
    expect(running.filter((t) => t.type === "query_worker")).toHaveLength(2);
    // 4 slots: the snapshot counted the controller's one; its two workers take two more. One is free.
    expect(["a", "b", "c"].map((id) => tracker.admit(id, 1))).toEqual([true, false, false]);
  }, 120_000);
});
