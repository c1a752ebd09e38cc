import { randomUUID } from "node:crypto";
import type { SimEngine } from "../engine.js";
import { empty, invalidInput, isJson, json, type Reply, text } from "../reply.js";
import type { Route, RouteContext } from "../router.js";
import { execute, parseSql, SqlError, type SqlRow, Timestamp, type Value } from "../sql.js";
import { bindParameters, type SqlParameterValue } from "../sql-parameters.js";
import { instantText } from "../time.js";
import { isServed, shardSpecJson } from "../timeline.js";
import { versionTraits } from "../versions.js";

/** Broker SQL (`POST /druid/v2/sql`, api-contract §3.6) over `sys.segments` and datasources' live rows. */

/** `SystemSchema.SEGMENTS_SIGNATURE` (§3.6); booleans are 0/1. Druid 33 has no `projections` (versions.ts). */
export function sysSegmentsColumns(druidVersion: number): string[] {
  return versionTraits(druidVersion).sysSegmentsProjections
    ? SYS_SEGMENTS_COLUMNS
    : SYS_SEGMENTS_COLUMNS.filter((c) => c !== "projections");
}

export const SYS_SEGMENTS_COLUMNS = [
  "segment_id",
  "datasource",
  "start",
  "end",
  "size",
  "version",
  "partition_num",
  "num_replicas",
  "num_rows",
  "is_active",
  "is_published",
  "is_available",
  "is_realtime",
  "is_overshadowed",
  "shard_spec",
  "dimensions",
  "metrics",
  "projections",
  "last_compaction_state",
  "replication_factor",
];

export function sysSegments(engine: SimEngine): SqlRow[] {
  const rows: SqlRow[] = [];
  for (const ds of engine.store.dataSources()) {
    const shadowed = engine.store.overshadowed(ds);
    for (const s of engine.store.used(ds, engine.now)) {
      const available = isServed(s, engine.now);
      const overshadowed = shadowed.has(s.id);
      rows.push({
        segment_id: s.id,
        datasource: ds,
        start: instantText(s.interval.start),
        end: instantText(s.interval.end),
        size: s.size,
        version: s.version,
        partition_num: s.partitionNum,
        num_replicas: available ? 1 : 0,
        num_rows: s.numRows,
        is_active: overshadowed ? 0 : 1,
        is_published: 1,
        is_available: available ? 1 : 0,
        is_realtime: 0,
        is_overshadowed: overshadowed ? 1 : 0,
        shard_spec: JSON.stringify(shardSpecJson(s, engine.options.druidVersion)),
        dimensions: JSON.stringify(s.dimensions),
        metrics: JSON.stringify(s.metrics),
        projections: null,
        last_compaction_state: null,
        replication_factor: 1,
      });
    }
  }
  return rows;
}

function dataSourceTable(engine: SimEngine, ds: string): { rows: SqlRow[]; columns: string[] } | null {
  const visible = engine.store.visible(ds, engine.now);
  if (visible.length === 0) return null;
  const columns = ["__time"];
  for (const s of visible)
    for (const c of [...s.dimensions, ...s.metrics]) if (!columns.includes(c)) columns.push(c);
  const rows = engine.store.liveRows(ds, engine.now).map((r) => {
    const row: SqlRow = {};
    for (const c of columns) row[c] = c === "__time" ? new Timestamp(r.__time) : toValue(r[c]);
    return row;
  });
  return { rows, columns };
}

function toValue(v: unknown): Value {
  if (v === undefined || v === null) return null;
  if (typeof v === "number" || typeof v === "string") return v;
  return JSON.stringify(v);
}

/**
 * Calcite's unknown-table error as a real Druid 33 words it: the position spans the table reference as written
 * (quotes and schema included; 1-based, end inclusive), and a schema-qualified name says `within '<schema>'`.
 */
