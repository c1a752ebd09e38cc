import type { JsonPath, JsonValue } from "../core/canonical-json.js";
import { type Granularity, granularityLabel, isAligned, parseGranularity } from "../core/granularity.js";
import { formatInterval, type Interval, parseInstant, sameInterval } from "../core/interval.js";
import { sqlTimeUnitPeriod } from "../core/sql-time-units.js";
import { druidIdProblem } from "../core/task-id.js";
import type { SpecIssue, ValidationResult } from "./issues.js";
import { checkIngestShape } from "./msq-rules.js";
import type { RuleScope } from "./rules.js";
import { type RenderContext, substitute } from "./template.js";

/**
 * SQL-based ingestion (MSQ, docs/druid-api.md §6), kept modest: templates are rendered with the same
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

/** Contents of quoted literals and identifiers replaced by spaces, so keywords are found only in SQL text. */
function maskQuoted(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, (q) => `${q[0]}${" ".repeat(q.length - 2)}${q[0]}`);
}

/** Leading `SET name = value;` statements (Druid SQL sets query context with them, e.g. `SET maxNumTasks = 5;`). */
const SET_STATEMENT =
  /^\s*SET\s+(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?:'(?:[^']|'')*'|[^;']*?)\s*;/i;

/** The statement after any leading SET statements, comments removed. */
function statement(query: string): string {
  let sql = stripComments(query);
  for (let m = SET_STATEMENT.exec(sql); m; m = SET_STATEMENT.exec(sql)) sql = sql.slice(m[0].length);
  return sql;
}

/** `GranularityType`'s names, with the ISO period of each standard one (`GranularityType.isStandard`). */
const STANDARD_GRANULARITIES: Readonly<Record<string, string | null>> = {
  SECOND: "PT1S",
  MINUTE: "PT1M",
  FIVE_MINUTE: "PT5M",
  TEN_MINUTE: "PT10M",
  FIFTEEN_MINUTE: "PT15M",
  THIRTY_MINUTE: "PT30M",
  HOUR: "PT1H",
  SIX_HOUR: "PT6H",
  EIGHT_HOUR: "PT8H",
  DAY: "P1D",
  WEEK: "P1W",
  MONTH: "P1M",
  QUARTER: "P3M",
  YEAR: "P1Y",
  ALL: null,
  NONE: null,
};
const STANDARD_PERIODS = new Map(
  Object.entries(STANDARD_GRANULARITIES)
    .filter((e): e is [string, string] => e[1] !== null)
    .map(([name, iso]) => [iso, name]),
);

/** A standard granularity by name or ISO period, named as Druid names it (`DAY`, not `P1D`). */
function standard(nameOrIso: string): Granularity {
  return parseGranularity((STANDARD_PERIODS.get(nameOrIso) ?? nameOrIso).toLowerCase());
}

/** `DruidSqlParserUtils.makeInvalidPartitionByException`. */
function invalidPartitionBy(text: string): string {
  const documented = Object.keys(STANDARD_GRANULARITIES)
    .filter((n) => n !== "WEEK" && n !== "NONE")
    .map((n) => `'${n}'`)
    .join(", ");
  return `Invalid granularity[${text}] specified after PARTITIONED BY clause. Expected ${documented}, ALL TIME, FLOOR() or TIME_FLOOR()`;
}

/** An ISO period (Joda `new Period(String)`) in canonical form for the standard-granularity check, or undefined. */
function canonicalPeriod(text: string): string | undefined {
  const m = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/i.exec(
    text.trim(),
  );
  if (!m || m.slice(1).every((v) => v === undefined) || /T$/i.test(text.trim())) return undefined;
  const [y, mo, w, d, h, mi, se] = m.slice(1).map((v) => Number(v ?? 0)) as number[];
  const date = `${y ? `${y}Y` : ""}${mo ? `${mo}M` : ""}${w ? `${w}W` : ""}${d ? `${d}D` : ""}`;
  const time = `${h ? `${h}H` : ""}${mi ? `${mi}M` : ""}${se ? `${se}S` : ""}`;
  return `P${date}${time ? `T${time}` : ""}`;
}

