import type { RowCounters } from "./ingest.js";
import { instantText } from "./instant-text.js";
import { msqReport } from "./msq.js";
import type { SimTask, TaskLocation } from "./task.js";

/** Wire shapes of tasks: `TaskStatusPlus`, `TaskStatus`, reports (docs/druid-api.md §2.3–§2.7). */

const EPOCH = "1970-01-01T00:00:00.000Z";

export function statusCode(task: SimTask): "RUNNING" | "SUCCESS" | "FAILED" {
  return task.phase === "success" ? "SUCCESS" : task.phase === "failed" ? "FAILED" : "RUNNING";
}

function duration(task: SimTask): number {
  if (task.phase !== "success" && task.phase !== "failed") return -1;
  // `TaskQueue#shutdown` and a failed `isReady` record a failure without a duration; a real Druid 33 kept -1
  // for good (§2.8, §3.9).
  if (task.shutDown || task.notReady) return -1;
  return task.startedAt === null ? 0 : (task.finishedAt as number) - task.startedAt;
}

function location(task: SimTask): TaskLocation {
  return task.phase === "waiting" || task.phase === "pending"
    ? { host: null, port: -1, tlsPort: -1 }
    : task.location;
}

/**
 * `TaskStatusPlus`. `view: "status"` is `GET /task/{id}/status` (queueInsertionTime always epoch; complete
 * tasks the runner forgot report runnerStatusCode WAITING); `view: "list"` is `/tasks` (complete → NONE,
 * active tasks known to the runner carry its insertion time).
 */
export function statusPlus(task: SimTask, view: "status" | "list"): Record<string, unknown> {
  const complete = task.phase === "success" || task.phase === "failed";
  const runnerStatusCode = complete ? (view === "list" ? "NONE" : "WAITING") : task.phase.toUpperCase();
  const known = task.phase === "pending" || task.phase === "running";
  const code = statusCode(task);
  return {
    id: task.id,
    groupId: task.groupId,
    type: task.type,
    createdTime: instantText(task.createdAt),
    queueInsertionTime: view === "list" && known ? instantText(task.runnerInsertedAt as number) : EPOCH,
    statusCode: code,
    status: code,
    runnerStatusCode,
    duration: duration(task),
    location: location(task),
    dataSource: task.dataSource,
    errorMsg: task.errorMsg,
  };
}

/** `TaskStatus` as in `POST /taskStatus` (docs/druid-api.md §2.4). */
export function taskStatus(task: SimTask): Record<string, unknown> {
  return {
    id: task.id,
    status: statusCode(task),
    duration: duration(task),
    errorMsg: task.errorMsg,
    location: location(task),
  };
}

/**
 * `RowIngestionMetersTotals`. `thrownAwayByReason` is in current Druid (docs/druid-api.md §2.7) but absent from a real
 * Druid 33 report; the emulator adds it from 34 on (the exact release is unverified).
 */
function totals(c: RowCounters, druidVersion: number, fraction = 1): Record<string, unknown> {
  const f = (n: number) => Math.floor(n * fraction);
  return {
    processed: f(c.processed),
    processedBytes: f(c.processedBytes),
    processedWithError: f(c.processedWithError),
    thrownAway: f(c.thrownAway),
    ...(druidVersion >= 34
      ? { thrownAwayByReason: f(c.thrownAway) > 0 ? { FILTERED: f(c.thrownAway) } : {} }
      : {}),
    unparseable: f(c.unparseable),
  };
}

const ZERO: RowCounters = {
  processed: 0,
  processedBytes: 0,
  processedWithError: 0,
  thrownAway: 0,
  unparseable: 0,
};

/**
 * `GET /task/{id}/reports` (docs/druid-api.md §2.7): null until the task has started (→ 404). Sequential mode reports
 * `determinePartitions` + `buildSegments`; parallel mode `totals.buildSegments`. Live reports scale the counters
 * by progress and add `movingAverages`.
 */
export function taskReport(task: SimTask, now: number, druidVersion: number): Record<string, unknown> | null {
  if (task.plan.msq) return msqReport(task, now);
  if (!task.plan.ingest || task.startedAt === null || !task.result) return null;
  const running = task.phase === "running";
  const fraction =
    running && task.endsAt !== null && task.endsAt > task.startedAt
      ? (now - task.startedAt) / (task.endsAt - task.startedAt)
      : 1;
  const counters = task.result.counters;
  const parallel = task.plan.ingest.parallel;
  const build = totals(counters, druidVersion, Math.min(1, Math.max(0, fraction)));
  const rowStats: Record<string, unknown> = parallel
    ? { totals: { buildSegments: build } }
    : { determinePartitions: totals(ZERO, druidVersion), buildSegments: build };
  if (running) rowStats.movingAverages = { buildSegments: {} };
  const events = task.result.unparseableEvents;
  const ingestionState = running
    ? "BUILD_SEGMENTS"
    : task.phase === "success"
      ? "COMPLETED"
      : "BUILD_SEGMENTS";
  return {
    ingestionStatsAndErrors: {
      type: "ingestionStatsAndErrors",
      taskId: task.id,
      payload: {
        ingestionState,
        unparseableEvents: parallel
          ? { buildSegments: events }
          : { determinePartitions: [], buildSegments: events },
        rowStats,
        errorMsg: task.errorMsg,
        segmentAvailabilityConfirmed: false,
        segmentAvailabilityWaitTimeMs: 0,
        // A real Druid 33 parallel supervisor reports `{}` once complete.
        recordsProcessed: parallel && !running ? {} : null,
        ...(task.phase === "success" ? { segmentsPublished: task.segmentIds.length } : {}),
      },
    },
    taskContext: { type: "taskContext", taskId: task.id, payload: taskContext(task) },
  };
}

/** The context Druid stores with the task: defaults the Overlord adds, then the user's own keys. */
export function taskContext(task: SimTask): Record<string, unknown> {
  return { forceTimeChunkLock: true, useLineageBasedSegmentAllocation: true, ...task.plan.context };
}
