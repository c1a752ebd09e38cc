import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { TaskPayloadResponse, TaskStatusPlus, WorkerInfo } from "../../src/druid/types.js";
import { decideAdmission, msqSlotsHeld, msqSlotsOf } from "../../src/work/admission.js";
import { AdmissionTracker } from "../../src/work/admission-tracker.js";

/**
 * Admission budgets slots, not tasks: an MSQ controller (an MSQ compaction, `MSQCompactionRunner`, or a SQL
 * query) takes `maxNumTasks` slots, but Druid's `/workers` counts a worker only once it runs. What is still to be
 * launched is counted as taken, for other users' controllers and for segops' own.
 */

describe("slots of MSQ controllers, pure", () => {
  it("reads maxNumTasks from an MSQ compaction's context and a SQL controller's, 2 by default", () => {
    expect(
      msqSlotsOf({ type: "compact", compactionRunner: { type: "msq" }, context: { maxNumTasks: 4 } }),
    ).toBe(4);
    expect(msqSlotsOf({ type: "compact", compactionRunner: { type: "msq" } })).toBe(2);
    // A native compaction is no MSQ controller.
    expect(msqSlotsOf({ type: "compact", context: { maxNumTasks: 4 } })).toBeNull();
    expect(msqSlotsOf({ type: "query_controller", sqlQueryContext: { maxNumTasks: 5 } })).toBe(5);
    expect(msqSlotsOf({ type: "query_controller", spec: { tuningConfig: { maxNumWorkers: 2 } } })).toBe(3);
    expect(msqSlotsOf({ type: "query_controller" })).toBe(2);
    expect(msqSlotsOf({ type: "index_parallel", context: { maxNumTasks: 9 } })).toBeNull();
  });

  it("counts a controller's own slot and its running workers, by id or group", () => {
    const running = [
      { id: "auto_compact_wiki_x", type: "compact" },
      { id: "auto_compact_wiki_x-worker0_0", type: "query_worker", groupId: "auto_compact_wiki_x" },
      { id: "w1", type: "query_worker", groupId: "auto_compact_wiki_x" },
      { id: "query-other-worker0_0", type: "query_worker", groupId: "query-other" },
    ];
    expect(msqSlotsHeld("auto_compact_wiki_x", running)).toBe(3);
    expect(msqSlotsHeld("query-other", running)).toBe(1);
  });

  it("takes what others' controllers are still to launch as used", () => {
    // Four slots; another user's MSQ compaction (maxNumTasks 3) runs its controller, its two workers not yet.
    const base = { workers: { capacity: 4, used: 1 }, maxConcurrency: 10 };
    expect(decideAdmission({ ...base, inFlight: [], candidateSlots: 1 })).toEqual({ admit: true });
    const counted = { capacity: 4, used: 1, launching: 2 };
    expect(decideAdmission({ ...base, workers: counted, inFlight: [], candidateSlots: 1 })).toEqual({
      admit: true,
    });
    // Without the launching slots a second task would be admitted into a slot the compaction's worker needs.
    const one = [{ slots: 1, runnerState: "RUNNING" as const }];
    expect(
      decideAdmission({ ...base, workers: { capacity: 4, used: 2 }, inFlight: one, candidateSlots: 1 }),
    ).toEqual({ admit: true });
    expect(
      decideAdmission({ ...base, workers: { ...counted, used: 2 }, inFlight: one, candidateSlots: 1 }),
    ).toEqual({ admit: false, reason: "capacity" });
  });

  it("does not take our own controller's missing workers for free slots of others", () => {
    // Six slots: others use 2, our SQL controller (3 slots) runs with only its own slot counted by Druid yet.
    const ours = [{ slots: 3, runnerState: "RUNNING" as const, type: "query_controller", visibleSlots: 1 }];
    const workers = { capacity: 6, used: 3 };
    expect(decideAdmission({ workers, inFlight: ours, candidateSlots: 1, maxConcurrency: 10 })).toEqual({
      admit: true,
    });
    expect(decideAdmission({ workers, inFlight: ours, candidateSlots: 2, maxConcurrency: 10 })).toEqual({
      admit: false,
      reason: "capacity",
    });
    // Taken as fully counted (the old reading), the others' two slots vanished and two more would fit.
    const naive = ours.map(({ visibleSlots: _, ...t }) => t);
    expect(decideAdmission({ workers, inFlight: naive, candidateSlots: 2, maxConcurrency: 10 })).toEqual({
      admit: true,
    });
  });
});

function worker(
  capacity: number,
  used: number,
  byType?: Record<string, number>,
  runningTasks: string[] = [],
): WorkerInfo {
  return {
    worker: { scheme: "http", host: "mm:8091", ip: "127.0.0.1", capacity, version: "0", category: "c" },
    currCapacityUsed: used,
    ...(byType ? { currCapacityUsedByTaskType: byType } : {}),
    availabilityGroups: [],
    runningTasks,
    lastCompletedTaskTime: "2026-01-01T00:00:00.000Z",
  } as WorkerInfo;
}

