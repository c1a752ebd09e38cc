import type { z } from "zod";
import { formatInterval, type Interval, parseInterval } from "../../core/interval.js";
import { clusterOf } from "../../druid/cluster.js";
import { auditDatasource } from "../../jobs/actions.js";
import { toTimelineSegment } from "../../work/segments.js";
import { liveTimeline } from "../../work/timeline.js";
import * as D from "../dashboard-schemas.js";
import type { ApiDeps } from "../deps.js";
import { iso, jsonResponse } from "../http.js";
import { ProblemError } from "../problems.js";
import { type Route, route } from "../routes.js";
import { ourVersions } from "./our-versions.js";
import { timelineChunks } from "./timeline-chunks.js";

const SEGMENT_LIMIT = 5000;
const ALL_TIME = "1000-01-01T00:00:00.000Z/3000-01-01T00:00:00.000Z";

type SegmentView = ReturnType<typeof toTimelineSegment>;
type Status = "live" | "overshadowed" | "unused";

/** A datasource's segment timeline with its audit and gaps, for the dashboard's timeline view. */
export function timelineRoutes(deps: ApiDeps): Route[] {
  return [
    route(
      {
        method: "get",
        path: "/api/v1/datasources/{datasource}/timeline",
        operationId: "datasourceTimeline",
        summary:
          "A datasource's segments over an interval: live, overshadowed and unused versions, tombstones, sizes and rows, with the version audit, the gaps (parts with no live data, with the ledger's reason where it knows one) and the same per time chunk (its live version and state, what is overshadowed or unused, each version's figures)",
        tags: ["dashboard"],
        auth: true,
        params: D.DatasourceParam,
        query: D.TimelineQuery,
        responses: { 200: { description: "The timeline", schema: D.Timeline } },
        problems: [400, 401, 503],
      },
      async ({ c, params, query }) => jsonResponse(c, 200, await timelineOf(deps, params.datasource, query)),
    ),
  ];
}

async function timelineOf(deps: ApiDeps, datasource: string, q: z.infer<typeof D.TimelineQuery>) {
  const interval = q.interval ? intervalField(q.interval) : ALL_TIME;
  const window = parseInterval(interval);
  const [used, unused, served, { gaps, ...audit }, ours] = await Promise.all([
    deps.client.metadataSegments(datasource, [interval]),
    deps.client.unusedSegments(datasource, interval),
    deps.client.servedSegments(datasource),
    // Without an interval the audit looks for gaps between the first and last segment only.
    auditDatasource(
      deps.client,
      { datasource, ...(q.interval ? { interval } : {}) },
      { gaps: { store: deps.store } },
    ),
    ourVersions(deps.store, datasource, clusterOf(deps.client)),
  ]);
  const servedIds = new Set(served);
  const all = segmentViews(
    used.map((s) => toTimelineSegment(s, servedIds)),
    unused.map((u) => toTimelineSegment(u.segment, servedIds)),
    window,
    new Map(audit.compactionCandidates.map((cc) => [cc.segment, cc.reason])),
  );
  return {
    datasource,
    interval,
    segments: all.slice(0, SEGMENT_LIMIT),
    truncated: all.length > SEGMENT_LIMIT,
    // Of every segment, the truncated ones included: the lanes are whole however many segments there are.
    chunks: timelineChunks(all, ours),
    audit,
    gaps: gaps ?? [],
  };
}

/**
 * Every segment once, with its status — live or overshadowed among the used ones, else unused — newest
 * version first (pure). The two lists are read at once: a segment the Coordinator marked unused (or used
 * again) between the reads is in both, and is shown once, as the used list and the audit see it.
 */
export function segmentViews(
  used: readonly SegmentView[],
  unused: readonly SegmentView[],
  window: Interval,
  candidates: ReadonlyMap<string, string>,
) {
  const usedIds = new Set(used.map((s) => s.id));
  const liveIds = new Set(liveTimeline(used, window).flatMap((p) => p.live.map((s) => s.id)));
  const view = (s: SegmentView, status: Status) => segmentView(s, status, candidates.get(s.id) ?? null);
  return [
    ...used.map((s) => view(s, liveIds.has(s.id) ? "live" : "overshadowed")),
    ...unused.filter((u) => !usedIds.has(u.id)).map((u) => view(u, "unused")),
  ].sort((a, b) => (a.version < b.version ? 1 : a.version > b.version ? -1 : a.start < b.start ? -1 : 1));
}

function segmentView(s: SegmentView, status: Status, compactionCandidate: string | null) {
  return {
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
    compactionCandidate,
  };
}

/** The query's interval, canonical; a malformed one is named. */
function intervalField(text: string): string {
  try {
    return formatInterval(parseInterval(text));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ProblemError("invalid-request", `interval: ${message}`, {
      errors: [{ in: "query", path: "interval", message }],
    });
  }
}
