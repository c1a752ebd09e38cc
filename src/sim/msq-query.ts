import { readInput } from "./input.js";
import {
  AGGREGATES,
  evaluate,
  firstAt,
  inputValue,
  isAggregate,
  isNumeric,
  nativeOf,
  type Row,
  type Scope,
  type SqlType,
  sqlTypeOf,
  subExprs,
  typeOf,
  type Value,
} from "./msq-eval.js";
import type { Expr, Item, MsqProgram, OutputMetric, Query, Source } from "./msq-sql.js";
import { MsqPlanError } from "./msq-text.js";

/**
 * An MSQ ingestion query planned and run: the SELECT's columns typed and checked as Druid's planner does
 * (Calcite's validator: unknown columns, grouping, aggregate argument types), then run over the input — EXTERN's
 * rows typed by the signature, another datasource's rows (reingestion), or a WITH/subquery's rows — into the
 * records the native ingestion model (ingest.ts) turns into segments: `__time` in millis, the dimensions, and
 * each aggregate's input for the rollup (`docs/multi-stage-query/concepts.md`, "Rollup").
 */

export interface Column {
  name: string;
  type: SqlType;
}

/** What the planner knows of a datasource: its columns (null when there is no such table). */
export type Tables = (name: string) => Column[] | null;

/** A datasource's rows for reingestion (`FROM <datasource>`), `__time` in millis. */
export type TableRows = (name: string) => Row[];

type Fn = Extract<Expr, { k: "fn" }>;

const itemName = (item: Item, index: number): string =>
  item.alias ?? (item.expr.k === "col" ? item.expr.name : `EXPR$${index}`);

/** The columns a FROM source gives, in order. */
function sourceColumns(source: Source, ctes: Map<string, Column[]>, tables: Tables): Column[] {
  if (source.k === "extern") return source.signature.map((c) => ({ name: c.name, type: sqlTypeOf(c.type) }));
  if (source.k === "query") return queryColumns(source.query, ctes, tables);
  const cte = ctes.get(source.name);
  if (cte) return cte;
  const table = tables(source.name);
  // Calcite's validator, pointing at the name.
  if (!table) throw new MsqPlanError(`Object '${source.name}' not found`, "invalidInput", source.at);
  return table;
}

function scopeOf(columns: Column[], alias: string | null, source: Source): Scope {
  const byName = new Map(columns.map((c) => [c.name, c.type]));
  return (name, table, at) => {
    if (table !== null && table !== alias && !(source.k === "table" && source.name === table))
      throw new MsqPlanError(`Table '${table}' not found`, "invalidInput", at);
    const t = byName.get(name);
    if (t === undefined)
      throw new MsqPlanError(`Column '${name}' not found in any table`, "invalidInput", at);
    return t;
  };
}

/** The output columns of a (sub)query, after checking it as Calcite would. */
function queryColumns(q: Query, outer: Map<string, Column[]>, tables: Tables): Column[] {
  const ctes = new Map(outer);
  for (const w of q.with) ctes.set(w.name, queryColumns(w.query, ctes, tables));
  const input = sourceColumns(q.from, ctes, tables);
  const scope = scopeOf(input, q.alias, q.from);
  if (q.where) {
    if (containsAggregate(q.where)) throw new MsqPlanError("Aggregate expressions cannot be used in WHERE");
    typeOf(q.where, scope);
  }
  const out: Column[] = [];
  q.items.forEach((item, i) => {
    if (item.expr.k === "star") out.push(...input);
    else out.push({ name: itemName(item, i), type: itemType(item.expr, scope) });
  });
  checkGrouping(q, scope);
  return out;
}

function containsAggregate(e: Expr): boolean {
  return isAggregate(e) || subExprs(e).some(containsAggregate);
}

