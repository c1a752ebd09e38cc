import { bucketOf, type Granularity, isAligned, parseGranularity } from "../core/granularity.js";
import type { Interval } from "../core/interval.js";
import { type IngestResult, parseTimestamp } from "./ingest.js";
import { readInput } from "./input.js";
import { instantText, intervalText } from "./instant-text.js";
import { checkGrouping, dimensionsOf, metricsOf, readSelectItems, type SelectItem } from "./msq-select.js";
import {
  closing,
  IDENT,
  literal,
  MsqPlanError,
  mask,
  splitTopLevel,
  stripComments,
  unquoteIdent,
} from "./msq-text.js";
import type { DimensionSpec, IngestPlan, MetricSpec, MsqPlan, TaskPlan } from "./plans.js";
import { simKnobs } from "./spec.js";
import type { SimTask } from "./task.js";

export { MsqPlanError } from "./msq-text.js";

type TimeItem = Extract<SelectItem, { kind: "time" }>;

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

const WINDOW_TERM = /^\s*\(?\s*"?__time"?\s*(>=|<)\s*TIMESTAMP\s*'([^']*)'\s*\)?\s*$/i;

/** `__time >= TIMESTAMP 'a' AND __time < TIMESTAMP 'b'` (either order) → the interval, or an error. */
function readWindow(cond: string, clause: string): Interval {
  const terms = cond.trim().split(/\s+AND\s+/i);
  let start: number | undefined;
  let end: number | undefined;
  for (const term of terms) {
    const m = WINDOW_TERM.exec(term);
    if (!m || terms.length !== 2) {
      if (clause === "OVERWRITE WHERE" && !/__time/.test(term))
        throw new MsqPlanError(
          `OVERWRITE WHERE clause only supports filtering on the __time column, got [${cond.trim()}]`,
        );
      throw new MsqPlanError(
        `The emulator reads ${clause} only as __time >= TIMESTAMP '<start>' AND __time < TIMESTAMP '<end>', got [${cond.trim()}]`,
        "unsupported",
      );
    }
    const ms = sqlTimestamp(m[2] as string);
    if (!Number.isFinite(ms)) throw new MsqPlanError(`Illegal TIMESTAMP literal '${m[2]}'`);
    if (m[1] === ">=") start = ms;
    else end = ms;
  }
  if (start === undefined || end === undefined || !(end > start)) {
    throw new MsqPlanError(
      `The OVERWRITE WHERE clause [${cond.trim()}] produced no time intervals, are the bounds overly restrictive?`,
    );
  }
  return { start, end };
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
    return { granularity, label: c.toUpperCase() };
  } catch {
    throw new MsqPlanError(
      `Invalid granularity[${c}] specified after PARTITIONED BY clause. Expected 'SECOND', 'MINUTE', 'FIVE_MINUTE', 'TEN_MINUTE', 'FIFTEEN_MINUTE', 'THIRTY_MINUTE', 'HOUR', 'SIX_HOUR', 'EIGHT_HOUR', 'DAY', 'MONTH', 'QUARTER', 'YEAR', 'ALL', ALL TIME, FLOOR() or TIME_FLOOR()`,
    );
  }
}

/** `EXTERN('<inputSource>', '<inputFormat>', '<signature>')` → the three JSON objects. */
/** `EXTEND (name TYPE, …)` SQL types → the signature's native types (`Columns.sqlTypeToNative`, roughly). */
function extendSignature(list: string): Array<{ name: string; type: string }> {
  return splitTopLevel(list).map((col) => {
    const m = new RegExp(`^(${IDENT})\\s+([A-Za-z]+)(?:\\s*\\(\\s*\\d+\\s*\\))?$`).exec(col.trim());
    if (!m) throw new MsqPlanError(`Cannot read the EXTEND column [${col}]`);
    const sqlType = (m[2] as string).toUpperCase();
    const type =
      sqlType === "BIGINT" || sqlType === "INTEGER" || sqlType === "INT"
        ? "long"
        : sqlType === "DOUBLE"
          ? "double"
          : sqlType === "FLOAT" || sqlType === "REAL"
            ? "float"
            : "string";
    return { name: unquoteIdent(m[1] as string), type };
  });
}

/**
 * `TABLE(EXTERN('<inputSource>', '<inputFormat>', '<signature>'))`, or the two-argument form followed by
 * `EXTEND (col TYPE, …)` (`docs/multi-stage-query/reference.md`, "EXTERN") → the input and its columns.
 */
