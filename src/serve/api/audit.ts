import { bucketStart, increment, parseGranularityText } from "../../core/granularity.js";
import { parseInterval } from "../../core/interval.js";
import { auditDatasource } from "../../jobs/actions.js";
import type { ApiDeps } from "../deps.js";
import { jsonResponse } from "../http.js";
import { ProblemError } from "../problems.js";
import { type Route, route } from "../routes.js";
import * as S from "../schemas.js";

/** The version audit of a datasource, as `segops audit` reads it. */
export function auditRoutes(deps: ApiDeps): Route[] {
  return [
    route(
      {
        method: "get",
        path: "/api/v1/audit",
        operationId: "auditDatasource",
        summary: "The version audit of a datasource: one live version per time chunk, every segment served",
        tags: ["actions"],
        auth: true,
        query: S.AuditQuery,
        responses: {
          200: { description: "The audit (ok: false lists the violations)", schema: S.AuditResult },
        },
        problems: [400, 401, 503],
      },
      async ({ c, query }) => {
        refuseTooManyChunks(query);
        const report = await auditDatasource(deps.client, query).catch((error) => {
          throw fieldError(error);
        });
        return jsonResponse(c, 200, report);
      },
    ),
  ];
}

/** A malformed interval or granularity is the caller's mistake, named by its field; others pass as they are. */
function fieldError(error: unknown): unknown {
  if (error instanceof Error && "code" in error && ["Interval", "Granularity"].includes(String(error.code))) {
    const field = error.code === "Interval" ? "interval" : "granularity";
    return new ProblemError("invalid-request", `${field}: ${error.message}`, {
      errors: [{ in: "query", path: field, message: error.message }],
    });
  }
  return error;
}

/** At most this many chunks in one audit: each is built and answered (a day over all time is 730,000). */
const MAX_AUDIT_CHUNKS = 100_000;

/**
 * An audit whose granularity cuts the interval into more chunks than that is refused before any work: an
 * hour over all time would hold the event loop for minutes (found by the API fuzzer). Malformed values
 * are left to the audit itself, which names them.
 */
function refuseTooManyChunks(q: { interval?: string | undefined; granularity?: string | undefined }): void {
  if (!q.granularity) return;
  let chunks: number;
  try {
    const g = parseGranularityText(q.granularity);
    if (g.kind !== "period") return;
    const { start, end } = parseInterval(q.interval ?? "1000-01-01/3000-01-01");
    const first = bucketStart(g, start);
    chunks = (end - first) / Math.max(1, increment(g, first) - first);
  } catch {
    return;
  }
  if (chunks > MAX_AUDIT_CHUNKS) {
    const message = `about ${Math.round(chunks).toLocaleString("en-US")} chunks of ${q.granularity} in ${q.interval ?? "all time"}, more than ${MAX_AUDIT_CHUNKS.toLocaleString("en-US")}; narrow the interval or coarsen the granularity`;
    throw new ProblemError("invalid-request", `granularity: ${message}`, {
      errors: [{ in: "query", path: "granularity", message }],
    });
  }
}
