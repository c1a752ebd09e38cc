import { bucketOf, type Granularity, isAligned, parseGranularity, periodIso } from "../core/granularity.js";
import type { Interval } from "../core/interval.js";
import { validateId } from "./ids.js";
import type { IngestResult } from "./ingest.js";
import { InputError } from "./input.js";
import { instantText, intervalText } from "./instant-text.js";
import { subExprs } from "./msq-eval.js";
import {
  planProgram,
  runProgram,
  type SegmentView,
  type Tables,
  tableColumns,
  tableRows,
} from "./msq-query.js";
import { type Expr, type MsqProgram, parseExpr, parseQuery } from "./msq-sql.js";
import {
  closing,
  IDENT,
  literal,
  MsqPlanError,
  mask,
  splitTopLevel,
  stripComments,
  unquoteIdent,
  withPosition,
} from "./msq-text.js";
import { granularityText, overwriteWindow } from "./msq-window.js";
import type { DimensionSpec, IngestPlan, MetricSpec, MsqPlan, TaskPlan } from "./plans.js";
import { simKnobs } from "./spec.js";
import type { SimTask } from "./task.js";

export { MsqPlanError } from "./msq-text.js";

/**
 * SQL-based ingestion (MSQ, docs/druid-api.md §6): `INSERT`/`REPLACE … OVERWRITE WHERE` over `EXTERN` of a
 * local input, planned into a `query_controller` task whose ingestion the engine runs with the native model
 * (ingest.ts), plus `query_worker` tasks that live and end with it. Druid's planner (Calcite) is not
 * reproduced: the emulator reads the statement with regular expressions and refuses, in words that say so,
 * what it cannot read. Faults and reports are the MSQ ones (`MSQFaultUtils`, `TooManyWarningsFault`,
 * `docs/api-reference/sql-ingestion-api.md`).
 */

/** An MSQ fault as it appears in `errorReport.error` (`BaseMSQFault` serialization). */
export interface MsqFault {
  errorCode: string;
  errorMessage: string;
  [key: string]: unknown;
}

/** `CanceledFault`: what workers (and a shut-down controller) report when the query is canceled. */
export const CANCELED_MESSAGE = "Canceled: Query canceled by user or by task shutdown.";
const DEFAULT_ROWS_PER_SEGMENT = 3_000_000;
const PARSE_CODE = "CannotParseExternalData";

// ------------------------------------------------------------------------------------------- reading SQL

const SET = /^\s*SET\s+("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^']|'')*'|[^;']*?)\s*;/i;

/**
 * Leading `SET key = value;` statements set query context keys (`DruidPlanner.processStatementList`, added by
 * apache/druid#17894, so Druid ≥ 34; see {@link setStatementsRefused}).
 */
function takeSets(sql: string, context: Record<string, unknown>): string {
  let rest = sql;
  for (let m = SET.exec(rest); m; m = SET.exec(rest)) {
    const key = unquoteIdent(m[1] as string);
    const raw = (m[2] as string).trim();
    context[key] = raw.startsWith("'")
      ? raw.slice(1, -1).replace(/''/g, "'")
      : /^(true|false)$/i.test(raw)
        ? raw.toLowerCase() === "true"
        : Number.isFinite(Number(raw))
          ? Number(raw)
          : raw;
    rest = rest.slice(m[0].length);
  }
  return rest;
}

/**
 * Before SET statements (Druid ≤ 33) a query with them is several statements, which the parser refuses; its
 * wording is not known (docs/druid-api.md §10), so the emulator uses the message apache/druid#17894 gives for
 * several statements where SET is not allowed. Null when the query is fine.
 */
export function setStatementsRefused(query: string, druidVersion: number): string | null {
  if (druidVersion >= 34 || !SET.test(stripComments(query))) return null;
  return `Multiple statements detected in SQL string[${query}], but only a single statement is supported`;
}

/** `2026-01-01 00:00:00[.fff]` (or ISO) in UTC → ms, NaN when unreadable. */
function sqlTimestamp(text: string): number {
  const t = text.trim().replace(" ", "T");
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(t) ? t : `${t}Z`);
}

