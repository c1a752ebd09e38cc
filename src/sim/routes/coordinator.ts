import { type Interval, overlaps, parseInterval } from "../../core/interval.js";
import { cloneOnlyViewOf, holdersOf } from "../cluster-engine.js";
import { auditJson } from "../coordinator.js";
import type { SimEngine } from "../engine.js";
import { instantText, intervalText } from "../instant-text.js";
import { empty, invalidInput, isJson, jettyError, json, jsonParseError, type Reply, text } from "../reply.js";
import type { Route, RouteContext } from "../router.js";
import { DEFAULT_RULES_KEY, DEFAULT_TIER, parseRules, RulesError } from "../rules.js";
import { isUsed, type SimSegment, segmentJson } from "../timeline.js";
import { versionTraits } from "../versions.js";
import { compactionConfigRoutes } from "./compaction.js";

/** Coordinator endpoints under `/druid/coordinator/v1` (docs/druid-api.md §3.1–§3.5). */
const BASE = "/druid/coordinator/v1";
const TIER = DEFAULT_TIER;
const DAY_MS = 24 * 3600 * 1000;
/** `druid.audit.manager.auditHistoryMillis`: history without `interval` or `count` covers the last week. */
const AUDIT_HISTORY_MS = 7 * DAY_MS;

const served = (engine: SimEngine, ds: string) => engine.served(ds);
const used = (engine: SimEngine, ds: string) => engine.store.used(ds, engine.now);
const has = (q: URLSearchParams, name: string) => q.has(name);

/** A segment list as Druid answers it: ids, or whole `DataSegment`s with `?full` (§3.2, §3.4). */
function segmentList(engine: SimEngine, segs: SimSegment[], query: URLSearchParams): Reply {
  return json(
    200,
    has(query, "full") ? segs.map((s) => segmentJson(s, engine.options.druidVersion)) : segs.map((s) => s.id),
  );
}

function servers(engine: SimEngine, s: SimSegment): string[] {
  return holdersOf(engine, s);
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

/**
 * Under-replication per tier (`SegmentReplicationStatus.getTierToDatasourceToUnderReplicated`): for each
 * segment the rules' required replicas per tier minus the replicas loaded there (the one Historical of
 * `_default_tier`); with `computeUsingClusterView`, the requirement is first capped by the tier's servers. With
 * Druid's default rule (two replicas) every loaded segment is one short, as on a one-Historical Druid.
 */
function underReplicated(
  engine: SimEngine,
  segments: SimSegment[],
  clusterView: boolean,
): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  const add = (tier: string, ds: string, n: number) => {
    const byDs = out[tier] ?? {};
    byDs[ds] = (byDs[ds] ?? 0) + n;
    out[tier] = byDs;
  };
  for (const s of segments) {
    const isServed = engine.isServed(s);
    if (engine.store.overshadowed(s.dataSource, engine.now).has(s.id)) {
      // Not evaluated by RunRules: only the replica it still has is known (required 0).
      if (isServed) add(TIER, s.dataSource, 0);
      continue;
    }
    const p = engine.placement(s);
    if (p.kind === null || p.kind === "drop") continue;
    const tiers = Object.keys(p.tiers).length === 0 ? { [TIER]: 0 } : p.tiers;
    if (isServed && !(TIER in tiers)) add(TIER, s.dataSource, 0);
    for (const [tier, required] of Object.entries(tiers)) {
      const loaded = tier === TIER && isServed ? 1 : 0;
      const wanted = clusterView ? Math.min(required, tier === TIER ? 1 : 0) : required;
      add(tier, s.dataSource, Math.max(wanted - loaded, 0));
    }
  }
  return out;
}

/**
 * Cluster `loadstatus` (§3.1, `CoordinatorResource.getLoadStatus`): the default form is the share of used
 * segments (overshadowed included) loaded anywhere; `simple` counts used segments not loaded that need a replica
 * (`getDatasourceToUnavailableSegmentCount`: zero-replica segments are not unavailable); `full` is the
 * under-replication per tier.
 */
