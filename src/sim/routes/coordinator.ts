import { type Interval, overlaps, parseInterval } from "../../core/interval.js";
import type { SimEngine } from "../engine.js";
import { empty, json, type Reply, text } from "../reply.js";
import type { Route, RouteContext } from "../router.js";
import { instantText, intervalText } from "../time.js";
import { isServed, isUsed, type SimSegment, segmentJson } from "../timeline.js";
import { versionTraits } from "../versions.js";

/** Coordinator endpoints under `/druid/coordinator/v1` (api-contract §3.1–§3.5). */
const BASE = "/druid/coordinator/v1";
const TIER = "_default_tier";
const DAY_MS = 24 * 3600 * 1000;

const served = (engine: SimEngine, ds: string) => engine.store.all(ds).filter((s) => isServed(s, engine.now));
const used = (engine: SimEngine, ds: string) => engine.store.used(ds, engine.now);
const has = (q: URLSearchParams, name: string) => q.has(name);

/** A segment list as Druid answers it: ids, or whole `DataSegment`s with `?full` (§3.2, §3.4). */
function segmentList(engine: SimEngine, segs: SimSegment[], query: URLSearchParams): Reply {
  return json(
    200,
    has(query, "full") ? segs.map((s) => segmentJson(s, engine.options.druidVersion)) : segs.map((s) => s.id),
  );
}

function servers(s: SimSegment): string[] {
  return s.servedAt === null ? [] : ["localhost:8083"];
}

/** Interval from a path or query value; Druid accepts `_` in place of `/`. */
function intervalParam(value: string): Interval | null {
  try {
    return parseInterval(value.includes("/") ? value : value.replace("_", "/"));
  } catch {
    return null;
  }
}

function servedDataSources(engine: SimEngine): string[] {
  return engine.store.dataSources().filter((ds) => served(engine, ds).length > 0);
}

function dataSourceSummary(segments: SimSegment[]): Record<string, unknown> {
  const size = segments.reduce((n, s) => n + s.size, 0);
  return {
    tiers: { [TIER]: { segmentCount: segments.length, size, replicatedSize: size } },
    segments: {
      count: segments.length,
      size,
      replicatedSize: size,
      minTime: instantText(Math.min(...segments.map((s) => s.interval.start))),
      maxTime: instantText(Math.max(...segments.map((s) => s.interval.end))),
    },
  };
}

function fullDataSource(engine: SimEngine, name: string, segments: SimSegment[]): Record<string, unknown> {
  return {
    name,
    properties: { created: instantText(0) },
    segments: segments.map((s) => segmentJson(s, engine.options.druidVersion)),
  };
}

/** Cluster `loadstatus` (§3.1): over all used segments, overshadowed included. */
function loadStatus({ engine, query }: RouteContext): Reply {
  const out: Record<string, unknown> = {};
  const full: Record<string, number> = {};
  for (const ds of engine.store.dataSources()) {
    const all = used(engine, ds);
    if (all.length === 0) continue;
    const unavailable = all.filter((s) => !isServed(s, engine.now)).length;
    if (has(query, "simple")) out[ds] = unavailable;
    else if (has(query, "full")) full[ds] = unavailable;
    else out[ds] = (100 * (all.length - unavailable)) / all.length;
  }
  return json(200, has(query, "full") ? { [TIER]: full } : out);
}

/** `datasources/{ds}/loadstatus` (§3.3): used, non-overshadowed segments overlapping the interval. */
function dataSourceLoadStatus({ engine, query, params }: RouteContext): Reply {
  const ds = params.dataSource ?? "";
  if (!query.has("forceMetadataRefresh"))
    return text(400, "Invalid request. forceMetadataRefresh must be specified", "application/json");
  const raw = query.get("interval");
  const interval = raw ? intervalParam(raw) : { start: engine.now - 14 * DAY_MS, end: engine.now };
  if (!interval) return text(400, `Invalid interval[${raw}]`);
  if (used(engine, ds).length === 0) return empty(204);
  const segments = engine.store.visible(ds, engine.now).filter((s) => overlaps(s.interval, interval));
  if (segments.length === 0) {
    // Current Druid sends the message as the entity of a 204, which HTTP drops (§3.3); a real Druid 33 answered
    // 200 with the text, in a body labelled JSON.
    return versionTraits(engine.options.druidVersion).emptyLoadStatusIs200
      ? text(200, "No used segment found for the given datasource and interval", "application/json")
      : empty(204);
  }
  const unavailable = segments.filter((s) => !isServed(s, engine.now)).length;
  if (has(query, "simple")) return json(200, { [ds]: unavailable });
  if (has(query, "full")) return json(200, { [TIER]: { [ds]: unavailable } });
  return json(200, { [ds]: (100 * (segments.length - unavailable)) / segments.length });
}

