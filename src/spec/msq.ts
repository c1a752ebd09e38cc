import type { JsonPath, JsonValue } from "../core/canonical-json.js";
import { type Granularity, isAligned, parseGranularity } from "../core/granularity.js";
import { formatInterval, type Interval, parseInstant, sameInterval } from "../core/interval.js";
import { druidIdProblem } from "../core/task-id.js";
import type { SpecIssue, ValidationResult } from "./issues.js";
import { type RenderContext, substitute } from "./template.js";

/**
 * SQL-based ingestion (MSQ, api-contract §6), kept modest: templates are rendered with the same
 * placeholders (`{{start}}`/`{{end}}` as SQL timestamp literals), and the checks cover what makes a
 * partition safe: REPLACE (not INSERT), an `OVERWRITE WHERE` window equal to the partition, aligned to
 * `PARTITIONED BY`. The query is read with regular expressions, not a SQL parser, so only the plain
 * `__time >= TIMESTAMP '…' AND __time < TIMESTAMP '…'` window form is understood.
 */

/** The body of `POST /druid/v2/sql/task`. */
export interface SqlTaskBody {
  readonly query: string;
  readonly context: { [key: string]: JsonValue };
}

/**
 * `context.sqlQueryId` pins the controller task id to `query-<sqlQueryId>` (Druid's
 * `MSQTasks.controllerTaskId`), so the derived id must be excluded from the hash like a task's `id`.
 */
export const SQL_VOLATILE_PATHS: readonly JsonPath[] = [["context", "sqlQueryId"]];

/** Renders an SQL template for one partition; unused variables come back as warnings. */
export function renderSql(
  text: string,
  ctx: RenderContext & { readonly context?: { [key: string]: JsonValue }; readonly queryId?: string },
): { body: SqlTaskBody; warnings: SpecIssue[] } {
  const used = new Set<string>();
  const query = substitute(text, "query", ctx, used, "sql");
  const warnings: SpecIssue[] = [];
  for (const name of Object.keys(ctx.vars ?? {})) {
    if (!used.has(name))
      warnings.push({ path: `var.${name}`, message: `--var ${name} is not used by the template` });
  }
  const context: { [key: string]: JsonValue } = { ...(ctx.context ?? {}) };
  if (ctx.queryId !== undefined) context.sqlQueryId = ctx.queryId;
  return { body: { query, context }, warnings };
}

function stripComments(sql: string): string {
  // Quoted text is kept intact: a "--" inside a literal is not a comment.
  return sql.replace(/('(?:[^']|'')*')|--[^\n]*|\/\*[\s\S]*?\*\//g, (m, quoted: string | undefined) =>
    quoted !== undefined ? m : " ",
  );
}

/** `2026-01-01 00:00:00[.fff]` or ISO → epoch ms (UTC). */
function sqlInstant(text: string): number | undefined {
  try {
    return parseInstant(text.trim().replace(" ", "T"));
  } catch {
    return undefined;
  }
}

function partitionedBy(clause: string): Granularity | "unreadable" {
  const c = clause.trim();
  const word = /^([A-Za-z_]+)(\s+TIME)?$/i.exec(c);
  const quoted = /^'([^']+)'$/.exec(c);
  const timeFloor = /^TIME_FLOOR\s*\(\s*"?__time"?\s*,\s*'([^']+)'\s*\)$/i.exec(c);
  const floor = /^FLOOR\s*\(\s*"?__time"?\s+TO\s+([A-Za-z_]+)\s*\)$/i.exec(c);
  const raw = word?.[1] ?? quoted?.[1] ?? timeFloor?.[1] ?? floor?.[1];
  if (raw === undefined) return "unreadable";
  try {
    return parseGranularity(raw);
  } catch {
    return "unreadable";
  }
}

const HEAD = /^\s*(REPLACE|INSERT)\s+INTO\s+("(?:[^"]|"")+"|[^\s(]+)/i;

function unquote(table: string): string {
  return table.startsWith('"') ? table.slice(1, -1).replace(/""/g, '"') : table;
}

/** The target datasource of an INSERT/REPLACE query, or undefined when the query has another form. */
export function sqlTarget(query: string): string | undefined {
  const head = HEAD.exec(stripComments(query));
  return head ? unquote(head[2] as string) : undefined;
}

/** Options of {@link validateSql}. */
export interface ValidateSqlOptions {
  /** The partition the OVERWRITE window must equal; without it only the form and alignment are checked. */
  readonly partition?: Interval;
}