function loadStatus({ engine, query }: RouteContext): Reply {
  if (has(query, "full")) {
    const all = engine.store.dataSources().flatMap((ds) => used(engine, ds));
    return json(200, underReplicated(engine, all, has(query, "computeUsingClusterView")));
  }
  const out: Record<string, unknown> = {};
  for (const ds of engine.store.dataSources()) {
    const all = used(engine, ds);
    if (all.length === 0) continue;
    const shadowed = engine.store.overshadowed(ds, engine.now);
    const notLoaded = all.filter((s) => !engine.isServed(s));
    if (has(query, "simple")) {
      out[ds] = notLoaded.filter((s) => {
        if (shadowed.has(s.id)) return true;
        const p = engine.placement(s);
        return !(p.kind === "load" && p.replicationFactor === 0);
      }).length;
    } else out[ds] = (100 * (all.length - notLoaded.length)) / all.length;
  }
  return json(200, out);
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
  const unavailable = segments.filter((s) => !engine.isServed(s)).length;
  if (has(query, "simple")) return json(200, { [ds]: unavailable });
  if (has(query, "full"))
    return json(200, underReplicated(engine, segments, has(query, "computeUsingClusterView")));
  return json(200, { [ds]: (100 * (segments.length - unavailable)) / segments.length });
}

/** The emulated Historical as `DruidServerMetadata` (the quickstart's one server of `_default_tier`). */
/** `DruidServerMetadata` of an emulated Historical (the one, or a clone of it: same tier and size). */
const historicalMetadata = (host: string) => ({
  name: host,
  host,
  hostAndTlsPort: null,
  maxSize: 300_000_000_000,
  type: "historical",
  tier: TIER,
  priority: 0,
});

/**
 * `GET /datasources/{ds}/intervals/{interval}/serverview` (§3.2a, `DataSourcesResource`): the served timeline's
 * `lookupWithIncompletePartitions(interval)` as `ImmutableSegmentLoadInfo`s. Never 204: a datasource nobody serves
 * (or never heard of) has no timeline and is `200 []`, like an interval without served segments.
 */
function serverView({ engine, params }: RouteContext): Reply {
  const raw = params.interval ?? "";
  const interval = intervalParam(raw);
  if (!interval) {
    // `Intervals.of` throws inside the resource: Jetty's 500 page (observed on Druid 33.0.0).
    const iso = raw.replaceAll("_", "/");
    const [first = "", second = ""] = iso.split("/");
    const reason = !iso.includes("/")
      ? `Format requires a '/' separator: ${iso}`
      : `Invalid format: "${intervalParam(`${first}/${first}`) ? second : first}"`;
    return jettyError(`org.apache.druid.error.DruidException: Invalid interval[${iso}]: [${reason}]`);
  }
  // The Coordinator's inventory lists clones too (the Broker leaves them out of queries, not the Coordinator); with
  // the Historical down, what its clones still hold is all there is.
  const ds = params.dataSource ?? "";
  return json(
    200,
    [...engine.servedView(ds, interval), ...cloneOnlyViewOf(engine, ds, interval)].map((s) => ({
      segment: segmentJson(s, engine.options.druidVersion),
      servers: holdersOf(engine, s).map(historicalMetadata),
    })),
  );
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
        [s.id]: { metadata: segmentJson(s, engine.options.druidVersion), servers: servers(engine, s) },
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
  // Used segments overlapping any interval, overshadowed included (§3.4), in store order; found through the
  // store's interval index (1,000 intervals × 200,000 segments compared pairwise took seconds).
  const ds = ctx.params.dataSource ?? "";
  const hit = new Set<SimSegment>();
  for (const i of intervals)
    for (const s of ctx.engine.store.overlapping(ds, i)) if (isUsed(s, ctx.engine.now)) hit.add(s);
  const segs = hit.size === 0 ? [] : ctx.engine.store.all(ds).filter((s) => hit.has(s));
  return segmentList(ctx.engine, segs, ctx.query);
}

/**
 * `GET /metadata/datasources/{ds}/unusedSegments?interval=&limit=` (`MetadataResource`, docs/druid-api.md
 * §3.7): unused segments overlapping the interval as `DataSegmentPlus` objects, ordered by id.
 */
