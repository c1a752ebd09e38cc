import { randomUUID } from "node:crypto";
import { isActive } from "../engine.js";
import { validateId } from "../ids.js";
import { controllerPayload, MsqPlanError, planMsq, setStatementsRefused, statementStatus } from "../msq.js";
import { type DruidErrorResponse, empty, isJson, json, type Reply } from "../reply.js";
import type { Route, RouteContext } from "../router.js";
import { taskContext } from "../views.js";
import { duplicateTaskReply } from "./overlord.js";

/**
 * The MSQ extension's endpoints (docs/druid-api.md §6): `POST /druid/v2/sql/task` (`SqlTaskResource`),
 * `GET /druid/v2/sql/task/enabled`, and the statements API `GET|DELETE /druid/v2/sql/statements/{queryId}`
 * (`SqlStatementResource`). Status, reports and shutdown of the controller are the Overlord's ordinary
 * `/druid/indexer/v1/task/{id}/…` endpoints.
 */

const CATEGORY_STATUS: Record<string, number> = {
  INVALID_INPUT: 400,
  NOT_FOUND: 404,
  UNCATEGORIZED: 500,
  UNSUPPORTED: 501,
};

function errorResponse(
  errorCode: string,
  persona: DruidErrorResponse["persona"],
  category: string,
  errorMessage: string,
  context: Record<string, string> = {},
): DruidErrorResponse {
  return { error: "druidException", errorCode, persona, category, errorMessage, context };
}

/** `SqlTaskResource.buildNonOkResponse`: a `SqlTaskStatus` (taskId = the sqlQueryId, FAILED) with the error. */
function taskFailure(sqlQueryId: string | null, error: DruidErrorResponse): Reply {
  return json(CATEGORY_STATUS[error.category] ?? 500, { taskId: sqlQueryId, state: "FAILED", error });
}

/**
 * An Overlord refusal of the controller task, as `MSQTaskQueryMaker.runQuery` passes it on: `runTask` fails with
 * an `HttpResponseException` ("Server error [<status>]; body: <body>"), which `SqlTaskResource` wraps into a
 * DEVELOPER/UNCATEGORIZED `DruidException` carrying the exception's text: a 500 whatever the Overlord said.
 */
function overlordRefusal(sqlQueryId: string, overlord: Reply): Reply {
  const reason =
    overlord.status === 400
      ? "400 Bad Request"
      : overlord.status === 429
        ? "429 Too Many Requests"
        : String(overlord.status);
  return taskFailure(
    sqlQueryId,
    errorResponse(
      "general",
      "DEVELOPER",
      "UNCATEGORIZED",
      `org.apache.druid.rpc.HttpResponseException: Server error [${reason}]; body: ${overlord.body ?? ""}`,
    ),
  );
}

