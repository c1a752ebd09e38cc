import { readInput } from "./input.js";
import {
  inputValue,
  isAggregate,
  isNumeric,
  nativeOf,
  type Row,
  STORED_AGGREGATES,
  sqlTypeOf,
} from "./msq-eval.js";
import type { Extern, MsqProgram, OutputMetric } from "./msq-sql.js";
import { asPlanError, MsqPlanError } from "./msq-text.js";
import {
  type Column,
  SqlError,
  type SqlRow,
  type SqlType,
  Timestamp,
  UnsupportedSqlError,
  type Value,
} from "./sql.js";
import { children, type Expr, type From, type Query, type Span } from "./sql-ast.js";
import { type Compiled, hasAggregate, onRow, truthy } from "./sql-env.js";
import { compile } from "./sql-eval.js";
import { openFrom, type RunOptions, runQuery, type TableSource } from "./sql-exec.js";
import { SKETCH_METRICS } from "./sql-sketches.js";
import { UTC } from "./sql-time.js";

/**
 * An MSQ ingestion query planned and run by the Broker's SQL engine (sql-eval.ts, sql-exec.ts): Calcite's
 * validation (unknown columns, grouping, types) is the Broker engine's, and so are the values (timestamps,
 * BOOLEAN as 1/0, text math) — one engine, as Druid plans both with one SQL planner
 * (`docs/multi-stage-query/concepts.md`). What is relational in the FROM (joins, subqueries, WITH) runs on the
 * Broker's executor; the ingestion's own SELECT is evaluated row by row into the records the native ingestion
 * model (ingest.ts) turns into segments: `__time` in millis, the dimensions, and each aggregate's input for the
 * rollup (`docs/multi-stage-query/concepts.md`, "Rollup").
 */

export type { Column };

/** What the planner knows of a datasource: its columns (null when there is no such table). */
export type Tables = (name: string) => Column[] | null;

/** A datasource's rows for reingestion (`FROM <datasource>`), `__time` in millis. */
export type TableRows = (name: string) => Row[];

/** The datasources a query may read: their columns (planning) and rows (running). */
export interface Catalog {
  columns: Tables;
  rows: TableRows;
}

type Fn = Extract<Expr, { k: "fn" }>;

/** An EXTERN's columns, typed by its signature. */
function externColumns(from: Extern | Extract<From, { k: "extern" }>): Column[] {
  return from.signature.map((c) => ({ name: c.name, type: sqlTypeOf(c.type, c.name) }));
}

/** An EXTERN's rows (the lines its format could not parse are left out: they are the top level's to count). */
function readExtern(from: Extract<From, { k: "extern" }>): SqlRow[] {
  const input = readInput(from.inputSource, from.inputFormat);
  if (!input)
    throw new UnsupportedSqlError(`The emulator reads no ${String(from.inputSource.type)} input source`);
  const columns = externColumns(from);
  return input.records.flatMap((r) =>
    r.value === null
      ? []
      : [Object.fromEntries(columns.map((c) => [c.name, inputValue(r.value?.[c.name], c.type)]))],
  );
}

/**
 * The Broker executor's view of the ingestion's inputs: datasources of the druid schema (their `__time` as
 * timestamps), EXTERN read (or, while planning, only typed). `reading` false: no input is read.
 */
function runOptions(catalog: Catalog, reading: boolean, now: number): RunOptions {
  return {
    timeZone: UTC,
    now,
    table(parts: string[], span: Span): TableSource {
      const [schema, name] = parts.length === 2 ? parts : [null, parts[0] as string];
      if (parts.length > 2 || (schema !== null && schema?.toLowerCase() !== "druid"))
        throw new UnsupportedSqlError(
          `The emulator reads tables of the druid schema only, got [${parts.join(".")}]`,
          span,
        );
      const columns = catalog.columns(name as string);
      // Calcite's validator, pointing at the name.
      if (!columns) throw new SqlError(`Object '${name}' not found`, span);
      return {
        columns,
        rows: () =>
          reading
            ? catalog.rows(name as string).map((r) => {
                const row: SqlRow = {};
                for (const c of columns) {
                  const v = r[c.name];
                  row[c.name] =
                    c.name === "__time" && typeof v === "number" ? new Timestamp(v) : storedValue(v);
                }
                return row;
              })
            : [],
        system: false,
        dataSource: name as string,
      };
    },
    extern: (from) => ({
      columns: externColumns(from),
      rows: () => (reading ? readExtern(from) : []),
      system: false,
      dataSource: null,
    }),
  };
}

