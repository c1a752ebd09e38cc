import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { z } from "zod";
import { formatInterval, parseInterval } from "../core/interval.js";
import { auditDatasource, cancelWork, retryWork } from "../jobs/actions.js";
import { KINDS } from "../jobs/kinds.js";
import { partitionReport } from "../jobs/report.js";
import type { Store } from "../ledger/store.js";
import type { EventRow, JobRow, StateCounts, TaskRow } from "../ledger/types.js";
import { toTimelineSegment } from "../work/segments.js";
import { liveTimeline } from "../work/timeline.js";
import {
  SESSION_COOKIE,
  sessionCookie,
  sessionMatches,
  sessionValue,
  tokenEquals,
  tokenMatches,
} from "./auth.js";
import * as D from "./dashboard-schemas.js";
import type { ApiDeps, Input, Route } from "./deps.js";
import { ALL_JOBS } from "./feed.js";
import type { LoadHistory } from "./load-history.js";
import { ProblemError } from "./problems.js";
import * as S from "./schemas.js";

/**
 * The routes the dashboard needs beyond the API's own: a login that turns the token into an HttpOnly
 * cookie, a stream of the job list, a backfill's partitions as grid cells, one partition in full (with
 * per-partition retry and cancel), a datasource's segment timeline and the Druid load this host sees.
 * All of them read the same ledger and Druid as the rest of the API; none keeps state.
 */

export interface DashboardDeps {
  /** Slots and Druid requests over time (null: the API runs without a worker). */
  load: LoadHistory | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

const json = (c: Context, status: number, body: unknown, headers: Record<string, string> = {}) =>
  c.body(JSON.stringify(body), status as 200, { "content-type": "application/json", ...headers });

/** The summary `jobSummary` gives, with the datasource and range from the job's options. */
export function dashboardJob(summary: S.JobSummary, job: JobRow): D.DashboardJob {
  const str = (v: unknown) => (typeof v === "string" ? v : null);
  return { ...summary, datasource: str(job.options.datasource), range: str(job.options.range) };
}

type Num = number | undefined;

function taskIdsOf(p: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  const summary = p.summary as { taskIds?: unknown } | undefined;
  for (const list of [summary?.taskIds, p.taskIds])
    if (Array.isArray(list)) for (const id of list) if (typeof id === "string") ids.add(id);
  if (Array.isArray(p.failures))
    for (const f of p.failures as Array<{ taskId?: unknown }>)
      if (typeof f.taskId === "string") ids.add(f.taskId);
  if (typeof p.taskId === "string") ids.add(p.taskId);
  return [...ids];
}

export function cellOf(task: TaskRow): z.infer<typeof D.Cell> {
  const report = partitionReport(task);
  const p = task.progress as Record<string, unknown>;
  let start = "";
  let end = "";
  try {
    const i = parseInterval(report.interval);
    start = iso(i.start);
    end = iso(i.end);
  } catch {
    // A kind without an interval: the cell still shows, placed by its order.
  }
  return {
    task: task.id,
    state: task.state,
    canceled: task.canceled,
    interval: report.interval,
    start,
    end,
    attempts: task.attempt,
    step: report.step,
    druidTaskIds: taskIdsOf(p),
    druidState: report.druidState,
    rows: report.rows,
    rowStats: report.rowStats,
    durationMs: typeof p.druidDurationMs === "number" ? p.druidDurationMs : null,
    error: report.error,
    outcome: report.outcome ?? null,
  };
}

/** The ingest steps with when each happened, from the partition's progress and its events. */
function stepsOf(task: TaskRow, events: readonly EventRow[]): z.infer<typeof D.Step>[] {
  const p = task.progress as Record<string, unknown>;
  const at = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? iso(v) : null);
  const runningEvent = events.find((e) => e.toState === "running" && /RUNNING|running/.test(e.reason));
  const audit = p.audit as { ok?: boolean } | undefined;
  const doneEvent = events.findLast((e) => e.toState === "done");
  return [
    { name: "submitted", at: at(p.submittedAt as Num) },
    {
      name: "running",
      at: runningEvent ? iso(runningEvent.at) : p.succeededAt !== undefined ? at(p.submittedAt as Num) : null,
    },
    { name: "succeeded", at: at(p.succeededAt as Num) },
    { name: "handed off", at: at(p.handedOffAt as Num) },
    { name: "audited", at: audit?.ok && doneEvent ? iso(doneEvent.at) : null },
  ];
}