/**
 * `DruidSqlParserUtils.convertSqlNodeToGranularity` + `validateSupportedGranularityForPartitionedBy`: the
 * keywords HOUR, DAY, MONTH, YEAR, ALL [TIME]; a granularity name or ISO period (identifier or string
 * literal); `FLOOR(__time TO unit)`; `TIME_FLOOR(__time, 'period')` — and the result must be a standard
 * granularity (`GranularityType`). Returns the granularity to align the OVERWRITE window to, or Druid's error.
 */
function partitionedBy(clause: string): { granularity: Granularity } | { error: string } | "unreadable" {
  const c = clause.trim();
  const fromText = (text: string): { granularity: Granularity } | { error: string } => {
    const upper = text.toUpperCase();
    const iso =
      upper in STANDARD_GRANULARITIES
        ? STANDARD_GRANULARITIES[upper]
        : STANDARD_PERIODS.has(canonicalPeriod(text) ?? "")
          ? canonicalPeriod(text)
          : undefined;
    if (iso === undefined) return { error: invalidPartitionBy(c) };
    return { granularity: standard(iso === null ? upper : iso) };
  };
  if (/^ALL(\s+TIME)?$/i.test(c)) return { granularity: standard("ALL") };
  const word = /^[A-Za-z_][A-Za-z0-9_]*$/.exec(c);
  if (word) return fromText(c);
  const quoted = /^'([^']*)'$/.exec(c) ?? /^"([^"]*)"$/.exec(c);
  if (quoted) return fromText(quoted[1] as string);
  const timeFloor = /^TIME_FLOOR\s*\(\s*("__time"|__time)\s*,\s*'([^']*)'\s*\)$/i.exec(c);
  if (timeFloor) {
    const iso = canonicalPeriod(timeFloor[2] as string);
    if (iso === undefined) return { error: `granularity['${timeFloor[2]}'] is an invalid period literal.` };
    if (!STANDARD_PERIODS.has(iso)) return { error: invalidPartitionBy(c) };
    return { granularity: standard(iso) };
  }
  const floor = /^FLOOR\s*\(\s*("__time"|__time)\s+TO\s+([A-Za-z_]+)\s*\)$/i.exec(c);
  if (floor) {
    const unit = (floor[2] as string).toUpperCase();
    const iso = sqlTimeUnitPeriod(unit);
    if (iso === undefined) return { error: `${unit} is not a valid period granularity for ingestion.` };
    return { granularity: standard(iso) };
  }
  const call = /^([A-Za-z_][A-Za-z0-9_]*)\s*\(/.exec(c);
  if (call && !/^(TIME_)?FLOOR$/i.test(call[1] as string)) {
    return {
      error: `Invalid operator[${(call[1] as string).toUpperCase()}] specified. PARTITIONED BY clause only supports FLOOR(__time TO <unit>) and TIME_FLOOR(__time, period) functions.`,
    };
  }
  return "unreadable";
}

const HEAD = /^\s*(REPLACE|INSERT)\s+INTO\s+("(?:[^"]|"")+"|[^\s(]+)/i;

function unquote(table: string): string {
  return table.startsWith('"') ? table.slice(1, -1).replace(/""/g, '"') : table;
}

/** The target datasource of an INSERT/REPLACE query, or undefined when the query has another form. */
export function sqlTarget(query: string): string | undefined {
  const head = HEAD.exec(statement(query));
  return head ? unquote(head[2] as string) : undefined;
}

/**
 * The `PARTITIONED BY` granularity of an INSERT/REPLACE query as a granularity name (`day`, `hour`, `all`),
 * or undefined when the clause is missing or unreadable ({@link validateSql} says why).
 */
