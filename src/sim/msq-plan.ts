import { bucketOf, type Granularity, isAligned, parseGranularity, periodIso } from "../core/granularity.js";
import type { Interval } from "../core/interval.js";
import { sqlTimeUnitPeriod } from "../core/sql-time-units.js";
import { validateId } from "./ids.js";
import { InputError } from "./input.js";
import { intervalText } from "./instant-text.js";
import { channelJson } from "./json-value.js";
import {
  planProgram,
  runProgram,
  type SegmentView,
  type Tables,
  tableColumns,
  tableRows,
} from "./msq-query.js";
import { type MsqProgram, parseExpr, parseQuery } from "./msq-sql.js";
import {
  IDENT,
  MsqPlanError,
  mask,
  splitTopLevel,
  stripComments,
  unquoteIdent,
  withPosition,
} from "./msq-text.js";
import { granularityText, overwriteWindow } from "./msq-window.js";
import type { IngestPlan, MsqPlan, TaskPlan } from "./plans.js";
import { simKnobs } from "./spec.js";
import { type ColumnRef, children, type Expr } from "./sql-ast.js";

/**
 * Planning `POST /druid/v2/sql/task` (docs/druid-api.md §6): the statement's clauses (INSERT/REPLACE, OVERWRITE,
 * PARTITIONED BY, CLUSTERED BY, leading SET statements), its query planned and run by msq-query.ts, and the
 * controller task's plan. Loaded on the first submission (routes/msq.ts), so `segops sim` starts without the SQL
 * parser and evaluator.
 */

const DEFAULT_ROWS_PER_SEGMENT = 3_000_000;

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
  let name: string | undefined = names[c.toUpperCase().replace(/\s+/g, " ")];
  const quoted = /^'([^']*)'$/.exec(c);
  if (!name && quoted) name = quoted[1] as string;
  const timeFloor = /^TIME_FLOOR\s*\(\s*"?__time"?\s*,\s*'([^']*)'\s*\)$/i.exec(c);
  if (!name && timeFloor) name = timeFloor[1] as string;
  const floor = /^FLOOR\s*\(\s*"?__time"?\s+TO\s+([A-Za-z]+)\s*\)$/i.exec(c);
  // FLOOR's unit partitions by its period (`TimeUnits.toPeriod`), whichever unit Calcite names.
  if (!name && floor) name = sqlTimeUnitPeriod((floor[1] as string).toUpperCase());
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
        throw new MsqPlanError(`Column '${col.name}' not found in any table`, "invalidInput", col.span[0]);
    return bare;
  }
  const name = unquoteIdent(bare);
  // Calcite resolves CLUSTERED BY against the SELECT's output and then its input (an input column not written
  // orders nothing in the segments).
  if (!columns.includes(name) && !inputs.includes(name))
    throw new MsqPlanError(`Column '${name}' not found in any table`, "invalidInput", at);
  return name;
}

function columnsIn(e: Expr): ColumnRef[] {
  return e.k === "col" ? [e] : children(e).flatMap(columnsIn);
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
      metrics: q.program.metrics.map((m) => ({
        name: m.name,
        type: m.type,
        fieldName: m.field,
        ...(m.finalize ? { finalize: true } : {}),
      })),
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
    out = runProgram(
      program,
      { columns: tablesOf(catalog), rows: (ds) => tableRows(catalog?.segments(ds) ?? []) },
      catalog?.now ?? Date.now(),
    );
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
    data: out.records
      .map((r) => (r.value === null ? r.raw : JSON.stringify(r.value, channelJson)))
      .join("\n"),
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