function intervalsOf(segments: SimSegment[]): Interval[] {
  const map = new Map<string, Interval>();
  for (const s of segments) map.set(intervalText(s.interval), s.interval);
  // Sorted descending by start, then end (§3.2).
  return [...map.values()].sort((a, b) => b.start - a.start || b.end - a.end);
}

function servedIntervals({ engine, params, query }: RouteContext): Reply {
  const segs = served(engine, params.dataSource ?? "");
  if (segs.length === 0) return empty(204);
  const intervals = intervalsOf(segs);
  if (has(query, "simple")) {
    const out: Record<string, unknown> = {};
    for (const i of intervals) {
      const inI = segs.filter((s) => s.interval.start === i.start && s.interval.end === i.end);
      out[intervalText(i)] = { size: inI.reduce((n, s) => n + s.size, 0), count: inI.length };
    }
    return json(200, out);
  }
  if (has(query, "full")) {
    const out: Record<string, Record<string, unknown>> = {};
    for (const s of segs) {
      const key = intervalText(s.interval);
      out[key] = {
        ...(out[key] ?? {}),
        [s.id]: { metadata: segmentJson(s, engine.options.druidVersion), servers: servers(s) },
      };
    }
    return json(200, out);
  }
  return json(200, intervals.map(intervalText));
}

async function postMetadataSegments(ctx: RouteContext): Promise<Reply> {
  let body: unknown;
  try {
    body = JSON.parse(await ctx.body());
  } catch {
    return json(400, { error: "Cannot deserialize request body: expected a JSON array of intervals" });
  }
  if (!Array.isArray(body)) {
    return json(400, {
      error:
        "Cannot deserialize value of type `java.util.ArrayList<org.joda.time.Interval>` from Object value",
    });
  }
  const intervals: Interval[] = [];
  for (const raw of body) {
    const i = intervalParam(String(raw));
    if (!i) return json(400, { error: `Invalid format: "${String(raw)}"` });
    intervals.push(i);
  }
  // Used segments overlapping any interval, overshadowed included (§3.4).
  const segs = used(ctx.engine, ctx.params.dataSource ?? "").filter((s) =>
    intervals.some((i) => overlaps(i, s.interval)),
  );
  return segmentList(ctx.engine, segs, ctx.query);
}

function metadataDataSources({ engine, query }: RouteContext): Reply {
  const includeUnused = has(query, "includeUnused") || has(query, "includeDisabled");
  const names = engine.store.dataSources().filter((ds) => includeUnused || used(engine, ds).length > 0);
  if (has(query, "full"))
    return json(
      200,
      names.map((n) => fullDataSource(engine, n, used(engine, n))),
    );
  return json(200, names);
}

/** `GET /metadata/segments?includeOvershadowedStatus` (§3.4): flattened `SegmentStatusInCluster`. */
function metadataSegments({ engine, query }: RouteContext): Reply {
  const filter = query.getAll("datasources");
  if (has(query, "includeRealtimeSegments") && !has(query, "includeOvershadowedStatus")) {
    return text(400, "includeRealtimeSegments requires includeOvershadowedStatus");
  }
  const names = engine.store.dataSources().filter((ds) => filter.length === 0 || filter.includes(ds));
  const out: unknown[] = [];
  for (const ds of names) {
    const shadowed = engine.store.overshadowed(ds);
    for (const s of used(engine, ds)) {
      if (!has(query, "includeOvershadowedStatus")) out.push(segmentJson(s, engine.options.druidVersion));
      else
        out.push({
          ...segmentJson(s, engine.options.druidVersion),
          overshadowed: shadowed.has(s.id),
          replicationFactor: 1,
          numRows: s.numRows,
          realtime: false,
        });
    }
  }
  return json(200, out);
}

