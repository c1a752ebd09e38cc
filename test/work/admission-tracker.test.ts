import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { capabilitiesFor } from "../../src/druid/capabilities.js";
import type { TaskStatusPlus, WorkerInfo } from "../../src/druid/types.js";
import { AdmissionTracker, WORKER_CONFIG_TTL_MS } from "../../src/work/admission-tracker.js";

function worker(capacity: number, used: number): WorkerInfo {
  return {
    worker: {
      scheme: "http",
      host: "mm:8091",
      ip: "127.0.0.1",
      capacity,
      version: "0",
      category: "_default_worker_category",
    },
    currCapacityUsed: used,
    availabilityGroups: [],
    runningTasks: [],
    lastCompletedTaskTime: "2026-01-01T00:00:00.000Z",
  } as WorkerInfo;
}

function fakeClient(options: { workers?: () => WorkerInfo[]; pending?: string[]; total?: number }) {
  const calls: string[] = [];
  return {
    calls,
    client: {
      async workers() {
        calls.push("workers");
        if (!options.workers) throw new Error("Task Runner does not support worker listing");
        return options.workers();
      },
      async tasks(filter: { state?: string } = {}) {
        calls.push(`tasks ${filter.state}`);
        const ids = filter.state === "pending" ? (options.pending ?? []) : [];
        return ids.map((id) => ({ id }) as TaskStatusPlus);
      },
      async totalWorkerCapacity() {
        calls.push("total");
        return {
          currentClusterCapacity: options.total ?? -1,
          maximumCapacityWithAutoScale: -1,
          usedClusterCapacity: 0,
        };
      },
    },
  };
}