/**
 * A segment's stored value as the engine reads it: a multi-value row is its list, one value itself, an empty list
 * null (as the Broker reads the same rows, sql-catalog.ts).
 */
function storedValue(v: unknown): Value {
  if (v === undefined || v === null) return null;
  if (Array.isArray(v))
    return v.length === 0 ? null : v.length === 1 ? storedValue(v[0]) : (v as unknown as Value);
  return v as Value;
}

function containsAggregate(e: Expr): boolean {
  return isAggregate(e) || children(e).some(containsAggregate);
}

/**
 * What the ingestion writes of its aggregates: whole SELECT items only, and the four it stores as metrics (MSQ
 * writes COUNT, SUM, MIN, MAX as their native aggregators; sketches and first/last are the emulator's gap).
 */
function checkAggregates(q: Query): void {
  for (const item of q.items) {
    if (item.expr.k === "star") continue;
    const e = item.expr as Expr;
    if (!isAggregate(e)) {
      if (containsAggregate(e))
        throw new MsqPlanError(
          "The emulator reads aggregates only as whole SELECT items (SUM(x) AS y), not inside expressions",
          "unsupported",
        );
      continue;
    }
    if (!STORED_AGGREGATES.has(e.name))
      throw new MsqPlanError(
        `The emulator stores no ${e.name} aggregate (first/last, AVG, other sketches); it writes COUNT, SUM, MIN, MAX and the HLL and Theta sketches`,
        "unsupported",
      );
    if (e.distinct)
      throw new MsqPlanError(
        "The emulator stores no COUNT(DISTINCT …) (Druid writes a sketch)",
        "unsupported",
      );
  }
}

/** The EXTERN inputs a query reads, in the order of its WITH, FROM and joins. */
function externsOf(q: Query): Extern[] {
  const ofFrom = (f: From | null): Extern[] => {
    if (!f) return [];
    if (f.k === "extern")
      return [
        { k: "extern", inputSource: f.inputSource, inputFormat: f.inputFormat, signature: f.signature },
      ];
    if (f.k === "sub") return externsOf(f.q);
    if (f.k === "join") return [...ofFrom(f.l), ...ofFrom(f.r)];
    return [];
  };
  return [...q.with.flatMap((w) => externsOf(w.q)), ...ofFrom(q.from)];
}

/**
 * Plans the ingestion query: the `__time` item, the dimensions and the metrics (aggregates), typed by the Broker
 * engine, which validates the whole query as Calcite does (run over no input rows). `tables` answers for
 * `FROM <datasource>`.
 */