describe("the admission tracker and a running MSQ compaction", () => {
  const COMPACT = "auto_compact_wiki_2026-01-01T00:00:00.000Z_x";
  function cluster() {
    const state = {
      workers: [worker(4, 1, { compact: 1 }, [COMPACT])],
      running: [{ id: COMPACT, type: "compact", groupId: COMPACT }] as Array<Partial<TaskStatusPlus>>,
    };
    const calls: string[] = [];
    const client = {
      async workers() {
        calls.push("workers");
        return state.workers;
      },
      async tasks(filter: { state?: string } = {}) {
        calls.push(`tasks ${filter.state}`);
        return (filter.state === "running" ? state.running : []) as TaskStatusPlus[];
      },
      async totalWorkerCapacity() {
        return { currentClusterCapacity: 4, maximumCapacityWithAutoScale: -1, usedClusterCapacity: 1 };
      },
      async taskPayload(id: string): Promise<TaskPayloadResponse> {
        calls.push(`payload ${id}`);
        return {
          task: id,
          payload: { type: "compact", id, compactionRunner: { type: "msq" }, context: { maxNumTasks: 3 } },
        };
      },
    };
    return { state, calls, client };
  }

  it("leaves the slots the compaction's workers are about to take, and reads its payload once", async () => {
    const clock = new ManualClock(0);
    const { state, calls, client } = cluster();
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 10, tickMs: 1000 });
    await tracker.refresh();
    // 4 slots: the controller holds 1, its 2 workers are still to come: one slot is free.
    expect(tracker.admit("a", 1)).toBe(true);
    expect(tracker.admit("b", 1)).toBe(false);
    expect(tracker.lastDecision).toBe("capacity");
    // Its workers run: Druid counts them now, and nothing changes for segops.
    state.workers = [
      worker(4, 3, { compact: 1, query_worker: 2 }, [
        COMPACT,
        `${COMPACT}-worker0_0`,
        `${COMPACT}-worker1_0`,
      ]),
    ];
    state.running.push(
      { id: `${COMPACT}-worker0_0`, type: "query_worker", groupId: COMPACT },
      { id: `${COMPACT}-worker1_0`, type: "query_worker", groupId: COMPACT },
    );
    await clock.advance(1000);
    await tracker.refresh();
    expect(tracker.admit("b", 1)).toBe(false);
    expect(calls.filter((c) => c.startsWith("payload"))).toEqual([`payload ${COMPACT}`]);
  });

  it("counts the workers as held only where /workers lists them: the running list, read after it, may have more", async () => {
    const clock = new ManualClock(0);
    const { state, client } = cluster();
    // The workers started between the two reads: the running list has them, the /workers snapshot not yet.
    state.running.push(
      { id: `${COMPACT}-worker0_0`, type: "query_worker", groupId: COMPACT },
      { id: `${COMPACT}-worker1_0`, type: "query_worker", groupId: COMPACT },
    );
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 10, tickMs: 1000 });
    await tracker.refresh();
    // The snapshot's 1 used slot plus the 2 its workers take: one slot is free, not three.
    expect(["a", "b", "c"].map((id) => tracker.admit(id, 1))).toEqual([true, false, false]);
  });

  it("counts our own controller's workers as Druid counts them only where /workers lists them", async () => {
    const clock = new ManualClock(0);
    const OURS = "query-ours";
    // Six slots; another tool's two tasks hold two.
    const state = {
      workers: [worker(6, 2, { index_parallel: 2 }, ["o1", "o2"])],
      running: [
        { id: "o1", type: "index_parallel" },
        { id: "o2", type: "index_parallel" },
      ] as Array<Partial<TaskStatusPlus>>,
    };
    const client = {
      workers: async () => state.workers,
      tasks: async (filter: { state?: string } = {}) =>
        (filter.state === "running" ? state.running : []) as TaskStatusPlus[],
      totalWorkerCapacity: async () => ({
        currentClusterCapacity: 6,
        maximumCapacityWithAutoScale: -1,
        usedClusterCapacity: 2,
      }),
    };
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 10, tickMs: 1000 });
    await tracker.refresh();
    expect(tracker.admit("q", 3, undefined, "query_controller")).toBe(true);
    tracker.track("q", 3, OURS);
    // Our controller runs and /workers counts it; its two workers started after /workers was read.
    state.workers = [worker(6, 3, { index_parallel: 2, query_controller: 1 }, ["o1", "o2", OURS])];
    state.running.push(
      { id: OURS, type: "query_controller", groupId: OURS },
      { id: `${OURS}-worker0_0`, type: "query_worker", groupId: OURS },
      { id: `${OURS}-worker1_0`, type: "query_worker", groupId: OURS },
    );
    await clock.advance(1000);
    await tracker.refresh();
    // Others hold 2 and ours 3 of 6: one slot is free. Taking the workers for counted in the snapshot's 3 used
    // slots would leave the others' two unseen and admit three.
    expect(["a", "b", "c"].map((id) => tracker.admit(id, 1))).toEqual([true, false, false]);
  });

  it("reads no running list while /workers shows no compaction or controller", async () => {
    const clock = new ManualClock(0);
    const { state, calls, client } = cluster();
    state.workers = [worker(4, 1, { index_parallel: 1 })];
    const tracker = new AdmissionTracker({ client, clock, maxConcurrency: 10 });
    await tracker.refresh();
    expect(calls).not.toContain("tasks running");
    expect(["a", "b", "c"].map((id) => tracker.admit(id, 1))).toEqual([true, true, true]);
  });
});