describe("admission tracker", () => {
  it("admits nothing before it knows the capacity, then reserves slots as it admits", async () => {
    const clock = new ManualClock(0);
    const { client } = fakeClient({ workers: () => [worker(4, 0)] });
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 10 });
    expect(tracker.admit("a", 2)).toBe(false);
    await tracker.refresh();
    expect(tracker.admit("a", 2)).toBe(true);
    expect(tracker.admit("b", 2)).toBe(true);
    expect(tracker.admit("c", 2)).toBe(false); // 4 of 4 slots reserved
    expect(tracker.peakSlots).toBe(4);
    tracker.untrack("a");
    expect(tracker.admit("c", 2)).toBe(true);
  });

  it("pauses while one of ours is PENDING at Druid, and refreshes at most once per tick, only while someone waits", async () => {
    const clock = new ManualClock(0);
    const fake = fakeClient({ workers: () => [worker(8, 1)], pending: ["druid-a"] });
    const tracker = new AdmissionTracker({ client: fake.client, clock, maxConcurrency: 10, tickMs: 1000 });
    tracker.track("a", 1, "druid-a");
    await tracker.refresh();
    expect(tracker.admit("b", 1)).toBe(false);
    await tracker.refresh(); // same tick: no new requests
    expect(fake.calls.filter((c) => c === "workers")).toHaveLength(1);
    await clock.advance(1000);
    await tracker.refresh(); // b still waits: refresh
    expect(fake.calls.filter((c) => c === "workers")).toHaveLength(2);
    await clock.advance(1000);
    await tracker.refresh(); // nobody asked since: no requests
    expect(fake.calls.filter((c) => c === "workers")).toHaveLength(2);
  });

  it("at --max-concurrency asks Druid nothing: no snapshot could admit another", async () => {
    const clock = new ManualClock(0);
    const fake = fakeClient({ workers: () => [worker(8, 0)] });
    const tracker = new AdmissionTracker({ client: fake.client, clock, maxConcurrency: 2, tickMs: 1000 });
    await tracker.refresh();
    expect([tracker.admit("a", 1), tracker.admit("b", 1)]).toEqual([true, true]);
    await clock.advance(1000);
    await tracker.refresh(); // a and b asked: their runner states are read once
    const before = fake.calls.length;
    // Partitions keep asking every cycle while two are in flight (the driver has handlers to spare).
    for (let i = 0; i < 5; i++) {
      expect(tracker.admit("c", 1)).toBe(false);
      expect(tracker.lastDecision).toBe("max-concurrency");
      await clock.advance(1000);
      await tracker.refresh();
    }
    expect(fake.calls.length).toBe(before);
    // One leaves: the next question is worth a snapshot again, and the last one (5 s old, from before the
    // spell at the cap) is not trusted: slots may have been taken since.
    tracker.untrack("a");
    expect(tracker.admit("c", 1)).toBe(false);
    expect(tracker.lastDecision).toBe("capacity not known yet");
    await tracker.refresh();
    // One request: `/workers` names what each worker runs, so no task list is read for our runner states.
    expect(fake.calls.slice(before)).toEqual(["workers"]);
    expect(tracker.admit("c", 1)).toBe(true);
  });

  it("takes our tasks' runner states from /workers' runningTasks, and reads the task lists only without a worker listing", async () => {
    const clock = new ManualClock(0);
    const listed = worker(8, 1);
    // A worker that says what types hold its slots, none an MSQ controller's (no running list needed for those).
    const fake = fakeClient({
      workers: () => [
        { ...listed, runningTasks: ["druid-a"], currCapacityUsedByTaskType: { index_parallel: 1 } },
      ],
    });
    const tracker = new AdmissionTracker({ client: fake.client, clock, maxConcurrency: 10, tickMs: 1000 });
    tracker.track("a", 1, "druid-a");
    tracker.track("b", 1, "druid-b");
    await tracker.refresh();
    expect(fake.calls).toEqual(["workers"]);
    // druid-b is on no worker: queued at Druid, so nothing more is admitted until it runs.
    expect(tracker.admit("c", 1)).toBe(false);
    expect(tracker.lastDecision).toBe("pending");
    tracker.untrack("b");
    expect(tracker.admit("c", 1)).toBe(true);
    // A runner that lists no workers (Kubernetes): the pending and waiting lists say what is queued.
    const k8s = fakeClient({ total: 8, pending: ["druid-a"] });
    const other = new AdmissionTracker({ client: k8s.client, clock, maxConcurrency: 10, tickMs: 1000 });
    other.track("a", 1, "druid-a");
    await other.refresh();
    expect(k8s.calls.sort()).toEqual(["tasks pending", "tasks waiting", "total", "workers"]);
    expect(other.admit("b", 1)).toBe(false);
  });

  it("caps one job's partitions at its own maxConcurrency under the process's cap", async () => {
    const clock = new ManualClock(0);
    const { client } = fakeClient({ workers: () => [worker(8, 0)] });
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 6 });
    await tracker.refresh();
    const jobA = { id: "A", cap: 2 };
    expect([
      tracker.admit("A/1", 1, jobA),
      tracker.admit("A/2", 1, jobA),
      tracker.admit("A/3", 1, jobA),
    ]).toEqual([true, true, false]);
    expect(tracker.lastDecision).toBe("job max-concurrency");
    // Another job is not held back by A's cap; the process's cap still holds for both.
    expect(["B/1", "B/2", "B/3", "B/4", "B/5"].map((id) => tracker.admit(id, 1))).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    // The group survives the submission (track) and is freed by the end of the partition (untrack).
    tracker.track("A/1", 1, "druid-a1");
    tracker.untrack("B/1");
    expect(tracker.admit("A/3", 1, jobA)).toBe(false);
    tracker.untrack("A/1");
    expect(tracker.admit("A/3", 1, jobA)).toBe(true);
  });

  it("falls back to total capacity, then to --max-concurrency, when workers cannot be listed", async () => {
    const clock = new ManualClock(0);
    const known = new AdmissionTracker({
      client: fakeClient({ total: 3 }).client,
      clock,
      maxConcurrency: 10,
    });
    await known.refresh();
    expect([known.admit("a", 2), known.admit("b", 2)]).toEqual([true, false]);

    const unknown = new AdmissionTracker({ client: fakeClient({}).client, clock, maxConcurrency: 2 });
    await unknown.refresh();
    expect([unknown.admit("a", 50), unknown.admit("b", 50), unknown.admit("c", 1)]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it("says when the run is blocked: partitions wait and none of ours is in flight, the slots taken by others", async () => {
    const clock = new ManualClock(0);
    let used = 1;
    const { client } = fakeClient({ workers: () => [worker(3, used)] });
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 4, tickMs: 1000 });
    await tracker.refresh();
    expect(tracker.blockedSince).toBeNull();
    // A parallel partition needs 3 slots; another task holds one of the 3.
    expect(tracker.admit("a", 3)).toBe(false);
    expect(tracker.blockedSince).toBe(0);
    expect(tracker.describeBlocked()).toBe(
      "waiting for Druid worker slots: the next partition needs 3, 1 of 3 worker slots in use by other tasks; nothing of this run is in flight",
    );
    // Still refused a tick later: the streak keeps its start.
    await clock.advance(1000);
    expect(tracker.admit("a", 3)).toBe(false);
    expect(tracker.blockedSince).toBe(0);
    // Nobody asked for over ten seconds (the partitions went away): not blocked any more.
    await clock.advance(9000);
    expect(tracker.blockedSince).toBe(0);
    await clock.advance(1500);
    expect(tracker.blockedSince).toBeNull();
    expect(tracker.describeBlocked()).toBeNull();
    // The slot frees: admitted, and the streak is over.
    expect(tracker.admit("a", 3)).toBe(false);
    used = 0;
    await clock.advance(1000);
    await tracker.refresh();
    expect(tracker.admit("a", 3)).toBe(true);
    expect(tracker.blockedSince).toBeNull();
  });

  it("waiting for its own tasks to end is a backfill's normal pace, not a block", async () => {
    const clock = new ManualClock(0);
    const { client } = fakeClient({ workers: () => [worker(2, 1)] });
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 4 });
    await tracker.refresh();
    expect(tracker.admit("a", 1)).toBe(true);
    tracker.track("a", 1, "druid-a");
    expect(tracker.admit("b", 1)).toBe(false);
    expect(tracker.blockedSince).toBeNull();
    // A full task queue with nothing of ours in flight is a block, said as such.
    tracker.untrack("a");
    tracker.pause(10_000);
    expect(tracker.admit("b", 1)).toBe(false);
    expect(tracker.describeBlocked()).toBe(
      "waiting: Druid's task queue is full (429); nothing of this run is in flight",
    );
  });

  it("a snapshot is as fresh as its answers: an Overlord slower than two ticks still admits", async () => {
    const clock = new ManualClock(0);
    let answer: (() => void) | null = null;
    const client = {
      ...fakeClient({ workers: () => [worker(4, 0)] }).client,
      // Each /workers answer takes three ticks to arrive.
      workers: () =>
        new Promise<WorkerInfo[]>((resolve) => {
          answer = () => resolve([worker(4, 0)]);
        }),
    };
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 4, tickMs: 1000 });
    const refreshing = tracker.refresh();
    await clock.advance(3000);
    (answer as (() => void) | null)?.();
    await refreshing;
    expect(tracker.admit("a", 1)).toBe(true);
  });
});

