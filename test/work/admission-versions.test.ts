// Admission against the emulator speaking the Druid releases teams run (docs/druid-versions.md).
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import { DruidClient, type TaskSpec } from "../../src/druid/client.js";
import type { TaskListFilter } from "../../src/druid/types.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { runIngestJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { AdmissionTracker } from "../../src/work/admission-tracker.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { parallelTask, startTestSim } from "../helpers/sim.js";

const clients: DruidClient[] = [];
const stores: Store[] = [];
const opened: SimHandle[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

function clientOf(url: string): DruidClient {
  const c = new DruidClient({ url });
  clients.push(c);
  return c;
}

/** Sets the emulated Overlord's worker select strategy with these per-type task limits. */
async function setTaskLimits(url: string, taskLimits: Record<string, unknown>): Promise<void> {
  const set = await fetch(`${url}/druid/indexer/v1/worker`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "default", selectStrategy: { type: "equalDistribution", taskLimits } }),
  });
  expect(set.status).toBe(200);
}

/** A daily backfill of `days` days from `from` into `datasource`, run to its end with 8 partitions at once. */
async function backfill(client: DruidClient, datasource: string, from: string, days: number) {
  const store = await openStore("sqlite::memory:");
  stores.push(store);
  const dataDir = writeDailyDataset({ from, days, rowsPerDay: 10 });
  const start = Date.parse(`${from}T00:00:00.000Z`);
  const plan = planIngestJob({
    kind: "backfill",
    template: { kind: "task", value: dailyTemplate({ datasource, k: 1 }) },
    templateName: "daily.json",
    range: { start, end: start + days * 86_400_000 },
    vars: { dataDir },
  });
  await store.createJob(plan.job, plan.tasks);
  return runIngestJob({
    store,
    client,
    clock: systemClock,
    jobId: plan.job.id,
    tickMs: 20,
    maxConcurrency: 8,
    leaseMs: 5000,
  });
}

describe("admission on each Druid release", () => {
  it.each([33, 35, 37, 38, 39])(
    "counts only the enabled workers' slots on an emulated Druid %i with a disabled MiddleManager",
    async (druidVersion) => {
      const s = await startTestSim({ druidVersion, workers: 2, capacity: 4 });
      s.sim.setWorkerEnabled(1, false);
      const tracker = new AdmissionTracker({ client: clientOf(s.url), clock: s.clock, maxConcurrency: 10 });
      await tracker.refresh();
      expect(tracker.slots).toEqual({ ours: 0, used: 0, capacity: 4 });
      expect([tracker.admit("p1", 3), tracker.admit("p2", 1), tracker.admit("p3", 1)]).toEqual([
        true,
        true,
        false,
      ]);
      expect(tracker.lastDecision).toBe("capacity");
    },
  );
});

describe("a backfill under Druid's per-type task slot limits", () => {
  it.each([33, 37, 39])(
    "on an emulated Druid %i with index_parallel limited to 2 of 8 slots: never more than 2 at Druid, none left PENDING",
    async (druidVersion) => {
      const sim = await startSim({
        druidVersion,
        timeScale: 200,
        capacity: 8,
        handoffDelayMs: 1000,
        seed: 3,
      });
      opened.push(sim);
      const client = clientOf(sim.url);
      await client.workerConfig(); // nothing set yet
      await setTaskLimits(sim.url, { maxSlotCountByType: { index_parallel: 2 } });
      const result = await backfill(client, "events", "2026-01-01", 8);
      expect(result.counts.done).toBe(8);
      const events = sim.stats().tasks;
      const ours = Object.keys(events).filter((id) => sim.engine.tasks.get(id)?.type === "index_parallel");
      expect(ours).toHaveLength(8);
      const at = (id: string, event: string) => {
        const e = events[id]?.find((x) => x.event === event);
        return e ? Date.parse(e.at) : Number.NaN;
      };
      // No task of ours waited in PENDING: each started the instant Druid handed it to the runner.
      for (const id of ours) expect(at(id, "running"), id).toBe(at(id, "pending"));
      // At no instant were more than 2 of ours submitted and not yet ended.
      const edges = ours.flatMap((id) => [
        { t: at(id, "submitted"), d: 1 },
        { t: at(id, "success"), d: -1 },
      ]);
      edges.sort((a, b) => a.t - b.t || a.d - b.d);
      let open = 0;
      let peak = 0;
      for (const e of edges) {
        open += e.d;
        peak = Math.max(peak, open);
      }
      expect(peak).toBe(2);
    },
    60_000,
  );
});

describe("a backfill beside a per-type limit on another type", () => {
  it("is not held to it: its partitions are admitted as index_parallel, not as every type at once", async () => {
    const sim = await startSim({
      druidVersion: 37,
      timeScale: 200,
      capacity: 8,
      handoffDelayMs: 1000,
      seed: 4,
    });
    opened.push(sim);
    const client = clientOf(sim.url);
    // No kill task may run at all; segops' ingestion has nothing to do with it.
    await setTaskLimits(sim.url, { maxSlotCountByType: { kill: 0 } });
    const result = await backfill(client, "beside", "2026-02-01", 4);
    expect(result.counts.done).toBe(4);
  }, 120_000);
});

describe("one of ours reaching Druid after /workers was read, under per-type limits", () => {
  it("on an emulated Druid 37 with index_parallel limited to 2: is not taken for counted by that snapshot", async () => {
    const sim = await startSim({ druidVersion: 37, timeScale: 1, capacity: 8, seed: 5 });
    opened.push(sim);
    const client = clientOf(sim.url);
    await setTaskLimits(sim.url, { maxSlotCountByType: { index_parallel: 2 } });
    const submit = async (id: string, day: string) => {
      const spec = parallelTask({
        id,
        dataSource: "late",
        intervals: [day],
        context: { simDurationMs: 600_000 },
      });
      expect((await client.submitTask(spec as TaskSpec)).outcome).toBe("accepted");
    };
    // A partition is tracked just before its POST: here the POST goes out once `/workers` has answered, and the
    // task starts before the task lists are read.
    let afterWorkers: (() => Promise<void>) | null = null;
    const racing = {
      workers: async () => {
        const answer = await client.workers();
        const then = afterWorkers;
        afterWorkers = null;
        await then?.();
        return answer;
      },
      tasks: (filter?: TaskListFilter) => client.tasks(filter),
      totalWorkerCapacity: () => client.totalWorkerCapacity(),
      capabilities: () => client.capabilities(),
      workerConfig: () => client.workerConfig(),
    };
    const clock = new ManualClock(0);
    const tracker = new AdmissionTracker({ client: racing, clock, maxConcurrency: 8, tickMs: 1000 });
    await tracker.refresh();
    expect(tracker.admit("p1", 1, undefined, "index_parallel")).toBe(true);
    tracker.track("p1", 1, "late-p1");
    await submit("late-p1", "2026-03-01/2026-03-02");
    expect(tracker.admit("p2", 1, undefined, "index_parallel")).toBe(true);
    tracker.track("p2", 1, "late-p2");
    afterWorkers = () => submit("late-p2", "2026-03-02/2026-03-03");
    await clock.advance(1000);
    await tracker.refresh();
    // Both run at Druid now: a third index_parallel would wait PENDING for the limit.
    const running = await client.tasks({ state: "running" });
    expect(running.map((t) => t.id).sort()).toEqual(["late-p1", "late-p2"]);
    expect(tracker.admit("p3", 1, undefined, "index_parallel")).toBe(false);
    expect(tracker.lastDecision).toBe("task-limit index_parallel");
  }, 60_000);
});