export function planProgram(query: Query, tables: Tables, verb: "INSERT" | "REPLACE" = "INSERT"): MsqProgram {
  if (query.orderBy.length > 0)
    throw new MsqPlanError(
      `Cannot use an ORDER BY clause on a Query of type [${verb}], use CLUSTERED BY instead`,
    );
  if (query.having)
    throw new MsqPlanError("The emulator reads no HAVING in an ingestion query", "unsupported");
  if (!query.from) throw new MsqPlanError("An ingestion query reads FROM a table or EXTERN");
  checkAggregates(query);
  const options = runOptions({ columns: tables, rows: () => [] }, false, 0);
  const out = asPlanError(() => runQuery(query, options));
  const input = asPlanError(() => openFrom(query, options));
  const dimensions: MsqProgram["dimensions"] = [];
  const metrics: OutputMetric[] = [];
  let time: SqlType | null = null;
  let field = 0;
  for (const item of query.items) {
    if (item.expr.k === "star") {
      const qualifier = item.expr.qualifier?.parts.join(".");
      for (const f of input.fields) {
        if (qualifier && f.rel !== qualifier && f.relFull !== qualifier) continue;
        const { name, type } = out.fields[field++] ?? f;
        if (name === "__time") time = type;
        else dimensions.push({ name, type: nativeOf(type) });
      }
      continue;
    }
    const e = item.expr as Expr;
    const { name, type } = out.fields[field++] as { name: string; type: SqlType };
    if (name === "__time") {
      if (isAggregate(e))
        throw new MsqPlanError("The emulator needs __time as a time expression", "unsupported");
      time = type;
      continue;
    }
    if (!isAggregate(e)) {
      dimensions.push({ name, type: nativeOf(type) });
      continue;
    }
    const arg =
      e.star || e.args.length === 0 ? null : asPlanError(() => compile(e.args[0] as Expr, input.ctx));
    metrics.push(metricOf(e, arg, name, metrics.length));
  }
  if (time !== null && time !== "TIMESTAMP" && time !== "BIGINT" && time !== "INTEGER")
    throw new MsqPlanError(`The emulator needs __time as a TIMESTAMP, got ${time}`, "unsupported");
  const columns = out.fields.map((f) => f.name);
  const names = new Set<string>();
  for (const c of columns) {
    if (names.has(c)) throw new MsqPlanError(`Duplicate field in SELECT: [${c}]`);
    names.add(c);
  }
  return {
    query,
    // Without a __time item every row is written at the epoch (MSQInsertTest: `SELECT dim3 FROM foo … PARTITIONED
    // BY ALL TIME` gives rows at 0).
    epochTime: time === null,
    dimensions,
    metrics,
    rollup: query.grouped || query.items.some((i) => i.expr.k !== "star" && hasAggregate(i.expr as Expr)),
    columns,
    inputColumns: input.fields.map((f) => f.name),
    externs: externsOf(query),
  };
}

/**
 * An aggregate item's metric: COUNT counts (`count`, or a `longSum` of 0/1 when it counts an expression's
 * non-null values), SUM/MIN/MAX aggregate their input as its native type (text is summed as numbers, as Druid's
 * SUM casts it).
 */
function metricOf(e: Fn, arg: Compiled | null, name: string, n: number): OutputMetric {
  const field = `$m${n}`;
  if (e.name === "COUNT")
    return arg === null ? { name, type: "count", field: null } : { name, type: "longSum", field };
  // Sketches: DS_HLL/DS_THETA stay sketches (their SQL aggregators do not finalize); APPROX_COUNT_DISTINCT_DS_* is
  // written as its count under MSQ's default finalizeAggregations (docs/multi-stage-query/reference.md).
  if (e.name.endsWith("_HLL") || e.name.endsWith("_THETA")) {
    const type = e.name.endsWith("_HLL") ? "HLLSketchBuild" : "thetaSketch";
    return e.name.startsWith("APPROX") ? { name, type, field, finalize: true } : { name, type, field };
  }
  const native = arg && isNumeric(arg.type) ? nativeOf(arg.type) : "double";
  const suffix = e.name === "SUM" ? "Sum" : e.name === "MIN" ? "Min" : "Max";
  return { name, type: `${native}${suffix}`, field };
}

// ------------------------------------------------------------------------------------------- running

/** What running the program gives the ingestion model, and the rows Druid would refuse. */
export interface ProgramOutput {
  records: Array<{ value: Record<string, unknown> | null; raw: string; bytes: number }>;
  /** Rows whose `__time` came out null (`InsertTimeNull`). */
  nullTimes: number;
  /** Rows read but dropped by WHERE (or past LIMIT): read by the scan stage, not written. */
  filtered: number;
}

/** A value as the segment stores it: a timestamp as its millis (a LONG), the rest as the engine holds it. */
function stored(v: Value): unknown {
  return v instanceof Timestamp ? v.ms : v;
}

/** A metric's input: a number (text read as one, as Druid's SUM casts it), null when there is none. */
function metricInput(v: Value): number | null {
  if (v === null) return null;
  if (v instanceof Timestamp) return v.ms;
  if (typeof v === "number") return v;
  const n = Number(v);
  return String(v).trim() === "" || !Number.isFinite(n) ? null : n;
}

/**
 * The ingestion's input rows: a top-level EXTERN read line by line (a line its format could not parse stays, a
 * parse failure: `CannotParseExternalData`), anything else (a datasource, a subquery, a join) as the Broker
 * executor answers it.
 */
