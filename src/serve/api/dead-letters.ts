import { dropDeadLetter, NotFoundError, retryDeadLetter, StateConflictError } from "../../jobs/actions.js";
import { KINDS } from "../../jobs/kinds.js";
import { partitionReport } from "../../jobs/report.js";
import type { ApiDeps } from "../deps.js";
import { eventView, jsonResponse } from "../http.js";
import { type Route, route } from "../routes.js";
import * as S from "../schemas.js";

/** Dead-lettered partitions: the list, one with its failures and events, retry and drop. */
export function deadLetterRoutes(deps: ApiDeps): Route[] {
  const { store } = deps;
  return [
    route(
      {
        method: "get",
        path: "/api/v1/dead-letters",
        operationId: "listDeadLetters",
        summary: "Dead-lettered partitions (of one job, or all)",
        tags: ["dead letters"],
        auth: true,
        query: S.DeadLettersQuery,
        responses: { 200: { description: "Dead letters", schema: S.DeadLetterPage } },
        problems: [400, 401, 503],
      },
      async ({ c, query }) => {
        const dead = await store.listDead(query.job);
        return jsonResponse(c, 200, { items: dead.map((t) => partitionReport(t)) });
      },
    ),
    route(
      {
        method: "get",
        path: "/api/v1/dead-letters/{taskId}",
        operationId: "getDeadLetter",
        summary: "One dead letter with its failures and events",
        tags: ["dead letters"],
        auth: true,
        params: S.TaskId,
        responses: { 200: { description: "The dead letter", schema: S.DeadLetter } },
        problems: [400, 401, 404, 409, 503],
      },
      async ({ c, params }) => {
        const id = params.taskId;
        const task = await store.getTask(id);
        if (!task) throw new NotFoundError(`no partition ${id}`);
        if (task.state !== "dead") throw new StateConflictError(`${id} is ${task.state}, not dead-lettered`);
        const kind = KINDS.find((k) => k.name === task.kind);
        return jsonResponse(c, 200, {
          ...partitionReport(task),
          failures: kind?.describe(task).failures ?? [],
          events: (await store.listEvents({ taskId: id })).map(eventView),
        });
      },
    ),
    ...(["retry", "drop"] as const).map((action) =>
      route(
        {
          method: "post",
          path: `/api/v1/dead-letters/{taskId}/${action}`,
          operationId: action === "retry" ? "retryDeadLetter" : "dropDeadLetter",
          summary:
            action === "retry"
              ? "Send a dead letter back to run (retry budget reset)"
              : "Drop a dead letter: failed for good, kept for the audit trail",
          tags: ["dead letters"],
          auth: true,
          params: S.TaskId,
          responses: { 200: { description: "The partition after the action", schema: S.Partition } },
          problems: [400, 401, 404, 409, 503],
        },
        async ({ c, params }) => {
          const row =
            action === "retry"
              ? await retryDeadLetter(store, params.taskId, "api")
              : await dropDeadLetter(store, params.taskId, "api");
          if (action === "retry") await deps.worker?.refresh();
          deps.feed.poke();
          return jsonResponse(c, 200, partitionReport(row));
        },
      ),
    ),
  ];
}
