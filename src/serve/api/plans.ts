import { z } from "zod";
import { DEFAULTS } from "../../core/defaults.js";
import { type DataGates, DEFAULT_GATES, formatUnparseableLimit } from "../../ingest/gates.js";
import { refuseForRelease } from "../../ingest/release-check.js";
import { inputSourceOf } from "../../ingest/source.js";
import type { IngestPayload } from "../../ingest/types.js";
import { BackfillRequest, type IngestRequest, planRequestYielding, RunRequest } from "../../jobs/requests.js";
import type { JsonObject } from "../../ledger/types.js";
import { externInputs } from "../../spec/extern.js";
import type { ApiDeps } from "../deps.js";
import { jsonResponse } from "../http.js";
import { type Route, type RouteInput, route } from "../routes.js";

/**
 * A run or backfill planned and not started: the job the request names, its partitions (the granularity's
 * buckets over the range) and each partition's input sources as its template renders them, and the gates
 * it would apply. Clients ask this instead of restating segops' rules (how a granularity buckets time, how
 * placeholders render): nothing is stored, submitted or fingerprinted.
 */

/** The data gates a job applies to each partition, as its request writes them. */
export const GatesView = z.object({
  /** A row count (`"10"`) or a percentage of the rows read (`"0.5%"`). */
  maxUnparseable: z.string(),
  minRows: z.number().int(),
  /** A percentage of the rows served before, e.g. `"20%"`; null: only a drop to nothing is refused. */
  maxRowDrop: z.string().nullable(),
});
export type GatesView = z.infer<typeof GatesView>;

const PlannedPartition = z.object({
  /** ISO-8601 interval, UTC. */
  interval: z.string(),
  /**
   * The Druid input sources the partition reads, its placeholders rendered: a native spec's
   * `ioConfig.inputSource`, an SQL template's `EXTERN` sources.
   */
  inputSources: z.array(z.record(z.string(), z.json())),
});

const Plan = z.object({
  /** The job the same request to `POST /api/v1/runs` or `/backfills` names. */
  jobId: z.string(),
  kind: z.enum(["run", "backfill"]),
  datasource: z.string(),
  /** The partition granularity: the request's, else the template's segment granularity. */
  granularity: z.json(),
  gates: GatesView,
  /** In time order. */
  partitions: z.array(PlannedPartition),
  /** What the template's validation warns about (Jackson's coercions, defaults), once each. */
  warnings: z.array(z.object({ path: z.string(), message: z.string() })),
});

export function gatesView(gates: DataGates | undefined): GatesView {
  const g = gates ?? DEFAULT_GATES;
  return {
    maxUnparseable: formatUnparseableLimit(g.maxUnparseable),
    minRows: g.minRows,
    maxRowDrop: g.maxRowDrop !== undefined ? `${g.maxRowDrop}%` : null,
  };
}

export function planRoutes(deps: ApiDeps): Route[] {
  const problems = [400, 401, 413, 415, 503];
  const planned = { 200: { description: "The plan; nothing was stored or submitted", schema: Plan } };
  return [
    route(
      {
        method: "post",
        path: "/api/v1/runs/plan",
        operationId: "planRun",
        summary: "Plan a run without starting it: its job id, partition, rendered input sources and gates",
        tags: ["jobs"],
        auth: true,
        body: RunRequest,
        responses: planned,
        problems,
      },
      ({ c, body }) => plan(deps, c, body, "run"),
    ),
    route(
      {
        method: "post",
        path: "/api/v1/backfills/plan",
        operationId: "planBackfill",
        summary:
          "Plan a backfill without starting it: its job id, partitions (the granularity's buckets), rendered input sources and gates",
        tags: ["jobs"],
        auth: true,
        body: BackfillRequest,
        responses: planned,
        problems,
      },
      ({ c, body }) => plan(deps, c, body, "backfill"),
    ),
  ];
}

async function plan(
  deps: ApiDeps,
  c: RouteInput["c"],
  request: IngestRequest,
  kind: "run" | "backfill",
): Promise<Response> {
  const planned = await planRequestYielding(kind, request, {
    cluster: deps.cluster,
    maxPartitions: deps.maxPartitionsPerRequest ?? DEFAULTS.maxPartitionsPerRequest,
  });
  refuseForRelease(planned, deps.client.knownCapabilities(), request.templateName);
  const payloads = planned.tasks.map((t) => t.payload as unknown as IngestPayload);
  return jsonResponse(c, 200, {
    jobId: planned.job.id,
    kind,
    datasource: planned.datasource,
    granularity: planned.job.options?.granularity ?? null,
    gates: gatesView(payloads[0]?.gates),
    partitions: payloads.map((p) => ({ interval: p.interval, inputSources: inputSourcesOf(p) })),
    warnings: planned.warnings.map((w) => ({ path: w.path, message: w.message })),
  });
}

function inputSourcesOf(payload: IngestPayload): JsonObject[] {
  if (payload.kind === "sql") {
    const query = payload.spec.query;
    return typeof query === "string" ? externInputs(query).map((e) => e.inputSource) : [];
  }
  const source = inputSourceOf(payload.spec);
  return source ? [source] : [];
}