/** Checks a rendered MSQ query; issue paths are `query`, `query.table`, `query.overwrite`, `query.partitionedBy`. */
export function validateSql(query: string, options: ValidateSqlOptions = {}): ValidationResult {
  const errors: SpecIssue[] = [];
  const warnings: SpecIssue[] = [];
  const sql = stripComments(query);
  const head = HEAD.exec(sql);
  if (!head) {
    errors.push({
      path: "query",
      message: "expected REPLACE INTO <datasource> OVERWRITE WHERE … SELECT … PARTITIONED BY …",
    });
    return { valid: false, errors, warnings };
  }
  const verb = (head[1] as string).toUpperCase();
  const table = unquote(head[2] as string);
  const idProblem = druidIdProblem("dataSource", table);
  if (idProblem) errors.push({ path: "query.table", message: idProblem });
  if (verb === "INSERT") {
    errors.push({
      path: "query",
      message:
        "INSERT appends, so a rerun duplicates rows; segops needs REPLACE INTO … OVERWRITE WHERE for an idempotent partition",
    });
  }
  const rest = sql.slice(head[0].length);
  const partition = /\bPARTITIONED\s+BY\s+([\s\S]+?)(?:\s+CLUSTERED\s+BY\b[\s\S]*)?\s*;?\s*$/i.exec(rest);
  let gran: Granularity | "unreadable" | undefined;
  if (!partition) {
    errors.push({
      path: "query.partitionedBy",
      message: `Operation [${verb}] requires a PARTITIONED BY to be explicitly defined`,
    });
  } else {
    gran = partitionedBy(partition[1] as string);
    if (gran === "unreadable") {
      warnings.push({
        path: "query.partitionedBy",
        message: `cannot read PARTITIONED BY ${(partition[1] as string).trim()}; alignment of the window is not checked`,
      });
    }
  }
  if (verb !== "REPLACE") return { valid: errors.length === 0, errors, warnings };
  const overwrite = /\bOVERWRITE\s+(ALL\b|WHERE\b([\s\S]*?)(?=\bSELECT\b|\bWITH\b|$))/i.exec(rest);
  if (!overwrite) {
    errors.push({
      path: "query.overwrite",
      message:
        "Missing time chunk information in OVERWRITE clause for REPLACE. Use OVERWRITE WHERE <__time based condition> or OVERWRITE ALL to overwrite the entire table.",
    });
    return { valid: false, errors, warnings };
  }
  if ((overwrite[1] as string).toUpperCase().startsWith("ALL")) {
    errors.push({
      path: "query.overwrite",
      message:
        "OVERWRITE ALL replaces the whole datasource; a partition needs OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}'",
    });
    return { valid: false, errors, warnings };
  }
  const window = readWindow(overwrite[2] ?? "");
  if (typeof window === "string") {
    errors.push({ path: "query.overwrite", message: window });
    return { valid: false, errors, warnings };
  }
  if (options.partition && !sameInterval(window, options.partition)) {
    errors.push({
      path: "query.overwrite",
      message: `the OVERWRITE window ${formatInterval(window)} must equal the partition interval ${formatInterval(options.partition)}`,
    });
  }
  if (gran !== undefined && gran !== "unreadable") {
    const aligned = gran.kind === "period" && isAligned(gran, window.start) && isAligned(gran, window.end);
    if (!aligned) {
      const name = gran.kind === "period" ? gran.name.toUpperCase() : gran.kind.toUpperCase();
      errors.push({
        path: "query.overwrite",
        message: `OVERWRITE WHERE clause identified interval [${formatInterval(window)}] which is not aligned with PARTITIONED BY granularity [${name}]`,
      });
    }
  }
  return { valid: errors.length === 0, errors, warnings };
}

const TERM = /^\s*\(?\s*"?__time"?\s*(>=|<)\s*TIMESTAMP\s*'([^']*)'\s*\)?\s*$/i;

/** Reads `__time >= TIMESTAMP 'a' AND __time < TIMESTAMP 'b'` (either order) or explains what is wrong. */
function readWindow(cond: string): Interval | string {
  const expected = "expected OVERWRITE WHERE __time >= TIMESTAMP '<start>' AND __time < TIMESTAMP '<end>'";
  const terms = cond.trim().split(/\s+AND\s+/i);
  if (terms.length !== 2) return `${expected}, found "${cond.trim()}"`;
  let start: number | undefined;
  let end: number | undefined;
  for (const term of terms) {
    const m = TERM.exec(term);
    if (!m) return `${expected}, found "${term.trim()}"`;
    const ms = sqlInstant(m[2] as string);
    if (ms === undefined) return `invalid TIMESTAMP '${m[2]}' in OVERWRITE WHERE`;
    if (m[1] === ">=") start = ms;
    else end = ms;
  }
  if (start === undefined || end === undefined) return `${expected}, found "${cond.trim()}"`;
  if (!(end > start))
    return "The OVERWRITE WHERE clause produced no time intervals, are the bounds overly restrictive?";
  return { start, end };
}
