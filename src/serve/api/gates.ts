import { z } from "zod";
import { checkDataGates, type DataGates, DEFAULT_GATES, type RowStats } from "../../ingest/gates.js";
import { INGEST_KIND, type IngestPayload } from "../../ingest/types.js";
import { partitionReport } from "../../jobs/report.js";
import type { ApiDeps } from "../deps.js";
import { jsonResponse, mustGetJob } from "../http.js";
import { type Route, route } from "../routes.js";
import * as S from "../schemas.js";
import { GatesView, gatesView } from "./plans.js";

/**
 * A job's data gates and segops' verdict on each partition's row counters, so a client shows the gate's
 * answer (a Dagster check, say) instead of restating the rule: the verdict is the one the runner applies.
 */

const PartitionGates = z.object({
  task: z.string(),
  interval: z.string(),
  /** The gates of the partition's job; null for a kind of work without gates (compaction, kill, …). */
  gates: GatesView.nullable(),
  rowStats: S.RowStats.nullable(),
  /** Whether the row counters pass the gates; null when the partition has no gates. */
  passed: z.boolean().nullable(),
  /** Why they do not pass (segops' words, with the counters); null when they pass or there are no gates. */
  verdict: z.string().nullable(),
});

const GatesPage = z.object({
  items: z.array(PartitionGates),
  /** Pass as `after` for the next page; null on the last one. */
  next: z.string().nullable(),
});

/** Partitions a page holds unless asked for fewer. */
const PAGE = 1000;

export function gateRoutes(deps: ApiDeps): Route[] {
  const { store } = deps;
  return [
    route(
      {
        method: "get",
        path: "/api/v1/jobs/{id}/gates",
        operationId: "listJobGates",
        summary: "A job's data gates and their verdict on each partition's row counters, a page at a time",
        tags: ["jobs"],
        auth: true,
        params: S.JobId,
        query: S.PartitionsQuery,
        responses: { 200: { description: "A page of verdicts, in task-id (time) order", schema: GatesPage } },
        problems: [400, 401, 404, 503],
      },
      async ({ c, params, query }) => {
        const job = await mustGetJob(store, params.id);
        const limit = query.limit ?? PAGE;
        // One more than asked tells whether a next page exists without a second read.
        const rows = await store.listTasks(job.id, {
          ...(query.after !== undefined ? { afterId: query.after } : {}),
          limit: limit + 1,
        });
        const items = rows.slice(0, limit).map((t) => {
          const report = partitionReport(t);
          if (t.kind !== INGEST_KIND)
            return {
              task: t.id,
              interval: report.interval,
              gates: null,
              rowStats: null,
              passed: null,
              verdict: null,
            };
          const gates = (t.payload as unknown as IngestPayload).gates;
          const verdict = gateVerdict(report.rowStats, gates, report.parseErrors);
          return {
            task: t.id,
            interval: report.interval,
            gates: gatesView(gates),
            rowStats: report.rowStats,
            passed: verdict === null,
            verdict,
          };
        });
        return jsonResponse(c, 200, {
          items,
          next: rows.length > limit ? (items.at(-1)?.task ?? null) : null,
        });
      },
    ),
  ];
}

function gateVerdict(
  stats: RowStats | null,
  gates: DataGates | undefined,
  firstErrors: readonly string[],
): string | null {
  if (!stats) return "no row counters: the partition has not finished a Druid task";
  // Partitions planned before gates existed run under the defaults.
  return checkDataGates(stats, gates ?? DEFAULT_GATES, firstErrors);
}
