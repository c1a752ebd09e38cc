import { MsqPlanError } from "./msq-text.js";
import { SqlError, Timestamp, UnsupportedSqlError } from "./sql.js";
import type * as Ast from "./sql-ast.js";
import { parseExpressionPart, parseQueryPart } from "./sql-parse.js";

/**
 * The query part of an MSQ statement (`[WITH …] SELECT … FROM … [WHERE …] [GROUP BY …]`), read by the
 * emulator's one SQL parser (sql-parse.ts, as Druid's Calcite parser reads it: `docs/querying/sql.md`) and
 * mapped to the tree the ingestion planner and evaluator (msq-query.ts, msq-eval.ts) run. What the emulator
 * cannot run in an ingestion (JOIN, subqueries, DISTINCT, FILTER) is refused as `unsupported`, never misread.
 */

export type Expr =
  /** `decimal`: a number written with a point or exponent (Calcite types it DECIMAL, Druid DOUBLE). */
  | { k: "lit"; v: string | number | boolean | null; decimal?: boolean }
  | { k: "ts"; v: number }
  | { k: "col"; name: string; table: string | null; at: number }
  | { k: "star" }
  | { k: "fn"; name: string; args: Expr[]; star: boolean; distinct: boolean; at?: number }
  /** `int`: set by the planner when both operands are BIGINT (Druid divides them as integers). */
  | { k: "bin"; op: string; l: Expr; r: Expr; int?: boolean }
  | { k: "not"; e: Expr }
  | { k: "neg"; e: Expr }
  | { k: "isnull"; e: Expr; not: boolean }
  | { k: "isbool"; e: Expr; v: boolean; not: boolean }
  | { k: "in"; e: Expr; list: Expr[]; not: boolean }
  | { k: "between"; e: Expr; lo: Expr; hi: Expr; not: boolean }
  | { k: "like"; e: Expr; pattern: Expr; not: boolean }
  | { k: "case"; operand: Expr | null; whens: Array<{ when: Expr; result: Expr }>; else: Expr | null }
  | { k: "cast"; e: Expr; type: string }
  | { k: "floor"; fn: "FLOOR" | "CEIL"; e: Expr; unit: string }
  | { k: "interval"; amount: number; unit: string };

export interface Item {
  expr: Expr;
  alias: string | null;
  /** The item's text as written (Calcite names unaliased expressions EXPR$n; messages quote the text). */
  text: string;
}

export type Source =
  | {
      k: "extern";
      inputSource: Record<string, unknown>;
      inputFormat: Record<string, unknown>;
      signature: Array<{ name: string; type: string }>;
    }
  | { k: "table"; name: string; at?: number }
  | { k: "query"; query: Query };

export interface Query {
  with: Array<{ name: string; query: Query }>;
  items: Item[];
  from: Source;
  alias: string | null;
  where: Expr | null;
  groupBy: Array<{ expr: Expr; text: string; at: number }> | null;
  having: Expr | null;
  orderBy: Expr[] | null;
  limit: number | null;
  offset: number | null;
}

export interface OutputMetric {
  name: string;
  /** The native aggregator (`count`, `longSum`, `doubleMax`…). */
  type: string;
  /** The projected input column it aggregates, null for COUNT(*). */
  field: string | null;
}

/** A planned ingestion query: JSON, so it persists with the task. */
export interface MsqProgram {
  query: Query;
  dimensions: Array<{ name: string; type: "string" | "long" | "double" | "float" | "json" }>;
  metrics: OutputMetric[];
  rollup: boolean;
  /** The output columns in SELECT order (for CLUSTERED BY ordinals and names). */
  columns: string[];
  /** No `__time` item: the rows are written at the epoch. */
  epochTime?: boolean;
  /** The columns the SELECT reads from (CLUSTERED BY may name them too). */
  inputColumns: string[];
  /** The EXTERN inputs read (the report's stage definition). */
  externs: Array<Extract<Source, { k: "extern" }>>;
}

/** The parser's errors as the planner's: Druid's refusals `invalidInput`, the emulator's gaps `unsupported`. */
function parsing<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof SqlError)
      throw new MsqPlanError(
        error.message,
        error instanceof UnsupportedSqlError ? "unsupported" : "invalidInput",
        error.span?.[0],
      );
    throw error;
  }
}

const gap = (what: string): never => {
  throw new MsqPlanError(`The emulator reads no ${what} in an ingestion query`, "unsupported");
};

/** An INTERVAL literal's count of its unit (the parser keeps milliseconds or months). */
const INTERVAL_PER: Record<string, number> = {
  SECOND: 1000,
  MINUTE: 60_000,
  HOUR: 3_600_000,
  DAY: 86_400_000,
  WEEK: 7 * 86_400_000,
  MONTH: 1,
  QUARTER: 3,
  YEAR: 12,
};

