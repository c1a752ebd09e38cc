import { compactionSlots } from "./auto-compact.js";
import type { SimTask } from "./task.js";

/** The `query_worker` tasks an MSQ compaction launches: `maxNumTasks - 1`, none for a native one. */
export function msqCompactionWorkers(task: SimTask): number {
  return task.type === "compact" ? compactionSlots(task.payload) - 1 : 0;
}

/**
 * The `query_worker` tasks an MSQ compaction launches as it starts (`MSQCompactionRunner` runs the controller in
 * the compact task, under the compact task's id; `MSQWorkerTaskLauncher` submits `<controller>-worker<n>_0` to the
 * Overlord). Unlike the emulator's SQL workers (msq.ts), each is a queued task of its own holding one slot, so the
 * compaction holds `maxNumTasks` slots only once every worker got one, and its work waits until then. They end
 * with it.
 */
export function compactionWorkerTasks(controller: SimTask, now: number): SimTask[] {
  const n = msqCompactionWorkers(controller);
  const out: SimTask[] = [];
  for (let i = 0; i < n; i++) {
    const id = `${controller.id}-worker${i}_0`;
    out.push({
      id,
      groupId: controller.id,
      type: "query_worker",
      dataSource: controller.dataSource,
      payload: {
        type: "query_worker",
        id,
        groupId: controller.id,
        controllerTaskId: controller.id,
        workerNumber: i,
        retryCount: 0,
        dataSource: controller.dataSource,
        context: controller.plan.context,
      },
      plan: {
        ...controller.plan,
        id,
        type: "query_worker",
        groupId: controller.id,
        slots: 1,
        ingest: null,
        killInterval: null,
        compact: undefined,
        msq: undefined,
        controller: controller.id,
      },
      seq: controller.seq,
      createdAt: now,
      phase: "pending",
      runnerInsertedAt: now,
      startedAt: null,
      endsAt: null,
      finishedAt: null,
      errorMsg: null,
      location: { host: null, port: -1, tlsPort: -1 },
      version: null,
      result: null,
      plannedFailure: null,
      segmentIds: [],
      handedOff: false,
    });
  }
  return out;
}