function unusedSegments({ engine, params, query }: RouteContext): Reply {
  const ds = params.dataSource ?? "";
  const limitText = query.get("limit");
  const limit = limitText === null ? null : Number(limitText);
  if (limit !== null && (!Number.isInteger(limit) || limit < 0))
    return invalidInput(`Invalid limit[${limitText}] specified. Limit must be > 0.`);
  const intervalText = query.get("interval");
  const interval = intervalText === null ? null : intervalParam(intervalText);
  if (intervalText !== null && interval === null)
    return json(400, { error: `Invalid format: "${intervalText}"` });
  const segs = engine.store
    .all(ds)
    .filter((s) => !isUsed(s, engine.now) && (interval === null || overlaps(interval, s.interval)))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return json(
    200,
    segs.slice(0, limit ?? segs.length).map((s) => ({
      dataSegment: segmentJson(s, engine.options.druidVersion),
      createdDate: instantText(s.publishedAt),
      usedStatusLastUpdatedDate: s.unusedAt === null ? null : instantText(s.unusedAt),
      used: false,
    })),
  );
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
          replicationFactor: engine.replicationFactor(s),
          numRows: s.numRows,
          realtime: false,
        });
    }
  }
  return json(200, out);
}

/** The caller's address as Druid's `AuditInfo.ip` records it. */
function remoteIp(ctx: RouteContext): string {
  return String(ctx.req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
}

function header(ctx: RouteContext, name: string): string {
  const v = ctx.req.headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? "";
}

/**
 * `POST /rules/{ds}` (`RulesResource.setDatasourceRules`): 200 with no body; the `X-Druid-Author` and
 * `X-Druid-Comment` headers go to the audit log. Druid 33 does not validate the rule order.
 */
async function setRules(ctx: RouteContext): Promise<Reply> {
  if (!isJson(ctx.req)) return empty(415);
  const ds = ctx.params.dataSource ?? "";
  const raw = await ctx.body();
  let value: unknown = null;
  if (raw.trim() !== "") {
    try {
      value = JSON.parse(raw);
    } catch {
      return jsonParseError(raw);
    }
  }
  let rules: ReturnType<typeof parseRules>;
  try {
    rules = parseRules(value, ctx.engine.options.druidVersion);
    // `overrideRule`: "Cluster-level rules cannot be empty." (an IAE Druid 33 answers as an empty 500).
    if (rules.length === 0 && ds === DEFAULT_RULES_KEY) throw new RulesError(500);
  } catch (error) {
    if (!(error instanceof RulesError)) throw error;
    return error.body ? json(error.status, error.body) : empty(error.status);
  }
  ctx.engine.setRules(ds, rules, {
    author: header(ctx, "x-druid-author"),
    comment: header(ctx, "x-druid-comment"),
    ip: remoteIp(ctx),
  });
  return empty(200);
}

/**
 * `GET /rules[/{ds}]/history` (`RulesResource.getRuleHistory`): with `count`, the newest N entries first; else the
 * entries within `interval` (default: the last week), oldest first. A bad interval is Druid's 500 page.
 */
function ruleHistory(ctx: RouteContext, key?: string): Reply {
  const entries = ctx.engine.rules.history(key);
  const count = ctx.query.get("count");
  const rawInterval = ctx.query.get("interval");
  if (rawInterval === null && count !== null) {
    return json(
      200,
      [...entries]
        .reverse()
        .slice(0, Math.max(0, Number(count) || 0))
        .map(auditJson),
    );
  }
  let interval: Interval;
  if (rawInterval === null) interval = { start: ctx.engine.now - AUDIT_HISTORY_MS, end: ctx.engine.now };
  else {
    const parsed = rawInterval.includes("/") ? intervalParam(rawInterval) : null;
    if (!parsed) {
      return jettyError(
        `org.apache.druid.error.DruidException: Invalid interval[${rawInterval}]: [Format requires a '/' separator: ${rawInterval}]`,
      );
    }
    interval = parsed;
  }
  return json(200, entries.filter((a) => a.at >= interval.start && a.at <= interval.end).map(auditJson));
}

/**
 * `POST /config` (`CoordinatorDynamicConfigsResource.setDynamicConfigs`): the fields given replace the current
 * ones (Druid's builder starts from the current config); unknown fields are ignored; 200 with no body.
 */
async function setDynamicConfig(ctx: RouteContext): Promise<Reply> {
  if (!isJson(ctx.req)) return empty(415);
  let value: unknown;
  const raw = await ctx.body();
  try {
    value = JSON.parse(raw);
  } catch {
    return jsonParseError(raw);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    const kind = Array.isArray(value) ? "Array value (token `JsonToken.START_ARRAY`)" : "a scalar value";
    return json(400, {
      error: `Cannot deserialize value of type \`org.apache.druid.server.coordinator.CoordinatorDynamicConfig$Builder\` from ${kind}`,
    });
  }
  const update: Record<string, unknown> = {};
  const known = ctx.engine.dynamicConfig;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!(k in known)) continue;
    if (typeof known[k] === "number" && typeof v !== "number") {
      const n = Number(v);
      if (typeof v !== "string" || !Number.isFinite(n)) {
        return json(400, {
          error: `Cannot deserialize value of type \`long\` from String ${JSON.stringify(String(v))}: not a valid \`long\` value`,
        });
      }
      update[k] = n;
    } else update[k] = v;
  }
  ctx.engine.setDynamicConfig(update);
  return empty(200);
}

