import type { Context } from "hono";
import { z } from "zod";
import type { KindOfWork, KindRequest, PlannedRequest } from "../driver/kind.js";
import type { DruidClient } from "../druid/client.js";
import type { ClusterBinding } from "../druid/cluster.js";
import { openJobOfRequest } from "../jobs/actions.js";
import type { Store } from "../ledger/store.js";
import type { JobRow } from "../ledger/types.js";
import { location } from "./http.js";
import { type Route, route } from "./routes.js";
import * as S from "./schemas.js";

/**
 * The work a kind starts through the API (`POST /api/v1/compactions`, `/rollbacks`, `/kills`, and any
 * kind that declares a `request`): one route per kind, made from what the kind declares — its body
 * schema, how it reads Druid and plans, whether it is a dry run by default. The same plans as the CLI's,
 * read from Druid when the request arrives and run by the service's worker like any job. A request is
 * checked whole before anything is stored; a dry run answers with the plan and changes nothing; the same
 * request while its job is still open answers with that job, so a retried POST never plans the work twice.
 */

/** What a dry run (or a request with nothing to do) answers: the plan, nothing stored or submitted. */
export const SegmentOpPlan = z.object({
  /** The kind of work (`compact`, `rollback`, `kill`, …). */
  kind: z.string(),
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
  /** The kinds whose requests get a route (those that declare one). */
  kinds: readonly KindOfWork<never, never>[];
  /** Picks a new job up at once. */
  started(job: JobRow): Promise<void>;
  json(c: Context, status: number, body: unknown, headers?: Record<string, string>): Response;
  jobView(job: JobRow): Promise<S.Job>;
}

/** A kind's request: plan it, answer the plan for a dry run, else create (or find) its job. */
async function startOp(
  d: SegmentOpDeps,
  c: Context,
  kind: string,
  request: KindRequest<unknown>,
  body: { datasource: string; dryRun?: boolean | undefined },
): Promise<Response> {
  const dryRun = body.dryRun ?? request.dryRunByDefault === true;
  // The same request still open (a retried POST, or one whose job has done part of its work, so that
  // planning it again gives other inputs or a refusal): that job, not a second one, found before planning.
  const key = request.key(body, d.cluster);
  if (!dryRun) {
    const open = await openJobOfRequest(d.store, kind, key);
    if (open) return d.json(c, 200, await d.jobView(open), location(open.id));
  }
  const planned: PlannedRequest = await request.plan(
    { client: d.client, store: d.store, cluster: d.cluster, now: () => d.clock.now() },
    body,
  );
  const answer = (): SegmentOpPlan => ({
    kind,
    datasource: body.datasource,
    dryRun,
    job: planned.job.id,
    tasks: planned.tasks.length,
    items: [...planned.items],
  });
  if (dryRun || planned.tasks.length === 0) return d.json(c, 200, answer());
  const { job, created } = await d.store.createJob(
    { ...planned.job, options: { ...planned.job.options, requestKey: key } },
    planned.tasks,
    "api",
  );
  if (created) await d.started(job);
  return d.json(c, created ? 201 : 200, await d.jobView(job), location(job.id));
}

/** One `POST /api/v1/<resource>` per kind that declares a request. */
export function segmentOpRoutes(d: SegmentOpDeps): Route[] {
  const problems = [400, 401, 413, 415, 503];
  return d.kinds.flatMap((kind) => {
    const request = kind.request;
    if (!request) return [];
    const what = request.resource.replace(/s$/, "");
    return [
      route(
        {
          method: "post",
          path: `/api/v1/${request.resource}`,
          operationId: request.operationId,
          summary: request.summary,
          tags: ["segments"],
          auth: true,
          body: request.schema,
          responses: {
            201: { description: `The ${what} job was created`, schema: S.Job },
            200: {
              description: `A dry run or nothing to do (the plan), or the same request's ${what} job still open`,
              schema: z.union([SegmentOpPlan, S.Job]),
            },
          },
          problems,
        },
        ({ c, body }) => startOp(d, c, kind.name, request, body),
      ),
    ];
  });
}