function extern(
  from: string,
  extend: string | null,
): {
  inputSource: Record<string, unknown>;
  inputFormat: Record<string, unknown>;
  signature: Array<{ name: string; type: string }>;
} {
  const lit = "('(?:[^']|'')*')";
  const m = new RegExp(
    `^TABLE\\s*\\(\\s*EXTERN\\s*\\(\\s*${lit}\\s*,\\s*${lit}\\s*(?:,\\s*${lit}\\s*)?\\)\\s*\\)$`,
    "i",
  ).exec(from.trim());
  if (!m || (m[3] === undefined) === (extend === null)) {
    throw new MsqPlanError(
      "The emulator reads FROM only as TABLE(EXTERN('<inputSource>', '<inputFormat>', '<signature>')) or TABLE(EXTERN('<inputSource>', '<inputFormat>')) EXTEND (<columns>)",
      "unsupported",
    );
  }
  const parse = (text: string, what: string): unknown => {
    try {
      return JSON.parse(literal(text));
    } catch (error) {
      throw new MsqPlanError(`Invalid ${what} in EXTERN: ${(error as Error).message}`);
    }
  };
  const inputSource = parse(m[1] as string, "inputSource");
  const inputFormat = parse(m[2] as string, "inputFormat");
  const signature = m[3] === undefined ? extendSignature(extend as string) : parse(m[3], "signature");
  if (!isObj(inputSource) || !isObj(inputFormat) || !Array.isArray(signature))
    throw new MsqPlanError("EXTERN takes an inputSource object, an inputFormat object and a signature array");
  return {
    inputSource,
    inputFormat,
    signature: signature.map((c) => ({
      name: String((c as { name?: unknown }).name),
      type: String((c as { type?: unknown }).type ?? "string").toLowerCase(),
    })),
  };
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

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
  const head = /^\s*(REPLACE|INSERT)\s+INTO\s+("(?:[^"]|"")+"|[^\s(]+)/i.exec(masked);
  if (!head) {
    throw new MsqPlanError(
      "The emulator runs only INSERT and REPLACE statements on /druid/v2/sql/task",
      "unsupported",
    );
  }
  const verb = (head[1] as string).toUpperCase() as "INSERT" | "REPLACE";
  const headEnd = head.index + head[0].length;
  const dataSource = unquoteIdent(sql.slice(headEnd - head[2]!.length, headEnd));
  const partitioned = keywordAt(masked, /\bPARTITIONED\s+BY\b/);
  if (!partitioned)
    throw new MsqPlanError(`Operation [${verb}] requires a PARTITIONED BY to be explicitly defined`);
  const clustered = keywordAt(masked, /\bCLUSTERED\s+BY\b/, partitioned.index);
  const select = keywordAt(masked, /\bSELECT\b/, headEnd);
  if (!select || select.index > partitioned.index)
    throw new MsqPlanError("Expected a SELECT before PARTITIONED BY");
  return { verb, dataSource, headEnd, select, partitioned, clustered };
}

/** A REPLACE's OVERWRITE WHERE window (null for OVERWRITE ALL, and for an INSERT). */
function readOverwrite(sql: string, masked: string, c: Clauses): Interval | null {
  if (c.verb !== "REPLACE") return null;
  const ow = keywordAt(masked, /\bOVERWRITE\s+(ALL\b|WHERE\b)/, c.headEnd);
  if (!ow || ow.index > c.select.index) {
    throw new MsqPlanError(
      "Missing time chunk information in OVERWRITE clause for REPLACE. Use OVERWRITE WHERE <__time based condition> or OVERWRITE ALL to overwrite the entire table.",
    );
  }
  if (!/^WHERE/i.test(ow[1] as string)) return null;
  return readWindow(sql.slice(ow.index + ow[0].length, c.select.index), "OVERWRITE WHERE");
}

