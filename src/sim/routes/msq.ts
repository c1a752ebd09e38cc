import { randomUUID } from "node:crypto";
import { isActive } from "../engine.js";
import { validateId } from "../ids.js";
import { controllerPayload, MsqPlanError, statementStatus } from "../msq.js";
import type { MsqCatalog } from "../msq-plan.js";
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

/** A submission turned away: the answer, and the id and reason the stats record with it. */
interface Refusal {
  readonly reply: Reply;
  readonly id: string | null;
  readonly reason?: string;
}

/** What a readable `POST /sql/task` body asks for. */
interface SqlTaskRequest {
  readonly query: string;
  readonly context: Record<string, unknown>;
  /** The context's `sqlQueryId`, else a fresh one (as Druid makes one). */
  readonly sqlQueryId: string;
}

/** `POST /druid/v2/sql/task`: read, plan, admit (as the Overlord would the controller), add. */
async function submit(ctx: RouteContext): Promise<Reply> {
  const { engine } = ctx;
  const refuse = (r: Refusal): Reply => {
    engine.stats.submission(
      { id: r.id, accepted: false, status: r.reply.status, ...(r.reason ? { reason: r.reason } : {}) },
      engine.now,
    );
    return r.reply;
  };
  const request = await readRequest(ctx);
  if ("reply" in request) return refuse(request);
  const planned = planRequest(await loadPlanner(), request, ctx.druidVersion, {
    segments: (ds) => engine.store.visible(ds, engine.now),
    now: engine.now,
  });
  if ("reply" in planned) return refuse(planned);
  const { plan, msq } = planned;
  const id = plan.id as string;
  const refusal = controllerRefusal(ctx, id, plan.dataSource, request.sqlQueryId);
  if (refusal) return refuse(refusal);
  const payload = controllerPayload(plan, msq);
  const task = engine.add(id, plan, payload);
  payload.context = taskContext(task);
  engine.stats.submission({ id, accepted: true, status: 202 }, engine.now);
  // `SqlTaskResource.buildTaskResponse`: 202 Accepted with a SqlTaskStatus.
  return json(202, { taskId: id, state: "RUNNING" });
}

/** The body's query, context and sqlQueryId, or why there is none (415, unparsable JSON, no query). */
async function readRequest(ctx: RouteContext): Promise<SqlTaskRequest | Refusal> {
  if (!isJson(ctx.req)) return { reply: empty(415), id: null };
  let body: unknown;
  try {
    body = JSON.parse(await ctx.body());
  } catch (error) {
    // Before the statement exists (`handleExceptionBeforeStatementCreated`); the exact body is not known (§10).
    const message = (error as Error).message;
    return {
      reply: json(
        400,
        errorResponse("invalidInput", "USER", "INVALID_INPUT", `Malformed SQL request: ${message}`),
      ),
      id: null,
      reason: message,
    };
  }
  const o = (body && typeof body === "object" && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const context = (
    o.context && typeof o.context === "object" && !Array.isArray(o.context) ? o.context : {}
  ) as Record<string, unknown>;
  const sqlQueryId =
    typeof context.sqlQueryId === "string" && context.sqlQueryId !== "" ? context.sqlQueryId : randomUUID();
  if (typeof o.query !== "string" || o.query.trim() === "") {
    return {
      reply: json(
        400,
        errorResponse("invalidInput", "USER", "INVALID_INPUT", "Field [query] must not be null or empty"),
      ),
      id: null,
      reason: "query is missing",
    };
  }
  return { query: o.query, context, sqlQueryId };
}

/** The controller's plan, or the SQL layer's refusal (SET statements the version refuses, a planning error). */
type Planner = typeof import("../msq-plan.js") &
  typeof import("../sql-parse.js") &
  typeof import("../sql-lex.js");

/** The SQL planner, loaded on the first submission: `segops sim` starts without the parser and evaluator. */
let planner: Promise<Planner> | null = null;
function loadPlanner(): Promise<Planner> {
  planner ??= Promise.all([
    import("../msq-plan.js"),
    import("../sql-parse.js"),
    import("../sql-lex.js"),
  ]).then(([plan, parse, lex]) => ({ ...plan, ...parse, ...lex }));
  return planner;
}

function planRequest(
  { planMsq, setStatementsRefused, checkMsqSyntax, SqlSyntaxError }: Planner,
  request: SqlTaskRequest,
  druidVersion: number,
  catalog: MsqCatalog,
): ReturnType<Planner["planMsq"]> | Refusal {
  const { sqlQueryId } = request;
  const multiple = setStatementsRefused(request.query, druidVersion);
  if (multiple) {
    const reply = taskFailure(
      sqlQueryId,
      errorResponse("invalidInput", "USER", "INVALID_INPUT", multiple, { sourceType: "sql" }),
    );
    return { reply, id: `query-${sqlQueryId}`, reason: multiple };
  }
  // Text Druid's parser refuses: its parse error (the Broker's parser, the same Calcite grammar), with the
  // statement's line and column.
  try {
    checkMsqSyntax(request.query);
  } catch (error) {
    if (!(error instanceof SqlSyntaxError)) throw error;
    const { message, context } = error.render(request.query);
    const reply = taskFailure(
      sqlQueryId,
      errorResponse("invalidInput", "USER", "INVALID_INPUT", message, { sourceType: "sql", ...context }),
    );
    return { reply, id: `query-${sqlQueryId}`, reason: message };
  }
  try {
    return planMsq(request.query, request.context, sqlQueryId, catalog);
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
    return { reply, id: `query-${sqlQueryId}`, reason: error.message };
  }
}

/** Why the controller task cannot be added: a bad datasource or id, a duplicate, a full task queue; else null. */
function controllerRefusal(
  ctx: RouteContext,
  id: string,
  dataSource: string,
  sqlQueryId: string,
): Refusal | null {
  const { engine } = ctx;
  // The SQL layer names the target `table` (`IngestHandler.validateTarget` → `IdUtils.validateId`).
  const dsProblem = validateId("table", dataSource) ?? validateId("Task ID", id);
  if (dsProblem) {
    const reply = taskFailure(
      sqlQueryId,
      errorResponse("invalidInput", "USER", "INVALID_INPUT", dsProblem, { sourceType: "sql" }),
    );
    return { reply, id, reason: dsProblem };
  }
  if (engine.tasks.has(id)) {
    const reply = overlordRefusal(sqlQueryId, duplicateTaskReply(id, ctx.druidVersion));
    return { reply, id, reason: `Task[${id}] already exists` };
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
    return { reply: overlordRefusal(sqlQueryId, queueFull), id, reason: "task queue full" };
  }
  return null;
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