function inputRecords(
  q: Query,
  catalog: Catalog,
  now: number,
): {
  ctx: ReturnType<typeof openFrom>["ctx"];
  records: Array<{ row: Value[] | null; raw: string; bytes: number }>;
} {
  const from = q.from as From;
  const options = runOptions(catalog, true, now);
  if (from.k === "extern") {
    // The top level's EXTERN is read here, so its unparseable lines are kept; the executor only types it.
    const typing = { ...options, extern: runOptions(catalog, false, now).extern };
    const { ctx } = asPlanError(() => openFrom(q, typing));
    const input = readInput(from.inputSource, from.inputFormat);
    if (!input)
      throw new MsqPlanError(
        `The emulator reads no ${String(from.inputSource.type)} input source`,
        "unsupported",
      );
    const columns = externColumns(from);
    return {
      ctx,
      records: input.records.map((r) => ({
        row: r.value === null ? null : columns.map((c) => inputValue(r.value?.[c.name], c.type)),
        raw: r.raw,
        bytes: r.bytes,
      })),
    };
  }
  const { ctx, rows, fields } = asPlanError(() => openFrom(q, options));
  return {
    ctx,
    records: rows.map((row) => ({
      row,
      raw: JSON.stringify(Object.fromEntries(fields.map((f, i) => [f.name, row[i] ?? null]))),
      bytes: 100,
    })),
  };
}

/**
 * Runs the planned query: each input row filtered by WHERE and projected into `__time` (millis), the
 * dimensions and the aggregates' inputs (`$m<n>`); the ingestion model groups them (rollup).
 */
export function runProgram(p: MsqProgram, catalog: Catalog, now: number): ProgramOutput {
  const q = p.query;
  const { ctx, records: input } = inputRecords(q, catalog, now);
  const where = q.where
    ? onRow(asPlanError(() => compile(q.where as Expr, { ...ctx, clause: "WHERE" })))
    : null;
  // Each output column's reader over an input row: star items read the input's columns.
  const readers: Array<{ name: string; read: (row: Value[]) => Value; unnest?: boolean }> = [];
  const aggregates: Array<{ metric: OutputMetric; count: boolean; read: ((row: Value[]) => Value) | null }> =
    [];
  let column = 0;
  for (const [index, item] of q.items.entries()) {
    if (item.expr.k === "star") {
      const qualifier = item.expr.qualifier?.parts.join(".");
      ctx.fields.forEach((f, i) => {
        if (qualifier && f.rel !== qualifier && f.relFull !== qualifier) return;
        readers.push({ name: p.columns[column++] as string, read: (row) => row[i] ?? null });
      });
      continue;
    }
    const e = item.expr as Expr;
    const name = p.columns[column++] as string;
    if (isAggregate(e)) {
      const metric = p.metrics.find((m) => m.name === name) as OutputMetric;
      const arg =
        e.star || e.args.length === 0 ? null : onRow(asPlanError(() => compile(e.args[0] as Expr, ctx)));
      aggregates.push({ metric, count: e.name === "COUNT", read: arg });
      continue;
    }
    const c = asPlanError(() => compile(e, ctx));
    readers.push({ name, read: onRow(c), unnest: c.type !== "ARRAY" && isGroupKey(q, index, e, ctx.fields) });
  }
  const records: ProgramOutput["records"] = [];
  let nullTimes = 0;
  let filtered = 0;
  let taken = 0;
  const seen = new Set<string>();
  for (const rec of input) {
    const r = rec.row;
    if (r === null) {
      records.push({ value: null, raw: rec.raw, bytes: rec.bytes });
      continue;
    }
    if (where && !truthy(asPlanError(() => where(r)))) {
      filtered++;
      continue;
    }
    const row: Record<string, unknown> = {};
    for (const { name, read } of readers) row[name] = stored(asPlanError(() => read(r)));
    for (const a of aggregates) {
      if (a.metric.field === null || !a.read) continue;
      const v = asPlanError(() => (a.read as (row: Value[]) => Value)(r));
      row[a.metric.field] = a.count
        ? v === null
          ? 0
          : 1
        : a.metric.type in SKETCH_METRICS
          ? stored(v)
          : metricInput(v);
    }
    const unnested = readers.filter((x) => x.unnest && Array.isArray(row[x.name])).map((x) => x.name);
    for (const out of unnest(row, unnested)) {
      if (p.epochTime) out.__time = 0;
      if (out.__time === null || out.__time === undefined) {
        nullTimes++;
        continue;
      }
      // LIMIT and OFFSET count rows, or groups when the query groups.
      const key = p.rollup ? JSON.stringify(p.dimensions.map((d) => out[d.name]).concat([out.__time])) : null;
      if (q.limit !== null || q.offset > 0) {
        const isNew = key === null || !seen.has(key);
        if (isNew) {
          if (key !== null) seen.add(key);
          taken++;
        }
        if (taken <= q.offset || (q.limit !== null && taken > q.offset + q.limit)) {
          filtered++;
          continue;
        }
      }
      records.push({ value: out, raw: rec.raw, bytes: rec.bytes });
    }
  }
  return { records, nullTimes, filtered };
}

