import type { Context } from "hono";
import { z } from "zod";
import { type Interval, parseInstant, parseInterval, parsePeriodMs } from "../core/interval.js";
import type { DruidClient } from "../druid/client.js";
import type { ClusterBinding } from "../druid/cluster.js";
import { openJobOfRequest } from "../jobs/actions.js";
import type { Store } from "../ledger/store.js";
import type { JobRow, NewJob, NewTask } from "../ledger/types.js";
import {
  COMPACT_KIND,
  inspectCompaction,
  inspectKill,
  inspectRollback,
  KILL_KIND,
  planCompaction,
  planKill,
  planRollback,
  ROLLBACK_KIND,
} from "../ops/index.js";
import { location } from "./http.js";
import { ProblemError } from "./problems.js";
import { type Route, route } from "./routes.js";
import * as S from "./schemas.js";

/**
 * Segment operations through the API (`POST /api/v1/compactions`, `/rollbacks`, `/kills`): the same
 * plans as `segops compact`, `rollback` and `kill` (src/ops/), read from Druid when the request arrives and
 * run by the service's worker like any job. A request is checked whole before anything is stored; a dry
 * run (the default for a kill, which deletes for good) answers with the plan and changes nothing; the same
 * request while its job is still open answers with that job, so a retried POST never plans the work twice.
 */

const MB = 1024 * 1024;
const Datasource = z.string().min(1, "must not be empty").max(500);
const IntervalText = z.string().min(1, "must not be empty").max(200);

export const CompactionRequest = z.strictObject({
  datasource: Datasource,
  /** ISO-8601 interval to compact. */
  interval: IntervalText,
  /** Every chunk with data, not only those the audit flags. @default false */
  all: z.boolean().optional(),
  /** Segments below this size (MiB) are small. @default 300 */
  minSegmentMb: z.number().int().min(1).max(1_000_000).optional(),
  /** Segments above this size (MiB) are large. @default 700 */
  maxSegmentMb: z.number().int().min(1).max(1_000_000).optional(),
  /** Rows per segment the compaction writes. @default 5,000,000 */
  maxRowsPerSegment: z.number().int().min(1).max(2_147_483_647).optional(),
  /** Answer with the plan and change nothing. @default false */
  dryRun: z.boolean().optional(),
});

export const RollbackRequest = z
  .strictObject({
    datasource: Datasource,
    interval: IntervalText,
    /** Restore this version in every chunk (exactly one of toVersion and before). */
    toVersion: z.string().min(1, "must not be empty").max(200).optional(),
    /** Restore, in each chunk, the newest version written before this instant. */
    before: z.string().min(1, "must not be empty").max(100).optional(),
    /** @default false */
    dryRun: z.boolean().optional(),
  })
  .refine((r) => (r.toVersion === undefined) !== (r.before === undefined), {
    message: "give exactly one of toVersion and before",
    path: ["toVersion"],
  });

export const KillRequest = z.strictObject({
  datasource: Datasource,
  interval: IntervalText,
  /** Only segments marked unused at least this long ago (ISO-8601 period, e.g. P30D). @default any */
  olderThan: z.string().min(1, "must not be empty").max(50).optional(),
  /** Only these versions. @default every version */
  versions: z.array(z.string().min(1).max(200)).max(1000).optional(),
  /** Segments per kill task. @default 100 */
  batchSize: z.number().int().min(1).max(10_000).optional(),
  /** A kill deletes for good: without `"dryRun": false` it only answers with what would go. @default true */
  dryRun: z.boolean().optional(),
});

/** What a dry run (or a request with nothing to do) answers: the plan, nothing stored or submitted. */
export const SegmentOpPlan = z.object({
  kind: z.enum([COMPACT_KIND, ROLLBACK_KIND, KILL_KIND]),
  datasource: z.string(),
  dryRun: z.boolean(),
  /** The job the plan would be (or is, when the request runs). */
  job: z.string(),
  /** Druid tasks or chunk operations the job would run; 0: nothing to do, no job is created. */
  tasks: z.number().int(),
  items: z.array(z.object({ interval: z.string(), what: z.string() })),
});
export type SegmentOpPlan = z.infer<typeof SegmentOpPlan>;

export interface SegmentOpDeps {
  store: Store;
  client: DruidClient;
  cluster: ClusterBinding;
  clock: { now(): number };
  /** Picks a new job up at once. */
  started(job: JobRow): Promise<void>;
  json(c: Context, status: number, body: unknown, headers?: Record<string, string>): Response;
  jobView(job: JobRow): Promise<S.Job>;
}

interface Planned {
  kind: SegmentOpPlan["kind"];
  job: NewJob;
  tasks: NewTask[];
  items: SegmentOpPlan["items"];
}

/** A body field that parses only past zod (an interval, an instant, a period), refused naming it. */
function field<T>(path: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ProblemError("invalid-request", `${path}: ${message}`, {
      errors: [{ in: "body", path, message }],
    });
  }
}

const intervalOf = (text: string): Interval => field("interval", () => parseInterval(text));

const periodMs = (text: string): number => field("olderThan", () => parsePeriodMs(text));

