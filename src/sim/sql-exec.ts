import {
  type Column,
  nativeType,
  type OutValue,
  SqlError,
  SqlPlanningError,
  type SqlResult,
  type SqlRow,
  type SqlType,
  Timestamp,
  unsupported,
  type Value,
} from "./sql.js";
import type { Expr, From, Query, SelectItem, Span } from "./sql-ast.js";
import { type CompileCtx, type Compiled, type Field, hasAggregate, onRow, truthy } from "./sql-env.js";
import { canon, compile, resolveColumn, spanOf } from "./sql-eval.js";
import { orderCompare } from "./sql-functions.js";
import { parseStatement } from "./sql-parse.js";
import { refuseSketchCell } from "./sql-sketches.js";
import type { Zone } from "./sql-time.js";

/**
 * Runs a Broker SQL statement as a small relational engine over row arrays, in Calcite's order of evaluation:
 * FROM (a table, a WITH name, a subquery, or joins of them) → WHERE → GROUP BY and aggregates → HAVING →
 * SELECT (DISTINCT) → ORDER BY → OFFSET/LIMIT; `EXPLAIN PLAN FOR` answers Druid's PLAN/RESOURCES/ATTRIBUTES row.
 * What Druid's planner refuses is refused here too (sql-eval.ts binds columns; planning errors below).
 */

/** A table FROM names, as the catalog (sql-catalog.ts) serves it. */
export interface TableSource {
  columns: Column[];
  rows: () => SqlRow[];
  /**
   * A system table (`sys.*`, `INFORMATION_SCHEMA.*`): an aggregate without GROUP BY over no rows gives no row
   * at all (a real Druid 33 answered `[]` to `SELECT COUNT(*) FROM sys.segments WHERE datasource = 'x'`), and
   * any column may order it.
   */
  system: boolean;
  /** The datasource it is (EXPLAIN's RESOURCES), null for a system table. */
  dataSource: string | null;
}

export interface RunOptions {
  /** `sqlTimeZone`. */
  timeZone: Zone;
  /** `CURRENT_TIMESTAMP` (sim time). */
  now: number;
  /** The table a FROM names (parts as written); throws Druid's SqlError (with the span) for an unknown one. */
  table(parts: string[], span: Span): TableSource;
  /** EXTERN's rows, typed by its signature: MSQ's input (msq-query.ts). A Broker query has none. */
  extern?(from: ExternFrom): TableSource;
}

type ExternFrom = Extract<From, { k: "extern" }>;

interface Relation {
  fields: Field[];
  /** `JOIN … USING (c)`: the unqualified `c` is the left side's column. */
  using?: Map<string, number>;
  rows: Value[][];
  /** A datasource scan (directly, or a plain subquery Calcite merges into it): orderable by `__time` only. */
  scan: boolean;
  system: boolean;
  dataSources: string[];
  /** EXPLAIN's native dataSource. */
  nativeSource: Record<string, unknown>;
}

interface QueryOut extends Relation {
  types: SqlType[];
  /** EXPLAIN's query type and the native names of the output columns. */
  queryType: "scan" | "timeseries" | "groupBy";
  queryColumns: string[];
  /** The native dataSource the query reads (its FROM). */
  fromSource: Record<string, unknown>;
}

interface Cte {
  q: Query;
  columns: string[] | null;
  scope: Map<string, Cte>;
}

/** A key of row values that tells distinct rows apart (timestamps by time). */
function rowKey(values: Value[]): string {
  // One text or number key (the usual GROUP BY) without building JSON; a grouping's keys all have one arity.
  if (values.length === 1) {
    const v = values[0];
    if (typeof v === "string") return `s${v}`;
    if (typeof v === "number") return `n${v}`;
  }
  return JSON.stringify(values.map((v) => (v instanceof Timestamp ? { t: v.ms } : v)));
}

/** A WHERE or HAVING expression, which Calcite's validator wants BOOLEAN ("WHERE clause must be a condition"). */
function condition(e: Expr, ctx: CompileCtx, clause: "WHERE" | "HAVING"): Compiled {
  const c = compile(e, ctx);
  if (c.type !== "BOOLEAN" && c.type !== "NULL")
    throw new SqlError(`${clause} clause must be a condition`, spanOf(e));
  return c;
}