export function coordinatorRoutes(): Route[] {
  return [
    ...configRoutes(),
    ...ruleRoutes(),
    ...statusRoutes(),
    ...servedDataSourceRoutes(),
    ...metadataRoutes(),
  ];
}

/** Coordinator dynamic config (docs/api-reference/dynamic-configuration-api.md) and the compaction config. */
function configRoutes(): Route[] {
  return [
    { method: "GET", path: `${BASE}/config`, handler: ({ engine }) => json(200, engine.dynamicConfig) },
    // The cluster compaction config (`DruidCompactionConfig`: Druid 33's defaults until the Overlord's
    // `…/compaction/config/cluster` changes them) and the datasources' auto-compaction configs (docs/druid-api.md
    // §3.9; the emulator's duty: auto-compact.ts).
    {
      method: "GET",
      path: `${BASE}/config/compaction`,
      handler: ({ engine }) =>
        json(200, {
          compactionConfigs: engine.compactionConfigs.all(),
          compactionTaskSlotRatio: engine.clusterCompaction.compactionTaskSlotRatio,
          maxCompactionTaskSlots: engine.clusterCompaction.maxCompactionTaskSlots,
          compactionPolicy: { type: "newestSegmentFirst", priorityDatasource: null },
          useSupervisors: engine.clusterCompaction.useSupervisors,
          engine: engine.clusterCompaction.engine,
        }),
    },
    { method: "POST", path: `${BASE}/config`, handler: setDynamicConfig },
    ...compactionConfigRoutes(),
  ];
}
/** Retention rules (`RulesResource`, docs/api-reference/retention-rules-api.md). */
function ruleRoutes(): Route[] {
  return [
    { method: "GET", path: `${BASE}/rules`, handler: ({ engine }) => json(200, engine.rules.all()) },
    { method: "GET", path: `${BASE}/rules/history`, handler: (ctx) => ruleHistory(ctx) },
    {
      method: "GET",
      path: `${BASE}/rules/:dataSource`,
      handler: ({ engine, params, query }) => {
        const ds = params.dataSource ?? "";
        return json(200, has(query, "full") ? engine.rules.withDefault(ds) : engine.rules.get(ds));
      },
    },
    { method: "POST", path: `${BASE}/rules/:dataSource`, handler: setRules },
    {
      method: "GET",
      path: `${BASE}/rules/:dataSource/history`,
      handler: (ctx) => ruleHistory(ctx, ctx.params.dataSource ?? ""),
    },
  ];
}

/** The cluster's load status and the leader. */
function statusRoutes(): Route[] {
  return [
    { method: "GET", path: `${BASE}/loadstatus`, handler: loadStatus },
    { method: "GET", path: `${BASE}/leader`, handler: (ctx) => text(200, ctx.url, "application/json") },
    { method: "GET", path: `${BASE}/isLeader`, handler: () => json(200, { leader: true }) },
  ];
}

