import { createHash } from "node:crypto";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { matchedRoutes } from "hono/route";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import { canonicalJson, type JsonValue, tooDeepAt } from "../core/canonical-json.js";
import { DEFAULTS } from "../core/defaults.js";
import { bucketStart, increment, parseGranularityText } from "../core/granularity.js";
import { parseInterval } from "../core/interval.js";
import {
  auditDatasource,
  cancelWork,
  dropDeadLetter,
  NotFoundError,
  retryDeadLetter,
  retryWork,
  StateConflictError,
} from "../jobs/actions.js";
import { KINDS } from "../jobs/kinds.js";
import { partitionReport } from "../jobs/report.js";
import { BackfillRequest, createPlannedJob, planRequestWithSources, RunRequest } from "../jobs/requests.js";
import { adoptSources } from "../jobs/rerun.js";
import { fileSystemProbe } from "../jobs/source-probe.js";
import type { Store } from "../ledger/store.js";
import type { EventRow, JobRow } from "../ledger/types.js";
import { endSession, sessionCookie, sessionMatches, tokenMatches } from "./auth.js";
import { dashboardRoutes } from "./dashboard-api.js";
import type { ApiDeps, Input, Route } from "./deps.js";
import { hasEnded, jobProgress } from "./feed.js";
import { jobSummary, jobView, partitionPage } from "./job-view.js";
import { openApiDocument } from "./openapi.js";
import {
  bodyTooDeep,
  invalidRequest,
  MAX_BODY_DEPTH,
  type Problem,
  ProblemError,
  problem,
  problemFor,
} from "./problems.js";
import { workerReadiness } from "./readiness.js";
import { honoPath, type RouteSpec } from "./routes.js";
import * as S from "./schemas.js";
import { segmentOpRoutes } from "./segment-ops.js";
import { registerWeb } from "./web.js";

/**
 * The HTTP API (`/api/v1`), the probes and `/metrics`, as a hono app over injected parts (ledger, Druid
 * client, change feed, waiters, worker), so tests drive it in-process with `app.request` and the server
 * (server.ts) only adds a socket. Handlers hold no state of their own: every change is a ledger
 * operation, so any host of a shared ledger answers the same.
 */