/** A table's rows as arrays in its columns' order (plain loops: a served datasource can be large). */
function toArrays(rows: SqlRow[], columns: Column[]): Value[][] {
  const names = columns.map((c) => c.name);
  const out: Value[][] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as SqlRow;
    const row: Value[] = new Array(names.length);
    for (let j = 0; j < names.length; j++) row[j] = r[names[j] as string] ?? null;
    out[i] = row;
  }
  return out;
}

/**
 * A row's grouping keys: grouping by a multi-value string unnests it, the row counted in the group of each of its
 * values (an empty list in the null group), several such keys crossed (docs/querying/multi-value-dimensions.md,
 * "Grouping"; a real Druid 33 grouped a row of `["x","y"]` under x and under y). An ARRAY key groups whole.
 */
function unnestKeys(key: Value[], types: ReadonlyArray<{ type: SqlType }>): Value[][] {
  if (!key.some((v, i) => Array.isArray(v) && types[i]?.type !== "ARRAY")) return [key];
  let out: Value[][] = [[]];
  key.forEach((v, i) => {
    const values =
      Array.isArray(v) && types[i]?.type !== "ARRAY" ? (v.length === 0 ? [null] : (v as Value[])) : [v];
    out = out.flatMap((prefix) => values.map((x) => [...prefix, x]));
  });
  return out;
}

function compareTuples(a: Value[], b: Value[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = orderCompare(a[i] ?? null, b[i] ?? null);
    if (c !== 0) return c;
  }
  return 0;
}

class Executor {
  readonly #subqueries = new Map<Query, QueryOut>();
  constructor(readonly o: RunOptions) {}

  ctx(fields: Field[], using: Map<string, number>, ctes: Map<string, Cte>, system = false): CompileCtx {
    return {
      fields,
      system,
      using,
      group: null,
      aliases: null,
      timeZone: this.o.timeZone,
      now: this.o.now,
      runSubquery: (q) => {
        let out = this.#subqueries.get(q);
        if (!out) {
          out = this.query(q, ctes);
          this.#subqueries.set(q, out);
        }
        return out;
      },
    };
  }

  relation(from: From, ctes: Map<string, Cte>): Relation {
    switch (from.k) {
      case "table": {
        const name = from.parts.at(-1) as string;
        const cte = from.parts.length === 1 ? ctes.get(name) : undefined;
        if (cte) {
          const out = this.query(cte.q, cte.scope);
          const rel = from.alias ?? name;
          return {
            ...out,
            fields: out.fields.map((f, i) => ({
              ...f,
              name: cte.columns?.[i] ?? f.name,
              rel,
              relFull: null,
            })),
          };
        }
        const source = this.o.table(from.parts, from.span);
        const rel = from.alias ?? name;
        const relFull = from.alias ? null : from.parts.length === 1 ? `druid.${name}` : from.parts.join(".");
        return {
          fields: source.columns.map((c) => ({ rel, relFull, name: c.name, type: c.type })),
          rows: toArrays(source.rows(), source.columns),
          scan: !source.system,
          system: source.system,
          dataSources: source.dataSource ? [source.dataSource] : [],
          nativeSource: { type: "table", name: source.dataSource ?? from.parts.join(".") },
        };
      }
      case "sub": {
        const out = this.query(from.q, ctes);
        return { ...out, fields: out.fields.map((f) => ({ ...f, rel: from.alias, relFull: null })) };
      }
      case "join":
        return this.join(from, ctes);
      case "extern": {
        // EXTERN reads external data on the MSQ task engine only (docs/multi-stage-query/reference.md).
        if (!this.o.extern) throw unsupported("EXTERN in a Broker query", from.span);
        const source = this.o.extern(from);
        return {
          fields: source.columns.map((c) => ({ rel: from.alias, relFull: null, name: c.name, type: c.type })),
          rows: toArrays(source.rows(), source.columns),
          scan: false,
          system: false,
          dataSources: [],
          nativeSource: { type: "external" },
        };
      }
    }
  }

