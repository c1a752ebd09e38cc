import { randomUUID } from "node:crypto";
import { formatInterval, type Interval, parseInterval } from "../../core/interval.js";
import { jacksonParseError } from "../jackson-parse.js";
import { bindQuery } from "../native/bind.js";
import { byInterval, union } from "../native/client-info.js";
import { segmentsOf } from "../native/data.js";
import { bindError, NativeQueryError } from "../native/errors.js";
import { Located } from "../native/located-json.js";
import { jacksonPretty } from "../native/pretty.js";
import { runNative } from "../native/run.js";
import { empty, isJson, jettyError, json, type Reply, text } from "../reply.js";
import type { Route, RouteContext } from "../router.js";

/**
 * Native queries (`POST /druid/v2`, `QueryResource`; docs/querying/querying.md): timeseries, topN, groupBy,
 * scan, segmentMetadata and timeBoundary over the rows Broker SQL reads (src/sim/native/). A body Jackson cannot
 * read or bind is a 400 in the legacy error shape, one not declared as JSON an empty 415; the answer carries the query id as Druid's does
 * (`X-Druid-Query-Id`, from `context.queryId` when given). `?pretty` indents the JSON as Jackson does. Beside it the
 * Broker's datasource catalogue (`GET /druid/v2/datasources…`, native/client-info.ts), which tools list tables from.
 */
async function query(ctx: RouteContext): Promise<Reply> {
  // `@Consumes` JSON and Smile: anything else is Jersey's empty 415 (observed on Druid 33 for text/plain).
  if (!isJson(ctx.req)) return empty(415);
  const raw = await ctx.body();
  let reply: Reply;
  let queryId: string = randomUUID();
  try {
    const parseError = jacksonParseError(raw);
    if (parseError) throw bindError(parseError.exception, parseError.message);
    const q = bindQuery(new Located(raw));
    if (typeof q.context.queryId === "string" && q.context.queryId !== "") queryId = q.context.queryId;
    const result = runNative(ctx.engine, q);
    const pretty = ctx.query.has("pretty");
    reply = text(200, pretty ? jacksonPretty(result) : JSON.stringify(result), "application/json");
    reply = { ...reply, headers: { "X-Druid-Query-Id": queryId, "X-Druid-Response-Context": "{}" } };
  } catch (error) {
    if (!(error instanceof NativeQueryError)) throw error;
    reply = error.reply;
  }
  return reply;
}

/** The `interval` parameter of the datasource catalogue, or the week before now; a Reply when it does not parse. */
function catalogueInterval(ctx: RouteContext): Interval | Reply {
  const text = ctx.query.get("interval");
  if (text === null) return { start: ctx.engine.now - 7 * 86_400_000, end: ctx.engine.now };
  try {
    return parseInterval(text.replace("_", "/"));
  } catch {
    // A real Druid 33 let `Intervals.of`'s DruidException through to Jetty's error page.
    const why = text.includes("/") ? `Invalid format: "${text}"` : `Format requires a '/' separator: ${text}`;
    return jettyError(`org.apache.druid.error.DruidException: Invalid interval[${text}]: [${why}]`);
  }
}

/** `GET /druid/v2/datasources/{ds}[/dimensions|/metrics]`: the catalogue's columns over an interval. */
function datasourceColumns(part: "both" | "dimensions" | "metrics") {
  return (ctx: RouteContext): Reply => {
    const window = catalogueInterval(ctx);
    if ("status" in window) return window;
    const segments = segmentsOf(ctx.engine, ctx.params.dataSource as string, [window]);
    if (part === "dimensions") return json(200, union(segments).dimensions);
    if (part === "metrics") return json(200, union(segments).metrics);
    if (ctx.query.has("full"))
      return json(
        200,
        Object.fromEntries(byInterval(segments, window).map((r) => [formatInterval(r.interval), r.columns])),
      );
    return json(200, union(segments));
  };
}

export function nativeRoutes(): Route[] {
  return [
    // The served datasources (the Broker's view), sorted: a real Druid lists them in no stable order.
    {
      method: "GET",
      path: "/druid/v2/datasources",
      handler: ({ engine }) =>
        json(
          200,
          engine.store
            .dataSources()
            .filter((ds) => engine.served(ds).length > 0)
            .sort(),
        ),
    },
    { method: "GET", path: "/druid/v2/datasources/:dataSource", handler: datasourceColumns("both") },
    {
      method: "GET",
      path: "/druid/v2/datasources/:dataSource/dimensions",
      handler: datasourceColumns("dimensions"),
    },
    {
      method: "GET",
      path: "/druid/v2/datasources/:dataSource/metrics",
      handler: datasourceColumns("metrics"),
    },
    // The router ignores a trailing slash: this is also `/druid/v2/`, the path pydruid posts to.
    { method: "POST", path: "/druid/v2", handler: query },
  ];
}