/** `PARTITIONED BY` as Druid reads it (`DruidSqlParserUtils.convertSqlNodeToGranularity`). */
function partitionedBy(clause: string): { granularity: Granularity; label: string } {
  const c = clause.trim().replace(/;\s*$/, "");
  const names: Record<string, string> = {
    HOUR: "hour",
    DAY: "day",
    MONTH: "month",
    YEAR: "year",
    ALL: "all",
    "ALL TIME": "all",
  };
  const floorUnits: Record<string, string> = { HOUR: "hour", DAY: "day", MONTH: "month", YEAR: "year" };
  let name: string | undefined = names[c.toUpperCase().replace(/\s+/g, " ")];
  const quoted = /^'([^']*)'$/.exec(c);
  if (!name && quoted) name = quoted[1] as string;
  const timeFloor = /^TIME_FLOOR\s*\(\s*"?__time"?\s*,\s*'([^']*)'\s*\)$/i.exec(c);
  if (!name && timeFloor) name = timeFloor[1] as string;
  const floor = /^FLOOR\s*\(\s*"?__time"?\s+TO\s+([A-Za-z]+)\s*\)$/i.exec(c);
  if (!name && floor) name = floorUnits[(floor[1] as string).toUpperCase()];
  if (!name && /^[A-Za-z_]+$/.test(c)) name = c.toLowerCase();
  try {
    if (name === undefined) throw new Error("unreadable");
    const granularity = parseGranularity(name);
    return {
      granularity,
      label: granularityText(
        granularity,
        granularity.kind === "period" ? periodIso(granularity.period) : null,
      ),
    };
  } catch {
    throw new MsqPlanError(
      `Invalid granularity[${c}] specified after PARTITIONED BY clause. Expected 'SECOND', 'MINUTE', 'FIVE_MINUTE', 'TEN_MINUTE', 'FIFTEEN_MINUTE', 'THIRTY_MINUTE', 'HOUR', 'SIX_HOUR', 'EIGHT_HOUR', 'DAY', 'MONTH', 'QUARTER', 'YEAR', 'ALL', ALL TIME, FLOOR() or TIME_FLOOR()`,
    );
  }
}

function intervalMessageText(i: Interval): string {
  return intervalText(i);
}

/** The first match of a keyword pattern in masked text at or after `from`. */
function keywordAt(masked: string, re: RegExp, from = 0): RegExpExecArray | null {
  const r = new RegExp(re.source, "gi");
  r.lastIndex = from;
  return r.exec(masked);
}

/** The statement's verb and target, and where its SELECT, PARTITIONED BY and CLUSTERED BY start. */
interface Clauses {
  readonly verb: "INSERT" | "REPLACE";
  readonly dataSource: string;
  /** Where `REPLACE|INSERT INTO <table>` ends. */
  readonly headEnd: number;
  readonly select: RegExpExecArray;
  readonly partitioned: RegExpExecArray;
  readonly clustered: RegExpExecArray | null;
}

