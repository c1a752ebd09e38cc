import { SqlError, SqlPlanningError, type SqlType, Timestamp, unsupported, type Value } from "./sql.js";
import type { Expr } from "./sql-ast.js";
import {
  type CompileCtx,
  type Compiled,
  hasAggregate,
  INTEGERS,
  NO_VALUES,
  onRow,
  rowEnv,
  truthy,
} from "./sql-env.js";
import { msOf } from "./sql-functions.js";
import { compileSketchAggregate } from "./sql-sketch-aggregates.js";

/**
 * Druid SQL's aggregators over a group's rows (docs/querying/sql-aggregations.md): COUNT, COUNT(DISTINCT) and
 * APPROX_COUNT_DISTINCT, SUM, MIN, MAX, AVG, ANY_VALUE, LATEST/EARLIEST[_BY], each with `FILTER (WHERE …)`, typed as
 * Druid 33 reports them.
 */

/** Folds one group's rows; args are compiled in row mode (an aggregate inside an aggregate is refused). */
export function compileAggregate(
  e: Extract<Expr, { k: "fn" }>,
  ctx: CompileCtx,
  compile: (e: Expr, ctx: CompileCtx) => Compiled,
): Compiled {
  if (!ctx.group)
    throw new SqlError(`Aggregate expression is illegal in ${ctx.clause ?? "this"} clause`, e.span);
  if (e.args.some(hasAggregate)) throw new SqlError("Aggregate expressions cannot be nested", e.span);
  const rowCtx: CompileCtx = { ...ctx, group: null, aliases: null };
  const args = e.args.map((a) => compile(a, rowCtx));
  const filter = e.filter ? compile(e.filter, rowCtx) : null;
  const test = filter ? onRow(filter) : null;
  const scoped = (rows: Value[][]) => (test ? rows.filter((row) => truthy(test(row))) : rows);
  const readers = args.map(onRow);
  const values = (rows: Value[][], arg = 0) => scoped(rows).map(readers[arg] as (row: Value[]) => Value);
  const arg = args[0];
  const name = e.name;
  if (name === "COUNT" && (e.star || args.length === 0))
    return { type: "BIGINT", fn: (env) => scoped(env.rows).length };
  if (!arg) throw new SqlError(`Invalid number of arguments to function '${name}'`, e.span);
  const nonNull = (rows: Value[][]) => values(rows).filter((v): v is Exclude<Value, null> => v !== null);
  const distinctCount = (rows: Value[][]) =>
    new Set(nonNull(rows).map((v) => (v instanceof Timestamp ? v.ms : typeof v === "number" ? v : `s:${v}`)))
      .size;
  switch (name) {
    case "COUNT":
      // COUNT(DISTINCT) is APPROX_COUNT_DISTINCT under Druid's default useApproximateCountDistinct: its HLL
      // sketch is exact at small cardinalities (a real Druid 33 counted 3 of 3).
      return {
        type: "BIGINT",
        fn: (env) => (e.distinct ? distinctCount(env.rows) : nonNull(env.rows).length),
      };
    case "APPROX_COUNT_DISTINCT":
      return { type: "BIGINT", fn: (env) => distinctCount(env.rows) };
    case "SUM":
    case "AVG":
    case "MIN":
    case "MAX": {
      if (e.distinct) throw unsupported(`${name}(DISTINCT …)`);
      // Druid 33's MIN, MAX and AVG aggregators take numbers only (a real Druid 33 refused MAX(page) so, naming
      // the aggregator's input as its first virtual column); SUM reads text as numbers (null when none is one).
      const text = arg.type === "VARCHAR" || arg.type === "CHAR";
      if (name !== "SUM" && text && !ctx.system)
        throw new SqlError(`Aggregation [${name}] does not support type [STRING], column [v0]`);
      const type: SqlType =
        name === "AVG"
          ? "DOUBLE"
          : name === "SUM"
            ? INTEGERS.has(arg.type)
              ? "BIGINT"
              : "DOUBLE"
            : arg.type === "INTEGER"
              ? "BIGINT"
              : arg.type;
      return {
        type,
        fn: (env) => {
          const vs = nonNull(env.rows);
          if (text && name !== "SUM" && name !== "AVG") {
            const sorted = vs.map(String).sort();
            return (name === "MIN" ? sorted[0] : sorted.at(-1)) ?? null;
          }
          const nums = vs
            .map((v) => (typeof v === "string" ? Number(v) : msOf(v)))
            .filter((n) => Number.isFinite(n));
          if (nums.length === 0) return null;
          if (name === "SUM") return nums.reduce((a, b) => a + b, 0);
          if (name === "AVG") return nums.reduce((a, b) => a + b, 0) / nums.length;
          const pick = name === "MIN" ? Math.min(...nums) : Math.max(...nums);
          return vs[0] instanceof Timestamp ? new Timestamp(pick) : pick;
        },
      };
    }
    case "ANY_VALUE":
      return { type: arg.type, fn: (env) => nonNull(env.rows)[0] ?? null };
    case "APPROX_COUNT_DISTINCT_DS_HLL":
    case "APPROX_COUNT_DISTINCT_DS_THETA":
    case "DS_HLL":
    case "DS_THETA":
      return compileSketchAggregate(e, args, values);
    default:
      return compileLatest(e, ctx, args, scoped);
  }
}

/**
 * LATEST/EARLIEST(expr[, maxBytes]) by `__time`, LATEST_BY/EARLIEST_BY(expr, time[, maxBytes]): the value of the
 * latest (earliest) row, null included (a real Druid 33 answered null for the latest row's null). Without a
 * `__time` column Druid's planner refuses LATEST/EARLIEST (SqlPlanningError, persona ADMIN as observed).
 */
function compileLatest(
  e: Extract<Expr, { k: "fn" }>,
  ctx: CompileCtx,
  args: Compiled[],
  scoped: (rows: Value[][]) => Value[][],
): Compiled {
  const by = e.name.endsWith("_BY");
  const latest = e.name.startsWith("LATEST");
  const value = args[0] as Compiled;
  let time: (row: Value[]) => Value;
  if (by) {
    const t = args[1];
    if (!t) throw new SqlError(`Invalid number of arguments to function '${e.name}'`, e.span);
    time = onRow(t);
  } else {
    const index = ctx.fields.findIndex((f) => f.name === "__time");
    if (index < 0)
      throw new SqlPlanningError(
        "LATEST and EARLIEST aggregators implicitly depend on the __time column, but the table queried doesn't contain a __time column.  Please use LATEST_BY or EARLIEST_BY and specify the column explicitly.",
        "ADMIN",
      );
    time = (row) => row[index] ?? null;
  }
  const maxBytesArg = args[by ? 2 : 1];
  const maxBytes = maxBytesArg ? Number(maxBytesArg.fn(rowEnv(NO_VALUES))) : null;
  const type: SqlType = value.type === "INTEGER" ? "BIGINT" : value.type === "CHAR" ? "VARCHAR" : value.type;
  return {
    type,
    fn: (env) => {
      let best: Value[] | null = null;
      let bestTime = 0;
      for (const row of scoped(env.rows)) {
        const t = time(row);
        if (t === null) continue;
        const ms = msOf(t);
        if (best === null || (latest ? ms >= bestTime : ms < bestTime)) {
          best = row;
          bestTime = ms;
        }
      }
      if (best === null) return null;
      const v = value.fn(rowEnv(best));
      if (typeof v === "string" && maxBytes !== null && Number.isFinite(maxBytes))
        return Buffer.from(v).subarray(0, maxBytes).toString();
      return v;
    },
  };
}