function expr(e: Ast.Expr): Expr {
  switch (e.k) {
    case "lit":
      if (e.v instanceof Timestamp) return { k: "ts", v: e.v.ms };
      if (e.t === "BOOLEAN") return { k: "lit", v: e.v === 1 };
      if (e.t === "INTEGER" || typeof e.v !== "number") return { k: "lit", v: e.v as string | number | null };
      return { k: "lit", v: e.v, decimal: true };
    case "col":
      return { k: "col", name: e.name, table: e.qualifier?.parts.at(-1) ?? null, at: e.span[0] };
    case "now":
      return {
        k: "fn",
        name: e.date ? "CURRENT_DATE" : "CURRENT_TIMESTAMP",
        args: [],
        star: false,
        distinct: false,
      };
    case "interval":
      return { k: "interval", amount: e.amount / (INTERVAL_PER[e.label] ?? 1), unit: e.label };
    case "un":
      return e.op === "NOT" ? { k: "not", e: expr(e.e) } : { k: "neg", e: expr(e.e) };
    case "bin":
      return { k: "bin", op: e.op === "!=" ? "<>" : e.op, l: expr(e.l), r: expr(e.r) };
    case "in":
      return { k: "in", e: expr(e.e), list: e.list.map(expr), not: e.not };
    case "insub":
      return gap("IN (subquery)");
    case "sub":
      return gap("scalar subquery");
    case "isnull":
      return { k: "isnull", e: expr(e.e), not: e.not };
    case "istrue":
      return { k: "isbool", e: expr(e.e), v: e.value, not: e.not };
    case "like":
      return { k: "like", e: expr(e.e), pattern: expr(e.pattern), not: e.not };
    case "between":
      return { k: "between", e: expr(e.e), lo: expr(e.lo), hi: expr(e.hi), not: e.not };
    case "cast":
      return { k: "cast", e: expr(e.e), type: e.to };
    case "case":
      return {
        k: "case",
        operand: e.operand && expr(e.operand),
        whens: e.whens.map(([when, result]) => ({ when: expr(when), result: expr(result) })),
        else: e.otherwise && expr(e.otherwise),
      };
    case "fn":
      if (e.filter) return gap("aggregate FILTER clause");
      if (e.unit !== undefined)
        return {
          k: "floor",
          fn: e.name === "TIME_CEIL" ? "CEIL" : "FLOOR",
          e: expr(e.args[0] as Ast.Expr),
          unit: e.unit,
        };
      return {
        k: "fn",
        name: e.name,
        args: e.args.map(expr),
        star: e.star,
        distinct: e.distinct,
        at: e.span[0],
      };
  }
}

/** The text the query part was read from, and its offset in the statement (items' and keys' text). */
interface Written {
  sql: string;
  base: number;
}

function source(from: Ast.From | null, w: Written): { from: Source; alias: string | null } {
  if (from === null) throw new MsqPlanError("An ingestion query reads FROM a table or EXTERN");
  switch (from.k) {
    case "extern":
      return {
        from: {
          k: "extern",
          inputSource: from.inputSource,
          inputFormat: from.inputFormat,
          signature: from.signature,
        },
        alias: from.alias,
      };
    case "table": {
      const [schema, name] = from.parts.length === 2 ? from.parts : [null, from.parts[0]];
      if (from.parts.length > 2 || (schema !== null && schema.toLowerCase() !== "druid"))
        throw new MsqPlanError(
          `The emulator reads tables of the druid schema only, got [${from.parts.join(".")}]`,
          "unsupported",
        );
      return { from: { k: "table", name: name as string, at: from.span[0] }, alias: from.alias };
    }
    case "sub":
      return { from: { k: "query", query: query(from.q, w) }, alias: from.alias };
    case "join":
      return gap("JOIN");
  }
}

function query(q: Ast.Query, w: Written): Query {
  const text = (span: Ast.Span) => w.sql.slice(span[0] - w.base, span[1] + 1 - w.base).trim();
  if (q.distinct) gap("SELECT DISTINCT");
  for (const c of q.with) if (c.columns) gap("column list on a WITH item");
  const { from, alias } = source(q.from, w);
  return {
    with: q.with.map((c) => ({ name: c.name, query: query(c.q, w) })),
    items: q.items.map((item) => {
      if (item.expr.k === "star") {
        if (item.expr.qualifier) gap("qualified * (t.*)");
        return { expr: { k: "star" }, alias: null, text: "*" };
      }
      return { expr: expr(item.expr), alias: item.alias, text: text(item.span) };
    }),
    from,
    alias,
    where: q.where && expr(q.where),
    groupBy: q.grouped
      ? q.groupBy.map((e, i) => {
          const span = q.groupBySpans[i] as Ast.Span;
          return { expr: expr(e), text: text(span), at: span[0] };
        })
      : null,
    having: q.having && expr(q.having),
    orderBy: q.orderBy.length > 0 ? q.orderBy.map((k) => expr(k.expr)) : null,
    limit: q.limit,
    offset: q.offset === 0 ? null : q.offset,
  };
}

/** Parses the query part of a statement (`base`: where `sql` starts in it); the whole text must be read. */
export function parseQuery(sql: string, base = 0): Query {
  return parsing(() => query(parseQueryPart(sql, base), { sql, base }));
}

/** Parses one expression (CLUSTERED BY items, OVERWRITE WHERE). */
export function parseExpr(sql: string, base = 0): Expr {
  return parsing(() => expr(parseExpressionPart(sql, base)));
}
