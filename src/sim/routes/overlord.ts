import { type Interval, parseInterval } from "../../core/interval.js";
import { isActive } from "../engine.js";
import { validateId } from "../ids.js";
import { instantText, intervalText } from "../instant-text.js";
import { druidError, empty, invalidInput, isJson, json, jsonParseError, type Reply, text } from "../reply.js";
import type { Handler, Route, RouteContext } from "../router.js";
import { sample } from "../sampler.js";
import { planTask } from "../spec.js";
import type { SimTask } from "../task.js";
import { versionTraits } from "../versions.js";
import { statusPlus, taskContext, taskReport, taskStatus } from "../views.js";
import { supervisorRoutes } from "./compaction.js";

/** Overlord endpoints under `/druid/indexer/v1` (docs/druid-api.md §2). */
const BASE = "/druid/indexer/v1";

/** Duplicate-id answers across Druid versions (docs/druid-api.md §2.2, §8). */
export function duplicateTaskReply(id: string, druidVersion: number): Reply {
  if (druidVersion <= 26) return json(400, { error: `Task[${id}] already exists!` });
  if (druidVersion <= 29) return json(400, { error: `Task [${id}] already exists.` });
  return druidError("entryAlreadyExists", "USER", "INVALID_INPUT", `Task[${id}] already exists`);
}

/** `TaskResourceFilter` (docs/druid-api.md §2.3): every `/task/{id}/…` endpoint 404s in text for unknown ids. */
function withTask(fn: (ctx: RouteContext, task: SimTask) => Reply): Handler {
  return (ctx) => {
    const id = ctx.params.taskId ?? "";
    const task = ctx.engine.tasks.get(id);
    if (!task) return text(404, `Cannot find any task with id: [${id}]`);
    return fn(ctx, task);
  };
}

async function submit(ctx: RouteContext): Promise<Reply> {
  const { engine } = ctx;
  const reject = (reply: Reply, id: string | null): Reply => {
    const reason = reply.body ? safeReason(reply.body) : `HTTP ${reply.status}`;
    engine.stats.submission({ id, accepted: false, status: reply.status, reason }, engine.now);
    return reply;
  };
  if (!isJson(ctx.req)) return reject(empty(415), null);
  let body: unknown;
  const raw = await ctx.body();
  try {
    body = JSON.parse(raw);
  } catch {
    // No mapper for JsonParseException: Jetty's 500 page with Jackson's message (docs/druid-api.md §2.2, §10).
    return reject(jsonParseError(raw), null);
  }
  const pinned = body && typeof body === "object" && "id" in body ? (body as { id: unknown }).id : undefined;
  const planned = planTask(body, ctx.druidVersion);
  if (!planned.ok) return reject(planned.reply, typeof pinned === "string" ? pinned : null);
  const plan = planned.plan;
  const id = plan.id ?? engine.newTaskId(plan.type, plan.dataSource);
  const idProblem = validateId("Task ID", id);
  if (idProblem) return reject(invalidInput(idProblem), id);
  if (engine.tasks.has(id)) return reject(duplicateTaskReply(id, ctx.druidVersion), id);
  const active = [...engine.tasks.values()].filter(isActive).length;
  if (active >= engine.options.maxQueueSize) {
    return reject(
      druidError(
        "general",
        "ADMIN",
        "CAPACITY_EXCEEDED",
        `Task queue already contains [${active}] tasks. Retry later or increase 'druid.indexer.queue.maxSize'[${engine.options.maxQueueSize}].`,
      ),
      id,
    );
  }
  const original = body as Record<string, unknown>;
  const groupId = plan.groupId ?? id;
  const payload: Record<string, unknown> = {
    ...original,
    type: plan.type,
    id,
    groupId,
    resource: { availabilityGroup: id, requiredCapacity: 1 },
    dataSource: plan.dataSource,
  };
  const task = engine.add(id, plan, payload);
  payload.context = taskContext(task);
  engine.stats.submission({ id, accepted: true, status: 200 }, engine.now);
  return json(200, { task: id });
}

function safeReason(body: string): string {
  try {
    const o = JSON.parse(body) as { errorMessage?: unknown; error?: unknown };
    return String(o.errorMessage ?? o.error ?? body);
  } catch {
    return body;
  }
}

const TASK_STATES = ["pending", "waiting", "running", "complete"] as const;
type TaskStateFilter = (typeof TASK_STATES)[number];
const DAY_MS = 24 * 3600 * 1000;