async function planCompactionOf(d: SegmentOpDeps, r: z.infer<typeof CompactionRequest>): Promise<Planned> {
  const kind = COMPACT_KIND;
  const band = { min: r.minSegmentMb ?? 300, max: r.maxSegmentMb ?? 700 };
  if (band.min >= band.max)
    throw new ProblemError(
      "invalid-request",
      `minSegmentMb (${band.min}) must be below maxSegmentMb (${band.max})`,
      {
        errors: [{ in: "body", path: "minSegmentMb", message: `must be below maxSegmentMb (${band.max})` }],
      },
    );
  const maxRows = r.maxRowsPerSegment ?? 5_000_000;
  const plan = planCompaction(
    await inspectCompaction(d.client, {
      datasource: r.datasource,
      interval: intervalOf(r.interval),
      all: r.all === true,
      sizeBand: { minBytes: band.min * MB, maxBytes: band.max * MB, maxRows },
      maxRowsPerSegment: maxRows,
      cluster: d.cluster,
    }),
  );
  return {
    kind,
    job: plan.job,
    tasks: plan.tasks,
    items: [
      ...plan.chunks.map((c) => ({
        interval: c.interval,
        what: `compact ${c.inputs.length} segment(s), ${c.bytes} bytes (${c.reasons.join("; ") || "all"})`,
      })),
      ...plan.skipped.map((s) => ({
        interval: s.interval,
        what: `skipped: a running task holds a lock on ${s.lockedBy}`,
      })),
    ],
  };
}

async function planRollbackOf(d: SegmentOpDeps, r: z.infer<typeof RollbackRequest>): Promise<Planned> {
  const kind = ROLLBACK_KIND;
  const target =
    r.toVersion !== undefined
      ? { version: r.toVersion }
      : { before: new Date(field("before", () => parseInstant(r.before as string))).toISOString() };
  const plan = planRollback(
    await inspectRollback(d.client, {
      datasource: r.datasource,
      interval: intervalOf(r.interval),
      target,
      cluster: d.cluster,
    }),
  );
  return {
    kind,
    job: plan.job,
    tasks: plan.tasks,
    items: plan.chunks.map((c) => ({
      interval: c.interval,
      what: `${c.newerVersions.length > 0 ? `mark ${c.newerVersions.join(", ")} unused, ` : ""}mark ${c.toVersion} used (${c.segmentIds.length} segment(s))`,
    })),
  };
}

async function planKillOf(d: SegmentOpDeps, r: z.infer<typeof KillRequest>): Promise<Planned> {
  const kind = KILL_KIND;
  const plan = planKill(
    await inspectKill(
      d.client,
      {
        datasource: r.datasource,
        interval: intervalOf(r.interval),
        olderThanMs: r.olderThan !== undefined ? periodMs(r.olderThan) : 0,
        ...(r.versions && r.versions.length > 0 ? { versions: r.versions } : {}),
        batchSize: r.batchSize ?? 100,
        cluster: d.cluster,
      },
      d.clock.now(),
      d.store,
    ),
  );
  return {
    kind,
    job: plan.job,
    tasks: plan.tasks,
    items: plan.batches.map((b) => ({
      interval: b.interval,
      what: `kill ${b.segmentIds.length} unused segment(s), ${b.bytes} bytes`,
    })),
  };
}

/** A segment operation's request: plan it, answer the plan for a dry run, else create (or find) its job. */
async function startOp(
  d: SegmentOpDeps,
  c: Context,
  body: { datasource: string; dryRun?: boolean | undefined },
  plan: () => Promise<Planned>,
): Promise<Response> {
  const planned = await plan();
  const { kind } = planned;
  const dryRun = body.dryRun ?? kind === KILL_KIND;
  const answer = (): SegmentOpPlan => ({
    kind,
    datasource: body.datasource,
    dryRun,
    job: planned.job.id,
    tasks: planned.tasks.length,
    items: planned.items,
  });
  if (dryRun) return d.json(c, 200, answer());
  // The same request still open (a retried POST, or one whose job has done part of its work, so that
  // planning it again gives other inputs): that job, not a second one.
  const open = await openJobOfRequest(d.store, kind, planned.job.options?.requestKey);
  if (open) return d.json(c, 200, await d.jobView(open), location(open.id));
  if (planned.tasks.length === 0) return d.json(c, 200, answer());
  const { job, created } = await d.store.createJob(planned.job, planned.tasks, "api");
  if (created) await d.started(job);
  return d.json(c, created ? 201 : 200, await d.jobView(job), location(job.id));
}

export function segmentOpRoutes(d: SegmentOpDeps): Route[] {
  const responses = (what: string) => ({
    201: { description: `The ${what} job was created`, schema: S.Job },
    200: {
      description: `A dry run or nothing to do (the plan), or the same request's ${what} job still open`,
      schema: z.union([SegmentOpPlan, S.Job]),
    },
  });
  const problems = [400, 401, 413, 415, 503];
  return [
    route(
      {
        method: "post",
        path: "/api/v1/compactions",
        operationId: "createCompaction",
        summary:
          "Compact a datasource's fragmented time chunks (one compact task per chunk, data checked unchanged)",
        tags: ["segments"],
        auth: true,
        body: CompactionRequest,
        responses: responses("compaction"),
        problems,
      },
      ({ c, body }) => startOp(d, c, body, () => planCompactionOf(d, body)),
    ),
    route(
      {
        method: "post",
        path: "/api/v1/rollbacks",
        operationId: "createRollback",
        summary: "Roll time chunks back to an earlier version (markUsed / markUnused, checked served)",
        tags: ["segments"],
        auth: true,
        body: RollbackRequest,
        responses: responses("rollback"),
        problems,
      },
      ({ c, body }) => startOp(d, c, body, () => planRollbackOf(d, body)),
    ),
    route(
      {
        method: "post",
        path: "/api/v1/kills",
        operationId: "createKill",
        summary: "Delete unused segments for good (kill tasks); a dry run unless dryRun is false",
        tags: ["segments"],
        auth: true,
        body: KillRequest,
        responses: responses("kill"),
        problems,
      },
      ({ c, body }) => startOp(d, c, body, () => planKillOf(d, body)),
    ),
  ];
}
