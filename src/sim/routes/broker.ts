import { randomUUID } from "node:crypto";
import { druidError, empty, invalidInput, isJson, json, type Reply, text } from "../reply.js";
import type { Route, RouteContext } from "../router.js";
import {
  type Column,
  nativeType,
  type OutValue,
  position,
  SqlError,
  SqlPlanningError,
  type SqlResult,
  SqlRuntimeError,
  Timestamp,
  UnsupportedSqlError,
  unsupported,
} from "../sql.js";
import type { Span } from "../sql-ast.js";
import { catalog, SCHEMAS, type SqlTable } from "../sql-catalog.js";
import { runSql, type TableSource } from "../sql-exec.js";
import { SqlSyntaxError } from "../sql-lex.js";
import { bindParameters, SqlParameterCastError, type SqlParameterValue } from "../sql-parameters.js";
import { resolveZone, timestampText, type Zone } from "../sql-time.js";
import { versionTraits } from "../versions.js";

/**
 * Broker SQL (`POST /druid/v2/sql`, docs/druid-api.md §3.6; `SqlResource`, `SqlQuery`): the request fields as
 * Druid's `SqlQuery` binds them, the query id headers, `sqlTimeZone`, the result formats with `header`,
 * `typesHeader` and `sqlTypesHeader`, and the tables of sql-catalog.ts.
 */

const JETTY_SOURCE = "(org.eclipse.jetty.server.HttpInputOverHTTP)";
const FORMATS = ["object", "array", "objectLines", "arrayLines", "csv"] as const;
type Format = (typeof FORMATS)[number];

/** Jackson's 1-based line and column of a body offset (`at [Source: …; line: L, column: C]`). */
function jsonLocation(body: string, offset: number): string {
  const before = body.slice(0, offset).split("\n");
  return `line: ${before.length}, column: ${(before.at(-1)?.length ?? 0) + 1}`;
}

/**
 * A request `SqlQuery`'s constructor refuses: the legacy `{"error":"Unknown exception",…}` shape a real Druid 33
 * sent with a 400 for a bad `resultFormat`, a non-boolean `header` or `typesHeader` without `header`.
 */
function badRequest(errorMessage: string, errorClass: string): Reply {
  return json(400, { error: "Unknown exception", errorMessage, errorClass, host: null });
}

const INSTANTIATION = "com.fasterxml.jackson.databind.exc.ValueInstantiationException";

/** Where a top-level field's value starts in the raw body (for Jackson's location). */
function valueOffset(raw: string, field: string): number {
  const m = new RegExp(`"${field}"\\s*:\\s*`).exec(raw);
  return m ? m.index + m[0].length : raw.length;
}

function sqlError(message: string, position: Record<string, string> = {}): Reply {
  return invalidInput(message, { sourceType: "sql", ...position });
}

/** Line/column context of a span of the query (1-based, end inclusive), as Druid attaches to parse errors. */
function spanContext(query: string, span: [number, number]): Record<string, string> {
  const from = position(query, span[0]);
  const to = position(query, span[1]);
  return {
    line: String(from.line),
    column: String(from.column),
    endLine: String(to.line),
    endColumn: String(to.column),
  };
}

/**
 * Finds the table a FROM names, or throws Calcite's unknown-object error as a real Druid 33 words it. Names are
 * case-sensitive; a name that differs only in case gets `did you mean`. The position spans the table reference as
 * written (quotes and schema included).
 */