const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;
/** The dashboard's logout route (in dashboard-api.ts): the session it carries ends here first. */
const LOGOUT_PATH = "/api/v1/logout";
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function eventView(e: EventRow): z.infer<typeof S.Event> {
  return { ...e, at: iso(e.at) };
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

async function mustGetJob(store: Store, id: string): Promise<JobRow> {
  const job = await store.getJob(id);
  if (!job) throw new ProblemError("not-found", `no job ${id}`);
  return job;
}

const jsonResponse = (c: Context, status: number, body: unknown, headers: Record<string, string> = {}) =>
  c.body(JSON.stringify(body), status as 200, { "content-type": "application/json", ...headers });

export function problemResponse(c: Context, p: Problem): Response {
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (p.status === 401) headers["www-authenticate"] = 'Bearer realm="segops"';
  return c.body(JSON.stringify(p), p.status as 400, headers);
}

/** Builds the app and the route table it serves (the OpenAPI document is made from the same table). */
export function buildApp(deps: ApiDeps): { app: Hono; routes: RouteSpec[] } {
  const routes = apiRoutes(deps);
  const app = new Hono();
  const maxBody = deps.maxBodyBytes ?? DEFAULT_BODY_LIMIT;

  // One log line and one metric per request; the route pattern keeps labels to one per endpoint.
  app.use("*", async (c, next) => {
    const started = performance.now();
    await next();
    const responder = matchedRoutes(c)[c.req.routeIndex]?.path;
    const route = !responder || responder === "/*" || responder === "*" ? "(unmatched)" : responder;
    deps.metrics?.httpRequest(route, c.req.method, c.res.status);
    const jobId = /^\/api\/v1\/jobs\/([^/]+)/.exec(c.req.path)?.[1];
    deps.log.info(
      {
        method: c.req.method,
        path: c.req.path,
        route,
        status: c.res.status,
        ms: Math.round(performance.now() - started),
        ...(jobId ? { jobId: safeDecode(jobId) } : {}),
      },
      "request",
    );
  });

  app.onError((error, c) => {
    const { problem: p, internal } = problemFor(error);
    if (internal) deps.log.error({ err: error, path: c.req.path }, "internal error");
    return problemResponse(c, p);
  });
  app.notFound((c) => problemResponse(c, problem("not-found", `no route ${c.req.method} ${c.req.path}`)));

  // Logging out ends the session on the server, not only in the browser (which may keep or have leaked
  // the cookie): its id is refused from now on. Runs before the logout route, which clears the cookie.
  if (deps.token !== null) {
    const token = deps.token;
    app.post(LOGOUT_PATH, async (c, next) => {
      const cookie = sessionCookie(c.req.header("cookie"));
      if (cookie !== undefined) endSession(token, cookie);
      await next();
    });
  }

  for (const route of routes) {
    const { spec } = route;
    const handlers: MiddlewareHandler[] = [];
    if (spec.auth && deps.token !== null) {
      const token = deps.token;
      handlers.push(async (c: Context, next: () => Promise<void>) => {
        const header = c.req.header("authorization");
        if (header !== undefined) {
          if (!tokenMatches(token, header))
            return problemResponse(c, problem("unauthorized", "send Authorization: Bearer <token>"));
          return next();
        }
        // The dashboard's session: its HttpOnly cookie, made from the same token.
        const cookie = sessionCookie(c.req.header("cookie"));
        if (cookie === undefined || !sessionMatches(token, cookie))
          return problemResponse(c, problem("unauthorized", "send Authorization: Bearer <token>"));
        // A cookie rides along on any request the browser makes: a change must come from this origin.
        if (spec.method !== "get" && !sameOrigin(c))
          return problemResponse(
            c,
            problem("unauthorized", "a cookie session changes nothing from another origin; send the token"),
          );
        await next();
      });
    }
    if (spec.body) {
      handlers.push(
        bodyLimit({
          maxSize: maxBody,
          onError: (c) =>
            problemResponse(c, problem("payload-too-large", `the body limit is ${maxBody} bytes`)),
        }),
      );
    }
    const path = honoPath(spec.path);
    const handler: MiddlewareHandler = async (c) => {
      const params = spec.params ? parseWith(spec.params, c.req.param(), "path") : {};
      const query = spec.query ? parseWith(spec.query, queryOf(c), "query") : {};
      const body = spec.body ? await readBody(c, spec.body, spec.bodyOptional === true) : undefined;
      return route.handle({ c, params: params as Record<string, string>, query, body });
    };
    app.on([spec.method.toUpperCase()], [path], ...handlers, handler);
  }

  // The methods a path has, for a 405 on the others instead of a misleading 404.
  const byPath = new Map<string, Set<string>>();
  for (const r of routes) {
    const set = byPath.get(r.spec.path) ?? new Set();
    set.add(r.spec.method.toUpperCase());
    byPath.set(r.spec.path, set);
  }
  for (const [path, methods] of byPath) {
    const allowed = [...methods].join(", ");
    app.all(honoPath(path), (c) => {
      // RFC 9110 §15.5.6: a 405 names the methods the resource has.
      c.header("allow", allowed);
      return problemResponse(
        c,
        problem("method-not-allowed", `${c.req.method} is not allowed here; use ${allowed}`),
      );
    });
  }
  const specs = routes.map((r) => r.spec);
  const document = JSON.stringify(
    openApiDocument(specs, { version: deps.version ?? "0.0.0", auth: deps.token !== null }),
  );
  app.get("/openapi.json", (c) => c.body(document, 200, { "content-type": "application/json" }));
  registerWeb(
    app,
    deps.webDir ?? null,
    (c) =>
      problemResponse(
        c,
        problem("unavailable", "the dashboard is not built: run `npm run build` in segops' checkout"),
      ),
    (c) => problemResponse(c, problem("not-found", `no asset ${c.req.path}`)),
  );
  return { app, routes: specs };
}

/** The request's Origin is this service (what a browser sends with a same-origin fetch). */
function sameOrigin(c: Context): boolean {
  const origin = c.req.header("origin");
  const host = c.req.header("host");
  if (!origin || !host) return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** The query string; a parameter given more than once stays a list (every parameter takes one value). */
function queryOf(c: Context): Record<string, string | string[]> {
  return Object.fromEntries(
    Object.entries(c.req.queries()).map(([name, values]) => [name, values.length === 1 ? values[0] : values]),
  ) as Record<string, string | string[]>;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function parseWith(schema: z.ZodType, value: unknown, where: "path" | "query"): Record<string, unknown> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidRequest(where, parsed.error);
  return parsed.data as Record<string, unknown>;
}

async function readBody(c: Context, schema: z.ZodType, optional: boolean): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "" && optional) return schema.parse({});
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/(.+\+)?json\b/i.test(type))
    throw new ProblemError(
      "unsupported-media-type",
      `send the body as application/json, not ${type || "no type"}`,
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ProblemError("invalid-request", `the body is not JSON: ${(error as Error).message}`, {
      errors: [{ in: "body", path: "", message: "not valid JSON" }],
    });
  }
  // Measured without recursion before zod (which recurses per level) or anything else walks it.
  const deep = tooDeepAt(value, MAX_BODY_DEPTH);
  if (deep) throw bodyTooDeep(deep);
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidRequest("body", parsed.error);
  return parsed.data;
}