/** Finds the statement's clauses (the planner's errors for a missing PARTITIONED BY or SELECT). */
function readClauses(sql: string, masked: string): Clauses {
  const head = new RegExp(`^\\s*(REPLACE|INSERT)\\s+INTO\\s+(${IDENT})(?:\\s*\\.\\s*(${IDENT}))?`, "i").exec(
    sql,
  );
  if (!head) {
    throw new MsqPlanError(
      "The emulator runs only INSERT and REPLACE statements on /druid/v2/sql/task",
      "unsupported",
    );
  }
  const verb = (head[1] as string).toUpperCase() as "INSERT" | "REPLACE";
  const headEnd = head.index + head[0].length;
  const schema = head[3] === undefined ? null : unquoteIdent(head[2] as string);
  const dataSource = unquoteIdent((head[3] ?? head[2]) as string);
  // `DruidSqlIngest` targets: a datasource of the druid schema only (`IngestHandler.validateTarget`).
  if (schema !== null && schema !== "druid")
    throw new MsqPlanError(
      `Table [${schema}.${dataSource}] does not support operation [${verb}] because it is not a Druid datasource`,
    );
  const columnList = /^\s*\(([^)]*)\)/.exec(masked.slice(headEnd));
  if (columnList) {
    const names = splitTopLevel(
      sql.slice(headEnd + columnList[0].indexOf("(") + 1, headEnd + columnList[0].length - 1),
    );
    throw new MsqPlanError(
      `Operation [${verb}] cannot be run with a target column list, given [${dataSource} (${names.map((n) => `\`${unquoteIdent(n)}\``).join(", ")})]`,
    );
  }
  const partitioned = keywordAt(masked, /\bPARTITIONED\s+BY\b/);
  if (!partitioned) {
    if (keywordAt(masked, /\bCLUSTERED\s+BY\b/))
      throw new MsqPlanError(
        "CLUSTERED BY found before PARTITIONED BY, CLUSTERED BY must come after the PARTITIONED BY clause",
      );
    throw new MsqPlanError(
      `Operation [${verb}] requires a PARTITIONED BY to be explicitly defined, but none was found.`,
    );
  }
  const clustered = keywordAt(masked, /\bCLUSTERED\s+BY\b/, partitioned.index);
  // The query: `[WITH …] SELECT …` up to PARTITIONED BY.
  const select = keywordAt(masked, /\b(?:WITH|SELECT)\b/, headEnd);
  if (!select || select.index > partitioned.index)
    throw new MsqPlanError("Expected a SELECT before PARTITIONED BY");
  return { verb, dataSource, headEnd, select, partitioned, clustered };
}

/** A REPLACE's OVERWRITE WHERE window (null for OVERWRITE ALL, and for an INSERT). */
function readOverwrite(sql: string, masked: string, c: Clauses, base: number): Interval | null {
  if (c.verb !== "REPLACE") return null;
  const ow = keywordAt(masked, /\bOVERWRITE\s+(ALL\b|WHERE\b)/, c.headEnd);
  if (!ow || ow.index > c.select.index) {
    throw new MsqPlanError(
      "Missing time chunk information in OVERWRITE clause for REPLACE. Use OVERWRITE WHERE <__time based condition> or OVERWRITE ALL to overwrite the entire table.",
    );
  }
  if (!/^WHERE/i.test(ow[1] as string)) return null;
  const from = ow.index + ow[0].length;
  return overwriteWindow(sql.slice(from, c.select.index), base + from);
}

/**
 * PARTITIONED BY and CLUSTERED BY; the OVERWRITE window must sit on PARTITIONED BY's buckets, and a
 * SELECT's window is read only when it equals the OVERWRITE window.
 */
function readPartitioning(
  sql: string,
  c: Clauses,
  overwrite: Interval | null,
  columns: string[],
  inputs: string[],
  base: number,
): { granularity: Granularity; clusteredBy: string[] } {
  const partClause = sql.slice(
    c.partitioned.index + c.partitioned[0].length,
    c.clustered ? c.clustered.index : sql.length,
  );
  const { granularity, label } = partitionedBy(partClause);
  let clusteredBy: string[] = [];
  if (c.clustered) {
    const from = c.clustered.index + c.clustered[0].length;
    const list = sql.slice(from).replace(/;\s*$/, "");
    let cursor = 0;
    clusteredBy = splitTopLevel(list).map((entry) => {
      cursor = list.indexOf(entry, cursor);
      return clusteredColumn(entry, columns, inputs, base + from + cursor);
    });
  }
  if (overwrite) {
    // DruidSqlParserUtils.validateQueryAndConvertToIntervals.
    // ALL buckets nothing but eternity, so no bounded window sits on it.
    const aligned =
      granularity.kind === "period" &&
      isAligned(granularity, overwrite.start) &&
      isAligned(granularity, overwrite.end);
    if (!aligned) {
      throw new MsqPlanError(
        `OVERWRITE WHERE clause identified interval [${intervalMessageText(overwrite)}] which is not aligned with PARTITIONED BY granularity [${label}]`,
      );
    }
  }
  return { granularity, clusteredBy };
}

/**
 * A CLUSTERED BY entry: an output column's name or its 1-based ordinal (`DruidSqlParserUtils
 * .validateClusteredByColumns`: ordinals must name a SELECT item).
 */
function clusteredColumn(entry: string, columns: string[], inputs: string[], at: number): string {
  if (/^\d+$/.test(entry)) {
    const n = Number(entry);
    const name = columns[n - 1];
    if (name === undefined || n < 1)
      throw new MsqPlanError(
        `Ordinal[${n}] specified in the CLUSTERED BY clause is invalid. It must be between 1 and ${columns.length}.`,
      );
    return name;
  }
  const bare = entry.replace(/\s+(ASC|DESC)$/i, "");
  if (!new RegExp(`^${IDENT}$`).test(bare)) {
    // An expression sorts the rows but is not stored (MSQReplaceTest: CLUSTERED BY LOWER(dim1)); its columns
    // must exist.
    for (const col of columnsIn(parseExpr(bare, at)))
      if (!columns.includes(col.name) && !inputs.includes(col.name))
        throw new MsqPlanError(`Column '${col.name}' not found in any table`, "invalidInput", col.at);
    return bare;
  }
  const name = unquoteIdent(bare);
  // Calcite resolves CLUSTERED BY against the SELECT's output and then its input (an input column not written
  // orders nothing in the segments).
  if (!columns.includes(name) && !inputs.includes(name))
    throw new MsqPlanError(`Column '${name}' not found in any table`, "invalidInput", at);
  return name;
}

function columnsIn(e: Expr): Array<Extract<Expr, { k: "col" }>> {
  return e.k === "col" ? [e] : subExprs(e).flatMap(columnsIn);
}

/** The query context's task count (a controller and at least one worker), warning limit and segment size. */
function readLimits(context: Record<string, unknown>): {
  workers: number;
  maxParseExceptions: number;
  rowsPerSegment: number;
} {
  const maxNumTasks = context.maxNumTasks === undefined ? 2 : Number(context.maxNumTasks);
  if (!Number.isInteger(maxNumTasks) || maxNumTasks < 2)
    throw new MsqPlanError(
      `MSQ context maxNumTasks [${String(context.maxNumTasks)}] cannot be less than 2, since at least 1 controller and 1 worker is necessary`,
    );
  return {
    workers: maxNumTasks - 1,
    maxParseExceptions: context.maxParseExceptions === undefined ? 0 : Number(context.maxParseExceptions),
    rowsPerSegment: Number(context.rowsPerSegment ?? DEFAULT_ROWS_PER_SEGMENT),
  };
}

/** The ingestion the controller runs, in the native model's terms (ingest.ts), over the program's records. */
function controllerIngest(q: {
  verb: Clauses["verb"];
  program: MsqProgram;
  granularity: Granularity;
  overwrite: Interval | null;
  clusteredBy: string[];
  workers: number;
  rowsPerSegment: number;
}): IngestPlan {
  const extern = q.program.externs[0];
  return {
    dataSchema: {
      // runProgram writes __time in millis, floored as the SELECT floors it.
      timestamp: { column: "__time", format: "millis", missingValue: null },
      dimensions: q.program.dimensions,
      dimensionExclusions: [],
      metrics: q.program.metrics.map((m) => ({ name: m.name, type: m.type, fieldName: m.field })),
      segmentGranularity: q.granularity,
      queryGranularity: { kind: "none" },
      // A GROUP BY writes one row per group and time. Druid marks the segments rolled up only with
      // finalizeAggregations false; the emulator groups the same rows either way and marks them rolled up.
      rollup: q.program.rollup,
      intervals: q.overwrite ? [q.overwrite] : null,
    },
    inputSource: extern ? extern.inputSource : { type: "druid" },
    inputFormat: extern ? extern.inputFormat : null,
    mode: q.verb === "REPLACE" ? "REPLACE" : "APPEND",
    forceGuaranteedRollup: false,
    // Clustering sorts each chunk by these columns before `rowsPerSegment` cuts it (range partitioning).
    partitions: {
      type: q.clusteredBy.some((c) => q.program.columns.includes(c)) ? "range" : "dynamic",
      maxRowsPerSegment: q.rowsPerSegment,
      numShards: null,
      partitionDimensions: q.clusteredBy.filter((c) => q.program.columns.includes(c)),
    },
    maxNumConcurrentSubTasks: q.workers,
    parallel: q.workers > 1,
    // The emulator applies MSQ's own limit (msqFault); the native one must never trip.
    maxParseExceptions: Number.MAX_SAFE_INTEGER,
    maxSavedParseExceptions: 10,
  };
}

/**
 * Plans `POST /druid/v2/sql/task`: the controller task's plan, or an `MsqPlanError` with Druid's message
 * (planning errors are `invalidInput`, 400) or the emulator's own (`unsupported`). The clauses are read in
 * the order below, so a statement wrong in several places gets the error of the first.
 */
export function planMsq(
  query: string,
  requestContext: Record<string, unknown>,
  sqlQueryId: string,
  catalog?: MsqCatalog,
): { plan: TaskPlan; msq: MsqPlan } {
  const context: Record<string, unknown> = { ...requestContext };
  const stripped = stripComments(query);
  const sql = takeSets(stripped, context);
  // Where `sql` starts in the submitted text, so Calcite's errors point at the right line and column.
  const base = stripped.length - sql.length;
  try {
    return planStatement(query, sql, base, context, sqlQueryId, catalog);
  } catch (error) {
    if (error instanceof MsqPlanError && error.at !== undefined)
      throw new MsqPlanError(withPosition(error.message, query, error.at), error.errorCode);
    throw error;
  }
}

function planStatement(
  query: string,
  sql: string,
  base: number,
  context: Record<string, unknown>,
  sqlQueryId: string,
  catalog: MsqCatalog | undefined,
): { plan: TaskPlan; msq: MsqPlan } {
  const masked = mask(sql);
  const clauses = readClauses(sql, masked);
  // The target's name is checked first (`IngestHandler.validateTarget` → `IdUtils.validateId`).
  const badName = validateId("table", clauses.dataSource);
  if (badName) throw new MsqPlanError(badName);
  const overwrite = readOverwrite(sql, masked, clauses, base);
  const program = planProgram(
    parseQuery(sql.slice(clauses.select.index, clauses.partitioned.index), base + clauses.select.index),
    tablesOf(catalog),
    clauses.verb,
  );
  const { granularity, clusteredBy } = readPartitioning(
    sql,
    clauses,
    overwrite,
    program.columns,
    program.inputColumns,
    base,
  );
  const { workers, maxParseExceptions, rowsPerSegment } = readLimits(context);
  const ingest = controllerIngest({
    verb: clauses.verb,
    program,
    granularity,
    overwrite,
    clusteredBy,
    workers,
    rowsPerSegment,
  });
  const id = `query-${sqlQueryId}`;
  const msq: MsqPlan = {
    sqlQueryId,
    query,
    verb: clauses.verb,
    workers,
    maxParseExceptions,
    clusteredBy,
    overwrite,
    signature: program.externs[0]?.signature ?? [],
    program,
    context: { ...context, sqlQueryId },
  };
  materialize(ingest, msq, program, clauses.dataSource, catalog);
  const plan: TaskPlan = {
    id,
    type: "query_controller",
    groupId: id,
    dataSource: clauses.dataSource,
    // MSQControllerTask#getPriority: the batch-index default.
    priority: Number(context.priority ?? 50),
    context: { ...context, sqlQueryId },
    slots: 1 + workers,
    ingest,
    killInterval: null,
    msq,
    sim: simKnobs(context),
  };
  return { plan, msq };
}

// ------------------------------------------------------------------------------------------- running

const READABLE = new Set(["local", "inline"]);

/** What the planner reads of the emulator: datasources' segments (for `FROM <datasource>`) and the time. */
export interface MsqCatalog {
  segments(dataSource: string): SegmentView[];
  now: number;
}

function tablesOf(catalog: MsqCatalog | undefined): Tables {
  if (!catalog) return () => null;
  return (name) => tableColumns(catalog.segments(name).filter((s) => !s.tombstone));
}

/**
 * Runs the planned query (msq-query.ts) when the emulator accepts it, and hands the engine its output as the
 * controller's input: JSON lines of `__time` (millis), the dimensions and the aggregates' inputs, which the
 * native ingestion model (ingest.ts) groups and publishes. A line the input format could not parse stays as
 * it was, so it is still a parse failure (`CannotParseExternalData`). Druid reads the input when the controller
 * runs; the emulator reads it on acceptance (docs/emulator.md). An input the emulator does not read (http, s3…)
 * keeps its source and gets synthetic rows; a missing local file keeps its source and fails the task as it runs.
 */
function materialize(
  ingest: IngestPlan,
  msq: MsqPlan,
  program: MsqProgram,
  dataSource: string,
  catalog: MsqCatalog | undefined,
): void {
  if (program.externs.some((e) => !READABLE.has(String(e.inputSource.type)))) return;
  let out: ReturnType<typeof runProgram>;
  try {
    out = runProgram(program, (ds) => tableRows(catalog?.segments(ds) ?? []), catalog?.now ?? Date.now());
  } catch (error) {
    if (error instanceof InputError) return;
    throw error;
  }
  const window = msq.overwrite;
  // The earliest chunk outside the window: the controller meets the partitions in time order.
  let first = Number.POSITIVE_INFINITY;
  for (const r of out.records) {
    const t = r.value?.__time;
    if (window && typeof t === "number" && (t < window.start || t >= window.end)) first = Math.min(first, t);
  }
  const outside = Number.isFinite(first) ? bucketOf(ingest.dataSchema.segmentGranularity, first) : null;
  msq.findings = { nullTimes: out.nullTimes, outside, dropped: out.filtered };
  if (msq.verb === "REPLACE" && window === null) replaceAll(ingest, dataSource, out.records, catalog);
  ingest.inputSource = {
    type: "inline",
    data: out.records.map((r) => (r.value === null ? r.raw : JSON.stringify(r.value))).join("\n"),
  };
  ingest.inputFormat = { type: "json" };
}

/**
 * `OVERWRITE ALL` replaces every time chunk (`replaceTimeChunks: ALL`): the REPLACE covers the chunks the
 * datasource serves and those the rows land in, so the chunks left without rows get tombstones.
 */
function replaceAll(
  ingest: IngestPlan,
  dataSource: string,
  records: Array<{ value: Record<string, unknown> | null }>,
  catalog: MsqCatalog | undefined,
): void {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const r of records) {
    const t = r.value?.__time;
    if (typeof t !== "number") continue;
    start = Math.min(start, t);
    end = Math.max(end, t + 1);
  }
  for (const s of catalog?.segments(dataSource) ?? []) {
    // An ALL-granularity segment spans eternity: its chunk is not enumerable in finer buckets (below).
    if (s.interval.start <= -MAX_BUCKET_SPAN || s.interval.end >= MAX_BUCKET_SPAN) continue;
    start = Math.min(start, s.interval.start);
    end = Math.max(end, s.interval.end);
  }
  if (!(end > start)) return;
  const g = ingest.dataSchema.segmentGranularity;
  const window = { start: bucketOf(g, start).start, end: bucketOf(g, end - 1).end };
  // The publisher walks the window bucket by bucket; a window of more buckets than a REPLACE could lock
  // (Druid's TooManyBuckets limit) is left to the chunks the rows land in.
  let buckets = 0;
  for (let t = window.start; t < window.end && buckets <= MAX_BUCKETS; t = bucketOf(g, t).end) buckets++;
  if (buckets <= MAX_BUCKETS) ingest.dataSchema.intervals = [window];
}

/** `Limits.MAX_PARTITION_BUCKETS`: the most time chunks one MSQ ingestion writes. */
const MAX_BUCKETS = 5000;
/** Beyond this (ms from the epoch, ~31,000 years) an interval is eternity's. */
const MAX_BUCKET_SPAN = 1e15;

/**
 * The fault an MSQ query ends with, decided when the controller starts (the engine applies it at the end).
 * Parse failures are warnings (`CannotParseExternalData`) until there are more than `maxParseExceptions`
 * (`FaultsExceededChecker`); then the query fails with `TooManyWarnings` (`TooManyWarningsFault`). A row whose
 * `__time` is null fails it with `InsertTimeNull` (`InsertTimeNullFault`: `TIME_PARSE` answers null for text it
 * cannot read). A REPLACE whose rows fall outside its OVERWRITE WHERE window fails with `InsertTimeOutOfBounds`
 * (`InsertTimeOutOfBoundsFault`), naming the earliest such time chunk.
 */
export function msqFault(plan: TaskPlan, result: IngestResult): MsqFault | null {
  const msq = plan.msq;
  if (!msq) return null;
  const warnings = result.counters.unparseable;
  const limit = msq.maxParseExceptions;
  if (limit >= 0 && warnings > limit) {
    return {
      errorCode: "TooManyWarnings",
      maxWarnings: limit,
      rootErrorCode: PARSE_CODE,
      errorMessage: `Too many warnings of type ${PARSE_CODE} generated (max = ${limit})`,
    };
  }
  // `failOnEmptyInsert` (default false): an ingestion that writes no rows fails (`InsertCannotBeEmptyFault`).
  if (msq.context.failOnEmptyInsert === true && result.counters.processed === 0)
    return {
      errorCode: "InsertCannotBeEmpty",
      dataSource: plan.dataSource,
      errorMessage: `No rows to insert for dataSource[${plan.dataSource}]. Set failOnEmptyInsert : false in the query context to allow empty inserts.`,
    };
  const found = msq.findings;
  if (found && found.nullTimes > 0)
    return {
      errorCode: "InsertTimeNull",
      errorMessage: "Null timestamp (__time) encountered during INSERT or REPLACE.",
    };
  const limits = partitionFault(plan, result);
  if (limits) return limits;
  const window = msq.overwrite;
  const chunk = found?.outside ?? null;
  if (window && chunk) {
    const bounds = `[${intervalText(window)}]`;
    return {
      errorCode: "InsertTimeOutOfBounds",
      interval: intervalText(chunk),
      intervalBounds: [intervalText(window)],
      errorMessage: `Inserted data contains time chunk[${intervalText(chunk)}] outside of bounds specified by OVERWRITE WHERE[${bounds}]. If you want to include this data, expand your OVERWRITE WHERE. If you do not want to include this data, use SELECT ... WHERE to filter it from your inserted data.`,
    };
  }
  return null;
}

/** `GranularityType` names of the standard granularities, as `TooManySegmentsInTimeChunkFault` prints them. */
const STANDARD_GRANULARITIES: Record<string, string> = {
  PT1S: "SECOND",
  PT1M: "MINUTE",
  PT5M: "FIVE_MINUTE",
  PT10M: "TEN_MINUTE",
  PT15M: "FIFTEEN_MINUTE",
  PT30M: "THIRTY_MINUTE",
  PT1H: "HOUR",
  PT6H: "SIX_HOUR",
  PT8H: "EIGHT_HOUR",
  P1D: "DAY",
  P1W: "WEEK",
  P1M: "MONTH",
  P3M: "QUARTER",
  P1Y: "YEAR",
};

/**
 * The limits on what one query writes: more partitions (segments) than `Limits.MAX_PARTITIONS` (25,000)
 * fail it with `TooManyPartitions`; more segments in one time chunk than the context's `maxNumSegments` with
 * `TooManySegmentsInTimeChunk` (each chunk's rows over `rowsPerSegment`, as the segment generator cuts them).
 */
function partitionFault(plan: TaskPlan, result: IngestResult): MsqFault | null {
  const ingest = plan.ingest;
  const msq = plan.msq;
  if (!ingest || !msq) return null;
  const per = ingest.partitions.maxRowsPerSegment;
  const counts = result.chunks.map((c) => ({ chunk: c.interval, n: Math.ceil(c.numRows / per) }));
  const maxPartitions = 25_000;
  if (counts.reduce((a, c) => a + c.n, 0) > maxPartitions)
    return {
      errorCode: "TooManyPartitions",
      maxPartitions,
      errorMessage: `Too many partitions (max = ${maxPartitions}). Try increasing the limit using the maxPartitions query context parameter, breaking your query up into smaller queries, or using a larger target size.`,
    };
  const maxNumSegments = Number(msq.context.maxNumSegments);
  if (!Number.isInteger(maxNumSegments)) return null;
  const over = counts.find((c) => c.n > maxNumSegments);
  if (!over) return null;
  const g = ingest.dataSchema.segmentGranularity;
  const name =
    g.kind === "all"
      ? "ALL"
      : g.kind === "period"
        ? (STANDARD_GRANULARITIES[periodIso(g.period)] ?? g.name)
        : "NONE";
  // ALL's one chunk is reported at the epoch (MSQFaultsTest).
  const chunk = instantText(g.kind === "all" ? 0 : over.chunk.start);
  const fmt = (n: number) => n.toLocaleString("en-US");
  return {
    errorCode: "TooManySegmentsInTimeChunk",
    timeChunk: chunk,
    numSegments: over.n,
    maxNumSegments,
    errorMessage: `Too many segments requested to be generated in time chunk[${chunk}] with granularity[${name}] (requested = [${fmt(over.n)}], maximum = [${fmt(maxNumSegments)}]). Please try breaking up your query or change the maximum using the query context parameter[maxNumSegments].`,
  };
}

/** `MSQFaultUtils.generateMessageWithErrorCode`: what the controller's TaskStatus errorMsg says. */
export function faultMessage(fault: MsqFault): string {
  return `${fault.errorCode}: ${fault.errorMessage}`;
}

/** The fault behind a failed controller's errorMsg (the code before the first colon, else UnknownError). */
function faultOf(task: SimTask): MsqFault | null {
  if (task.phase !== "failed") return null;
  const msg = task.errorMsg ?? "";
  if (task.plan.msq && task.result) {
    const planned = msqFault(task.plan, task.result);
    if (planned && msg === faultMessage(planned)) return planned;
  }
  if (task.shutDown || msg === CANCELED_MESSAGE)
    return { errorCode: "Canceled", errorMessage: "Query canceled by user or by task shutdown." };
  // A fault planned before a restart: its code and message are in the errorMsg.
  const coded =
    /^(InsertTimeNull|InsertTimeOutOfBounds|InsertCannotBeEmpty|TooManyPartitions|TooManySegmentsInTimeChunk): ([\s\S]*)$/.exec(
      msg,
    );
  if (coded) return { errorCode: coded[1] as string, errorMessage: coded[2] as string };
  return { errorCode: "UnknownError", errorMessage: msg };
}

/**
 * The controller's worker tasks, `<controller>-worker<n>_0` of type `query_worker` in the controller's group
 * (`MSQTasks.workerTaskId`), started with it. They hold no slots of their own (the controller's plan counts
 * them) and end when it ends (`SimTask.plan.controller`).
 */
export function workerTasks(controller: SimTask): SimTask[] {
  const msq = controller.plan.msq;
  if (!msq) return [];
  const out: SimTask[] = [];
  for (let n = 0; n < msq.workers; n++) {
    const id = `${controller.id}-worker${n}_0`;
    out.push({
      ...controller,
      id,
      groupId: controller.id,
      type: "query_worker",
      payload: {
        type: "query_worker",
        id,
        groupId: controller.id,
        controllerTaskId: controller.id,
        workerNumber: n,
        retryCount: 0,
        dataSource: controller.dataSource,
        context: msq.context,
      },
      plan: {
        ...controller.plan,
        id,
        type: "query_worker",
        groupId: controller.id,
        slots: 0,
        ingest: null,
        msq: undefined,
        controller: controller.id,
      },
      seq: controller.seq,
      // Launched by the controller as it starts.
      createdAt: controller.startedAt ?? controller.createdAt,
      runnerInsertedAt: controller.startedAt ?? controller.createdAt,
      location: { ...controller.location, port: controller.location.port + n + 1 },
      result: null,
      plannedFailure: null,
      segmentIds: [],
      version: null,
    });
  }
  return out;
}

/** The controller's stored payload (`GET /task/{id}`): `MSQControllerTask`'s JSON, the parts segops may read. */
export function controllerPayload(plan: TaskPlan, msq: MsqPlan): Record<string, unknown> {
  return {
    type: "query_controller",
    id: plan.id,
    groupId: plan.id,
    dataSource: plan.dataSource,
    resource: { availabilityGroup: plan.id, requiredCapacity: 1 },
    spec: {
      query: { dataSource: "external", context: msq.context },
      destination: {
        type: "dataSource",
        dataSource: plan.dataSource,
        segmentGranularity: plan.ingest?.dataSchema.segmentGranularity,
        replaceTimeChunks:
          msq.verb === "REPLACE" ? [msq.overwrite ? intervalText(msq.overwrite) : "ALL"] : null,
      },
      tuningConfig: { maxNumWorkers: msq.workers, rowsPerSegment: plan.ingest?.partitions.maxRowsPerSegment },
    },
    sqlQuery: msq.query,
    sqlQueryContext: msq.context,
    context: msq.context,
  };
}

// ------------------------------------------------------------------------------------------- views

/** Per-worker shares of a count (worker n gets the n-th slice; the first ones take the remainder). */
function shares(total: number, workers: number): number[] {
  const base = Math.floor(total / workers);
  return Array.from({ length: workers }, (_, i) => base + (i < total % workers ? 1 : 0));
}

function stageCounters(task: SimTask, fraction: number): Record<string, unknown> {
  const msq = task.plan.msq as MsqPlan;
  const c = task.result?.counters;
  const f = (n: number) => Math.floor(n * fraction);
  // The scan reads the rows WHERE dropped too.
  const read = f((c?.processed ?? 0) + (c?.thrownAway ?? 0) + (msq.findings?.dropped ?? 0));
  const output = f(c?.processed ?? 0);
  const warnings = f(c?.unparseable ?? 0);
  const bytes = f(c?.processedBytes ?? 0);
  const w = msq.workers;
  const [readS, outS, warnS, bytesS] = [
    shares(read, w),
    shares(output, w),
    shares(warnings, w),
    shares(bytes, w),
  ];
  const stage0: Record<string, unknown> = {};
  const stage1: Record<string, unknown> = {};
  for (let n = 0; n < w; n++) {
    const worker: Record<string, unknown> = {
      input0: { type: "channel", rows: [readS[n]], bytes: [bytesS[n]], files: [1], totalFiles: [1] },
      output: { type: "channel", rows: [outS[n]], bytes: [bytesS[n]], frames: [1] },
      shuffle: { type: "channel", rows: [outS[n]], bytes: [bytesS[n]], frames: [1] },
    };
    if ((warnS[n] as number) > 0) worker.warnings = { type: "warnings", [PARSE_CODE]: warnS[n] };
    stage0[String(n)] = worker;
    stage1[String(n)] = {
      input0: { type: "channel", rows: [outS[n]], bytes: [bytesS[n]], frames: [1] },
      segmentGenerationProgress: {
        type: "segmentGenerationProgress",
        rowsProcessed: outS[n],
        rowsPersisted: outS[n],
        rowsMerged: outS[n],
        rowsPushed: fraction >= 1 && task.phase === "success" ? outS[n] : 0,
      },
    };
  }
  return { "0": stage0, "1": stage1 };
}

function progressOf(task: SimTask, now: number): number {
  if (task.phase !== "running" || task.endsAt === null || task.startedAt === null) return 1;
  if (task.endsAt <= task.startedAt) return 1;
  return Math.min(1, Math.max(0, (now - task.startedAt) / (task.endsAt - task.startedAt)));
}

function reportStatus(task: SimTask, now: number): Record<string, unknown> {
  const msq = task.plan.msq as MsqPlan;
  const status = task.phase === "success" ? "SUCCESS" : task.phase === "failed" ? "FAILED" : "RUNNING";
  const started = task.startedAt ?? now;
  const end = task.finishedAt ?? now;
  const fault = faultOf(task);
  const warnings = (task.result?.unparseableEvents ?? []).map((message) => ({
    taskId: `${task.id}-worker0_0`,
    host: "localhost",
    stageNumber: 0,
    error: { errorCode: PARSE_CODE, errorMessage: message },
  }));
  return {
    status,
    ...(fault ? { errorReport: { taskId: task.id, host: "localhost", error: fault } } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    startTime: instantText(started),
    durationMs: end - started,
    pendingTasks: 0,
    runningTasks: status === "RUNNING" ? 1 + msq.workers : 0,
  };
}

function stages(task: SimTask): Array<Record<string, unknown>> {
  const msq = task.plan.msq as MsqPlan;
  const ingest = task.plan.ingest as IngestPlan;
  const phase = task.phase === "running" ? "READING_INPUT" : task.phase === "failed" ? "FAILED" : "FINISHED";
  const startTime = instantText(task.startedAt ?? task.createdAt);
  return [
    {
      stageNumber: 0,
      definition: {
        id: `${task.id}_0`,
        input: [
          {
            type: "external",
            inputSource: msq.program?.externs[0]?.inputSource ?? ingest.inputSource,
            inputFormat: msq.program?.externs[0]?.inputFormat ?? ingest.inputFormat,
            signature: msq.signature,
          },
        ],
        processor: { type: "scan" },
        maxWorkerCount: msq.workers,
      },
      phase,
      workerCount: msq.workers,
      partitionCount: msq.workers,
      startTime,
      sort: true,
    },
    {
      stageNumber: 1,
      definition: {
        id: `${task.id}_1`,
        input: [{ type: "stage", stage: 0 }],
        processor: {
          type: "segmentGenerator",
          dataSchema: { dataSource: task.dataSource },
          clusterBy: msq.clusteredBy,
        },
        maxWorkerCount: msq.workers,
      },
      phase: task.phase === "running" ? "NEW" : phase,
      workerCount: msq.workers,
      startTime,
    },
  ];
}

/**
 * `GET /task/{controller}/reports` for an MSQ controller (`docs/api-reference/sql-ingestion-api.md`, "Get the
 * report for a query task"): `multiStageQuery` with the status (errorReport and warnings), the stages and the
 * counters per stage per worker. Null before the controller starts (Druid answers 404 for a moment).
 */
export function msqReport(task: SimTask, now: number): Record<string, unknown> | null {
  if (!task.plan.msq || task.startedAt === null) return null;
  return {
    multiStageQuery: {
      type: "multiStageQuery",
      taskId: task.id,
      payload: {
        status: reportStatus(task, now),
        stages: stages(task),
        counters: stageCounters(task, progressOf(task, now)),
      },
    },
  };
}

/**
 * `GET /druid/v2/sql/statements/{queryId}` (`SqlStatementResource`; docs/api-reference/sql-api.md): the query id
 * is the controller task id. ACCEPTED while the task waits for locks or slots, then RUNNING, SUCCESS or FAILED
 * with `errorDetails` (the fault as a `DruidException`). `detail=true` adds stages, counters and warnings.
 */
export function statementStatus(task: SimTask, now: number, detail: boolean): Record<string, unknown> {
  const state =
    task.phase === "waiting" || task.phase === "pending"
      ? "ACCEPTED"
      : task.phase === "running"
        ? "RUNNING"
        : task.phase === "success"
          ? "SUCCESS"
          : "FAILED";
  const fault = faultOf(task);
  const report = msqReport(task, now);
  const payload = (report?.multiStageQuery as { payload: Record<string, unknown> } | undefined)?.payload;
  return {
    queryId: task.id,
    state,
    createdAt: instantText(task.createdAt),
    schema: [{ name: "TASK", type: "VARCHAR", nativeType: "STRING" }],
    durationMs: task.startedAt === null ? -1 : (task.finishedAt ?? now) - task.startedAt,
    ...(fault
      ? {
          errorDetails: {
            error: "druidException",
            errorCode: fault.errorCode,
            persona: "USER",
            category: fault.errorCode === "Canceled" ? "CANCELED" : "RUNTIME_FAILURE",
            errorMessage: faultMessage(fault),
            context: {},
          },
        }
      : {}),
    ...(detail && payload
      ? {
          stages: payload.stages,
          counters: payload.counters,
          warnings: (payload.status as { warnings?: unknown }).warnings ?? [],
        }
      : {}),
  };
}
