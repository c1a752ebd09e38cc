import { parseInterval } from "../../core/interval.js";
import { json, type Reply, text } from "../reply.js";
import type { Route, RouteContext } from "../router.js";
import { INVALID_FILTER_MESSAGE, isValidFilter, type SegmentFilter } from "../segment-state.js";

/**
 * The Overlord's segment update APIs under `/druid/indexer/v1/datasources` (`OverlordDataSourcesResource`,
 * docs/druid-api.md §3.7): mark segments used or unused by interval (and versions), by ids, one by id, or a
 * whole datasource. Every answer is `{"numChangedSegments": n, "segmentStateChanged": n > 0}`; an invalid filter
 * is a 400 in text.
 */
const BASE = "/druid/indexer/v1/datasources";

// `SegmentUpdateResponse`: observed on Druid 33.0.0 as {"numChangedSegments": 1, "segmentStateChanged": true}.
const changed = (n: number): Reply => json(200, { numChangedSegments: n, segmentStateChanged: n > 0 });

/**
 * The resource methods that mark segments used (and the one-segment markUnused) declare no `@Produces`: Jersey
 * finds no writer for the response unless the request accepts JSON, and answers 500 with an empty body
 * (observed on Druid 33.0.0 without an Accept header; with `Accept: application/json` they answer 200).
 */
async function needsJsonAccept(ctx: RouteContext, reply: () => Reply | Promise<Reply>): Promise<Reply> {
  const answer = await reply();
  // A text answer (the invalid-filter 400) has a writer whatever the client accepts; the JSON one does not.
  const accept = String(ctx.req.headers.accept ?? "");
  return answer.contentType === "application/json" && !/application\/json/i.test(accept)
    ? { status: 500 }
    : answer;
}

/** The body as `SegmentsToUpdateFilter` (Jackson: unknown properties fail, a bad interval fails). */
async function readFilter(ctx: RouteContext): Promise<SegmentFilter | Reply> {
  let body: unknown;
  try {
    const raw = await ctx.body();
    body = raw.trim() === "" ? null : JSON.parse(raw);
  } catch {
    return json(400, { error: "Cannot deserialize the request body as SegmentsToUpdateFilter" });
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    return text(400, INVALID_FILTER_MESSAGE);
  const o = body as Record<string, unknown>;
  const filter: SegmentFilter = {};
  if (o.interval !== undefined && o.interval !== null) {
    try {
      filter.interval = parseInterval(String(o.interval));
    } catch {
      return json(400, { error: `Invalid format: "${String(o.interval)}"` });
    }
  }
  if (o.segmentIds !== undefined && o.segmentIds !== null) {
    if (!Array.isArray(o.segmentIds)) return json(400, { error: "segmentIds must be an array of strings" });
    filter.segmentIds = o.segmentIds.map(String);
  }
  if (o.versions !== undefined && o.versions !== null) {
    if (!Array.isArray(o.versions)) return json(400, { error: "versions must be an array of strings" });
    filter.versions = o.versions.map(String);
  }
  return isValidFilter(filter) ? filter : text(400, INVALID_FILTER_MESSAGE);
}

function mark(to: "used" | "unused") {
  return async (ctx: RouteContext): Promise<Reply> => {
    const filter = await readFilter(ctx);
    // markUnused `@Produces` JSON, so even its text refusal is labelled application/json (observed on
    // Druid 33.0.0); markUsed declares nothing and answers text/plain.
    if ("status" in filter) return to === "unused" ? { ...filter, contentType: "application/json" } : filter;
    const ds = ctx.params.dataSource ?? "";
    return changed(ctx.engine.markSegments(ds, to, filter));
  };
}

export function dataSourceRoutes(): Route[] {
  return [
    {
      method: "POST",
      path: `${BASE}/:dataSource/markUsed`,
      handler: (ctx) => needsJsonAccept(ctx, () => mark("used")(ctx)),
    },
    { method: "POST", path: `${BASE}/:dataSource/markUnused`, handler: mark("unused") },
    {
      method: "POST",
      path: `${BASE}/:dataSource`,
      handler: (ctx) =>
        needsJsonAccept(ctx, () =>
          changed(ctx.engine.markSegments(ctx.params.dataSource ?? "", "used", null)),
        ),
    },
    {
      method: "DELETE",
      path: `${BASE}/:dataSource`,
      handler: ({ engine, params }) => changed(engine.markSegments(params.dataSource ?? "", "unused", null)),
    },
    {
      method: "POST",
      path: `${BASE}/:dataSource/segments/:segmentId`,
      handler: (ctx) =>
        needsJsonAccept(ctx, () =>
          changed(
            ctx.engine.markSegments(
              ctx.params.dataSource ?? "",
              "used",
              { segmentIds: [ctx.params.segmentId ?? ""] },
              { plain: true },
            ),
          ),
        ),
    },
    {
      method: "DELETE",
      path: `${BASE}/:dataSource/segments/:segmentId`,
      handler: ({ params, engine }) => {
        const ds = params.dataSource ?? "";
        const id = params.segmentId ?? "";
        if (!id.startsWith(`${ds}_`))
          return text(400, `Could not parse Segment ID[${id}] for DataSource[${ds}]`);
        return changed(engine.markSegments(ds, "unused", { segmentIds: [id] }));
      },
    },
  ];
}
