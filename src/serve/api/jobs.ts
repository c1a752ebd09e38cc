import { cancelWork, retryWork } from "../../jobs/actions.js";
import { KINDS } from "../../jobs/kinds.js";
import type { JobRow } from "../../ledger/types.js";
import type { ApiDeps } from "../deps.js";
import { eventView, jsonResponse, mustGetJob } from "../http.js";
import { jobSummary, jobView, partitionPage } from "../job-view.js";
import { ProblemError } from "../problems.js";
import { type Route, route } from "../routes.js";
import * as S from "../schemas.js";

/** Jobs: the list, one job, its partitions and events, the long-poll, cancel and retry. */
export function jobRoutes(deps: ApiDeps): Route[] {
  return [...jobReadRoutes(deps), ...jobContentRoutes(deps), ...jobActionRoutes(deps)];
}

/** The job list and one job. */
function jobReadRoutes(deps: ApiDeps): Route[] {
  const { store } = deps;
  return [
    route(
      {
        method: "get",
        path: "/api/v1/jobs",
        operationId: "listJobs",
        summary: "Jobs, newest first, with filters and a cursor",
        tags: ["jobs"],
        auth: true,
        query: S.ListJobsQuery,
        responses: { 200: { description: "A page of jobs", schema: S.JobPage } },
        problems: [400, 401, 503],
      },
      async ({ c, query }) => {
        const limit = query.limit ?? 50;
        const rows = await store.listJobs({
          limit: limit + 1,
          ...(query.state ? { state: query.state } : {}),
          ...(query.kind ? { kind: query.kind } : {}),
          ...(query.cursor ? { after: decodeCursor(query.cursor) } : {}),
        });
        const page = rows.slice(0, limit);
        const items = await Promise.all(page.map(async (j) => jobSummary(j, await store.countTasks(j.id))));
        const last = page.at(-1);
        return jsonResponse(c, 200, {
          items,
          nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
        });
      },
    ),
    route(
      {
        method: "get",
        path: "/api/v1/jobs/{id}",
        operationId: "getJob",
        summary:
          "A job with its partitions (state, attempts, Druid task ids, row counters, versions, errors)",
        tags: ["jobs"],
        auth: true,
        params: S.JobId,
        responses: { 200: { description: "The job", schema: S.Job } },
        problems: [400, 401, 404, 503],
      },
      async ({ c, params }) => jsonResponse(c, 200, await jobView(store, await mustGetJob(store, params.id))),
    ),
  ];
}

/** What a job is made of, read a page at a time, and the long-poll until it ends. */
function jobContentRoutes(deps: ApiDeps): Route[] {
  const { store } = deps;
  return [
    route(
      {
        method: "get",
        path: "/api/v1/jobs/{id}/partitions",
        operationId: "listJobPartitions",
        summary: "A job's partitions a page at a time, in task-id (time) order",
        tags: ["jobs"],
        auth: true,
        params: S.JobId,
        query: S.PartitionsQuery,
        responses: { 200: { description: "A page of partitions", schema: S.PartitionPage } },
        problems: [400, 401, 404, 503],
      },
      async ({ c, params, query }) =>
        jsonResponse(c, 200, await partitionPage(store, await mustGetJob(store, params.id), query)),
    ),
    route(
      {
        method: "get",
        path: "/api/v1/jobs/{id}/events",
        operationId: "listJobEvents",
        summary: "A job's events (its audit trail), oldest first",
        tags: ["jobs"],
        auth: true,
        params: S.JobId,
        query: S.EventsQuery,
        responses: { 200: { description: "A page of events", schema: S.EventPage } },
        problems: [400, 401, 404, 503],
      },
      async ({ c, params, query }) => {
        const job = await mustGetJob(store, params.id);
        const after = query.after ?? 0;
        const events = await store.listEvents({ jobId: job.id, afterId: after, limit: query.limit ?? 500 });
        return jsonResponse(c, 200, { items: events.map(eventView), next: events.at(-1)?.id ?? after });
      },
    ),
    route(
      {
        method: "get",
        path: "/api/v1/jobs/{id}/wait",
        operationId: "waitForJob",
        summary: "Long-poll: answers as soon as the job ends, or when the timeout passes",
        tags: ["jobs"],
        auth: true,
        params: S.JobId,
        query: S.WaitQuery,
        responses: {
          200: { description: "Ended, or the timeout passed (ended: false)", schema: S.WaitResult },
        },
        problems: [400, 401, 404, 503],
      },
      async ({ c, params, query }) => {
        // The waiters know the service's drain signal themselves; this request's is the client leaving.
        const progress = await deps.waiters.wait(params.id, (query.timeout ?? 30) * 1000, c.req.raw.signal);
        if (!progress) throw new ProblemError("not-found", `no job ${params.id}`);
        return jsonResponse(c, 200, {
          ended: progress.ended,
          job: jobSummary(progress.job, progress.counts),
        });
      },
    ),
  ];
}

/** A job's actions: cancel its unfinished partitions, retry its failed ones. */
function jobActionRoutes(deps: ApiDeps): Route[] {
  const { store } = deps;
  return [
    route(
      {
        method: "post",
        path: "/api/v1/jobs/{id}/cancel",
        operationId: "cancelJob",
        summary: "Cancel a job's unfinished partitions (optionally shutting down their Druid tasks)",
        tags: ["actions"],
        auth: true,
        params: S.JobId,
        body: S.CancelBody,
        bodyOptional: true,
        responses: {
          200: { description: "Flagged; a driver finishes them at its next step", schema: S.CancelResult },
        },
        problems: [400, 401, 404, 413, 415, 503],
      },
      async ({ c, params, body }) => {
        const job = await mustGetJob(store, params.id);
        const result = await cancelWork(store, job.id, {
          actor: "api",
          ...(body.reason ? { reason: body.reason } : {}),
          ...(body.shutdown ? { client: deps.client } : {}),
          kinds: KINDS,
        });
        deps.feed.poke();
        return jsonResponse(c, 200, result);
      },
    ),
    route(
      {
        method: "post",
        path: "/api/v1/jobs/{id}/retry",
        operationId: "retryJob",
        summary: "Send a job's failed and dead-lettered partitions (or the ones named) back to run",
        tags: ["actions"],
        auth: true,
        params: S.JobId,
        body: S.RetryBody,
        bodyOptional: true,
        responses: { 200: { description: "The partitions sent back", schema: S.RetryResult } },
        problems: [400, 401, 404, 409, 413, 415, 503],
      },
      async ({ c, params, body }) => {
        const job = await mustGetJob(store, params.id);
        const result = await retryWork(store, job.id, "api", body.partitions);
        await deps.worker?.refresh();
        deps.feed.poke();
        return jsonResponse(c, 200, result);
      },
    ),
  ];
}

/** Page cursors are opaque to clients: base64url of the last job's (createdAt, id). */
function encodeCursor(job: JobRow): string {
  return Buffer.from(JSON.stringify([job.createdAt, job.id])).toString("base64url");
}

function decodeCursor(text: string): { createdAt: number; id: string } {
  try {
    const value = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(value) && typeof value[0] === "number" && typeof value[1] === "string")
      return { createdAt: value[0], id: value[1] };
  } catch {
    // fall through
  }
  throw new ProblemError("invalid-request", "cursor: not a cursor this API returned", {
    errors: [{ in: "query", path: "cursor", message: "not a cursor this API returned" }],
  });
}