  /**
   * A join as Druid 33 runs it: every left row in order, each with the right rows that meet the condition in
   * theirs (a real Druid 33 answered equality, non-equality, OR'd and function conditions alike, and RIGHT and
   * FULL joins); LEFT/FULL keep an unmatched left row with nulls, RIGHT/FULL add unmatched right rows after.
   */
  join(from: Extract<From, { k: "join" }>, ctes: Map<string, Cte>): Relation {
    const l = this.relation(from.l, ctes);
    const r = this.relation(from.r, ctes);
    const fields = [...l.fields, ...r.fields];
    const using = new Map<string, number>(l.using ?? []);
    let test: (row: Value[]) => boolean = () => true;
    if (from.using) {
      const pairs = from.using.map((name) => {
        const li = l.fields.findIndex((f) => f.name === name);
        const ri = r.fields.findIndex((f) => f.name === name);
        if (li < 0 || ri < 0) throw new SqlError(`Column '${name}' not found in any table`);
        return [li, l.fields.length + ri] as const;
      });
      for (const [i, name] of from.using.entries())
        using.set(name, (pairs[i] as readonly [number, number])[0]);
      test = (row) =>
        pairs.every(([a, b]) => orderCompare(row[a] ?? null, row[b] ?? null) === 0 && row[a] !== null);
    } else if (from.on) {
      const on = compile(from.on, { ...this.ctx(fields, using, ctes), clause: "ON" });
      const read = onRow(on);
      test = (row) => truthy(read(row));
    }
    const leftNulls = l.fields.map(() => null);
    const rightNulls = r.fields.map(() => null);
    const rows: Value[][] = [];
    const rightMatched = new Set<number>();
    for (const lrow of l.rows) {
      let matched = false;
      r.rows.forEach((rrow, ri) => {
        const row = [...lrow, ...rrow];
        if (!test(row)) return;
        matched = true;
        rightMatched.add(ri);
        rows.push(row);
      });
      if (!matched && (from.type === "LEFT" || from.type === "FULL")) rows.push([...lrow, ...rightNulls]);
    }
    if (from.type === "RIGHT" || from.type === "FULL")
      r.rows.forEach((rrow, ri) => {
        if (!rightMatched.has(ri)) rows.push([...leftNulls, ...rrow]);
      });
    return {
      fields,
      using,
      rows,
      scan: false,
      system: false,
      dataSources: [...l.dataSources, ...r.dataSources],
      nativeSource: {
        type: "join",
        left: l.nativeSource,
        right: r.nativeSource,
        joinType: from.type,
      },
    };
  }

  /** The WITH names a query sees: the outer ones and its own, each in the scope of those before it. */
  scope(q: Query, outer: Map<string, Cte>): Map<string, Cte> {
    const ctes = new Map(outer);
    for (const w of q.with) ctes.set(w.name, { q: w.q, columns: w.columns, scope: new Map(ctes) });
    return ctes;
  }