/** `GET /tasks` (docs/druid-api.md §2.5): complete tasks first (newest first, `max` applies), then active ones. */
function listTasks(ctx: RouteContext, stateParam: string | null, max: number | null): Reply {
  let state: TaskStateFilter | null = null;
  if (stateParam !== null) {
    const s = stateParam.toLowerCase();
    if (!(TASK_STATES as readonly string[]).includes(s)) {
      return text(
        400,
        `Invalid task state[${stateParam}]. Must be one of [pending, waiting, running, complete].`,
      );
    }
    state = s as TaskStateFilter;
  }
  const ds = ctx.query.get("datasource");
  const type = ctx.query.get("type");
  let windowMs = DAY_MS;
  const cti = ctx.query.get("createdTimeInterval");
  if (cti !== null) {
    let interval: Interval;
    try {
      interval = parseInterval(cti);
    } catch {
      return json(500, { error: `Invalid query parameter createdTimeInterval[${cti}]` });
    }
    // Only the interval's length is used (TaskQueryTool quirk, §2.5).
    windowMs = interval.end - interval.start;
  }
  const now = ctx.engine.now;
  const all = [...ctx.engine.tasks.values()].filter(
    (t) => (ds === null || t.dataSource === ds) && (type === null || t.type === type),
  );
  const out: Record<string, unknown>[] = [];
  if (state === null || state === "complete") {
    const complete = all
      .filter((t) => !isActive(t) && t.createdAt >= now - windowMs)
      .sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq)
      .slice(0, max ?? Number.MAX_SAFE_INTEGER);
    out.push(...complete.map((t) => statusPlus(t, "list")));
  }
  if (state !== "complete") {
    const active = all
      .filter((t) => isActive(t) && (state === null || t.phase === state))
      .sort((a, b) => a.seq - b.seq);
    out.push(...active.map((t) => statusPlus(t, "list")));
  }
  return json(200, out);
}