function apiRoutes(deps: ApiDeps): Route[] {
  const { store } = deps;
  const heartbeatMs = deps.heartbeatMs ?? 15_000;

  /** Creates (or finds again) the job a run/backfill request names. */
  async function startWork(input: Input, kind: "run" | "backfill"): Promise<Response> {
    const key = input.c.req.header("idempotency-key");
    if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
      throw new ProblemError("invalid-request", "Idempotency-Key: 1 to 200 visible ASCII characters", {
        errors: [{ in: "header", path: "Idempotency-Key", message: "1 to 200 visible ASCII characters" }],
      });
    }
    const request = input.body as RunRequest | BackfillRequest;
    const requestHash = createHash("sha256")
      .update(`${kind}\n${canonicalJson(request as unknown as JsonValue)}`)
      .digest("hex");
    // With a key, a `new` job is new once per key: the key is its nonce, so a repeated POST finds it again.
    const nonce = key ? createHash("sha256").update(key).digest("hex").slice(0, 10) : undefined;
    const plan = await planRequestWithSources(kind, request, {
      cluster: deps.cluster,
      maxPartitions: deps.maxPartitionsPerRequest ?? DEFAULTS.maxPartitionsPerRequest,
      probe: deps.sourceProbe ?? fileSystemProbe(),
      ...(nonce ? { nonce } : {}),
    });
    if (key !== undefined) {
      const bound = await store.rememberRequest(key, requestHash, plan.job.id);
      if (bound.requestHash !== requestHash) {
        throw new ProblemError(
          "idempotency-key-reused",
          `Idempotency-Key ${JSON.stringify(key)} was first used with another request (job ${bound.jobId})`,
        );
      }
      if (!bound.created) {
        const existing = await store.getJob(bound.jobId);
        if (existing)
          return jsonResponse(input.c, 200, await jobView(store, existing), location(existing.id));
      }
    }
    const stored = await createPlannedJob(store, plan, "api", request.new === true);
    const { created } = stored;
    // Found again: partitions whose input changed since are planned anew and run again.
    const { job, changed, busy } = created
      ? { job: stored.job, changed: [], busy: [] }
      : await adoptSources(store, stored.job, plan.tasks, "api");
    if (created || changed.length > 0) {
      deps.log.info(
        { jobId: job.id, partitions: plan.tasks.length, kind, ...(created ? {} : { changed }) },
        created ? "job created" : "sources changed: partitions planned anew",
      );
      await deps.worker?.refresh();
      deps.feed.poke();
    }
    // A partition whose input changed while it runs keeps running on the old input: say so, so the
    // client asks again once it has finished (the same request then plans it anew).
    if (busy.length > 0)
      throw new ProblemError("partitions-busy", `job ${job.id}: ${busy.join("; ")}`, {
        instance: `/api/v1/jobs/${encodeURIComponent(job.id)}`,
      });
    return jsonResponse(input.c, created ? 201 : 200, await jobView(store, job), location(job.id));
  }

  const location = (id: string) => ({ location: `/api/v1/jobs/${encodeURIComponent(id)}` });

  const created = {
    201: { description: "The job was created", schema: S.Job },
    200: { description: "The same request was made before: the job it created", schema: S.Job },
  };
  const idempotencyHeader = {
    name: "Idempotency-Key",
    description:
      "Optional. The same key with the same body returns the first response's job; with another body, 409.",
    schema: z.string().regex(IDEMPOTENCY_KEY),
  };

  return [
    {
      spec: {
        method: "get",
        path: "/healthz",
        operationId: "health",
        summary: "The process is up",
        tags: ["probes"],
        auth: false,
        responses: { 200: { description: "Up", schema: S.Health } },
        problems: [],
      },
      handle: ({ c }) => jsonResponse(c, 200, { status: "ok" }),
    },
    {
      spec: {
        method: "get",
        path: "/readyz",
        operationId: "ready",
        summary: "The ledger and Druid are reachable and the worker is not stalled (each check named)",
        tags: ["probes"],
        auth: false,
        responses: {
          200: { description: "Ready", schema: S.Readiness },
          503: {
            description: "Not ready: which dependency failed, or the worker is stalled",
            schema: S.Readiness,
          },
        },
        problems: [],
      },
      handle: async ({ c }) => {
        const check = async (fn: () => Promise<unknown>) => {
          try {
            await fn();
            return { ok: true };
          } catch (error) {
            return { ok: false, error: problemFor(error).problem.detail ?? "unavailable" };
          }
        };
        const [ledger, druid] = await Promise.all([
          check(() => store.listJobs({ limit: 1 })),
          check(() => deps.client.totalWorkerCapacity()),
        ]);
        const worker = workerReadiness(deps.worker);
        const ready = ledger.ok && druid.ok && worker.ok;
        return jsonResponse(c, ready ? 200 : 503, { ready, ledger, druid, worker: worker.view });
      },
    },
    {
      spec: {
        method: "get",
        path: "/metrics",
        operationId: "metrics",
        summary: "Prometheus metrics (text exposition format)",
        tags: ["probes"],
        auth: true,
        responses: {
          200: { description: "Metrics", schema: z.string(), contentType: "text/plain; version=0.0.4" },
        },
        problems: [401],
      },
      handle: async ({ c }) => {
        if (!deps.metrics) throw new ProblemError("not-found", "metrics are off");
        return c.body(await deps.metrics.text(), 200, { "content-type": deps.metrics.contentType });
      },
    },
    {
      spec: {
        method: "post",
        path: "/api/v1/runs",
        operationId: "createRun",
        summary: "Start (or find again) a run: one partition over one interval",
        tags: ["jobs"],
        auth: true,
        body: RunRequest,
        headers: [idempotencyHeader],
        responses: created,
        problems: [400, 401, 409, 413, 415, 503],
      },
      handle: (input) => startWork(input, "run"),
    },
    {
      spec: {
        method: "post",
        path: "/api/v1/backfills",
        operationId: "createBackfill",
        summary: "Start (or find again) a backfill: one partition per granularity bucket of a range",
        tags: ["jobs"],
        auth: true,
        body: BackfillRequest,
        headers: [idempotencyHeader],
        responses: created,
        problems: [400, 401, 409, 413, 415, 503],
      },
      handle: (input) => startWork(input, "backfill"),
    },
    {
      spec: {
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
      handle: async ({ c, query }) => {
        const q = query as z.infer<typeof S.ListJobsQuery>;
        const limit = q.limit ?? 50;
        const rows = await store.listJobs({
          limit: limit + 1,
          ...(q.state ? { state: q.state } : {}),
          ...(q.kind ? { kind: q.kind } : {}),
          ...(q.cursor ? { after: decodeCursor(q.cursor) } : {}),
        });
        const page = rows.slice(0, limit);
        const items = await Promise.all(page.map(async (j) => jobSummary(j, await store.countTasks(j.id))));
        const last = page.at(-1);
        return jsonResponse(c, 200, {
          items,
          nextCursor: rows.length > limit && last ? encodeCursor(last) : null,
        });
      },
    },
    {
      spec: {
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
      handle: async ({ c, params }) =>
        jsonResponse(c, 200, await jobView(store, await mustGetJob(store, params.id as string))),
    },
    {
      spec: {
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
      handle: async ({ c, params, query }) => {
        const q = query as z.infer<typeof S.PartitionsQuery>;
        const job = await mustGetJob(store, params.id as string);
        return jsonResponse(c, 200, await partitionPage(store, job, q));
      },
    },
    {
      spec: {
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
      handle: async ({ c, params, query }) => {
        const q = query as z.infer<typeof S.EventsQuery>;
        const job = await mustGetJob(store, params.id as string);
        const after = q.after ?? 0;
        const events = await store.listEvents({ jobId: job.id, afterId: after, limit: q.limit ?? 500 });
        return jsonResponse(c, 200, { items: events.map(eventView), next: events.at(-1)?.id ?? after });
      },
    },
    {
      spec: {
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
      handle: async ({ c, params, query }) => {
        const q = query as z.infer<typeof S.WaitQuery>;
        // The waiters know the service's drain signal themselves; this request's is the client leaving.
        const progress = await deps.waiters.wait(
          params.id as string,
          (q.timeout ?? 30) * 1000,
          c.req.raw.signal,
        );
        if (!progress) throw new ProblemError("not-found", `no job ${params.id}`);
        return jsonResponse(c, 200, {
          ended: progress.ended,
          job: jobSummary(progress.job, progress.counts),
        });
      },
    },
    {
      spec: {
        method: "get",
        path: "/api/v1/jobs/{id}/stream",
        operationId: "streamJobEvents",
        summary: "Server-sent events: the job's events as they are committed, then `end` once it has ended",
        tags: ["jobs"],
        auth: true,
        params: S.JobId,
        query: S.StreamQuery,
        headers: [
          {
            name: "Last-Event-ID",
            description:
              "What an EventSource sends when it reconnects: replay after this event id (`after` wins)",
            schema: z.string(),
          },
        ],
        responses: {
          200: {
            description: "An event stream: `event` messages carry an Event as data; `end` a WaitResult",
            events: { event: { schema: S.Event, id: true }, end: { schema: S.WaitResult, id: false } },
            contentType: "text/event-stream",
          },
        },
        problems: [400, 401, 404, 503],
      },
      handle: async ({ c, params, query }) => {
        const job = await mustGetJob(store, params.id as string);
        const header = Number(c.req.header("last-event-id"));
        const after =
          (query as z.infer<typeof S.StreamQuery>).after ?? (Number.isInteger(header) ? header : 0);
        return streamJob(c, deps, job.id, after, heartbeatMs);
      },
    },
    {
      spec: {
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
      handle: async ({ c, params, body }) => {
        const b = body as z.infer<typeof S.CancelBody>;
        const job = await mustGetJob(store, params.id as string);
        const result = await cancelWork(store, job.id, {
          actor: "api",
          ...(b.reason ? { reason: b.reason } : {}),
          ...(b.shutdown ? { client: deps.client } : {}),
          kinds: KINDS,
        });
        deps.feed.poke();
        return jsonResponse(c, 200, result);
      },
    },
    {
      spec: {
        method: "post",
        path: "/api/v1/jobs/{id}/retry",
        operationId: "retryJob",
        summary: "Send a job's failed and dead-lettered partitions back to run",
        tags: ["actions"],
        auth: true,
        params: S.JobId,
        responses: { 200: { description: "The partitions sent back", schema: S.RetryResult } },
        problems: [400, 401, 404, 503],
      },
      handle: async ({ c, params }) => {
        const job = await mustGetJob(store, params.id as string);
        const result = await retryWork(store, job.id, "api");
        await deps.worker?.refresh();
        deps.feed.poke();
        return jsonResponse(c, 200, result);
      },
    },
    {
      spec: {
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
      handle: async ({ c, query }) => {
        const job = (query as z.infer<typeof S.DeadLettersQuery>).job;
        const dead = await store.listDead(job);
        return jsonResponse(c, 200, { items: dead.map((t) => partitionReport(t)) });
      },
    },
    {
      spec: {
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
      handle: async ({ c, params }) => {
        const id = params.taskId as string;
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
    },
    ...(["retry", "drop"] as const).map(
      (action): Route => ({
        spec: {
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
        handle: async ({ c, params }) => {
          const id = params.taskId as string;
          const row =
            action === "retry"
              ? await retryDeadLetter(store, id, "api")
              : await dropDeadLetter(store, id, "api");
          if (action === "retry") await deps.worker?.refresh();
          deps.feed.poke();
          return jsonResponse(c, 200, partitionReport(row));
        },
      }),
    ),
    {
      spec: {
        method: "get",
        path: "/api/v1/audit",
        operationId: "auditDatasource",
        summary: "The version audit of a datasource: one live version per time chunk, every segment served",
        tags: ["actions"],
        auth: true,
        query: S.AuditQuery,
        responses: {
          200: { description: "The audit (ok: false lists the violations)", schema: S.AuditResult },
        },
        problems: [400, 401, 503],
      },
      handle: async ({ c, query }) => {
        const q = query as z.infer<typeof S.AuditQuery>;
        refuseTooManyChunks(q);
        const report = await auditDatasource(deps.client, q).catch((error) => {
          // A malformed interval or granularity is the caller's mistake, named by its field.
          if (
            error instanceof Error &&
            "code" in error &&
            ["Interval", "Granularity"].includes(String(error.code))
          ) {
            const field = error.code === "Interval" ? "interval" : "granularity";
            throw new ProblemError("invalid-request", `${field}: ${error.message}`, {
              errors: [{ in: "query", path: field, message: error.message }],
            });
          }
          throw error;
        });
        return jsonResponse(c, 200, report);
      },
    },
    ...dashboardRoutes(deps, { load: deps.load ?? null }, jobSummary),
    ...segmentOpRoutes({
      store,
      client: deps.client,
      cluster: deps.cluster,
      clock: deps.clock,
      started: async (job) => {
        deps.log.info({ jobId: job.id, kind: job.kind }, "job created");
        await deps.worker?.refresh();
        deps.feed.poke();
      },
      json: jsonResponse,
      jobView: (job) => jobView(store, job),
    }),
  ];
}

/** At most this many chunks in one audit: each is built and answered (a day over all time is 730,000). */
const MAX_AUDIT_CHUNKS = 100_000;

/**
 * An audit whose granularity cuts the interval into more chunks than that is refused before any work: an
 * hour over all time would hold the event loop for minutes (found by the API fuzzer). Malformed values
 * are left to the audit itself, which names them.
 */
function refuseTooManyChunks(q: { interval?: string | undefined; granularity?: string | undefined }): void {
  if (!q.granularity) return;
  let chunks: number;
  try {
    const g = parseGranularityText(q.granularity);
    if (g.kind !== "period") return;
    const { start, end } = parseInterval(q.interval ?? "1000-01-01/3000-01-01");
    const first = bucketStart(g, start);
    chunks = (end - first) / Math.max(1, increment(g, first) - first);
  } catch {
    return;
  }
  if (chunks > MAX_AUDIT_CHUNKS) {
    const message = `about ${Math.round(chunks).toLocaleString("en-US")} chunks of ${q.granularity} in ${q.interval ?? "all time"}, more than ${MAX_AUDIT_CHUNKS.toLocaleString("en-US")}; narrow the interval or coarsen the granularity`;
    throw new ProblemError("invalid-request", `granularity: ${message}`, {
      errors: [{ in: "query", path: "granularity", message }],
    });
  }
}

/** The SSE stream of one job: replay after `after`, then live events, then `end` once it has ended. */
function streamJob(c: Context, deps: ApiDeps, jobId: string, after: number, heartbeatMs: number): Response {
  return streamSSE(c, async (stream) => {
    const queue: EventRow[] = [];
    let wake: (() => void) | null = null;
    const unsubscribe = deps.feed.subscribe(jobId, (events) => {
      queue.push(...events);
      wake?.();
    });
    let onShutdown = () => {};
    const closed = new Promise<void>((resolve) => {
      onShutdown = () => resolve();
      stream.onAbort(resolve);
      if (deps.shutdown?.aborted) resolve();
      deps.shutdown?.addEventListener("abort", onShutdown, { once: true });
    });
    let aborted = false;
    void closed.then(() => {
      aborted = true;
      wake?.();
    });
    const sent = new Set<number>();
    const send = async (e: EventRow) => {
      if (sent.has(e.id)) return;
      sent.add(e.id);
      await stream.writeSSE({ event: "event", id: String(e.id), data: JSON.stringify(eventView(e)) });
    };
    deps.streams.open++;
    try {
      // Replay what is committed already (the live queue holds anything committed meanwhile).
      for (let cursor = after; !aborted; ) {
        const page = await deps.store.listEvents({ jobId, afterId: cursor, limit: 500 });
        for (const e of page) await send(e);
        if (page.length < 500) break;
        cursor = page.at(-1)?.id ?? cursor;
      }
      while (!aborted) {
        const progress = await jobProgress(deps.store, jobId);
        if (!progress || hasEnded(progress.job)) {
          // Events committed with the end may still be on their way through the feed: flush them.
          for (const e of await deps.store.listEvents({ jobId, afterId: after, limit: 100_000 }))
            await send(e);
          if (progress)
            await stream.writeSSE({
              event: "end",
              data: JSON.stringify({ ended: true, job: jobSummary(progress.job, progress.counts) }),
            });
          return;
        }
        if (queue.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            const timer = setTimeout(resolve, heartbeatMs);
            timer.unref?.();
          });
          wake = null;
          if (queue.length === 0 && !aborted) await stream.write(": keep-alive\n\n");
        }
        const batch = queue.splice(0).sort((a, b) => a.id - b.id);
        for (const e of batch) await send(e);
      }
    } finally {
      deps.streams.open--;
      unsubscribe();
      // The service's signal outlives every stream: a listener left on it would keep this one alive.
      deps.shutdown?.removeEventListener("abort", onShutdown);
    }
  });
}