  query(q: Query, outer: Map<string, Cte>): QueryOut {
    const ctes = this.scope(q, outer);
    const from: Relation = q.from
      ? this.relation(q.from, ctes)
      : {
          fields: [],
          rows: [[]],
          scan: false,
          system: false,
          dataSources: [],
          nativeSource: { type: "inline" },
        };
    const using = from.using ?? new Map<string, number>();
    const ctx = this.ctx(from.fields, using, ctes, from.system);
    const where = q.where ? condition(q.where, { ...ctx, clause: "WHERE" }, "WHERE") : null;
    const test = where ? onRow(where) : null;
    const filtered = test ? from.rows.filter((row) => truthy(test(row))) : from.rows;

    // The select list, `*` expanded to the relation's columns.
    type Item = { name: string; expr: Expr | null; field: number };
    const items: Item[] = [];
    const starSpans = new Map<Item, Span>();
    q.items.forEach((item: SelectItem, i) => {
      if (item.expr.k === "star") {
        if (!q.from) throw new SqlError("SELECT * requires a FROM clause", item.expr.span);
        const qualifier = item.expr.qualifier;
        const written = qualifier?.parts.join(".");
        const picked = from.fields
          .map((f, index) => ({ f, index }))
          .filter(({ f }) => !qualifier || f.rel === written || f.relFull === written);
        if (qualifier && picked.length === 0)
          throw new SqlError(`Table '${written}' not found`, qualifier.span);
        // Calcite expands `*` over one input only when its names are unique there ("Column 'x' is ambiguous",
        // spanning the star), and makes names unique across inputs with a counter (`page`, `page0`), as a real
        // Druid 33 answered `SELECT *` over a join.
        const seen = new Set<string>();
        for (const { f } of picked) {
          const key = `${f.rel}\u0000${f.name}`;
          if (seen.has(key)) throw new SqlError(`Column '${f.name}' is ambiguous`, item.expr.span);
          seen.add(key);
        }
        for (const { f, index } of picked) {
          let name = f.name;
          for (let n = 0; items.some((x) => x.name === name); n++) name = `${f.name}${n}`;
          const expanded = { name, expr: null, field: index };
          starSpans.set(expanded, item.expr.span);
          items.push(expanded);
        }
        return;
      }
      const e = item.expr as Expr;
      const name =
        item.alias ??
        (e.k === "col"
          ? e.name
          : e.k === "now"
            ? e.date
              ? "CURRENT_DATE"
              : "CURRENT_TIMESTAMP"
            : `EXPR$${i}`);
      items.push({ name, expr: e, field: -1 });
    });
    const aliases = new Map<string, Expr>();
    for (const item of q.items)
      if (item.alias && item.expr.k !== "star") aliases.set(item.alias, item.expr as Expr);
    const exprOf = (item: Item): Expr =>
      item.expr ?? { k: "col", name: (from.fields[item.field] as Field).name, span: [0, 0] };

    const grouped =
      q.groupBy.length > 0 ||
      q.having !== null ||
      items.some((x) => x.expr !== null && hasAggregate(x.expr)) ||
      q.orderBy.some((o) => hasAggregate(o.expr));

    // GROUP BY names a column first, then a select alias or ordinal (Calcite's group-by-alias conformance).
    const groupExprs = q.groupBy.map((g) => {
      if (g.k === "lit" && g.t === "INTEGER" && typeof g.v === "number") {
        const ref = items[g.v - 1];
        if (!ref || g.v < 1) throw new SqlError(`Ordinal out of range`, g.span);
        return exprOf(ref);
      }
      if (g.k === "col" && !g.qualifier && resolveColumn(g, from.fields, using) < 0) {
        const aliased = aliases.get(g.name);
        if (aliased) return aliased;
      }
      return g;
    });
    const keyFns = groupExprs.map((g) => compile(g, { ...ctx, clause: "GROUP BY" }));
    const groupCtx: CompileCtx = {
      ...ctx,
      group: { canon: groupExprs.map((g) => canon(g, ctx)), types: keyFns },
    };
    const itemCtx = grouped ? groupCtx : ctx;
    const compiledItems: Compiled[] = items.map((item) => {
      if (item.expr) return compile(item.expr, itemCtx);
      const f = from.fields[item.field] as Field;
      if (grouped) {
        const i = groupCtx.group?.canon.indexOf(JSON.stringify(`#${item.field}`)) ?? -1;
        // Calcite names a star-expanded column by its table (a real Druid 33: 'wikipedia.__time').
        const shown = f.rel === null ? f.name : `${f.rel}.${f.name}`;
        if (i < 0) throw new SqlError(`Expression '${shown}' is not being grouped`, starSpans.get(item));
        return { type: f.type, fn: (env) => env.key[i] ?? null };
      }
      const index = item.field;
      return { type: f.type, fn: (env) => env.row[index] ?? null };
    });
    const having = q.having ? condition(q.having, { ...groupCtx, aliases }, "HAVING") : null;

    // ORDER BY keys: an output column (by ordinal, output name or the same expression), else a hidden column.
    const hidden: Compiled[] = [];
    const hiddenExprs: Expr[] = [];
    const visible = items.length;
    const itemCanon = items.map((item) => canon(exprOf(item), ctx));
    const keys = q.orderBy.map((o) => {
      let index = -1;
      if (o.expr.k === "lit" && o.expr.t === "INTEGER" && typeof o.expr.v === "number") {
        index = o.expr.v - 1;
        if (index < 0 || index >= visible) throw new SqlError(`Ordinal out of range`, o.expr.span);
      } else if (o.expr.k === "col" && !o.expr.qualifier) {
        const name = o.expr.name;
        index = items.findIndex((x) => x.name === name);
      }
      if (index < 0) index = itemCanon.indexOf(canon(o.expr, ctx));
      if (index < 0) {
        if (q.distinct) {
          const shown = o.expr.k === "col" ? o.expr.name : "expression";
          throw new SqlError(`Expression '${shown}' is not in the select clause`, spanOf(o.expr));
        }
        hidden.push(compile(o.expr, { ...itemCtx, aliases }));
        hiddenExprs.push(o.expr);
        index = visible + hidden.length - 1;
      }
      return { index, desc: o.desc };
    });

    if (!grouped && from.scan && !q.distinct)
      this.refuseUnorderableScan(
        keys,
        [...items, ...hiddenExprs.map((expr) => ({ name: "", expr, field: -1 }))],
        from.fields,
      );

    const all = [...compiledItems, ...hidden];
    let out: Value[][];
    if (grouped) {
      const groups = new Map<string, { key: Value[]; rows: Value[][] }>();
      const readKey = keyFns.map(onRow);
      if (readKey.length === 0 && filtered.length > 0) groups.set("[]", { key: [], rows: filtered });
      else
        for (const row of filtered) {
          const read = readKey.map((k) => k(row));
          for (const key of unnestKeys(read, keyFns)) {
            const id = rowKey(key);
            const g = groups.get(id);
            if (g) g.rows.push(row);
            else groups.set(id, { key, rows: [row] });
          }
        }
      if (groups.size === 0 && q.groupBy.length === 0 && !from.system)
        groups.set("[]", { key: [], rows: [] });
      // Druid's groupBy answers groups in the order of their keys (nulls first) unless ORDER BY says otherwise.
      const ordered = [...groups.values()].sort((a, b) => compareTuples(a.key, b.key));
      out = ordered
        .map((g) => ({ row: g.rows[0] ?? [], rows: g.rows, key: g.key }))
        .filter((env) => !having || truthy(having.fn(env)))
        .map((env) => all.map((c) => c.fn(env)));
    } else {
      const readers = all.map(onRow);
      out = filtered.map((row) => readers.map((read) => read(row)));
    }
    if (q.distinct) {
      // DISTINCT is a groupBy on every output column: one row per value tuple, in the tuples' order.
      const seen = new Map<string, Value[]>();
      for (const row of out) {
        const id = rowKey(row.slice(0, visible));
        if (!seen.has(id)) seen.set(id, row);
      }
      out = [...seen.values()].sort((a, b) => compareTuples(a.slice(0, visible), b.slice(0, visible)));
    }
    if (keys.length > 0) {
      out.sort((a, b) => {
        for (const k of keys) {
          const c = orderCompare(a[k.index] ?? null, b[k.index] ?? null);
          if (c !== 0) return k.desc ? -c : c;
        }
        return 0;
      });
    }
    out = out.slice(q.offset, q.limit === null ? undefined : q.offset + q.limit);
    if (hidden.length > 0) out = out.map((row) => row.slice(0, visible));

    const queryType: QueryOut["queryType"] = !grouped
      ? "scan"
      : q.groupBy.length === 0 && q.from !== null && !q.distinct
        ? "timeseries"
        : "groupBy";
    const keyCanon = groupCtx.group?.canon ?? [];
    let d = 0;
    let a = 0;
    const queryColumns = items.map((item, i) => {
      if (queryType === "scan") return item.expr === null || item.expr.k === "col" ? item.name : `v${i}`;
      return keyCanon.includes(itemCanon[i] as string) || q.distinct ? `d${d++}` : `a${a++}`;
    });
    return {
      fields: items.map((item, i) => ({
        rel: null,
        relFull: null,
        name: item.name,
        type: (compiledItems[i] as Compiled).type,
      })),
      types: compiledItems.map((c) => c.type),
      rows: out,
      scan: !grouped && from.scan && !q.distinct,
      system: from.system,
      dataSources: from.dataSources,
      nativeSource: q.from ? { type: "query" } : { type: "inline" },
      queryType,
      queryColumns,
      fromSource: from.nativeSource,
    };
  }