describe("disabled workers hold no capacity", () => {
  const disabled = (w: WorkerInfo, how: "flag" | "empty version"): WorkerInfo => ({
    ...w,
    worker: how === "flag" ? { ...w.worker, disabled: true } : { ...w.worker, version: "" },
  });

  // Druid 38 flags a disabled worker (apache/druid #19448); up to 37 it is announced with version "".
  it.each(["flag", "empty version"] as const)("leaves out a worker disabled by its %s", async (how) => {
    const clock = new ManualClock(0);
    const { client } = fakeClient({ workers: () => [worker(4, 0), disabled(worker(4, 1), how)] });
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 10 });
    await tracker.refresh();
    expect(tracker.slots).toEqual({ ours: 0, used: 0, capacity: 4 });
    expect([tracker.admit("a", 3), tracker.admit("b", 2)]).toEqual([true, false]);
  });
});

describe("Druid's per-type task slot limits", () => {
  /** A cluster of 8 slots whose worker select strategy limits index_parallel to 2 slots. */
  function limitedCluster(options: { major?: number; limits?: unknown } = {}) {
    const calls: string[] = [];
    const byType: Record<string, number> = {};
    /** The tasks `/workers` lists as running (`runningTasks`); the task lists may say otherwise. */
    const listed: string[] = [];
    const tasks = new Map<string, { type: string; state: "pending" | "running" }>();
    const client = {
      async workers() {
        calls.push("workers");
        const w = worker(
          8,
          Object.values(byType).reduce((a, b) => a + b, 0),
        );
        return [{ ...w, currCapacityUsedByTaskType: { ...byType }, runningTasks: [...listed] }];
      },
      async tasks(filter: { state?: string } = {}) {
        calls.push(`tasks ${filter.state}`);
        return [...tasks]
          .filter(([, t]) => t.state === filter.state)
          .map(([id, t]) => ({ id, type: t.type }) as TaskStatusPlus);
      },
      async totalWorkerCapacity() {
        return { currentClusterCapacity: 8, maximumCapacityWithAutoScale: -1, usedClusterCapacity: 0 };
      },
      async capabilities() {
        calls.push("status");
        return capabilitiesFor(`${options.major ?? 33}.0.0`);
      },
      async workerConfig() {
        calls.push("worker config");
        return {
          type: "default",
          selectStrategy: {
            type: "equalDistribution",
            taskLimits: options.limits ?? { maxSlotCountByType: { index_parallel: 2 } },
          },
        };
      },
    };
    return { client, calls, byType, listed, tasks };
  }

  it("admits no more of a type than Druid's limit lets run, and names the limit when it blocks", async () => {
    const clock = new ManualClock(0);
    const cluster = limitedCluster();
    const tracker = new AdmissionTracker({ client: cluster.client, clock, maxConcurrency: 8 });
    await tracker.refresh();
    const job = { id: "J", cap: 8 };
    expect([
      tracker.admit("p1", 1, job, "index_parallel"),
      tracker.admit("p2", 1, job, "index_parallel"),
    ]).toEqual([true, true]);
    expect(tracker.admit("p3", 1, job, "index_parallel")).toBe(false);
    expect(tracker.lastDecision).toBe("task-limit index_parallel");
    expect(tracker.admit("k1", 1, undefined, "kill")).toBe(true); // kill has no limit
    // Another tool's two supervisors hold the limit: nothing of ours is in flight, so the run is blocked.
    const other = limitedCluster();
    other.byType.index_parallel = 2;
    const blocked = new AdmissionTracker({ client: other.client, clock, maxConcurrency: 8 });
    await blocked.refresh();
    expect(blocked.admit("q1", 1, job, "index_parallel")).toBe(false);
    expect(blocked.describeBlocked()).toBe(
      "waiting for Druid's limit on index_parallel tasks: 2 of its 2 slot(s) taken (the worker select strategy's taskLimits); nothing of this run is in flight",
    );
  });

  it("learns a job's task type from Druid's task lists, so its next partitions need not name it", async () => {
    const clock = new ManualClock(0);
    const cluster = limitedCluster({ limits: { maxSlotCountByType: { kill: 1 } } });
    const tracker = new AdmissionTracker({ client: cluster.client, clock, maxConcurrency: 8, tickMs: 1000 });
    await tracker.refresh();
    const job = { id: "J", cap: 8 };
    expect(tracker.admit("p1", 1, job)).toBe(true); // type unknown: under every limit (kill: 0 of 1)
    expect(tracker.admit("p2", 1, job)).toBe(false); // unknown again: p1 might be a kill
    tracker.track("p1", 1, "druid-p1");
    cluster.tasks.set("druid-p1", { type: "index_parallel", state: "running" });
    cluster.byType.index_parallel = 1;
    cluster.listed.push("druid-p1");
    await clock.advance(1000);
    await tracker.refresh();
    expect(cluster.calls).toContain("tasks running"); // asked once: p1's type was not known
    expect([tracker.admit("p2", 1, job), tracker.admit("p3", 1, job)]).toEqual([true, true]);
  });

  it("takes one of ours for running only where /workers lists it: one that started after it was read counts as still to come", async () => {
    const clock = new ManualClock(0);
    const cluster = limitedCluster();
    const tracker = new AdmissionTracker({ client: cluster.client, clock, maxConcurrency: 8, tickMs: 1000 });
    await tracker.refresh();
    const job = { id: "J", cap: 8 };
    expect([
      tracker.admit("p1", 1, job, "index_parallel"),
      tracker.admit("p2", 1, job, "index_parallel"),
    ]).toEqual([true, true]);
    tracker.track("p1", 1, "druid-p1");
    tracker.track("p2", 1, "druid-p2");
    // p1 runs and /workers counts it; p2's submission reached Druid after /workers was read and it started before
    // the pending list was: in no list of queued tasks, and not in the snapshot's slots either.
    cluster.tasks.set("druid-p1", { type: "index_parallel", state: "running" });
    cluster.tasks.set("druid-p2", { type: "index_parallel", state: "running" });
    cluster.byType.index_parallel = 1;
    cluster.listed.push("druid-p1");
    await clock.advance(1000);
    await tracker.refresh();
    // Two of ours run: a third would wait PENDING at Druid.
    expect(tracker.admit("p3", 1, job, "index_parallel")).toBe(false);
    expect(tracker.lastDecision).toBe("task-limit index_parallel");
    // The next snapshot counts p2; p1 ends and leaves: room for one.
    cluster.listed.push("druid-p2");
    cluster.byType.index_parallel = 2;
    await clock.advance(1000);
    await tracker.refresh();
    expect(tracker.admit("p3", 1, job, "index_parallel")).toBe(false);
    tracker.untrack("p1");
    cluster.tasks.delete("druid-p1");
    cluster.listed.splice(cluster.listed.indexOf("druid-p1"), 1);
    cluster.byType.index_parallel = 1;
    await clock.advance(1000);
    await tracker.refresh();
    expect(tracker.admit("p3", 1, job, "index_parallel")).toBe(true);
  });

  it("reads the worker config at most once a minute, and not at all from a Druid without taskLimits", async () => {
    const clock = new ManualClock(0);
    const cluster = limitedCluster();
    const tracker = new AdmissionTracker({ client: cluster.client, clock, maxConcurrency: 8, tickMs: 1000 });
    for (let i = 0; i < 5; i++) {
      tracker.admit(`w${i}`, 100); // too big: keeps asking for snapshots
      await tracker.refresh();
      await clock.advance(1000);
    }
    expect(cluster.calls.filter((c) => c === "worker config")).toHaveLength(1);
    await clock.advance(WORKER_CONFIG_TTL_MS);
    tracker.admit("w", 100);
    await tracker.refresh();
    expect(cluster.calls.filter((c) => c === "worker config")).toHaveLength(2);

    const old = limitedCluster({ major: 32 });
    const before33 = new AdmissionTracker({ client: old.client, clock, maxConcurrency: 8 });
    await before33.refresh();
    expect(old.calls).not.toContain("worker config");
    expect([1, 2, 3].map((n) => before33.admit(`p${n}`, 1, undefined, "index_parallel"))).toEqual([
      true,
      true,
      true,
    ]);
  });
});