export function sqlPartitionGranularity(query: string): string | undefined {
  const sql = statement(query);
  const head = HEAD.exec(sql);
  if (!head) return undefined;
  const rest = sql.slice(head[0].length);
  const masked = maskQuoted(rest);
  const partitioned = lastMatch(masked, /\bPARTITIONED\s+BY\b/gi);
  if (!partitioned) return undefined;
  const read = partitionedBy(partitionClause(rest, partitioned, lastMatch(masked, /\bCLUSTERED\s+BY\b/gi)));
  if (read === "unreadable" || "error" in read) return undefined;
  return granularityLabel(read.granularity).toLowerCase();
}

/** Options of {@link validateSql}. */
export interface ValidateSqlOptions {
  /** The partition the OVERWRITE window must equal; without it only the form and alignment are checked. */
  readonly partition?: Interval;
  /**
   * `all` (default): Druid's rules and segops' (REPLACE with an OVERWRITE WHERE window segops can read).
   * `druid`: only what Druid refuses (INSERT and OVERWRITE ALL are fine).
   */
  readonly rules?: RuleScope;
}

/** The last match of a keyword pattern in masked SQL (global regex), or undefined. */
function lastMatch(masked: string, re: RegExp): RegExpExecArray | undefined {
  let last: RegExpExecArray | undefined;
  for (let m = re.exec(masked); m; m = re.exec(masked)) last = m;
  return last;
}

/** The issues found so far; the checks below push to it. */
interface SqlIssues {
  readonly errors: SpecIssue[];
  readonly warnings: SpecIssue[];
}

function result(issues: SqlIssues): ValidationResult {
  return { valid: issues.errors.length === 0, errors: issues.errors, warnings: issues.warnings };
}

/** The text between `PARTITIONED BY` and `CLUSTERED BY` (or the end), without a trailing `;`. */
function partitionClause(
  rest: string,
  partitioned: RegExpExecArray,
  clustered: RegExpExecArray | undefined,
): string {
  const from = partitioned.index + partitioned[0].length;
  const to = clustered && clustered.index > partitioned.index ? clustered.index : rest.length;
  return rest.slice(from, to).replace(/;\s*$/, "").trim();
}

/** The target's name and, for segops, the verb: INSERT is not idempotent. */
function checkHead(verb: string, table: string, segops: boolean, issues: SqlIssues): void {
  const idProblem = druidIdProblem("dataSource", table);
  if (idProblem) issues.errors.push({ path: "query.table", message: idProblem });
  if (verb === "INSERT" && segops) {
    issues.errors.push({
      path: "query",
      message:
        "INSERT appends, so a rerun duplicates rows; segops needs REPLACE INTO … OVERWRITE WHERE for an idempotent partition",
    });
  }
}

/** Checks PARTITIONED BY (present, before CLUSTERED BY, a standard granularity); its granularity when readable. */
function checkPartitionedBy(
  verb: string,
  rest: string,
  masked: string,
  issues: SqlIssues,
): Granularity | undefined {
  const partitioned = lastMatch(masked, /\bPARTITIONED\s+BY\b/gi);
  const clustered = lastMatch(masked, /\bCLUSTERED\s+BY\b/gi);
  if (!partitioned) {
    issues.errors.push({
      path: "query.partitionedBy",
      message: `Operation [${verb}] requires a PARTITIONED BY to be explicitly defined`,
    });
    return undefined;
  }
  if (clustered && clustered.index < partitioned.index) {
    // The grammar takes PARTITIONED BY, then CLUSTERED BY (DruidSqlValidator's message).
    issues.errors.push({
      path: "query.clusteredBy",
      message:
        "CLUSTERED BY found before PARTITIONED BY, CLUSTERED BY must come after the PARTITIONED BY clause",
    });
  }
  const clause = partitionClause(rest, partitioned, clustered);
  const read = partitionedBy(clause);
  if (read === "unreadable") {
    issues.warnings.push({
      path: "query.partitionedBy",
      message: `cannot read PARTITIONED BY ${clause}; alignment of the window is not checked`,
    });
    return undefined;
  }
  if ("error" in read) {
    issues.errors.push({ path: "query.partitionedBy", message: read.error });
    return undefined;
  }
  return read.granularity;
}