function actionsOf(task: TaskRow): z.infer<typeof D.PartitionDetail>["actions"] {
  switch (task.state) {
    case "dead":
      return ["dead-letter-retry", "dead-letter-drop"];
    case "failed":
      // A rolled-back replace would fail the same way on the same input: the way on is new input.
      return (task.progress as { outcome?: unknown }).outcome === "rolled-back" ? [] : ["retry"];
    case "done":
      return [];
    default:
      return task.canceled ? [] : ["cancel"];
  }
}

const SEGMENT_LIMIT = 5000;
const ALL_TIME = "1000-01-01T00:00:00.000Z/3000-01-01T00:00:00.000Z";

function fieldProblem(field: string, error: unknown): ProblemError {
  const message = error instanceof Error ? error.message : String(error);
  return new ProblemError("invalid-request", `${field}: ${message}`, {
    errors: [{ in: "query", path: field, message }],
  });
}

/** Whether the request carries the service's token (header or the session cookie). */
function authenticated(deps: ApiDeps, c: Context): boolean {
  if (deps.token === null) return true;
  const header = c.req.header("authorization");
  if (header !== undefined) return tokenMatches(deps.token, header);
  const cookie = sessionCookie(c.req.header("cookie"));
  return cookie !== undefined && sessionMatches(deps.token, cookie);
}

