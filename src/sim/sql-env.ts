import type { SqlType, Value } from "./sql.js";
import type { Expr, Query } from "./sql-ast.js";
import type { ArgType } from "./sql-functions.js";
import type { Zone } from "./sql-time.js";

/**
 * What the Broker SQL evaluators share (sql-eval.ts compiles expressions, sql-aggregates.ts aggregates): a
 * relation's fields, the env an evaluator reads (a row, or a group's rows and key), and SQL's truth values.
 */

/** A column of a relation: `rel` is the name it is qualified by (its alias, else the table's name). */
export interface Field {
  rel: string | null;
  /** `schema.table` for a table without alias (`druid.wikipedia.channel`). */
  relFull: string | null;
  name: string;
  type: SqlType;
}

export interface Env {
  row: Value[];
  rows: Value[][];
  key: Value[];
}

/** Shared by every row-mode evaluation: a row's env allocates nothing else. */
export const NO_VALUES: Value[] = [];
export const NO_ROWS: Value[][] = [];
export const rowEnv = (row: Value[]): Env => ({ row, rows: NO_ROWS, key: NO_VALUES });

/**
 * A row-mode evaluator as a function of the row, reusing one env (evaluation is synchronous and never re-enters
 * the same expression), so scanning a large table allocates nothing per row.
 */
export function onRow(c: Compiled): (row: Value[]) => Value {
  const env: Env = { row: NO_VALUES, rows: NO_ROWS, key: NO_VALUES };
  return (row) => {
    env.row = row;
    return c.fn(env);
  };
}

export interface Compiled extends ArgType {
  fn: (env: Env) => Value;
}

/** A subquery's answer (sql-exec.ts runs it). */
export interface SubResult {
  fields: Field[];
  rows: Value[][];
}

export interface CompileCtx {
  fields: Field[];
  /** `JOIN … USING (c)`: the unqualified `c` is the left side's column. */
  using: Map<string, number>;
  /** Group mode: the GROUP BY expressions (their canonical text and types) that a group's key holds. */
  group: { canon: string[]; types: ArgType[] } | null;
  /** Select-list aliases a GROUP BY or HAVING may name when no column has that name. */
  aliases: Map<string, Expr> | null;
  timeZone: Zone;
  now: number;
  /** The clause being compiled, for Calcite's "Aggregate expression is illegal in WHERE clause". */
  clause?: "WHERE" | "ON" | "GROUP BY";
  /** Over a system table Calcite itself aggregates (text MIN/MAX allowed); over datasources Druid's aggregators. */
  system: boolean;
  runSubquery(q: Query): SubResult;
}

export const AGGREGATES = new Set([
  "COUNT",
  "SUM",
  "MIN",
  "MAX",
  "AVG",
  "APPROX_COUNT_DISTINCT",
  "LATEST",
  "EARLIEST",
  "LATEST_BY",
  "EARLIEST_BY",
  "ANY_VALUE",
  // DataSketches (sql-sketches.ts).
  "APPROX_COUNT_DISTINCT_DS_HLL",
  "APPROX_COUNT_DISTINCT_DS_THETA",
  "DS_HLL",
  "DS_THETA",
]);

export const INTEGERS = new Set<SqlType>(["BIGINT", "INTEGER", "BOOLEAN", "TIMESTAMP", "DATE"]);

export const truthy = (v: Value) => v !== null && v !== 0 && v !== "" && v !== "false";
export const bool = (b: boolean | null): Value => (b === null ? null : b ? 1 : 0);

export function hasAggregate(e: Expr): boolean {
  switch (e.k) {
    case "fn":
      return AGGREGATES.has(e.name) || e.args.some(hasAggregate);
    case "un":
    case "cast":
    case "isnull":
    case "istrue":
      return hasAggregate(e.e);
    case "bin":
      return hasAggregate(e.l) || hasAggregate(e.r);
    case "in":
      return hasAggregate(e.e) || e.list.some(hasAggregate);
    case "insub":
      return hasAggregate(e.e);
    case "like":
      return hasAggregate(e.e) || hasAggregate(e.pattern);
    case "between":
      return hasAggregate(e.e) || hasAggregate(e.lo) || hasAggregate(e.hi);
    case "case":
      return (
        (e.operand !== null && hasAggregate(e.operand)) ||
        e.whens.some(([w, t]) => hasAggregate(w) || hasAggregate(t)) ||
        (e.otherwise !== null && hasAggregate(e.otherwise))
      );
    default:
      return false;
  }
}
