import { createHash } from "node:crypto";
import { z } from "zod";
import { canonicalJson, type JsonValue } from "../../core/canonical-json.js";
import { DEFAULTS } from "../../core/defaults.js";
import { refuseForRelease } from "../../ingest/release-check.js";
import {
  BackfillRequest,
  createPlannedJob,
  type IngestRequest,
  planRequestWithSources,
  RunRequest,
} from "../../jobs/requests.js";
import { adoptSources } from "../../jobs/rerun.js";
import { fileSystemProbe } from "../../jobs/source-probe.js";
import type { ApiDeps } from "../deps.js";
import { jsonResponse, location } from "../http.js";
import { jobView } from "../job-view.js";
import { ProblemError } from "../problems.js";
import { type Route, type RouteInput, route } from "../routes.js";
import * as S from "../schemas.js";

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

const idempotencyHeader = {
  name: "Idempotency-Key",
  description:
    "Optional. The same key with the same body returns the first response's job; with another body, 409.",
  schema: z.string().regex(IDEMPOTENCY_KEY),
};

const created = {
  201: { description: "The job was created", schema: S.Job },
  200: { description: "The same request was made before: the job it created", schema: S.Job },
};

/** Starting ingestion: a run (one interval) or a backfill (one partition per bucket of a range). */
export function startWorkRoutes(deps: ApiDeps): Route[] {
  return [
    route(
      {
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
      ({ c, body }) => startWork(deps, c, body, "run"),
    ),
    route(
      {
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
      ({ c, body }) => startWork(deps, c, body, "backfill"),
    ),
  ];
}

/** Creates (or finds again) the job a run/backfill request names. */
async function startWork(
  deps: ApiDeps,
  c: RouteInput["c"],
  request: IngestRequest,
  kind: "run" | "backfill",
): Promise<Response> {
  const { store } = deps;
  const key = idempotencyKeyOf(c.req.header("idempotency-key"));
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
  // Planned with Druid 33's rules; the cluster's release, once the service has read it, has the last word.
  refuseForRelease(plan, deps.client.knownCapabilities(), request.templateName);
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
      if (existing) return jsonResponse(c, 200, await jobView(store, existing), location(existing.id));
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
  return jsonResponse(c, created ? 201 : 200, await jobView(store, job), location(job.id));
}

/** The request's Idempotency-Key, if any; a malformed one is the caller's mistake, named. */
function idempotencyKeyOf(key: string | undefined): string | undefined {
  if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
    throw new ProblemError("invalid-request", "Idempotency-Key: 1 to 200 visible ASCII characters", {
      errors: [{ in: "header", path: "Idempotency-Key", message: "1 to 200 visible ASCII characters" }],
    });
  }
  return key;
}