export function tableNotFound(query: string, table: string): Reply {
  const dot = table.lastIndexOf(".");
  const object = dot < 0 ? table : table.slice(dot + 1);
  const within = dot < 0 ? "" : ` within '${table.slice(0, dot)}'`;
  const ident = String.raw`(?:"[^"]*"|[A-Za-z_][\w$]*)`;
  const ref = new RegExp(String.raw`\bFROM\s+(${ident}(?:\s*\.\s*${ident})?)`, "i").exec(query);
  if (!ref?.[1]) return sqlError(`Object '${object}' not found${within}`);
  const start = ref.index + ref[0].length - ref[1].length;
  const at = (offset: number) => {
    const before = query.slice(0, offset).split("\n");
    return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
  };
  const from = at(start);
  const to = at(start + ref[1].length - 1);
  return sqlError(`Object '${object}' not found${within} (line [${from.line}], column [${from.column}])`, {
    line: String(from.line),
    column: String(from.column),
    endLine: String(to.line),
    endColumn: String(to.column),
  });
}

function sqlError(message: string, position: Record<string, string> = {}): Reply {
  return invalidInput(message, { sourceType: "sql", ...position });
}

async function sql(ctx: RouteContext): Promise<Reply> {
  if (!isJson(ctx.req)) return empty(415);
  let body: { query?: unknown; resultFormat?: unknown; header?: unknown; parameters?: unknown };
  try {
    body = JSON.parse(await ctx.body()) as typeof body;
  } catch (error) {
    return sqlError(`Malformed SQL request body: ${(error as Error).message}`);
  }
  if (typeof body?.query !== "string" || body.query.trim() === "") return sqlError("Query must not be empty");
  let result: { columns: string[]; rows: Value[][] };
  try {
    const parameters = Array.isArray(body.parameters) ? (body.parameters as SqlParameterValue[]) : [];
    const q = parseSql(bindParameters(body.query, parameters));
    const name = q.table.replace(/^druid\./i, "");
    let table: { rows: SqlRow[]; columns: string[] } | null;
    if (name.toLowerCase() === "sys.segments")
      table = { rows: sysSegments(ctx.engine), columns: sysSegmentsColumns(ctx.druidVersion) };
    else if (name.includes(".")) return tableNotFound(body.query, q.table);
    else table = dataSourceTable(ctx.engine, name);
    if (!table) return tableNotFound(body.query, q.table);
    result = execute(q, table.rows, table.columns);
  } catch (error) {
    if (error instanceof SqlError) return sqlError(error.message);
    throw error;
  }
  return format(result, String(body.resultFormat ?? "object"), body.header === true);
}

function format(
  result: { columns: string[]; rows: Value[][] },
  resultFormat: string,
  header: boolean,
): Reply {
  const headers: Record<string, string> = { "X-Druid-SQL-Query-Id": randomUUID() };
  if (header) headers["X-Druid-SQL-Header-Included"] = "yes";
  const asObject = (r: Value[]) => Object.fromEntries(result.columns.map((c, i) => [c, r[i] ?? null]));
  const headerObject = Object.fromEntries(result.columns.map((c) => [c, null]));
  switch (resultFormat) {
    case "object":
      return json(200, [...(header ? [headerObject] : []), ...result.rows.map(asObject)], headers);
    case "array":
      return json(200, [...(header ? [result.columns] : []), ...result.rows], headers);
    case "objectLines":
    case "arrayLines": {
      const lines =
        resultFormat === "objectLines"
          ? result.rows.map((r) => JSON.stringify(asObject(r)))
          : result.rows.map((r) => JSON.stringify(r));
      if (header)
        lines.unshift(JSON.stringify(resultFormat === "objectLines" ? headerObject : result.columns));
      // A trailing blank line marks a complete response (§3.6).
      return { ...text(200, `${lines.join("\n")}\n\n`), headers };
    }
    case "csv": {
      const cell = (v: Value) => {
        const s = v === null ? "" : v instanceof Timestamp ? v.toJSON() : String(v);
        return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
      };
      const lines = result.rows.map((r) => r.map(cell).join(","));
      if (header) lines.unshift(result.columns.map(cell).join(","));
      return { ...text(200, `${lines.join("\n")}\n\n`, "text/csv"), headers };
    }
    default:
      return sqlError(`Unsupported resultFormat[${resultFormat}]`);
  }
}

export function brokerRoutes(): Route[] {
  return [{ method: "POST", path: "/druid/v2/sql", handler: sql }];
}
