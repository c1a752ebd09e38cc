import { randomUUID } from "node:crypto";
import { jacksonParseError } from "../jackson-parse.js";
import { bindQuery } from "../native/bind.js";
import { bindError, NativeQueryError } from "../native/errors.js";
import { Located } from "../native/located-json.js";
import { jacksonPretty } from "../native/pretty.js";
import { runNative } from "../native/run.js";
import { empty, isJson, type Reply, text } from "../reply.js";
import type { Route, RouteContext } from "../router.js";

/**
 * Native queries (`POST /druid/v2`, `QueryResource`; docs/querying/querying.md): timeseries, topN, groupBy,
 * scan, segmentMetadata and timeBoundary over the rows Broker SQL reads (src/sim/native/). A body Jackson cannot
 * read or bind is a 400 in the legacy error shape, one not declared as JSON an empty 415; the answer carries the query id as Druid's does
 * (`X-Druid-Query-Id`, from `context.queryId` when given). `?pretty` indents the JSON as Jackson does.
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

export function nativeRoutes(): Route[] {
  return [
    // The router ignores a trailing slash: this is also `/druid/v2/`, the path pydruid posts to.
    { method: "POST", path: "/druid/v2", handler: query },
  ];
}
