import { yieldToEventLoop } from "../core/clock.js";
import { UsageError } from "../core/errors.js";
import { type Granularity, parseGranularityText } from "../core/granularity.js";
import { formatInterval, type Interval, overlaps, parseInterval } from "../core/interval.js";
import type { KindOfWork } from "../driver/kind.js";
import type { DruidClient } from "../druid/client.js";
import { type ClusterBinding, clusterOf, jobCluster, sameCluster } from "../druid/cluster.js";
import { INGEST_KIND } from "../ingest/types.js";
import type { Store } from "../ledger/store.js";
import { isTerminal, type JobRow, type TaskRow } from "../ledger/types.js";
import { readCompactionConfig } from "../ops/compaction-config.js";
import { KILL_KIND } from "../ops/kill/plan.js";
import {
  type AuditReport,
  auditTimeline,
  DEFAULT_SIZE_BAND,
  explainGaps,
  type Gap,
  type GapFact,
} from "../work/audit.js";
import { bandWithCompactionConfig } from "../work/compaction-config.js";
import { coalesceIntervals, toTimelineSegment } from "../work/segments.js";
import { settleJob } from "./engine.js";
import { KINDS } from "./kinds.js";
import { gapReasonOf, partitionReport } from "./report.js";

/**
 * What a user does to work already in the ledger — cancel, retry, dead letters, the version audit — as
 * library functions, so the CLI commands and the HTTP API act the same way. Each is one ledger
 * operation per partition (a compare-and-set), safe to repeat.
 */

/** The job or partition named does not exist (HTTP 404; exit 2 in the CLI). */
export class NotFoundError extends UsageError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { ...details, notFound: true });
  }
}

/** The partition exists but is not in a state the action applies to (HTTP 409; exit 2 in the CLI). */
export class StateConflictError extends UsageError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, { ...details, conflict: true });
  }
}

export interface CancelResult {
  /** Unfinished partitions flagged; a running driver finishes each at its next step. */
  readonly flagged: number;
  /** Druid tasks asked to shut down (with `shutdown`). */
  readonly shutdown: string[];
}

/**
 * Cancels a job (every unfinished partition) or one partition. With `client`, also asks Druid to shut
 * down the tasks those partitions have running (each kind names them).
 */
export async function cancelWork(
  store: Store,
  id: string,
  options: { reason?: string; actor: string; client?: DruidClient; kinds?: readonly KindOfWork<never>[] },
): Promise<CancelResult> {
  const reason = options.reason ?? "canceled by user";
  const job = await store.getJob(id);
  const task = job ? null : await store.getTask(id);
  if (!job && !task) throw new NotFoundError(`no job or partition ${id} in the ledger`, { id });
  const kinds = options.kinds ?? KINDS;
  // Read before the cancel: a handed-back partition with a Druid task still running ends failed with it.
  const running = options.client ? await activeDruidTasks(store, job ? { job: id } : { task }, kinds) : [];
  const flagged = job
    ? await store.cancelJob(id, reason, options.actor)
    : (await store.cancelTask(id, reason, options.actor))
      ? 1
      : 0;
  // Partitions no driver held ended with the cancel: a job left with none to finish ends now.
  if (job) await settleJob(store, id, options.actor);
  const shutdown: string[] = [];
  if (options.client) {
    for (const druidId of running) {
      await options.client.shutdownTask(druidId);
      shutdown.push(druidId);
    }
  }
  return { flagged, shutdown };
}

/** Partitions read at once when a job's are walked: a page, then the event loop's other work. */
const TASK_PAGE = 1000;

/**
 * The Druid tasks the unfinished partitions of a job (or one partition) have running, each kind naming its
 * own. A job's partitions are read a page at a time: a 36,525-partition job read whole held a service 0.5 s.
 */
async function activeDruidTasks(
  store: Store,
  of: { job: string } | { task: TaskRow | null },
  kinds: readonly KindOfWork<never>[],
): Promise<string[]> {
  const active = (t: TaskRow) =>
    isTerminal(t.state) ? [] : (kinds.find((k) => k.name === t.kind)?.activeDruidTasks(t) ?? []);
  if ("task" in of) return of.task ? active(of.task) : [];
  const out: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.listTasks(of.job, { ...(after ? { afterId: after } : {}), limit: TASK_PAGE });
    for (const t of page) out.push(...active(t));
    after = page.at(-1)?.id;
    if (page.length < TASK_PAGE) return out;
    await yieldToEventLoop();
  }
}

/**
 * The open job of `kind` planned from the same request (`options.requestKey`), if any: a segment operation
 * asked again while its job is unfinished resumes that job instead of planning the work again (its chunks
 * in flight keep their Druid task ids).
 */
export async function openJobOfRequest(
  store: Store,
  kind: string,
  requestKey: unknown,
): Promise<JobRow | null> {
  if (typeof requestKey !== "string") return null;
  const open = await store.listJobs({ kind, state: "open", limit: 1000 });
  return open.find((j) => j.options.requestKey === requestKey) ?? null;
}