function resolveTable(tables: SqlTable[], parts: string[], span: Span): TableSource {
  if (parts.length > 2) throw new SqlError(`Object '${parts[0]}' not found`, span);
  const schemaName = parts.length === 2 ? (parts[0] as string) : null;
  const tableName = parts.at(-1) as string;
  const schema = schemaName ?? "druid";
  if (schemaName !== null && !(SCHEMAS as readonly string[]).includes(schemaName)) {
    const near = SCHEMAS.find((s) => s.toLowerCase() === schemaName.toLowerCase());
    throw new SqlError(`Object '${schemaName}' not found${near ? `; did you mean '${near}'?` : ""}`, span);
  }
  const inSchema = tables.filter((t) => t.schema === schema);
  const exact = inSchema.find((t) => t.name === tableName);
  if (exact) {
    const rows = exact.rows;
    if (!rows) throw unsupported(`Querying ${exact.schema}.${exact.name}`);
    return {
      columns: exact.columns,
      rows,
      system: exact.schema !== "druid",
      dataSource: exact.schema === "druid" ? exact.name : null,
    };
  }
  const near = inSchema.find((t) => t.name.toLowerCase() === tableName.toLowerCase());
  if (near)
    throw new SqlError(
      `Object '${tableName}' not found within '${schema}'; did you mean '${near.name}'?`,
      span,
    );
  throw new SqlError(
    `Object '${tableName}' not found${schemaName === null ? "" : ` within '${schema}'`}`,
    span,
  );
}

interface Request {
  query: string;
  format: Format;
  header: boolean;
  typesHeader: boolean;
  sqlTypesHeader: boolean;
  context: Record<string, unknown>;
  parameters: SqlParameterValue[];
}

/** Binds the body the way `SqlQuery`'s Jackson constructor does; a Reply is Druid's refusal. */
function readRequest(raw: string, body: Record<string, unknown>): Request | Reply {
  const bool = (field: string): boolean | Reply => {
    const v = body[field];
    if (v === undefined || v === null || v === false || v === "false" || v === "False" || v === "FALSE")
      return false;
    if (v === true || v === "true" || v === "True" || v === "TRUE") return true;
    return badRequest(
      `Cannot deserialize value of type \`boolean\` from ${typeof v === "string" ? "String" : "Number"} ${JSON.stringify(v)}: only "true"/"True"/"TRUE" or "false"/"False"/"FALSE" recognized\n at [Source: ${JETTY_SOURCE}; ${jsonLocation(raw, valueOffset(raw, field))}] (through reference chain: org.apache.druid.sql.http.SqlQuery["${field}"])`,
      "com.fasterxml.jackson.databind.exc.InvalidFormatException",
    );
  };
  const end = `at [Source: ${JETTY_SOURCE}; ${jsonLocation(raw, raw.trimEnd().length)}]`;
  if (typeof body.query !== "string") {
    return badRequest(
      `Cannot construct instance of \`org.apache.druid.sql.http.SqlQuery\`, problem: query\n ${end}`,
      INSTANTIATION,
    );
  }
  let format: Format = "object";
  if (body.resultFormat !== undefined && body.resultFormat !== null) {
    const wanted = String(body.resultFormat);
    const found = FORMATS.find((f) => f.toLowerCase() === wanted.toLowerCase());
    if (!found) {
      return badRequest(
        `Cannot construct instance of \`org.apache.druid.sql.http.ResultFormat\`, problem: No enum constant org.apache.druid.sql.http.ResultFormat.${wanted.toUpperCase()}\n at [Source: ${JETTY_SOURCE}; ${jsonLocation(raw, valueOffset(raw, "resultFormat"))}] (through reference chain: org.apache.druid.sql.http.SqlQuery["resultFormat"])`,
        INSTANTIATION,
      );
    }
    format = found;
  }
  const header = bool("header");
  if (typeof header !== "boolean") return header;
  const typesHeader = bool("typesHeader");
  if (typeof typesHeader !== "boolean") return typesHeader;
  const sqlTypesHeader = bool("sqlTypesHeader");
  if (typeof sqlTypesHeader !== "boolean") return sqlTypesHeader;
  for (const [flag, name] of [
    [typesHeader, "typesHeader"],
    [sqlTypesHeader, "sqlTypesHeader"],
  ] as const) {
    if (flag && !header) {
      return badRequest(
        `Cannot construct instance of \`org.apache.druid.sql.http.SqlQuery\`, problem: Cannot include '${name}' without 'header'\n ${end}`,
        INSTANTIATION,
      );
    }
  }
  const context =
    body.context && typeof body.context === "object" ? (body.context as Record<string, unknown>) : {};
  const parameters = Array.isArray(body.parameters) ? (body.parameters as SqlParameterValue[]) : [];
  return { query: body.query, format, header, typesHeader, sqlTypesHeader, context, parameters };
}