/** An item's type; an aggregate's by its function (checking its argument as Calcite does). */
function itemType(expr: Expr, scope: Scope): SqlType {
  const e = expr as Fn;
  if (!isAggregate(expr)) {
    if (containsAggregate(e))
      throw new MsqPlanError(
        "The emulator reads aggregates only as whole SELECT items (SUM(x) AS y), not inside expressions",
        "unsupported",
      );
    return typeOf(e, scope);
  }
  if (!AGGREGATES.has(e.name))
    throw new MsqPlanError(
      `The emulator stores no ${e.name} aggregate (sketches, first/last, AVG); it writes COUNT, SUM, MIN and MAX`,
      "unsupported",
    );
  if (e.distinct)
    throw new MsqPlanError("The emulator stores no COUNT(DISTINCT …) (Druid writes a sketch)", "unsupported");
  if (e.name === "COUNT") {
    for (const a of e.args) typeOf(a, scope);
    return "BIGINT";
  }
  if (e.args.length !== 1 || e.star)
    throw new MsqPlanError(`Invalid number of arguments to function '${e.name}'. Was expecting 1 arguments`);
  const t = typeOf(e.args[0] as Expr, scope);
  if (!isNumeric(t) && e.name === "SUM")
    throw new MsqPlanError(
      `Cannot apply '${e.name}' to arguments of type '${e.name}(<${t}>)'. Supported form(s): '${e.name}(<NUMERIC>)'`,
      "invalidInput",
      e.at,
    );
  if (!isNumeric(t))
    throw new MsqPlanError(
      `The emulator stores ${e.name} of numbers only, got ${e.name}(<${t}>)`,
      "unsupported",
    );
  return t === "TIMESTAMP" || t === "BOOLEAN" ? "BIGINT" : t;
}

/** Structural equality, positions aside. */
const shape = (e: Expr) => JSON.stringify(e, (key, value) => (key === "at" ? undefined : value));
const same = (a: Expr, b: Expr) => shape(a) === shape(b);

/** The GROUP BY's expressions (ordinals and aliases resolved to the SELECT's items). */
function groupKeys(q: Query): Expr[] {
  const illegal = (at: number) =>
    new MsqPlanError("Aggregate expression is illegal in GROUP BY clause", "invalidInput", at);
  return (q.groupBy ?? []).map(({ expr, at }) => {
    if (expr.k === "lit" && typeof expr.v === "number") {
      const item = q.items[expr.v - 1];
      if (!item || !Number.isInteger(expr.v))
        throw new MsqPlanError("Ordinal out of range", "invalidInput", at);
      if (isAggregate(item.expr)) throw illegal(at);
      return item.expr;
    }
    if (containsAggregate(expr)) throw illegal(at);
    if (expr.k === "col" && expr.table === null) {
      const aliased = q.items.find((i) => i.alias === expr.name && !isAggregate(i.expr));
      if (aliased && !q.items.some((i) => i.expr.k === "col" && i.expr.name === expr.name))
        return aliased.expr;
      if (q.items.some((i) => i.alias === expr.name && isAggregate(i.expr))) throw illegal(at);
    }
    return expr;
  });
}

/** The first column or expression of `e` not covered by the grouping keys, or null. */
function ungrouped(e: Expr, keys: Expr[]): Expr | null {
  if (keys.some((k) => same(k, e))) return null;
  if (isAggregate(e) || e.k === "lit" || e.k === "ts" || e.k === "interval") return null;
  if (e.k === "col") return e;
  for (const sub of subExprs(e)) {
    const u = ungrouped(sub, keys);
    if (u) return u;
  }
  return null;
}

function exprText(e: Expr, item: Item): string {
  return e.k === "col" ? e.name : item.text;
}

/** Calcite's grouping rules: with GROUP BY or an aggregate, every other item must be grouped. */
function checkGrouping(q: Query, scope: Scope): boolean {
  const aggregates = q.items.some((i) => containsAggregate(i.expr));
  if (q.groupBy === null && !aggregates) return false;
  const keys = groupKeys(q);
  for (const k of keys) typeOf(k, scope);
  for (const item of q.items) {
    if (item.expr.k === "star")
      throw new MsqPlanError("The emulator reads no SELECT * with GROUP BY", "unsupported");
    const u = ungrouped(item.expr, keys);
    if (u)
      throw new MsqPlanError(
        `Expression '${exprText(u, item)}' is not being grouped`,
        "invalidInput",
        firstAt(u),
      );
  }
  return true;
}

/**
 * Plans the ingestion query: the `__time` item, the dimensions and the metrics (aggregates), typed. `tables`
 * answers for `FROM <datasource>`.
 */