export interface RetryResult {
  readonly jobId: string;
  /** Partitions sent back to run (failed or dead-lettered before). */
  readonly sent: string[];
}

/** Sends a job's failed and dead-lettered partitions (or one partition) back to run; reopens the job. */
export async function retryWork(
  store: Store,
  id: string,
  actor: string,
  /**
   * Of a job: only these of its partitions (task ids), each failed or dead-lettered; all are checked before any
   * is sent back. Absent: every failed and dead-lettered partition of the job.
   */
  only?: readonly string[],
): Promise<RetryResult> {
  const job = await store.getJob(id);
  if (!job) {
    const task = await store.getTask(id);
    if (!task) throw new NotFoundError(`no job or partition ${id} in the ledger`, { id });
    if (!(await store.retryTask(id, actor)))
      throw new StateConflictError(`${id} is ${task.state}, not failed or dead-lettered`, { id });
    await settleJob(store, task.jobId, actor);
    return { jobId: task.jobId, sent: [id] };
  }
  const tasks = await store.listTasks(id);
  const ids = only
    ? chosenPartitions(id, tasks, only)
    : tasks.filter((t) => t.state === "failed" || t.state === "dead").map((t) => t.id);
  const sent: string[] = [];
  for (const taskId of ids) if (await store.retryTask(taskId, actor)) sent.push(taskId);
  if (job.state !== "open" && sent.length > 0)
    await store.setJobState(job.id, "open", "partitions retried", actor);
  return { jobId: job.id, sent };
}

/** The partitions a retry names, each a failed or dead-lettered one of the job, or the first reason one is not. */
function chosenPartitions(jobId: string, tasks: readonly TaskRow[], only: readonly string[]): string[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const unknown = only.filter((p) => !byId.has(p));
  if (unknown.length > 0)
    throw new NotFoundError(`not partitions of job ${jobId}: ${unknown.join(", ")}`, {
      id: jobId,
      partitions: unknown,
    });
  const notFailed = only
    .map((p) => byId.get(p) as TaskRow)
    .filter((t) => t.state !== "failed" && t.state !== "dead");
  if (notFailed.length > 0)
    throw new StateConflictError(
      `not failed or dead-lettered, nothing sent back: ${notFailed.map((t) => `${t.id} is ${t.state}`).join("; ")}`,
      { id: jobId, partitions: notFailed.map((t) => t.id) },
    );
  return [...new Set(only)];
}

/** A dead-lettered partition, or the reason it is not one. */
async function deadPartition(store: Store, id: string): Promise<TaskRow> {
  const task = await store.getTask(id);
  if (!task) throw new NotFoundError(`no partition ${id} in the ledger`, { id });
  if (task.state !== "dead")
    throw new StateConflictError(
      `${id} is not a dead-lettered partition (it is ${task.state}; see dlq list)`,
      {
        id,
      },
    );
  return task;
}

/** dead → new, its retry budget reset; the job reopens. */
export async function retryDeadLetter(store: Store, id: string, actor: string): Promise<TaskRow> {
  await deadPartition(store, id);
  const row = await store.retryDead(id, actor);
  if (!row) throw new StateConflictError(`${id} left the dead letters while being retried`, { id });
  const job = await store.getJob(row.jobId);
  if (job && job.state !== "open") await store.setJobState(job.id, "open", "dead letter retried", actor);
  return row;
}

/** dead → failed ("dropped"): kept for the audit trail, never run again; the job may settle. */
export async function dropDeadLetter(store: Store, id: string, actor: string): Promise<TaskRow> {
  await deadPartition(store, id);
  const row = await store.dropDead(id, actor);
  if (!row) throw new StateConflictError(`${id} left the dead letters while being dropped`, { id });
  await settleJob(store, row.jobId, actor);
  return row;
}

const ALL_TIME: Interval = parseInterval("1000-01-01/3000-01-01");

export interface AuditRequest {
  datasource: string;
  /** @default all time */
  interval?: string;
  granularity?: string;
}

export interface AuditResult extends Omit<AuditReport, "gaps"> {
  /** No used segment in the interval: not a pass (a misspelt datasource would otherwise read "OK"). */
  noSegments: boolean;
  problem?: string;
  /** With `options.gaps` only (`GET /api/v1/audit` documents its answer without them). */
  gaps?: Gap[];
}

export interface AuditOptions {
  /**
   * List the parts of the interval with no live data; with `store`, each with the ledger's reason where a
   * job of this datasource and cluster knows it.
   */
  gaps?: { store?: Store | null };
}