async function sql(ctx: RouteContext): Promise<Reply> {
  if (!isJson(ctx.req)) return empty(415);
  const raw = await ctx.body();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw) as Record<string, unknown>;
    if (!body || typeof body !== "object" || Array.isArray(body))
      throw new TypeError("expected a JSON object");
  } catch (error) {
    return sqlError(`Malformed SQL request body: ${(error as Error).message}`);
  }
  const request = readRequest(raw, body);
  if (!("query" in request)) return request;
  // `sqlQueryId` from the context names the query in both id headers (`SqlResource`); else a fresh UUID.
  const requested = request.context.sqlQueryId;
  if (requested !== undefined && requested !== null && typeof requested !== "string") {
    return druidError("general", "OPERATOR", "UNCATEGORIZED", "sqlQueryId must be a string");
  }
  const queryId = typeof requested === "string" && requested !== "" ? requested : randomUUID();
  const ids = { "X-Druid-Query-Id": queryId, "X-Druid-SQL-Query-Id": queryId };
  const reply = run(ctx, request);
  return {
    ...reply,
    headers: {
      ...ids,
      ...(reply.status === 200 ? { "X-Druid-Response-Context": "{}" } : {}),
      ...reply.headers,
    },
  };
}

function run(ctx: RouteContext, request: Request): Reply {
  const zone = resolveZone(request.context.sqlTimeZone);
  let bound = request.query;
  let result: SqlResult;
  try {
    bound = bindParameters(request.query, request.parameters);
    let tables: SqlTable[] | null = null;
    result = runSql(bound, {
      timeZone: zone,
      now: ctx.engine.now,
      table: (parts, span) => {
        tables ??= catalog(ctx.engine, ctx.url);
        return resolveTable(tables, parts, span);
      },
    });
  } catch (error) {
    // Jetty's error page for an exception the SQL resource did not map (a real Druid 33 sent HTML).
    if (error instanceof SqlParameterCastError)
      return text(500, `<html><head><title>Error 500 ${error.message}</title></head></html>`, "text/html");
    if (error instanceof SqlRuntimeError) return runtimeError(error, ctx.url);
    if (error instanceof SqlPlanningError)
      return druidError(
        "general",
        error.persona,
        "INVALID_INPUT",
        `Query could not be planned. A possible reason is [${error.message}]`,
      );
    if (!(error instanceof SqlError)) throw error;
    // Druid's parser refused the text (an empty one included): its message and position, as Druid words them.
    if (error instanceof SqlSyntaxError) {
      const { message, context } = error.render(bound);
      return sqlError(message, context);
    }
    // SQL Druid reads that the emulator does not run: 501, never passed off as Druid's refusal.
    if (error instanceof UnsupportedSqlError) {
      const where = error.span
        ? ` (line [${position(bound, error.span[0]).line}], column [${position(bound, error.span[0]).column}])`
        : "";
      return druidError("general", "USER", "UNSUPPORTED", `${error.message}${where}`, { sourceType: "sql" });
    }
    if (!error.span) return sqlError(error.message);
    const context = spanContext(bound, error.span);
    const located = error.message.includes("(line [")
      ? error.message
      : `${error.message} (line [${context.line}], column [${context.column}])`;
    return sqlError(located, context);
  }
  return format(outerLimited(result, request.context.sqlOuterLimit), request, zone, ctx.druidVersion);
}

/**
 * An error inside execution in the shape Druid 33 sent it: `general` (500, ADMIN UNCATEGORIZED), `defensive`
 * (a function's unexpected exception: 500, DEVELOPER DEFENSIVE) or the Broker's legacy QueryException wrapper
 * (a scalar subquery of more than one row), which names the Broker's host.
 */
function runtimeError(error: SqlRuntimeError, url: string): Reply {
  if (error.shape === "defensive") return druidError("general", "DEVELOPER", "DEFENSIVE", error.message);
  if (error.shape === "legacy") {
    const host = new URL(url).host;
    return json(500, {
      error: "druidException",
      errorClass: null,
      host,
      errorCode: "legacyQueryException",
      persona: "OPERATOR",
      category: "UNCATEGORIZED",
      errorMessage: error.message,
      context: { host, errorClass: null, legacyErrorCode: "druidException" },
    });
  }
  return druidError("general", "ADMIN", "UNCATEGORIZED", error.message);
}

