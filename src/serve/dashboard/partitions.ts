import type { z } from "zod";
import { cancelWork, retryWork } from "../../jobs/actions.js";
import { KINDS } from "../../jobs/kinds.js";
import { partitionReport } from "../../jobs/report.js";
import * as D from "../dashboard-schemas.js";
import type { ApiDeps } from "../deps.js";
import { eventView, jsonResponse, mustGetJob } from "../http.js";
import { ProblemError } from "../problems.js";
import { type Route, route } from "../routes.js";
import * as S from "../schemas.js";
import { actionsOf, cellOf, dashboardJobOf, mustGetTask, stepsOf } from "./views.js";

/** A job's partitions as the grid draws them, one partition in full, and retry or cancel of one. */
export function partitionRoutes(deps: ApiDeps): Route[] {
  const { store } = deps;
  const kinds = deps.kinds ?? KINDS;
  return [
    route(
      {
        method: "get",
        path: "/api/v1/jobs/{id}/grid",
        operationId: "getJobGrid",
        summary:
          "A job's partitions as the dashboard's grid draws them (interval, state, attempts, Druid ids, rows)",
        tags: ["dashboard"],
        auth: true,
        params: S.JobId,
        responses: { 200: { description: "The grid", schema: D.PartitionGrid } },
        problems: [400, 401, 404, 503],
      },
      async ({ c, params }) => {
        const job = await mustGetJob(store, params.id);
        const tasks = await store.listTasks(job.id);
        const items = tasks
          .map((t) => cellOf(t, kinds))
          .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
        return jsonResponse(c, 200, {
          job: await dashboardJobOf(store, job),
          granularity: (job.options.granularity ?? null) as z.infer<typeof D.PartitionGrid>["granularity"],
          items,
        });
      },
    ),
    route(
      {
        method: "get",
        path: "/api/v1/partitions/{taskId}",
        operationId: "getPartition",
        summary:
          "One partition in full: its steps with times, failures with Druid's errors, events, and the actions open to it",
        tags: ["dashboard"],
        auth: true,
        params: S.TaskId,
        responses: { 200: { description: "The partition", schema: D.PartitionDetail } },
        problems: [400, 401, 404, 503],
      },
      async ({ c, params }) => {
        const task = await mustGetTask(store, params.taskId);
        const events = await store.listEvents({ taskId: task.id, limit: 1000 });
        const report = partitionReport(task, kinds);
        const kind = kinds.find((k) => k.name === task.kind);
        return jsonResponse(c, 200, {
          ...cellOf(task, kinds),
          jobId: task.jobId,
          version: report.version,
          segments: report.segments,
          bytes: report.bytes,
          parseErrors: report.parseErrors,
          steps: stepsOf(task, events),
          failures: kind?.describe(task).failures ?? [],
          events: events.map(eventView),
          actions: actionsOf(task),
        });
      },
    ),
    ...(["retry", "cancel"] as const).map((action) =>
      route(
        {
          method: "post",
          path: `/api/v1/partitions/{taskId}/${action}`,
          operationId: action === "retry" ? "retryPartition" : "cancelPartition",
          summary:
            action === "retry"
              ? "Send one failed or dead-lettered partition back to run"
              : "Cancel one unfinished partition (a driver finishes it at its next step)",
          tags: ["actions"],
          auth: true,
          params: S.TaskId,
          responses: { 200: { description: "What changed", schema: D.PartitionActionResult } },
          problems: [400, 401, 404, 409, 503],
        },
        async ({ c, params }) => {
          const task = await mustGetTask(store, params.taskId);
          let changed: string[];
          if (action === "retry") {
            changed = (await retryWork(store, task.id, "api")).sent;
            await deps.worker?.refresh();
          } else {
            const result = await cancelWork(store, task.id, { actor: "api", kinds });
            if (result.flagged === 0)
              throw new ProblemError("conflict", `${task.id} is ${task.state}: nothing to cancel`);
            changed = [task.id];
          }
          deps.feed.poke();
          return jsonResponse(c, 200, { jobId: task.jobId, changed });
        },
      ),
    ),
  ];
}