function cookieHeader(c: Context, value: string, maxAge: number): string {
  const secure = new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
  return `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}

async function mustGetTask(store: Store, id: string): Promise<TaskRow> {
  const task = await store.getTask(id);
  if (!task) throw new ProblemError("not-found", `no partition ${id}`);
  return task;
}

export function dashboardRoutes(
  deps: ApiDeps,
  d: DashboardDeps,
  summary: (job: JobRow, counts: StateCounts) => S.JobSummary,
): Route[] {
  const { store } = deps;
  const jobOf = async (job: JobRow) => dashboardJob(summary(job, await store.countTasks(job.id)), job);

  return [
    {
      spec: {
        method: "get",
        path: "/api/v1/session",
        operationId: "getSession",
        summary: "Whether the service needs a token and this request carries one (the dashboard asks first)",
        tags: ["dashboard"],
        auth: false,
        responses: { 200: { description: "The session", schema: D.Session } },
        problems: [],
      },
      handle: ({ c }) =>
        json(c, 200, { authRequired: deps.token !== null, authenticated: authenticated(deps, c) }),
    },
    {
      spec: {
        method: "post",
        path: "/api/v1/login",
        operationId: "login",
        summary:
          "The dashboard's login: checks the API token and answers with an HttpOnly, SameSite=Strict session cookie made from it",
        tags: ["dashboard"],
        auth: false,
        body: D.LoginBody,
        responses: { 204: { description: "Logged in: the cookie is set" } },
        problems: [400, 401, 413, 415],
      },
      handle: ({ c, body }) => {
        const { token } = body as z.infer<typeof D.LoginBody>;
        if (deps.token === null) return c.body(null, 204);
        if (!tokenEquals(deps.token, token))
          throw new ProblemError("unauthorized", "that is not the API token");
        return c.body(null, 204, {
          "set-cookie": cookieHeader(c, sessionValue(token), 12 * 3600),
          "cache-control": "no-store",
        });
      },
    },
    {
      spec: {
        method: "post",
        path: "/api/v1/logout",
        operationId: "logout",
        summary: "Ends the dashboard's session (clears its cookie)",
        tags: ["dashboard"],
        auth: false,
        body: D.LogoutBody,
        bodyOptional: true,
        responses: { 204: { description: "The cookie is cleared" } },
        problems: [400, 413, 415],
      },
      handle: ({ c }) => c.body(null, 204, { "set-cookie": cookieHeader(c, "", 0) }),
    },
    {
      spec: {
        method: "get",
        path: "/api/v1/stream",
        operationId: "streamJobs",
        summary:
          "Server-sent events of the job list: the newest jobs, `ready`, then each job again as it changes; `end` once no job has work left (an EventSource reconnects)",
        tags: ["dashboard"],
        auth: true,
        query: D.JobStreamQuery,
        responses: {
          200: {
            description:
              "An event stream: `job` messages carry a DashboardJob, `ready` ends the first snapshot, `end` says no job is unfinished",
            events: {
              job: { schema: D.DashboardJob, id: false },
              ready: { schema: D.StreamReady, id: false },
              end: { schema: D.StreamEnd, id: false },
            },
            contentType: "text/event-stream",
          },
        },
        problems: [400, 401, 503],
      },
      handle: ({ c, query }) => streamJobs(c, deps, query as z.infer<typeof D.JobStreamQuery>, jobOf),
    },
    {
      spec: {
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
      handle: async ({ c, params }) => {
        const job = await store.getJob(params.id as string);
        if (!job) throw new ProblemError("not-found", `no job ${params.id}`);
        const tasks = await store.listTasks(job.id);
        const items = tasks.map(cellOf).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
        return json(c, 200, {
          job: await jobOf(job),
          granularity: (job.options.granularity ?? null) as z.infer<typeof D.PartitionGrid>["granularity"],
          items,
        });
      },
    },
    {
      spec: {
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
      handle: async ({ c, params }) => {
        const task = await mustGetTask(store, params.taskId as string);
        const events = await store.listEvents({ taskId: task.id, limit: 1000 });
        const report = partitionReport(task);
        const kind = KINDS.find((k) => k.name === task.kind);
        return json(c, 200, {
          ...cellOf(task),
          jobId: task.jobId,
          version: report.version,
          segments: report.segments,
          bytes: report.bytes,
          parseErrors: report.parseErrors,
          steps: stepsOf(task, events),
          failures: kind?.describe(task).failures ?? [],
          events: events.map((e) => ({ ...e, at: iso(e.at) })),
          actions: actionsOf(task),
        });
      },
    },
    ...(["retry", "cancel"] as const).map(
      (action): Route => ({
        spec: {
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
        handle: async ({ c, params }: Input) => {
          const task = await mustGetTask(store, params.taskId as string);
          let changed: string[];
          if (action === "retry") {
            changed = (await retryWork(store, task.id, "api")).sent;
            await deps.worker?.refresh();
          } else {
            const result = await cancelWork(store, task.id, { actor: "api", kinds: KINDS });
            if (result.flagged === 0)
              throw new ProblemError("conflict", `${task.id} is ${task.state}: nothing to cancel`);
            changed = [task.id];
          }
          deps.feed.poke();
          return json(c, 200, { jobId: task.jobId, changed });
        },
      }),
    ),
    {
      spec: {
        method: "get",
        path: "/api/v1/datasources/{datasource}/timeline",
        operationId: "datasourceTimeline",
        summary:
          "A datasource's segments over an interval: live, overshadowed and unused versions, tombstones, sizes and rows, with the version audit and the gaps (parts with no live data, with the ledger's reason where it knows one)",
        tags: ["dashboard"],
        auth: true,
        params: D.DatasourceParam,
        query: D.TimelineQuery,
        responses: { 200: { description: "The timeline", schema: D.Timeline } },
        problems: [400, 401, 503],
      },
      handle: async ({ c, params, query }) => {
        const datasource = params.datasource as string;
        const q = query as z.infer<typeof D.TimelineQuery>;
        let interval = ALL_TIME;
        if (q.interval) {
          try {
            interval = formatInterval(parseInterval(q.interval));
          } catch (error) {
            throw fieldProblem("interval", error);
          }
        }
        const window = parseInterval(interval);
        const [used, unused, served, { gaps, ...audit }] = await Promise.all([
          deps.client.metadataSegments(datasource, [interval]),
          deps.client.unusedSegments(datasource, interval),
          deps.client.servedSegments(datasource),
          // Without an interval the audit looks for gaps between the first and last segment only.
          auditDatasource(
            deps.client,
            { datasource, ...(q.interval ? { interval } : {}) },
            { gaps: { store } },
          ),
        ]);
        const servedIds = new Set(served);
        const usedView = used.map((s) => toTimelineSegment(s, servedIds));
        const liveIds = new Set(liveTimeline(usedView, window).flatMap((p) => p.live.map((s) => s.id)));
        const candidates = new Map(audit.compactionCandidates.map((cc) => [cc.segment, cc.reason]));
        const view = (
          s: ReturnType<typeof toTimelineSegment>,
          status: "live" | "overshadowed" | "unused",
        ) => ({
          id: s.id,
          start: iso(s.start),
          end: iso(s.end),
          version: s.version,
          partitionNum: s.partitionNum,
          status,
          tombstone: s.tombstone,
          sizeBytes: s.sizeBytes,
          rows: s.numRows,
          served: s.served,
          compactionCandidate: candidates.get(s.id) ?? null,
        });
        const all = [
          ...usedView.map((s) => view(s, liveIds.has(s.id) ? "live" : "overshadowed")),
          ...unused.map((u) => view(toTimelineSegment(u.segment, servedIds), "unused")),
        ].sort((a, b) =>
          a.version < b.version ? 1 : a.version > b.version ? -1 : a.start < b.start ? -1 : 1,
        );
        return json(c, 200, {
          datasource,
          interval,
          segments: all.slice(0, SEGMENT_LIMIT),
          truncated: all.length > SEGMENT_LIMIT,
          audit,
          gaps: gaps ?? [],
        });
      },
    },
    {
      spec: {
        method: "get",
        path: "/api/v1/druid/load",
        operationId: "druidLoad",
        summary:
          "What this host saw of Druid over time: worker slots (segops', others', free), requests per minute by endpoint, detection and handoff latency; and whether the cluster blocks it now",
        tags: ["dashboard"],
        auth: true,
        responses: { 200: { description: "The samples", schema: D.DruidLoad } },
        problems: [401, 503],
      },
      handle: async ({ c }) => {
        const samples = d.load?.samples ?? [];
        const endpoints = new Set<string>();
        for (const s of samples) for (const e of s.requests.keys()) endpoints.add(e);
        const minutes = (d.load?.sampleMs ?? 10_000) / 60_000;
        const latency = deps.metrics
          ? await deps.metrics.latencyQuantiles()
          : { detection: noQuantiles, handoff: noQuantiles };
        const blocked = deps.blocked?.() ?? null;
        return json(c, 200, {
          blocked: blocked ? { since: iso(blocked.since), reason: blocked.reason } : null,
          sampleMs: d.load?.sampleMs ?? 10_000,
          samples: samples.map((s) => ({ at: iso(s.at), ours: s.ours, used: s.used, capacity: s.capacity })),
          requestsPerMinute: [...endpoints].sort().map((endpoint) => ({
            endpoint,
            values: samples.map((s) => Math.round(((s.requests.get(endpoint) ?? 0) / minutes) * 10) / 10),
          })),
          latency,
        });
      },
    },
  ];
}

const noQuantiles = { count: 0, p50: null, p90: null, p99: null };

/** Work is left somewhere in the ledger (a partition new, running or suspended). */
async function unfinished(store: Store): Promise<number> {
  let open = 0;
  for (const c of await store.countByKind())
    if (c.state === "new" || c.state === "running" || c.state === "suspended") open += c.count;
  return open;
}

/** The job list as a stream: a snapshot, `ready`, then every change of a job the filters take. */
function streamJobs(
  c: Context,
  deps: ApiDeps,
  q: z.infer<typeof D.JobStreamQuery>,
  jobOf: (job: JobRow) => Promise<D.DashboardJob>,
): Response {
  const takes = (j: D.DashboardJob) =>
    (!q.kind || j.kind === q.kind) && (!q.datasource || j.datasource === q.datasource);
  return streamSSE(c, async (stream) => {
    const changed = new Set<string>();
    let wake: (() => void) | null = null;
    // Subscribed before the snapshot is read: a change committed meanwhile is sent again, never lost.
    const unsubscribe = deps.feed.subscribe(ALL_JOBS, (events) => {
      for (const e of events) changed.add(e.jobId);
      wake?.();
    });
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      wake?.();
    };
    stream.onAbort(onAbort);
    deps.shutdown?.addEventListener("abort", onAbort, { once: true });
    if (deps.shutdown?.aborted) aborted = true;
    deps.streams.open++;
    try {
      const limit = q.limit ?? 100;
      const rows = await deps.store.listJobs({ limit: 500, ...(q.kind ? { kind: q.kind } : {}) });
      let sent = 0;
      for (const row of rows) {
        if (sent >= limit || aborted) break;
        const job = await jobOf(row);
        if (!takes(job) || (q.state && job.state !== q.state)) continue;
        await stream.writeSSE({ event: "job", data: JSON.stringify(job) });
        sent++;
      }
      // `retry`: an EventSource reconnects 2 s after an `end` (or a cut connection).
      await stream.writeSSE({ event: "ready", data: JSON.stringify({ jobs: sent }), retry: 2000 });
      while (!aborted) {
        if (changed.size === 0) {
          const open = await unfinished(deps.store);
          if (open === 0) {
            await stream.writeSSE({ event: "end", data: JSON.stringify({ open }) });
            return;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            const timer = setTimeout(resolve, deps.heartbeatMs ?? 15_000);
            timer.unref?.();
          });
          wake = null;
          if (changed.size === 0 && !aborted) await stream.write(": keep-alive\n\n");
        }
        const ids = [...changed];
        changed.clear();
        for (const id of ids) {
          const row = await deps.store.getJob(id);
          if (!row || aborted) continue;
          const job = await jobOf(row);
          if (takes(job)) await stream.writeSSE({ event: "job", data: JSON.stringify(job) });
        }
      }
    } finally {
      deps.streams.open--;
      unsubscribe();
      deps.shutdown?.removeEventListener("abort", onAbort);
    }
  });
}
