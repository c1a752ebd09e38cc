import type { SqlType, Value } from "./sql.js";

/** The query tree sql-parse.ts builds and sql-exec.ts runs. Spans are 0-based offsets, first and last character. */
export type Span = [number, number];

export type ColumnRef = {
  k: "col";
  name: string;
  span: Span;
  /** The table a column is qualified with (`"wikipedia"."channel"`, `w.channel`, `druid.wikipedia.channel`). */
  qualifier?: { parts: string[]; span: Span };
};

/** A day-time interval is milliseconds; a year-month interval is months (`INTERVAL '1' MONTH`). */
export type IntervalUnit = "ms" | "months";

export type Expr =
  | { k: "lit"; v: Value; t: SqlType; span?: Span }
  | ColumnRef
  | { k: "now"; date?: boolean }
  | { k: "interval"; amount: number; unit: IntervalUnit; label: string; span: Span }
  | { k: "un"; op: "NOT" | "-"; e: Expr }
  | { k: "bin"; op: string; l: Expr; r: Expr; span?: Span }
  | { k: "in"; e: Expr; list: Expr[]; not: boolean }
  | { k: "insub"; e: Expr; q: Query; not: boolean; span: Span }
  | { k: "sub"; q: Query; span: Span }
  | { k: "isnull"; e: Expr; not: boolean }
  | { k: "istrue"; e: Expr; value: boolean; not: boolean }
  | { k: "like"; e: Expr; pattern: Expr; not: boolean }
  | { k: "between"; e: Expr; lo: Expr; hi: Expr; not: boolean; span?: Span }
  | { k: "cast"; e: Expr; to: SqlType }
  | { k: "case"; operand: Expr | null; whens: Array<[Expr, Expr]>; otherwise: Expr | null }
  | {
      k: "fn";
      name: string;
      args: Expr[];
      star: boolean;
      distinct: boolean;
      filter: Expr | null;
      span: Span;
      /** Written `FLOOR/CEIL(ts TO unit)` (read as TIME_FLOOR/TIME_CEIL): the unit keyword. */
      unit?: string;
    };

export interface SelectItem {
  /** `*` or `t.*` (qualifier set). */
  expr: Expr | { k: "star"; qualifier: ColumnRef["qualifier"] | null; span: Span };
  alias: string | null;
  /** The expression as written (Calcite names an unaliased item EXPR$n; MSQ's messages quote its text). */
  span: Span;
}

/** An input column of `EXTERN`, its type native (`long`, `string`, `array<string>`…). */
export interface ExternColumn {
  name: string;
  type: string;
}

export type JoinType = "INNER" | "LEFT" | "RIGHT" | "FULL" | "CROSS";

export type From =
  | { k: "table"; parts: string[]; alias: string | null; span: Span }
  | { k: "sub"; q: Query; alias: string | null; span: Span }
  | { k: "join"; type: JoinType; l: From; r: From; on: Expr | null; using: string[] | null }
  /** `TABLE(EXTERN(inputSource, inputFormat[, signature])) [EXTEND (…)]`: external data (MSQ's input). */
  | {
      k: "extern";
      inputSource: Record<string, unknown>;
      inputFormat: Record<string, unknown>;
      signature: ExternColumn[];
      alias: string | null;
      span: Span;
    };

export interface OrderKey {
  expr: Expr;
  desc: boolean;
}

/** `WITH …` + one SELECT + ORDER BY/LIMIT/OFFSET: a query, at the top or inside parentheses. */
export interface Query {
  with: Array<{ name: string; columns: string[] | null; q: Query }>;
  distinct: boolean;
  items: SelectItem[];
  from: From | null;
  where: Expr | null;
  groupBy: Expr[];
  /** Each GROUP BY expression as written (MSQ's messages quote it). */
  groupBySpans: Span[];
  /** Whether the query has a GROUP BY clause at all. */
  grouped: boolean;
  having: Expr | null;
  orderBy: OrderKey[];
  limit: number | null;
  offset: number;
}

/** What the Broker runs: a query, or `EXPLAIN PLAN FOR` a query. */
export interface Statement {
  explain: boolean;
  query: Query;
}

/** An expression's operands (subqueries aside): what a walk over the tree visits. */
export function children(e: Expr): Expr[] {
  switch (e.k) {
    case "un":
    case "cast":
    case "isnull":
    case "istrue":
    case "insub":
      return [e.e];
    case "bin":
      return [e.l, e.r];
    case "in":
      return [e.e, ...e.list];
    case "like":
      return [e.e, e.pattern];
    case "between":
      return [e.e, e.lo, e.hi];
    case "case":
      return [...(e.operand ? [e.operand] : []), ...e.whens.flat(), ...(e.otherwise ? [e.otherwise] : [])];
    case "fn":
      return e.filter ? [...e.args, e.filter] : e.args;
    default:
      return [];
  }
}