  /**
   * A scan of a datasource (no aggregation) can be ordered by `__time` only: Druid's scan query sorts by time
   * alone, so the planner refuses any other sort (`DruidQuery#toScanQuery`; observed on Druid 33, also through a
   * subquery Calcite merges into the scan).
   */
  refuseUnorderableScan(
    keys: ReadonlyArray<{ index: number }>,
    items: ReadonlyArray<{ name: string; expr: Expr | null; field: number }>,
    fields: Field[],
  ): void {
    const isTime = (x: { expr: Expr | null; field: number }) =>
      x.expr === null ? fields[x.field]?.name === "__time" : x.expr.k === "col" && x.expr.name === "__time";
    const other = keys
      .map((k) => items[k.index] as { name: string; expr: Expr | null; field: number })
      .filter((x) => !isTime(x))
      .map((x) => (x.expr?.k === "col" ? x.expr.name : x.name));
    if (other.length > 0)
      throw new SqlPlanningError(
        `SQL query requires ordering a table by non-time column [[${other.join(", ")}]], which is not supported.`,
      );
  }
}

/** A result cell: booleans typed BOOLEAN print as true/false. */
function outCell(v: Value, type: SqlType): OutValue {
  refuseSketchCell(v);
  if (Array.isArray(v)) return listCell(v as unknown[], type);
  return type === "BOOLEAN" && typeof v === "number" ? v !== 0 : v;
}