/**
 * Whether a SELECT item is a GROUP BY key itself (by ordinal, alias or the same expression): grouping by a
 * multi-value string unnests it, as Druid's groupBy does with the default `groupByEnableMultiValueUnnesting`
 * (`docs/multi-stage-query/concepts.md`, "Rollup": wrap multi-value strings in MV_TO_ARRAY to keep them lists).
 */
function isGroupKey(q: Query, index: number, e: Expr, input: ReadonlyArray<{ name: string }>): boolean {
  if (!q.grouped) return false;
  const item = q.items[index];
  const shape = (x: Expr) => JSON.stringify(x, (key, value) => (key === "span" ? undefined : value));
  return q.groupBy.some(
    (g) =>
      (g.k === "lit" && g.t === "INTEGER" && g.v === index + 1) ||
      // A name in GROUP BY is an input column first, a select alias only when no column has it (Calcite).
      (g.k === "col" && !g.qualifier && item?.alias === g.name && !input.some((f) => f.name === g.name)) ||
      shape(g) === shape(e),
  );
}

/** A row once per value of each unnested multi-value column (an empty list as one null), several crossed. */
function unnest(row: Record<string, unknown>, columns: string[]): Array<Record<string, unknown>> {
  let out = [row];
  for (const c of columns) {
    const values = row[c] as unknown[];
    out = out.flatMap((r) => (values.length === 0 ? [null] : values).map((v) => ({ ...r, [c]: v })));
  }
  return out;
}

/** What the planner and the reingestion read of a segment (timeline.ts's SimSegment). */
export interface SegmentView {
  readonly interval: { start: number; end: number };
  readonly version: string;
  readonly tombstone: boolean;
  readonly rows: readonly unknown[] | null;
  readonly dimensions: readonly string[];
  readonly metrics: readonly string[];
  readonly columnTypes?: Record<string, string> | undefined;
}

/** A datasource's columns as the planner types them, from its visible segments. */
export function tableColumns(segments: SegmentView[]): Column[] | null {
  if (segments.length === 0) return null;
  const out = new Map<string, SqlType>([["__time", "TIMESTAMP"]]);
  for (const s of segments) {
    for (const name of [...s.dimensions, ...s.metrics]) {
      if (out.has(name)) continue;
      const t = s.columnTypes?.[name];
      out.set(
        name,
        t === "BIGINT" || t === "DOUBLE" || t === "FLOAT"
          ? t
          : s.metrics.includes(name)
            ? "BIGINT"
            : "VARCHAR",
      );
    }
  }
  return [...out].map(([name, type]) => ({ name, type }));
}

/**
 * A datasource's rows, from its visible segments (tombstones and synthetic segments give none). A newer
 * segment over part of an older one's interval hides the older one's rows there (partial overshadowing,
 * `VersionedIntervalTimeline`).
 */
export function tableRows(segments: SegmentView[]): Row[] {
  return segments.flatMap((s) => {
    if (!s.rows) return [];
    const newer = segments.filter((o) => o.version > s.version && o !== s);
    return (s.rows as Row[]).filter((r) => {
      const t = r.__time as number;
      return !newer.some((o) => t >= o.interval.start && t < o.interval.end);
    });
  });
}