export function planProgram(query: Query, tables: Tables, verb: "INSERT" | "REPLACE" = "INSERT"): MsqProgram {
  if (query.orderBy)
    throw new MsqPlanError(
      `Cannot use an ORDER BY clause on a Query of type [${verb}], use CLUSTERED BY instead`,
    );
  if (query.having)
    throw new MsqPlanError("The emulator reads no HAVING in an ingestion query", "unsupported");
  const ctes = new Map<string, Column[]>();
  for (const w of query.with) ctes.set(w.name, queryColumns(w.query, ctes, tables));
  const input = sourceColumns(query.from, ctes, tables);
  const scope = scopeOf(input, query.alias, query.from);
  if (query.where) {
    if (containsAggregate(query.where))
      throw new MsqPlanError("Aggregate expressions cannot be used in WHERE");
    typeOf(query.where, scope);
  }
  const dimensions: MsqProgram["dimensions"] = [];
  const metrics: OutputMetric[] = [];
  const columns: string[] = [];
  let time: SqlType | null = null;
  query.items.forEach((item, i) => {
    if (item.expr.k === "star") {
      for (const c of input) {
        columns.push(c.name);
        if (c.name === "__time") time = c.type;
        else dimensions.push({ name: c.name, type: nativeOf(c.type) });
      }
      return;
    }
    const name = itemName(item, i);
    const type = itemType(item.expr, scope);
    columns.push(name);
    if (name === "__time") {
      if (isAggregate(item.expr))
        throw new MsqPlanError("The emulator needs __time as a time expression", "unsupported");
      time = type;
      return;
    }
    if (isAggregate(item.expr)) metrics.push(metricOf(item.expr as Fn, type, name, metrics.length));
    else dimensions.push({ name, type: nativeOf(type) });
  });
  // Calcite's grouping rules come first (MSQInsertTest: an aggregate in GROUP BY is refused before anything else).
  const rollup = checkGrouping(query, scope);
  if (time !== null && time !== "TIMESTAMP" && time !== "BIGINT")
    throw new MsqPlanError(`The emulator needs __time as a TIMESTAMP, got ${time}`, "unsupported");
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
    rollup,
    columns,
    inputColumns: input.map((c) => c.name),
    externs: externsOf(query),
  };
}

function externsOf(q: Query): MsqProgram["externs"] {
  const own = q.from.k === "extern" ? [q.from] : q.from.k === "query" ? externsOf(q.from.query) : [];
  return [...q.with.flatMap((w) => externsOf(w.query)), ...own];
}

function metricOf(e: Extract<Expr, { k: "fn" }>, type: SqlType, name: string, n: number): OutputMetric {
  const field = `$m${n}`;
  if (e.name === "COUNT")
    return e.star || e.args.length === 0
      ? { name, type: "count", field: null }
      : { name, type: "longSum", field };
  const native = nativeOf(type);
  const suffix = e.name === "SUM" ? "Sum" : e.name === "MIN" ? "Min" : "Max";
  return { name, type: `${native === "string" ? "double" : native}${suffix}`, field };
}

// ------------------------------------------------------------------------------------------- running

/** The rows a source gives, typed by its columns. */
function sourceRows(
  source: Source,
  ctes: Map<string, Row[]>,
  ctx: RunContext,
): { rows: Row[] | null; raw: Array<{ value: Row | null; raw: string; bytes: number }> | null } {
  if (source.k === "extern") {
    const input = readInput(source.inputSource, source.inputFormat);
    if (!input)
      throw new MsqPlanError(
        `The emulator reads no ${String(source.inputSource.type)} input source`,
        "unsupported",
      );
    const types = source.signature.map((c) => ({ name: c.name, type: sqlTypeOf(c.type) }));
    return {
      rows: null,
      raw: input.records.map((r) => ({
        ...r,
        value:
          r.value === null
            ? null
            : Object.fromEntries(types.map((c) => [c.name, inputValue(r.value?.[c.name], c.type)])),
      })),
    };
  }
  if (source.k === "query") return { rows: runQuery(source.query, ctes, ctx), raw: null };
  const cte = ctes.get(source.name);
  return { rows: cte ?? ctx.table(source.name), raw: null };
}

interface RunContext {
  table: TableRows;
  now: number;
}

/** A subquery's rows (grouped for real when it aggregates). */
function runQuery(q: Query, outer: Map<string, Row[]>, ctx: RunContext): Row[] {
  const ctes = new Map(outer);
  for (const w of q.with) ctes.set(w.name, runQuery(w.query, ctes, ctx));
  const { rows, raw } = sourceRows(q.from, ctes, ctx);
  const input = (rows ?? (raw ?? []).flatMap((r) => (r.value ? [r.value] : []))).filter(
    (r) => !q.where || evaluate(q.where, r, ctx.now) === true,
  );
  const project = (r: Row): Row => {
    const out: Row = {};
    q.items.forEach((item, i) => {
      if (item.expr.k === "star") Object.assign(out, r);
      else out[itemName(item, i)] = evaluate(item.expr, r, ctx.now);
    });
    return out;
  };
  let out: Row[];
  if (q.groupBy === null && !q.items.some((i) => isAggregate(i.expr))) out = input.map(project);
  else out = groupRows(q, input, ctx.now);
  const from = q.offset ?? 0;
  return out.slice(from, q.limit === null ? undefined : from + q.limit);
}