/**
 * A list as Druid 33 prints it (`sqlStringifyArrays`, on by default): an ARRAY as its JSON text; a multi-value
 * string with several values as their JSON text, with one as that value, with none as null (observed on a real
 * Druid 33: `["x","y"]`, `z`, null).
 */
function listCell(v: unknown[], type: SqlType): OutValue {
  if (type !== "ARRAY" && v.length <= 1) return (v[0] ?? null) as OutValue;
  return JSON.stringify(v);
}

/** The timeless interval Druid's planner puts on a query without a time filter. */
const ETERNITY = "-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z";

/**
 * `EXPLAIN PLAN FOR`: one row of PLAN, RESOURCES and ATTRIBUTES (VARCHAR), as Druid 33 answers with its default
 * `useNativeQueryExplain`. PLAN is a JSON array of one native query with its signature and column mappings; the
 * emulator's query names the query type, data source and output columns but not Druid's filters or
 * virtual columns (docs/emulator.md).
 */
function explain(out: QueryOut): SqlResult {
  const query: Record<string, unknown> = {
    queryType: out.queryType,
    dataSource: out.fromSource,
    intervals: { type: "intervals", intervals: [ETERNITY] },
    granularity: { type: "all" },
  };
  const plan = [
    {
      query,
      signature: out.queryColumns.map((name, i) => ({ name, type: nativeType(out.types[i] as SqlType) })),
      columnMappings: out.queryColumns.map((queryColumn, i) => ({
        queryColumn,
        outputColumn: out.fields[i]?.name,
      })),
    },
  ];
  const resources = [...new Set(out.dataSources)].sort().map((name) => ({ name, type: "DATASOURCE" }));
  return {
    columns: [
      { name: "PLAN", type: "VARCHAR" },
      { name: "RESOURCES", type: "VARCHAR" },
      { name: "ATTRIBUTES", type: "VARCHAR" },
    ],
    rows: [[JSON.stringify(plan), JSON.stringify(resources), JSON.stringify({ statementType: "SELECT" })]],
  };
}

/** Parses and runs one statement. */
export function runSql(sql: string, options: RunOptions): SqlResult {
  const statement = parseStatement(sql, { timeZone: options.timeZone });
  const executor = new Executor(options);
  const out = executor.query(statement.query, new Map());
  if (statement.explain) return explain(out);
  return {
    columns: out.fields.map((f) => ({ name: f.name, type: f.type })),
    rows: out.rows.map((row) => row.map((v, i) => outCell(v, out.types[i] as SqlType))),
  };
}

/** A query's answer as the executor's rows (timestamps as Timestamp, booleans 1/0) and its output columns. */
export interface QueryRows {
  fields: Field[];
  rows: Value[][];
}

/**
 * Runs a parsed query: MSQ plans its ingestion query so (Calcite's validation is the Broker engine's) and runs
 * what is relational in it (joins, subqueries, WITH) with the Broker's executor.
 */
export function runQuery(q: Query, options: RunOptions): QueryRows {
  const out = new Executor(options).query(q, new Map());
  return { fields: out.fields, rows: out.rows };
}

/**
 * A query's FROM as rows (its WITH in scope) and a row-mode compile context over them, for MSQ, which evaluates
 * the SELECT and WHERE of its ingestion query itself (each row's aggregate inputs go to the rollup).
 */
export function openFrom(q: Query, options: RunOptions): QueryRows & { ctx: CompileCtx } {
  const executor = new Executor(options);
  const ctes = executor.scope(q, new Map());
  if (!q.from) throw new SqlError("An ingestion query reads FROM a table or EXTERN");
  const from = executor.relation(q.from, ctes);
  return {
    fields: from.fields,
    rows: from.rows,
    ctx: executor.ctx(from.fields, from.using ?? new Map(), ctes, from.system),
  };
}