/**
 * `context.sqlOuterLimit`: the most rows a query returns, as an outer LIMIT over whatever the query's own is
 * (`PlannerContext.CTX_SQL_OUTER_LIMIT`; JDBC and the web console set it). Observed on Druid 33 (conformance).
 */
function outerLimited(result: SqlResult, limit: unknown): SqlResult {
  const n = typeof limit === "number" ? limit : typeof limit === "string" ? Number(limit) : Number.NaN;
  return Number.isInteger(n) && n >= 0 && result.rows.length > n
    ? { ...result, rows: result.rows.slice(0, n) }
    : result;
}

/**
 * A cell as Druid's JSON writer prints it: TIMESTAMPs as ISO text in the query's time zone, a double that is not
 * finite as Jackson writes it, quoted (Druid 33: SQRT(-2.5) of a column is "NaN", d / 0 "Infinity").
 */
function cell(v: OutValue, zone: Zone): OutValue | string {
  if (typeof v === "number" && !Number.isFinite(v)) return String(v);
  return v instanceof Timestamp ? timestampText(v.ms, zone) : v;
}

function format(result: SqlResult, r: Request, zone: Zone, druidVersion: number): Reply {
  const headers: Record<string, string> = {};
  if (r.header) headers["X-Druid-SQL-Header-Included"] = "yes";
  const names = result.columns.map((c) => c.name);
  const headerRows: unknown[][] = [];
  if (r.header) {
    headerRows.push(names);
    if (r.typesHeader) headerRows.push(result.columns.map((c) => nativeType(c.type)));
    if (r.sqlTypesHeader) headerRows.push(result.columns.map((c) => c.type));
  }
  const headerObject = () =>
    Object.fromEntries(
      result.columns.map((c: Column) => [
        c.name,
        r.typesHeader || r.sqlTypesHeader
          ? {
              ...(r.typesHeader ? { type: nativeType(c.type) } : {}),
              ...(r.sqlTypesHeader ? { sqlType: c.type } : {}),
            }
          : null,
      ]),
    );
  const rows = result.rows.map((row) => row.map((v) => cell(v, zone)));
  const asObject = (row: unknown[]) => Object.fromEntries(names.map((n, i) => [n, row[i] ?? null]));
  // A real Druid 33 labels every format application/json; later releases may use text/plain and text/csv.
  const json33 = versionTraits(druidVersion).sqlResultsLabelledJson;
  switch (r.format) {
    // Druid's writers end a whole object or array body with a newline (observed on Druid 33, conformance).
    case "object":
      return jsonLine([...(r.header ? [headerObject()] : []), ...rows.map(asObject)], headers);
    case "array":
      return jsonLine([...headerRows, ...rows], headers);
    case "objectLines":
    case "arrayLines": {
      const lines =
        r.format === "objectLines"
          ? [...(r.header ? [headerObject()] : []), ...rows.map(asObject)].map((x) => JSON.stringify(x))
          : [...headerRows, ...rows].map((x) => JSON.stringify(x));
      // A trailing blank line marks a complete response (§3.6).
      return { ...text(200, `${lines.join("\n")}\n\n`, json33 ? "application/json" : "text/plain"), headers };
    }
    case "csv": {
      const csvCell = (v: unknown) => {
        const s = v === null || v === undefined ? "" : String(v);
        return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
      };
      const lines = [...headerRows, ...rows].map((row) => row.map(csvCell).join(","));
      return { ...text(200, `${lines.join("\n")}\n\n`, json33 ? "application/json" : "text/csv"), headers };
    }
  }
}

function jsonLine(value: unknown, headers: Record<string, string>): Reply {
  return { ...text(200, `${JSON.stringify(value)}\n`, "application/json"), headers };
}

export function brokerRoutes(): Route[] {
  return [{ method: "POST", path: "/druid/v2/sql", handler: sql }];
}