async function submit(ctx: RouteContext): Promise<Reply> {
  const { engine } = ctx;
  const record = (id: string | null, accepted: boolean, status: number, reason?: string) =>
    engine.stats.submission({ id, accepted, status, ...(reason ? { reason } : {}) }, engine.now);
  if (!isJson(ctx.req)) {
    record(null, false, 415);
    return empty(415);
  }
  let body: unknown;
  try {
    body = JSON.parse(await ctx.body());
  } catch (error) {
    // Before the statement exists (`handleExceptionBeforeStatementCreated`); the exact body is not known (§10).
    record(null, false, 400, (error as Error).message);
    return json(
      400,
      errorResponse(
        "invalidInput",
        "USER",
        "INVALID_INPUT",
        `Malformed SQL request: ${(error as Error).message}`,
      ),
    );
  }
  const o = (body && typeof body === "object" && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const context = (
    o.context && typeof o.context === "object" && !Array.isArray(o.context) ? o.context : {}
  ) as Record<string, unknown>;
  const sqlQueryId =
    typeof context.sqlQueryId === "string" && context.sqlQueryId !== "" ? context.sqlQueryId : randomUUID();
  if (typeof o.query !== "string" || o.query.trim() === "") {
    record(null, false, 400, "query is missing");
    return json(
      400,
      errorResponse("invalidInput", "USER", "INVALID_INPUT", "Field [query] must not be null or empty"),
    );
  }
  const multiple = setStatementsRefused(o.query, ctx.druidVersion);
  if (multiple) {
    const reply = taskFailure(
      sqlQueryId,
      errorResponse("invalidInput", "USER", "INVALID_INPUT", multiple, { sourceType: "sql" }),
    );
    record(`query-${sqlQueryId}`, false, reply.status, multiple);
    return reply;
  }
  let planned: ReturnType<typeof planMsq>;
  try {
    planned = planMsq(o.query, context, sqlQueryId);
  } catch (error) {
    if (!(error instanceof MsqPlanError)) throw error;
    const unsupported = error.errorCode === "unsupported";
    const reply = taskFailure(
      sqlQueryId,
      errorResponse(
        unsupported ? "general" : "invalidInput",
        "USER",
        unsupported ? "UNSUPPORTED" : "INVALID_INPUT",
        unsupported ? `Emulator: ${error.message}` : error.message,
        { sourceType: "sql" },
      ),
    );
    record(`query-${sqlQueryId}`, false, reply.status, error.message);
    return reply;
  }
  const { plan, msq } = planned;
  const id = plan.id as string;
  const dsProblem = validateId("dataSource", plan.dataSource) ?? validateId("Task ID", id);
  if (dsProblem) {
    const reply = taskFailure(
      sqlQueryId,
      errorResponse("invalidInput", "USER", "INVALID_INPUT", dsProblem, { sourceType: "sql" }),
    );
    record(id, false, reply.status, dsProblem);
    return reply;
  }
  if (engine.tasks.has(id)) {
    const reply = overlordRefusal(sqlQueryId, duplicateTaskReply(id, ctx.druidVersion));
    record(id, false, reply.status, `Task[${id}] already exists`);
    return reply;
  }
  const active = [...engine.tasks.values()].filter(isActive).length;
  if (active >= engine.options.maxQueueSize) {
    const queueFull = json(
      429,
      errorResponse(
        "general",
        "ADMIN",
        "CAPACITY_EXCEEDED",
        `Task queue already contains [${active}] tasks. Retry later or increase 'druid.indexer.queue.maxSize'[${engine.options.maxQueueSize}].`,
      ),
    );
    const reply = overlordRefusal(sqlQueryId, queueFull);
    record(id, false, reply.status, "task queue full");
    return reply;
  }
  const payload = controllerPayload(plan, msq);
  const task = engine.add(id, plan, payload);
  payload.context = taskContext(task);
  record(id, true, 202);
  // `SqlTaskResource.buildTaskResponse`: 202 Accepted with a SqlTaskStatus.
  return json(202, { taskId: id, state: "RUNNING" });
}

function statement(ctx: RouteContext): Reply {
  const id = ctx.params.queryId ?? "";
  const task = ctx.engine.tasks.get(id);
  if (task?.type !== "query_controller") {
    return json(
      404,
      errorResponse(
        "notFound",
        "USER",
        "NOT_FOUND",
        `Query [${id}] was not found. The query details are no longer present or might not be of the type [query_controller]. Verify that the id is correct.`,
      ),
    );
  }
  return json(200, statementStatus(task, ctx.engine.now, ctx.query.get("detail") === "true"));
}

/** `DELETE /statements/{id}`: cancels a running controller (202), as a shutdown of the task does. */
function cancel(ctx: RouteContext): Reply {
  const id = ctx.params.queryId ?? "";
  const task = ctx.engine.tasks.get(id);
  if (task?.type !== "query_controller") return statement(ctx);
  if (!isActive(task)) return json(200, statementStatus(task, ctx.engine.now, false));
  ctx.engine.shutdown(id);
  return empty(202);
}

export function msqRoutes(): Route[] {
  return [
    { method: "POST", path: "/druid/v2/sql/task", handler: submit },
    { method: "GET", path: "/druid/v2/sql/task/enabled", handler: () => json(200, { enabled: true }) },
    { method: "GET", path: "/druid/v2/sql/statements/:queryId", handler: statement },
    { method: "DELETE", path: "/druid/v2/sql/statements/:queryId", handler: cancel },
  ];
}