/** The version audit of a datasource over an interval: one live version per time chunk, all served. */
export async function auditDatasource(
  client: DruidClient,
  request: AuditRequest,
  options: AuditOptions = {},
): Promise<AuditResult> {
  const interval = request.interval ? parseInterval(request.interval) : ALL_TIME;
  const granularity: Granularity | undefined = request.granularity
    ? parseGranularityText(request.granularity)
    : undefined;
  const [used, served, compactionConfig] = await Promise.all([
    client.metadataSegments(request.datasource, [formatInterval(interval)]),
    client.servedSegments(request.datasource),
    readCompactionConfig(client, request.datasource),
  ]);
  const servedIds = new Set(served);
  const segments = used.map((s) => toTimelineSegment(s, servedIds));
  const { gaps, ...report } = auditTimeline({
    datasource: request.datasource,
    interval,
    segments,
    // The candidate rule judges chunks by the rows cap Druid's compaction of this datasource would use.
    sizeBand: bandWithCompactionConfig(DEFAULT_SIZE_BAND, compactionConfig),
    ...(granularity ? { granularity } : {}),
    ...(request.interval ? {} : { gapsWithin: spanOf(segments) }),
  });
  const store = options.gaps?.store;
  const explained = store ? await explainAuditGaps(store, client, request.datasource, gaps) : gaps;
  const withGaps = options.gaps ? { gaps: explained } : {};
  if (used.length > 0) return { ...report, noSegments: false, ...withGaps };
  const range = request.interval ? formatInterval(interval) : "all time";
  return {
    ...report,
    ok: false,
    noSegments: true,
    problem: `no segments of ${request.datasource} in ${range}; check the datasource name and the interval`,
    ...withGaps,
  };
}

/**
 * An audit's gaps with the ledger's reasons, where a job of the datasource on the client's cluster knows
 * them. Reads the ledger only when there is a gap.
 */
export async function explainAuditGaps(
  store: Store,
  client: { endpoints: ClusterBinding },
  datasource: string,
  gaps: readonly Gap[],
): Promise<Gap[]> {
  if (gaps.length === 0) return [];
  const spans = gaps.map((g) => parseInterval(g.interval));
  const window = spanOf(spans);
  return explainGaps(gaps, await gapFacts(store, datasource, window, clusterOf(client)));
}

/** From the first segment's start to the last one's end (an empty interval when there is none). */
function spanOf(segments: readonly { start: number; end: number }[]): Interval {
  if (segments.length === 0) return { start: 0, end: 0 };
  // A loop, not Math.min(...): a datasource can have more segments than a call takes arguments.
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const s of segments) {
    start = Math.min(start, s.start);
    end = Math.max(end, s.end);
  }
  return { start, end };
}

const JOB_PAGE = 500;

/**
 * What the ledger knows about the datasource over `window`: every ingestion partition (done or not) and
 * every done kill of the jobs of this datasource and cluster whose range meets the window. Reads the job
 * list page by page, and the partitions of the matching jobs only.
 */
async function gapFacts(
  store: Store,
  datasource: string,
  window: Interval,
  cluster: ClusterBinding,
): Promise<GapFact[]> {
  const facts: GapFact[] = [];
  let after: { createdAt: number; id: string } | undefined;
  for (;;) {
    const page = await store.listJobs({ limit: JOB_PAGE, ...(after ? { after } : {}) });
    for (const job of page) {
      if (job.options.datasource !== datasource || !jobMeets(job, window, cluster)) continue;
      for (const task of await store.listTasks(job.id)) facts.push(...factsOf(job.id, task, datasource));
    }
    const last = page[page.length - 1];
    if (!last || page.length < JOB_PAGE) return facts;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/** A job of the cluster (or of none recorded) whose range meets the window (or whose range is unknown). */
function jobMeets(job: JobRow, window: Interval, cluster: ClusterBinding): boolean {
  const bound = jobCluster(job);
  if (bound && !sameCluster(bound, cluster)) return false;
  if (typeof job.options.range !== "string") return true;
  try {
    return overlaps(parseInterval(job.options.range), window);
  } catch {
    return true;
  }
}

/**
 * One partition as facts: an ingestion over its interval (null reason when done), a done kill over the
 * intervals of the segments it deleted (its batch's span may reach over days it deleted nothing of).
 */
export function factsOf(jobId: string, task: TaskRow, datasource: string): GapFact[] {
  const base = { job: jobId, task: task.id, at: task.updatedAt };
  if (task.kind === INGEST_KIND) {
    const interval = intervalOrNull(partitionReport(task).interval);
    if (!interval) return [];
    return [{ ...base, interval, reason: gapReasonOf(task), error: task.lastError }];
  }
  if (task.kind === KILL_KIND && task.state === "done") {
    const ids = Array.isArray(task.payload.segmentIds) ? task.payload.segmentIds : [];
    const spans = ids
      .map((id) => (typeof id === "string" ? segmentIdInterval(id, datasource) : null))
      .filter((i): i is Interval => i !== null);
    return coalesceIntervals(spans).map((interval) => ({ ...base, interval, reason: "killed" as const }));
  }
  return [];
}

function intervalOrNull(text: unknown): Interval | null {
  if (typeof text !== "string") return null;
  try {
    return parseInterval(text);
  } catch {
    return null;
  }
}

/** `<datasource>_<start>_<end>_<version>[_<partition>]`: the instants hold no underscore. */
function segmentIdInterval(id: string, datasource: string): Interval | null {
  if (!id.startsWith(`${datasource}_`)) return null;
  const [start, end] = id.slice(datasource.length + 1).split("_");
  return intervalOrNull(`${start}/${end}`);
}