function intParam(q: URLSearchParams, name: string): number | null {
  const v = q.get(name);
  if (v === null || v === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? Math.max(0, Math.floor(n)) : null;
}

export function overlordRoutes(): Route[] {
  return [...taskRoutes(), ...taskListRoutes(), ...clusterRoutes()];
}

/** Submitting a task and everything under `/task/{id}`, and the bulk status lookup. */
function taskRoutes(): Route[] {
  return [
    { method: "POST", path: `${BASE}/task`, handler: submit },
    {
      method: "GET",
      path: `${BASE}/task/:taskId`,
      handler: withTask((_ctx, task) => json(200, { task: task.id, payload: task.payload })),
    },
    {
      method: "GET",
      path: `${BASE}/task/:taskId/status`,
      handler: withTask((_ctx, task) => json(200, { task: task.id, status: statusPlus(task, "status") })),
    },
    { method: "GET", path: `${BASE}/task/:taskId/reports`, handler: withTask(reports) },
    { method: "GET", path: `${BASE}/task/:taskId/log`, handler: withTask(log) },
    {
      method: "POST",
      path: `${BASE}/task/:taskId/shutdown`,
      handler: withTask((ctx, task) => {
        ctx.engine.shutdown(task.id);
        return json(200, { task: task.id });
      }),
    },
    { method: "POST", path: `${BASE}/taskStatus`, handler: bulkStatus },
  ];
}

/** `GET /tasks` and its older per-state forms, one listing underneath. */
function taskListRoutes(): Route[] {
  return [
    {
      method: "GET",
      path: `${BASE}/tasks`,
      handler: (ctx) => listTasks(ctx, ctx.query.get("state"), intParam(ctx.query, "max")),
    },
    { method: "GET", path: `${BASE}/waitingTasks`, handler: (ctx) => listTasks(ctx, "waiting", null) },
    { method: "GET", path: `${BASE}/pendingTasks`, handler: (ctx) => listTasks(ctx, "pending", null) },
    { method: "GET", path: `${BASE}/runningTasks`, handler: (ctx) => listTasks(ctx, "running", null) },
    {
      method: "GET",
      path: `${BASE}/completeTasks`,
      handler: (ctx) => listTasks(ctx, "complete", intParam(ctx.query, "n")),
    },
  ];
}

/** A datasource's tasks and locks, the sampler, the workers and their capacity, the leader. */
function clusterRoutes(): Route[] {
  return [
    { method: "POST", path: `${BASE}/datasources/:dataSource/shutdownAllTasks`, handler: shutdownAllTasks },
    { method: "POST", path: `${BASE}/lockedIntervals/v2`, handler: lockedIntervals },
    // The data sampler (docs/druid-api.md §2.12, src/sim/sampler.ts).
    { method: "POST", path: `${BASE}/sampler`, handler: sample },
    { method: "GET", path: `${BASE}/workers`, handler: workers },
    // The emulator runs no streaming supervisors, only compaction ones: with none the list is empty, as a Druid
    // 33 without any answers (`SupervisorResource.specGetAll`; observed, conformance).
    ...supervisorRoutes(BASE),
    { method: "GET", path: `${BASE}/worker`, handler: getWorkerConfig },
    { method: "POST", path: `${BASE}/worker`, handler: setWorkerConfig },
    {
      method: "GET",
      path: `${BASE}/totalWorkerCapacity`,
      handler: ({ engine }) =>
        json(200, {
          currentClusterCapacity: engine.slots.total,
          // -1: no autoscaler (§2.9; a real Druid 33 without one answers -1).
          maximumCapacityWithAutoScale: -1,
          usedClusterCapacity: engine.slots.used,
        }),
    },
    // Raw URL, not JSON-quoted (docs/druid-api.md §2.1).
    { method: "GET", path: `${BASE}/leader`, handler: (ctx) => text(200, ctx.url, "application/json") },
    { method: "GET", path: `${BASE}/isLeader`, handler: () => json(200, { leader: true }) },
  ];
}

/** `GET /task/{id}/reports`: 404 in text until the task has a report. */
function reports(ctx: RouteContext, task: SimTask): Reply {
  const report = taskReport(task, ctx.engine.now, ctx.druidVersion);
  if (!report) {
    return text(
      404,
      "No task reports were found for this task. The task may not exist, or it may not have completed yet.",
    );
  }
  return json(200, report);
}

/** `GET /task/{id}/log`: a short synthetic log, the task's lifecycle as the emulator recorded it. */
function log(ctx: RouteContext, task: SimTask): Reply {
  const events = ctx.engine.stats.events.get(task.id) ?? [];
  const lines = events.map((e) => `${e.at} INFO [task-runner] Task[${task.id}] ${e.event}`);
  if (task.errorMsg) lines.push(`ERROR [task-runner] Task[${task.id}] failed: ${task.errorMsg}`);
  return text(200, `${lines.join("\n")}\n`);
}

/** `POST /taskStatus`: the statuses of the ids Druid knows, by id; unknown ids are left out. */
async function bulkStatus(ctx: RouteContext): Promise<Reply> {
  if (!isJson(ctx.req)) return empty(415);
  let ids: unknown;
  try {
    const raw = await ctx.body();
    ids = raw.trim() === "" ? [] : JSON.parse(raw);
  } catch {
    return json(400, { error: "Cannot deserialize request body: expected a JSON array of task ids" });
  }
  if (!Array.isArray(ids)) {
    return json(400, {
      error: "Cannot deserialize value of type `java.util.HashSet<java.lang.String>` from Object value",
    });
  }
  // Plain text in a body labelled JSON, as a real Druid 33 sends it (docs/real-druid.md).
  if (ids.length === 0) return text(400, "No Task IDs provided.", "application/json");
  const out: Record<string, unknown> = {};
  for (const id of ids) {
    const task = ctx.engine.tasks.get(String(id));
    if (task) out[task.id] = taskStatus(task);
  }
  return json(200, out);
}

/** `POST /datasources/{ds}/shutdownAllTasks`: 404 when the datasource has no active task. */
function shutdownAllTasks(ctx: RouteContext): Reply {
  const ds = ctx.params.dataSource ?? "";
  const active = [...ctx.engine.tasks.values()].filter((t) => t.dataSource === ds && isActive(t));
  if (active.length === 0) return empty(404);
  for (const t of active) ctx.engine.shutdown(t.id);
  return json(200, { dataSource: ds });
}

/**
 * `POST /lockedIntervals/v2` (docs/druid-api.md §2.11): for each `LockFilterPolicy` (`datasource`, minimum
 * `priority`, optional `intervals`), the intervals of the granted locks of that datasource at or above the
 * priority, by datasource; a datasource without such locks is left out. No policy = 400 in plain text.
 */
async function lockedIntervals(ctx: RouteContext): Promise<Reply> {
  if (!isJson(ctx.req)) return empty(415);
  let policies: unknown;
  try {
    const raw = await ctx.body();
    policies = raw.trim() === "" ? null : JSON.parse(raw);
  } catch {
    return json(400, { error: "Cannot deserialize request body as a list of LockFilterPolicy" });
  }
  if (policies !== null && !Array.isArray(policies)) {
    return json(400, {
      error: "Cannot deserialize value of type `java.util.ArrayList<LockFilterPolicy>` from Object value",
    });
  }
  if (!policies || policies.length === 0) return text(400, "No filter provided", "application/json");
  const out: Record<string, string[]> = {};
  for (const raw of policies as unknown[]) {
    const p = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
    const ds = typeof p.datasource === "string" ? p.datasource : "";
    const minPriority = typeof p.priority === "number" ? p.priority : 0;
    let within: Interval[] | null = null;
    if (Array.isArray(p.intervals)) {
      try {
        within = p.intervals.map((i) => parseInterval(String(i)));
      } catch {
        return json(400, {
          error: `Cannot deserialize LockFilterPolicy intervals: ${JSON.stringify(p.intervals)}`,
        });
      }
    }
    const seen = new Set(out[ds] ?? []);
    for (const lock of ctx.engine.lockbox.all()) {
      if (lock.dataSource !== ds || lock.priority < minPriority) continue;
      if (within && !within.some((i) => i.start < lock.interval.end && lock.interval.start < i.end)) continue;
      seen.add(intervalText(lock.interval));
    }
    if (seen.size > 0) out[ds] = [...seen].sort();
  }
  return json(200, out);
}

/**
 * `ImmutableWorkerInfo` list (docs/druid-api.md §2.9); `currCapacityUsed` is real slot use, split by task type as
 * Druid counts it (an `index_parallel` supervisor's own slot, its sub-tasks' as theirs: `ImmutableWorkerInfo`,
 * task-limits.ts `slotTypes`); `currParallelIndexCapacityUsed` is the supervisors' slots only.
 */
function workers({ engine }: RouteContext): Reply {
  const flagged = versionTraits(engine.options.druidVersion).workerDisabledField;
  return json(
    200,
    engine.slots.workers.map((w, i) => {
      const running = [...w.held.keys()];
      let used = 0;
      for (const n of w.held.values()) used += n;
      const byType = Object.fromEntries(engine.slotsByType(i));
      const parallel = byType.index_parallel ?? 0;
      return {
        worker: {
          scheme: "http",
          host: w.host,
          ip: "127.0.0.1",
          capacity: w.capacity,
          // Up to 37 a disabled worker is announced with version "" and no flag; 38 flags it and keeps its
          // version (apache/druid #19448; versions.ts).
          version: w.disabled && !flagged ? "" : "0",
          category: "_default_worker_category",
          ...(flagged ? { disabled: w.disabled } : {}),
        },
        currCapacityUsed: used,
        currParallelIndexCapacityUsed: parallel,
        ...(Object.keys(byType).length > 0 ? { currCapacityUsedByTaskType: byType } : {}),
        availabilityGroups: running,
        runningTasks: running,
        lastCompletedTaskTime: instantText(w.lastCompletedTaskTime),
      };
    }),
  );
}

/**
 * `GET /druid/indexer/v1/worker` (`OverlordResource#getWorkerConfig`): the dynamic worker config as set, or an
 * empty 200 while none was (the entity is null; not observed on a real cluster). Before Druid 33 a select strategy
 * has no `taskLimits` (apache/druid #16889), so Jackson dropped it when the config was set.
 */
function getWorkerConfig({ engine }: RouteContext): Reply {
  const config = engine.workerConfig;
  if (!config) return empty(200);
  if (engine.options.druidVersion >= 33) return json(200, config);
  const strategy = config.selectStrategy;
  if (!strategy || typeof strategy !== "object") return json(200, config);
  const { taskLimits: _dropped, ...rest } = strategy as Record<string, unknown>;
  return json(200, { ...config, selectStrategy: rest });
}

/** `POST /druid/indexer/v1/worker` (`OverlordResource#setWorkerConfig`): 200, empty. */
async function setWorkerConfig({ engine, body }: RouteContext): Promise<Reply> {
  let config: unknown;
  try {
    config = JSON.parse(await body());
  } catch (error) {
    return json(400, { error: (error as Error).message });
  }
  if (!config || typeof config !== "object" || Array.isArray(config))
    return json(400, { error: "Expected a WorkerBehaviorConfig object" });
  engine.setWorkerConfig(config as Record<string, unknown>);
  return empty(200);
}