/** `/datasources/…`: what the Coordinator serves (an unserved datasource answers 204). */
function servedDataSourceRoutes(): Route[] {
  return [
    { method: "GET", path: `${BASE}/datasources`, handler: listServedDataSources },
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
      handler: servedSegmentsWithin,
    },
    {
      method: "GET",
      path: `${BASE}/datasources/:dataSource/intervals/:interval/serverview`,
      handler: serverView,
    },
    {
      method: "GET",
      path: `${BASE}/datasources/:dataSource/segments`,
      handler: ({ engine, params, query }) => {
        const segs = served(engine, params.dataSource ?? "");
        return segs.length === 0 ? empty(204) : segmentList(engine, segs, query);
      },
    },
    { method: "GET", path: `${BASE}/datasources/:dataSource/segments/:segmentId`, handler: servedSegment },
    { method: "GET", path: `${BASE}/datasources/:dataSource/loadstatus`, handler: dataSourceLoadStatus },
    { method: "GET", path: `${BASE}/datasources/:dataSource/handoffComplete`, handler: handoffComplete },
  ];
}

/** `/metadata/…`: what the metadata store holds as used (an unknown datasource answers 404). */
function metadataRoutes(): Route[] {
  return [
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
      handler: metadataSegment,
    },
    { method: "GET", path: `${BASE}/metadata/segments`, handler: metadataSegments },
    {
      method: "GET",
      path: `${BASE}/metadata/datasources/:dataSource/unusedSegments`,
      handler: unusedSegments,
    },
  ];
}

/** `GET /datasources`: the served datasources' names, or with `?simple`/`?full` their summaries. */
function listServedDataSources({ engine, query }: RouteContext): Reply {
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
}

/** `GET /datasources/{ds}/intervals/{interval}`: ids of the served segments inside the interval. */
function servedSegmentsWithin({ engine, params }: RouteContext): Reply {
  const segs = served(engine, params.dataSource ?? "");
  if (segs.length === 0) return empty(204);
  const interval = intervalParam(params.interval ?? "");
  if (!interval) return text(400, `Invalid interval[${params.interval}]`);
  return json(
    200,
    segs.filter((s) => interval.start <= s.interval.start && s.interval.end <= interval.end).map((s) => s.id),
  );
}

/** `GET /datasources/{ds}/segments/{id}`: a served segment with the servers holding it. */
function servedSegment({ engine, params }: RouteContext): Reply {
  const s = engine.store.find(params.dataSource ?? "", params.segmentId ?? "");
  if (!s || !engine.isServed(s)) return empty(204);
  return json(200, {
    metadata: segmentJson(s, engine.options.druidVersion),
    servers: servers(engine, s),
  });
}

/** `GET /datasources/{ds}/handoffComplete`: whether the one segment named by the query is served. */
function handoffComplete({ engine, params, query }: RouteContext): Reply {
  const interval = intervalParam(query.get("interval") ?? "");
  const version = query.get("version");
  const partition = Number(query.get("partitionNumber") ?? "0");
  if (!interval || version === null) return text(400, "interval, partitionNumber and version are required");
  const s = engine.store
    .all(params.dataSource ?? "")
    .find(
      (x) =>
        x.interval.start === interval.start &&
        x.interval.end === interval.end &&
        x.version === version &&
        x.partitionNum === partition,
    );
  return json(200, s !== undefined && engine.isServed(s));
}

/** `GET /metadata/datasources/{ds}/segments/{id}`: a used segment (or an unused one with `includeUnused`). */
function metadataSegment({ engine, params, query }: RouteContext): Reply {
  const ds = params.dataSource ?? "";
  const id = params.segmentId ?? "";
  if (!id.startsWith(`${ds}_`)) return text(400, `Could not parse Segment ID[${id}] for DataSource[${ds}]`);
  const s = engine.store.find(ds, id);
  const includeUnused = query.get("includeUnused") === "true";
  if (!s || (!isUsed(s, engine.now) && !includeUnused)) return empty(404);
  return json(200, segmentJson(s, engine.options.druidVersion));
}