/**
 * The REPLACE's OVERWRITE clause: missing is Druid's error, ALL is segops' (a whole-datasource replace),
 * a WHERE window must be readable, equal the partition and sit on PARTITIONED BY's buckets.
 */
function checkOverwrite(
  rest: string,
  masked: string,
  gran: Granularity | undefined,
  segops: boolean,
  partition: Interval | undefined,
  issues: SqlIssues,
): void {
  const overwrite = /\bOVERWRITE\s+(ALL\b|WHERE\b)/i.exec(masked);
  if (!overwrite) {
    issues.errors.push({
      path: "query.overwrite",
      message:
        "Missing time chunk information in OVERWRITE clause for REPLACE. Use OVERWRITE WHERE <__time based condition> or OVERWRITE ALL to overwrite the entire table.",
    });
    return;
  }
  if ((overwrite[1] as string).toUpperCase().startsWith("ALL")) {
    if (segops) {
      issues.errors.push({
        path: "query.overwrite",
        message:
          "OVERWRITE ALL replaces the whole datasource; a partition needs OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}'",
      });
    }
    return;
  }
  const condFrom = overwrite.index + overwrite[0].length;
  const after = /\b(SELECT|WITH)\b/i.exec(masked.slice(condFrom));
  const window = readWindow(rest.slice(condFrom, after ? condFrom + after.index : rest.length));
  if (typeof window === "string") {
    if (segops) issues.errors.push({ path: "query.overwrite", message: window });
    else
      issues.warnings.push({
        path: "query.overwrite",
        message: `${window}; the window's alignment with PARTITIONED BY is not checked`,
      });
    return;
  }
  checkWindow(window, gran, partition, issues);
}

/** The OVERWRITE window equals the partition (when given) and is aligned to PARTITIONED BY (when read). */
function checkWindow(
  window: Interval,
  gran: Granularity | undefined,
  partition: Interval | undefined,
  issues: SqlIssues,
): void {
  if (partition && !sameInterval(window, partition)) {
    issues.errors.push({
      path: "query.overwrite",
      message: `the OVERWRITE window ${formatInterval(window)} must equal the partition interval ${formatInterval(partition)}`,
    });
  }
  if (gran === undefined) return;
  // DruidSqlParserUtils.validateQueryAndConvertToIntervals: both ends on PARTITIONED BY's buckets.
  const aligned = gran.kind === "period" && isAligned(gran, window.start) && isAligned(gran, window.end);
  if (!aligned) {
    issues.errors.push({
      path: "query.overwrite",
      message: `OVERWRITE WHERE clause identified interval [${formatInterval(window)}] which is not aligned with PARTITIONED BY granularity [${granularityLabel(gran)}]`,
    });
  }
}

/**
 * Checks a rendered MSQ query; issue paths are `query`, `query.table`, `query.overwrite`,
 * `query.partitionedBy`, `query.clusteredBy`. Leading `SET` statements are skipped.
 */
export function validateSql(query: string, options: ValidateSqlOptions = {}): ValidationResult {
  const issues: SqlIssues = { errors: [], warnings: [] };
  const segops = (options.rules ?? "all") === "all";
  const sql = statement(query);
  const head = HEAD.exec(sql);
  if (!head) {
    issues.errors.push({
      path: "query",
      message: "expected REPLACE INTO <datasource> OVERWRITE WHERE … SELECT … PARTITIONED BY …",
    });
    return result(issues);
  }
  const verb = (head[1] as string).toUpperCase();
  checkHead(verb, unquote(head[2] as string), segops, issues);
  const rest = sql.slice(head[0].length);
  const masked = maskQuoted(rest);
  const gran = checkPartitionedBy(verb, rest, masked, issues);
  if (verb === "REPLACE") checkOverwrite(rest, masked, gran, segops, options.partition, issues);
  checkIngestShape(query, sql, { verb, table: head[2] as string, rest, masked, granularity: gran }, issues);
  return result(issues);
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