export function coordinatorRoutes(): Route[] {
  return [
    { method: "GET", path: `${BASE}/loadstatus`, handler: loadStatus },
    { method: "GET", path: `${BASE}/leader`, handler: (ctx) => text(200, ctx.url, "application/json") },
    { method: "GET", path: `${BASE}/isLeader`, handler: () => json(200, { leader: true }) },
    {
      method: "GET",
      path: `${BASE}/datasources`,
      handler: ({ engine, query }) => {
        const names = servedDataSources(engine);
        if (has(query, "simple")) {
          return json(
            200,
            names.map((name) => ({ name, properties: dataSourceSummary(served(engine, name)) })),
          );
        }
        if (has(query, "full"))
          return json(
            200,
            names.map((n) => fullDataSource(engine, n, served(engine, n))),
          );
        return json(200, names);
      },
    },
    {
      method: "GET",
      path: `${BASE}/datasources/:dataSource`,
      handler: ({ engine, params }) => {
        const segs = served(engine, params.dataSource ?? "");
        return segs.length === 0 ? empty(204) : json(200, dataSourceSummary(segs));
      },
    },
    { method: "GET", path: `${BASE}/datasources/:dataSource/intervals`, handler: servedIntervals },
    {
      method: "GET",
      path: `${BASE}/datasources/:dataSource/intervals/:interval`,
      handler: ({ engine, params }) => {
        const segs = served(engine, params.dataSource ?? "");
        if (segs.length === 0) return empty(204);
        const interval = intervalParam(params.interval ?? "");
        if (!interval) return text(400, `Invalid interval[${params.interval}]`);
        return json(
          200,
          segs
            .filter((s) => interval.start <= s.interval.start && s.interval.end <= interval.end)
            .map((s) => s.id),
        );
      },
    },
    {
      method: "GET",
      path: `${BASE}/datasources/:dataSource/segments`,
      handler: ({ engine, params, query }) => {
        const segs = served(engine, params.dataSource ?? "");
        return segs.length === 0 ? empty(204) : segmentList(engine, segs, query);
      },
    },
    {
      method: "GET",
      path: `${BASE}/datasources/:dataSource/segments/:segmentId`,
      handler: ({ engine, params }) => {
        const s = engine.store.find(params.dataSource ?? "", params.segmentId ?? "");
        if (!s || !isServed(s, engine.now)) return empty(204);
        return json(200, { metadata: segmentJson(s, engine.options.druidVersion), servers: servers(s) });
      },
    },
    { method: "GET", path: `${BASE}/datasources/:dataSource/loadstatus`, handler: dataSourceLoadStatus },
    {
      method: "GET",
      path: `${BASE}/datasources/:dataSource/handoffComplete`,
      handler: ({ engine, params, query }) => {
        const interval = intervalParam(query.get("interval") ?? "");
        const version = query.get("version");
        const partition = Number(query.get("partitionNumber") ?? "0");
        if (!interval || version === null)
          return text(400, "interval, partitionNumber and version are required");
        const s = engine.store
          .all(params.dataSource ?? "")
          .find(
            (x) =>
              x.interval.start === interval.start &&
              x.interval.end === interval.end &&
              x.version === version &&
              x.partitionNum === partition,
          );
        return json(200, s !== undefined && isServed(s, engine.now));
      },
    },
    { method: "GET", path: `${BASE}/metadata/datasources`, handler: metadataDataSources },
    {
      method: "GET",
      path: `${BASE}/metadata/datasources/:dataSource`,
      handler: ({ engine, params }) => {
        const ds = params.dataSource ?? "";
        const segs = used(engine, ds);
        return segs.length === 0 ? empty(404) : json(200, fullDataSource(engine, ds, segs));
      },
    },
    {
      method: "GET",
      path: `${BASE}/metadata/datasources/:dataSource/segments`,
      handler: ({ engine, params, query }) => {
        const segs = used(engine, params.dataSource ?? "");
        return segs.length === 0 ? empty(404) : segmentList(engine, segs, query);
      },
    },
    {
      method: "POST",
      path: `${BASE}/metadata/datasources/:dataSource/segments`,
      handler: postMetadataSegments,
    },
    {
      method: "GET",
      path: `${BASE}/metadata/datasources/:dataSource/segments/:segmentId`,
      handler: ({ engine, params, query }) => {
        const ds = params.dataSource ?? "";
        const id = params.segmentId ?? "";
        if (!id.startsWith(`${ds}_`))
          return text(400, `Could not parse Segment ID[${id}] for DataSource[${ds}]`);
        const s = engine.store.find(ds, id);
        const includeUnused = query.get("includeUnused") === "true";
        if (!s || (!isUsed(s, engine.now) && !includeUnused)) return empty(404);
        return json(200, segmentJson(s, engine.options.druidVersion));
      },
    },
    { method: "GET", path: `${BASE}/metadata/segments`, handler: metadataSegments },
  ];
}