function groupRows(q: Query, rows: Row[], now: number): Row[] {
  const keys = groupKeys(q);
  const groups = new Map<string, { first: Row; acc: Value[] }>();
  const aggs = q.items.map((i) => (isAggregate(i.expr) ? (i.expr as Fn) : null));
  for (const r of rows) {
    const key = JSON.stringify(keys.map((k) => evaluate(k, r, now)));
    let g = groups.get(key);
    if (!g) {
      g = { first: r, acc: aggs.map((a) => (a?.name === "COUNT" ? 0 : null)) };
      groups.set(key, g);
    }
    aggs.forEach((a, i) => {
      if (!a) return;
      const v = a.star || a.args.length === 0 ? 1 : evaluate(a.args[0] as Expr, r, now);
      const acc = g.acc[i] as number | null;
      if (a.name === "COUNT") g.acc[i] = (acc as number) + (v === null ? 0 : 1);
      else if (typeof v === "number")
        g.acc[i] =
          acc === null
            ? v
            : a.name === "SUM"
              ? acc + v
              : a.name === "MIN"
                ? Math.min(acc, v)
                : Math.max(acc, v);
    });
  }
  return [...groups.values()].map((g) => {
    const out: Row = {};
    q.items.forEach((item, i) => {
      out[itemName(item, i)] = aggs[i] ? g.acc[i] : evaluate(item.expr, g.first, now);
    });
    return out;
  });
}

/** What running the program gives the ingestion model, and the rows Druid would refuse. */
export interface ProgramOutput {
  records: Array<{ value: Record<string, unknown> | null; raw: string; bytes: number }>;
  /** Rows whose `__time` came out null (`InsertTimeNull`). */
  nullTimes: number;
  /** Rows read but dropped by WHERE (or past LIMIT): read by the scan stage, not written. */
  filtered: number;
}

/**
 * Runs the planned query: each input row filtered by WHERE and projected into `__time` (millis), the
 * dimensions and the aggregates' inputs (`$m<n>`); the ingestion model groups them (rollup). An input line that
 * could not be parsed stays a parse failure (`CannotParseExternalData`).
 */
export function runProgram(p: MsqProgram, table: TableRows, now: number): ProgramOutput {
  const q = p.query;
  const ctx: RunContext = { table, now };
  const ctes = new Map<string, Row[]>();
  for (const w of q.with) ctes.set(w.name, runQuery(w.query, ctes, ctx));
  const { rows, raw } = sourceRows(q.from, ctes, ctx);
  const input =
    raw ?? (rows ?? []).map((r) => ({ value: r as Row | null, raw: JSON.stringify(r), bytes: 100 }));
  const aggs = q.items.filter((i) => isAggregate(i.expr));
  const records: ProgramOutput["records"] = [];
  let nullTimes = 0;
  let filtered = 0;
  let taken = 0;
  const seen = new Set<string>();
  for (const rec of input) {
    const r = rec.value;
    if (r === null) {
      records.push(rec);
      continue;
    }
    if (q.where && evaluate(q.where, r, now) !== true) {
      filtered++;
      continue;
    }
    const out: Record<string, unknown> = {};
    q.items.forEach((item, i) => {
      if (item.expr.k === "star") Object.assign(out, r);
      else if (!isAggregate(item.expr)) out[itemName(item, i)] = evaluate(item.expr, r, now);
    });
    aggs.forEach((item, n) => {
      const e = item.expr as Extract<Expr, { k: "fn" }>;
      const metric = p.metrics[n] as OutputMetric;
      if (metric.field === null) return;
      const v = evaluate(e.args[0] as Expr, r, now);
      out[metric.field] = e.name === "COUNT" ? (v === null ? 0 : 1) : v;
    });
    if (p.epochTime) out.__time = 0;
    if (out.__time === null || out.__time === undefined) {
      nullTimes++;
      continue;
    }
    // LIMIT and OFFSET count rows, or groups when the query groups.
    const key = p.rollup ? JSON.stringify(p.dimensions.map((d) => out[d.name]).concat([out.__time])) : null;
    if (q.limit !== null || q.offset !== null) {
      const isNew = key === null || !seen.has(key);
      if (isNew) {
        if (key !== null) seen.add(key);
        taken++;
      }
      if (taken <= (q.offset ?? 0) || (q.limit !== null && taken > (q.offset ?? 0) + q.limit)) {
        filtered++;
        continue;
      }
    }
    records.push({ value: out, raw: rec.raw, bytes: rec.bytes });
  }
  return { records, nullTimes, filtered };
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