/** `FROM TABLE(EXTERN(…)) [EXTEND (…)] [WHERE <window>]`: the input, the SELECT's window, where FROM starts. */
function readFrom(
  sql: string,
  masked: string,
  c: Clauses,
): {
  source: ReturnType<typeof extern>;
  filter: Interval | null;
  groupBy: string[] | null;
  fromIndex: number;
} {
  const from = keywordAt(masked, /\bFROM\b/, c.select.index);
  if (!from || from.index > c.partitioned.index)
    throw new MsqPlanError("Expected FROM TABLE(EXTERN(...))", "unsupported");
  const tableOpen = masked.indexOf("(", from.index);
  const tableClose = tableOpen < 0 ? -1 : closing(masked, tableOpen);
  if (tableClose < 0 || tableClose > c.partitioned.index)
    throw new MsqPlanError("The emulator reads FROM only as TABLE(EXTERN(...))", "unsupported");
  let afterFrom = sql.slice(tableClose + 1, c.partitioned.index).trim();
  let extend: string | null = null;
  const ext = /^EXTEND\s*\(/i.exec(afterFrom);
  if (ext) {
    const open = ext[0].length - 1;
    const close = closing(mask(afterFrom), open);
    if (close < 0) throw new MsqPlanError("EXTEND ( without its closing parenthesis");
    extend = afterFrom.slice(open + 1, close);
    afterFrom = afterFrom.slice(close + 1).trim();
  }
  const source = extern(sql.slice(from.index + from[0].length, tableClose + 1), extend);
  let groupBy: string[] | null = null;
  const group = keywordAt(mask(afterFrom), /\bGROUP\s+BY\b/);
  if (group) {
    groupBy = splitTopLevel(afterFrom.slice(group.index + group[0].length));
    afterFrom = afterFrom.slice(0, group.index).trim();
  }
  let filter: Interval | null = null;
  if (afterFrom !== "") {
    const where = /^WHERE\b([\s\S]*)$/i.exec(afterFrom);
    if (!where) throw new MsqPlanError(`The emulator reads no [${afterFrom}] after FROM`, "unsupported");
    filter = readWindow(where[1] as string, "WHERE");
  }
  return { source, filter, groupBy, fromIndex: from.index };
}

/** The SELECT list, which must name the __time column, and its grouping. */
function readSelect(
  sql: string,
  c: Clauses,
  fromIndex: number,
  groupBy: string[] | null,
): { items: SelectItem[]; time: TimeItem; rollup: boolean } {
  const items = readSelectItems(sql.slice(c.select.index + c.select[0].length, fromIndex));
  const time = items.find((i): i is TimeItem => i.kind === "time");
  if (!time) {
    throw new MsqPlanError(
      "The emulator needs the __time column as TIME_PARSE(col) AS __time or MILLIS_TO_TIMESTAMP(col) AS __time",
      "unsupported",
    );
  }
  return { items, time, rollup: checkGrouping(items, groupBy) };
}

/**
 * PARTITIONED BY and CLUSTERED BY; the OVERWRITE window must sit on PARTITIONED BY's buckets, and a
 * SELECT's window is read only when it equals the OVERWRITE window.
 */
function readPartitioning(
  sql: string,
  c: Clauses,
  overwrite: Interval | null,
  filter: Interval | null,
): { granularity: Granularity; clusteredBy: string[] } {
  const partClause = sql.slice(
    c.partitioned.index + c.partitioned[0].length,
    c.clustered ? c.clustered.index : sql.length,
  );
  const { granularity, label } = partitionedBy(partClause);
  const clusteredBy = c.clustered
    ? splitTopLevel(sql.slice(c.clustered.index + c.clustered[0].length).replace(/;\s*$/, "")).map(
        unquoteIdent,
      )
    : [];
  if (overwrite) {
    // DruidSqlParserUtils.validateQueryAndConvertToIntervals.
    const aligned =
      granularity.kind === "all" ||
      (granularity.kind === "period" &&
        isAligned(granularity, overwrite.start) &&
        isAligned(granularity, overwrite.end));
    if (!aligned) {
      throw new MsqPlanError(
        `OVERWRITE WHERE clause identified interval [${intervalMessageText(overwrite)}] which is not aligned with PARTITIONED BY granularity [${label}]`,
      );
    }
  }
  if (filter && overwrite && (filter.start !== overwrite.start || filter.end !== overwrite.end)) {
    throw new MsqPlanError(
      "The emulator reads a SELECT's WHERE on __time only when it equals the OVERWRITE WHERE window",
      "unsupported",
    );
  }
  return { granularity, clusteredBy };
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

/** The ingestion the controller runs, in the native model's terms (ingest.ts). */
function controllerIngest(q: {
  verb: Clauses["verb"];
  time: TimeItem;
  dimensions: DimensionSpec[];
  metrics: MetricSpec[];
  rollup: boolean;
  granularity: Granularity;
  overwrite: Interval | null;
  filter: Interval | null;
  source: ReturnType<typeof extern>;
  clusteredBy: string[];
  workers: number;
  rowsPerSegment: number;
}): IngestPlan {
  return {
    dataSchema: {
      timestamp: { column: q.time.column, format: q.time.format, missingValue: null },
      dimensions: q.dimensions,
      dimensionExclusions: [],
      metrics: q.metrics,
      segmentGranularity: q.granularity,
      queryGranularity: q.time.granularity,
      // A GROUP BY writes one row per group and time. Druid marks the segments rolled up only with
      // finalizeAggregations false; the emulator groups the same rows either way and marks them rolled up.
      rollup: q.rollup,
      intervals: q.overwrite ? [q.overwrite] : q.filter ? [q.filter] : null,
    },
    inputSource: q.source.inputSource,
    inputFormat: q.source.inputFormat,
    mode: q.verb === "REPLACE" ? "REPLACE" : "APPEND",
    forceGuaranteedRollup: false,
    // Clustering sorts each chunk by these columns before `rowsPerSegment` cuts it (range partitioning).
    partitions: {
      type: q.clusteredBy.length > 0 ? "range" : "dynamic",
      maxRowsPerSegment: q.rowsPerSegment,
      numShards: null,
      partitionDimensions: q.clusteredBy,
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
): { plan: TaskPlan; msq: MsqPlan } {
  const context: Record<string, unknown> = { ...requestContext };
  const sql = takeSets(stripComments(query), context);
  const masked = mask(sql);
  const clauses = readClauses(sql, masked);
  const overwrite = readOverwrite(sql, masked, clauses);
  const { source, filter, groupBy, fromIndex } = readFrom(sql, masked, clauses);
  const select = readSelect(sql, clauses, fromIndex, groupBy);
  const { granularity, clusteredBy } = readPartitioning(sql, clauses, overwrite, filter);
  const { workers, maxParseExceptions, rowsPerSegment } = readLimits(context);
  const ingest = controllerIngest({
    verb: clauses.verb,
    time: select.time,
    dimensions: dimensionsOf(select.items, select.time.column, source.signature),
    metrics: metricsOf(select.items, source.signature),
    rollup: select.rollup,
    granularity,
    overwrite,
    filter,
    source,
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
    filtered: filter !== null,
    signature: source.signature,
    context: { ...context, sqlQueryId },
  };
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

/**
 * The fault an MSQ query ends with, decided when the controller starts (the engine applies it at the end).
 * Parse failures are warnings (`CannotParseExternalData`) until there are more than `maxParseExceptions`
 * (`FaultsExceededChecker`); then the query fails with `TooManyWarnings` (`TooManyWarningsFault`). A REPLACE
 * whose rows fall outside its OVERWRITE WHERE window, unfiltered by the SELECT, fails with
 * `InsertTimeOutOfBounds` (`InsertTimeOutOfBoundsFault`), naming the first such time chunk.
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
  const window = msq.overwrite;
  const ingest = plan.ingest;
  if (window && ingest && !msq.filtered && result.counters.thrownAway > 0) {
    const chunk = firstOutside(ingest, window);
    if (chunk) {
      const bounds = `[${intervalText(window)}]`;
      return {
        errorCode: "InsertTimeOutOfBounds",
        interval: intervalText(chunk),
        intervalBounds: [intervalText(window)],
        errorMessage: `Inserted data contains time chunk[${intervalText(chunk)}] outside of bounds specified by OVERWRITE WHERE[${bounds}]. If you want to include this data, expand your OVERWRITE WHERE. If you do not want to include this data, use SELECT ... WHERE to filter it from your inserted data.`,
      };
    }
  }
  return null;
}

/** The time chunk of the first input row outside `window` (the input is read again: the emulator keeps no rows). */
function firstOutside(ingest: IngestPlan, window: Interval): Interval | null {
  const raw = readInput(ingest.inputSource, ingest.inputFormat);
  const { column, format } = ingest.dataSchema.timestamp;
  for (const record of raw?.records ?? []) {
    const ts = record.value ? parseTimestamp(record.value[column], format) : Number.NaN;
    if (Number.isFinite(ts) && (ts < window.start || ts >= window.end))
      return bucketOf(ingest.dataSchema.segmentGranularity, ts);
  }
  return null;
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
  const read = f((c?.processed ?? 0) + (c?.thrownAway ?? 0));
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
            inputSource: ingest.inputSource,
            inputFormat: ingest.inputFormat,
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
