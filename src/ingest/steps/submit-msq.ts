import { TaskAbort, TaskDefer } from "../../driver/signals.js";
import { type DruidError, isDruidError } from "../../druid/errors.js";
import type { JsonObject } from "../../ledger/types.js";
import { setStatementsToContext } from "../../spec/sql-set.js";
import { type Attempt, describeError, isFatal, type Step, type StepIO } from "./attempt.js";

/**
 * Submits an MSQ query (`POST /druid/v2/sql/task`, docs/druid-api.md §6) under the pinned id: the derived id
 * goes into `context.sqlQueryId`, so Druid names the controller task `query-<id>` (= `a.taskId`). The contract
 * is submitNative's:
 * - a duplicate reattaches. Druid has no duplicate answer of its own here: the Overlord's 400 "Task[…] already
 *   exists" comes back wrapped in a 500 (`MSQTaskQueryMaker` → `HttpResponseException` → `SqlTaskResource`),
 *   so the wrapped text is read, and any other 5xx after the request was sent is checked against the task's
 *   status before it is retried (the query may have been accepted and its answer lost);
 * - a planning error (400, `invalidInput`) or 501 aborts with Druid's words;
 * - a full task queue (429, or the Overlord's 429 wrapped in the 500) is backpressure, not a failure.
 */
export const submitMsq: Step = async (a: Attempt, io: StepIO): Promise<void> => {
  io.admission?.track(a.task.id, a.payload.slots, a.taskId);
  const spec = a.payload.spec as { query?: unknown; context?: unknown };
  if (typeof spec.query !== "string")
    throw new TaskAbort("the partition's SQL query is missing from its payload");
  let query = spec.query;
  let context = { ...((spec.context as JsonObject | undefined) ?? {}), sqlQueryId: sqlQueryIdOf(a.taskId) };
  if (!(await setStatementsTaken(io))) {
    // A Druid before 34 refuses SET statements (several statements): the same context goes in the request.
    // The template's SETs were checked at planning (none overrides what segops pins), so nothing is lost.
    const moved = setStatementsToContext(query, context);
    if (moved.moved.length > 0) {
      query = moved.query;
      context = { ...moved.context, sqlQueryId: sqlQueryIdOf(a.taskId) };
      a.note(
        "context",
        `Druid before 34 takes no SET statements: sent ${moved.moved.join(", ")} in the request context`,
      );
    }
  }
  let reattached = false;
  try {
    const result = await io.client.submitSqlTask(query, { ...a.call, context });
    if (result.taskId !== a.taskId) {
      throw new TaskAbort(`Druid accepted the query as ${result.taskId}, not the pinned ${a.taskId}`);
    }
  } catch (error) {
    if (!isDruidError(error)) throw error;
    const fatal: boolean = isFatal(error);
    if (isDuplicateOf(error, a.taskId)) reattached = true;
    else if (isQueueFull(error)) throw backpressure(a, io, error);
    else if (fatal || error.status === 501)
      throw new TaskAbort(`Druid rejected ${a.taskId}: ${describeError(error)}`);
    else if (error.code === "Transient" && (await knownToDruid(a, io))) reattached = true;
    else throw error;
  }
  a.note("submitted", `${a.taskId}${reattached ? " (reattached)" : ""}`);
  await a.save({
    step: "running",
    submittedAt: io.clock.now(),
    reattached,
    ...(reattached ? {} : { forgotten: 0 }),
  });
};

/** Whether the cluster reads SET statements (capabilities.ts, `sqlSetStatements`); a client without the read: yes. */
async function setStatementsTaken(io: StepIO): Promise<boolean> {
  const read = (io.client as Partial<Pick<typeof io.client, "capabilities">>).capabilities;
  if (!read) return true;
  return (await read.call(io.client)).sqlSetStatements !== false;
}

/** `query-<sqlQueryId>` → the sqlQueryId (MSQTasks.controllerTaskId). */
export function sqlQueryIdOf(controllerTaskId: string): string {
  return controllerTaskId.startsWith("query-") ? controllerTaskId.slice("query-".length) : controllerTaskId;
}

/** The Overlord's duplicate answer for our controller id, bare or wrapped ("… body: {…Task[id] already exists…}"). */
function isDuplicateOf(error: DruidError, taskId: string): boolean {
  if (error.code === "DuplicateTask") return true;
  const msg = error.druidMessage ?? "";
  return /already exists/.test(msg) && msg.includes(taskId);
}

function isQueueFull(error: DruidError): boolean {
  return error.code === "Capacity" || /Server error \[429\b/.test(error.druidMessage ?? "");
}

/** Whether Druid already has the controller (its status endpoint knows it). */
async function knownToDruid(a: Attempt, io: StepIO): Promise<boolean> {
  try {
    return (await io.batcher.get(a.taskId, a.call.signal)).state !== "UNKNOWN";
  } catch {
    return false;
  }
}

function backpressure(a: Attempt, io: StepIO, error: DruidError): TaskDefer {
  // As in submitNative: admission pauses, this partition waits its turn again (no retry used).
  const delay = error.retryAfterMs ?? io.settings.tickMs * 5;
  io.admission?.untrack(a.task.id);
  io.admission?.pause(io.clock.now() + delay);
  a.note("backpressure", `Druid's task queue is full (429); waiting ${Math.round(delay)} ms`);
  return new TaskDefer("Druid's task queue is full (429): submission deferred", delay);
}
