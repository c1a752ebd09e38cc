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
    if ("status" in filter) return filter;
    const ds = ctx.params.dataSource ?? "";
    // An empty id list changes nothing (the resource returns 0 before asking the metadata store).
    if (filter.segmentIds?.length === 0) return changed(0);
    return changed(ctx.engine.markSegments(ds, to, filter));
  };
}

export function dataSourceRoutes(): Route[] {
  return [
    { method: "POST", path: `${BASE}/:dataSource/markUsed`, handler: mark("used") },
    { method: "POST", path: `${BASE}/:dataSource/markUnused`, handler: mark("unused") },
    {
      method: "POST",
      path: `${BASE}/:dataSource`,
      handler: ({ engine, params }) => changed(engine.markSegments(params.dataSource ?? "", "used", null)),
    },
    {
      method: "DELETE",
      path: `${BASE}/:dataSource`,
      handler: ({ engine, params }) => changed(engine.markSegments(params.dataSource ?? "", "unused", null)),
    },
    {
      method: "POST",
      path: `${BASE}/:dataSource/segments/:segmentId`,
      handler: ({ engine, params }) =>
        changed(
          engine.markSegments(
            params.dataSource ?? "",
            "used",
            { segmentIds: [params.segmentId ?? ""] },
            { plain: true },
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
