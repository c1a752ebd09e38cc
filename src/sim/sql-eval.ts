import { SqlError, SqlRuntimeError, type SqlType, Timestamp, unsupported, type Value } from "./sql.js";
import { compileAggregate } from "./sql-aggregates.js";
import type { ColumnRef, Expr, Span } from "./sql-ast.js";
import { DRUID_FUNCTIONS } from "./sql-druid-functions.js";
import { AGGREGATES, bool, type CompileCtx, type Compiled, type Field, INTEGERS, truthy } from "./sql-env.js";
import {
  type ArgType,
  castText,
  compare,
  type FnContext,
  leastRestrictive,
  msOf,
  operandRefusal,
  PatternError,
  parseTimestampLiteral,
  plusMonths,
  SCALARS,
  textOf,
  typedText,
} from "./sql-functions.js";
import { floorInZone, type Zone } from "./sql-time.js";

/**
 * Expressions → typed evaluators over one relation's rows (row mode) or over groups (group mode, where
 * aggregates fold the group's rows and grouped expressions read the group's key). Column references are bound
 * here, so an unknown or ambiguous column fails with Calcite's message and position before any row is read.
 */

function columnNotFound(e: ColumnRef): SqlError {
  const where = e.qualifier ? `table '${e.qualifier.parts.at(-1)}'` : "any table";
  return new SqlError(`Column '${e.name}' not found in ${where}`, e.span);
}

/**
 * Binds a column the way Calcite's scopes do: a qualifier names a relation in FROM by its alias, else by its
 * name or `schema.name` ("Table 'x' not found" otherwise, spanning the qualifier); an unqualified name must be
 * in exactly one relation ("Column 'x' is ambiguous", observed on Druid 33). -1 when there is no such column.
 */
export function resolveColumn(e: ColumnRef, fields: Field[], using: Map<string, number>): number {
  if (e.qualifier) {
    const written = e.qualifier.parts.join(".");
    const ofRel = fields
      .map((f, i) => ({ f, i }))
      .filter(({ f }) => f.rel === written || f.relFull === written);
    if (ofRel.length === 0) throw new SqlError(`Table '${written}' not found`, e.qualifier.span);
    const hit = ofRel.find(({ f }) => f.name === e.name);
    if (!hit) throw columnNotFound(e);
    return hit.i;
  }
  const shared = using.get(e.name);
  if (shared !== undefined) return shared;
  const hits = fields.flatMap((f, i) => (f.name === e.name ? [i] : []));
  if (hits.length > 1 && new Set(hits.map((i) => fields[i]?.rel)).size > 1)
    throw new SqlError(`Column '${e.name}' is ambiguous`, e.span);
  return hits[0] ?? -1;
}

/** An expression's text with columns bound, to match a select item or ORDER BY key against GROUP BY. */
export function canon(e: Expr, ctx: CompileCtx): string {
  return JSON.stringify(e, (key, value) => {
    if (key === "span") return undefined;
    if (value && typeof value === "object" && value.k === "col") {
      try {
        const i = resolveColumn(value as ColumnRef, ctx.fields, ctx.using);
        if (i >= 0) return `#${i}`;
      } catch {
        // an unresolvable column keeps its name; compiling it reports the error
      }
      return `col:${(value as ColumnRef).name}`;
    }
    return value;
  });
}

/** Where an expression starts and ends, when the parser kept it. */
export function spanOf(e: Expr): Span | undefined {
  if (e.k === "col" || e.k === "fn" || e.k === "lit" || e.k === "bin" || e.k === "between") return e.span;
  return undefined;
}

/** Calcite's name of a type in validator messages; null where the emulator does not know the precision. */
function calciteType(t: SqlType): string | null {
  if (t === "TIMESTAMP") return "TIMESTAMP(3)";
  return t === "INTEGER" || t === "BIGINT" || t === "DOUBLE" || t === "FLOAT" ? t : null;
}
const NUMBERS = new Set<SqlType>(["INTEGER", "BIGINT", "DOUBLE", "FLOAT", "DECIMAL"]);

/**
 * Calcite's operand type check where a TIMESTAMP meets a number (a real Druid 33: "Cannot apply '>' to arguments
 * of type '<TIMESTAMP(3)> > <INTEGER>'. Supported form(s): …", spanning the whole expression).
 */
function refuseTimeWithNumber(op: string, types: SqlType[], forms: string[], span: Span | undefined): void {
  const time = types.includes("TIMESTAMP");
  const number = types.some((t) => NUMBERS.has(t));
  if (!time || !number) return;
  const names = types.map(calciteType);
  if (names.some((n) => n === null)) return;
  const operands =
    names.length === 3
      ? `<${names[0]}> ${op} <${names[1]}> AND <${names[2]}>`
      : `<${names[0]}> ${op} <${names[1]}>`;
  throw new SqlError(
    `Cannot apply '${op}' to arguments of type '${operands}'. Supported form(s): ${forms.map((f) => `'${f}'`).join("\n")}`,
    span,
  );
}

/** A number from an arithmetic operand: text is read as a number (null when it is none), as Druid's math does. */
function numOf(v: Exclude<Value, null>): number | null {
  if (v instanceof Timestamp) return v.ms;
  if (typeof v === "number") return v;
  const n = Number(v);
  return String(v).trim() === "" || Number.isNaN(n) ? null : n;
}

export function compile(e: Expr, ctx: CompileCtx): Compiled {
  if (ctx.group) {
    const i = ctx.group.canon.indexOf(canon(e, ctx));
    if (i >= 0) return { ...(ctx.group.types[i] as ArgType), fn: (env) => env.key[i] ?? null };
  }
  const fnCtx: FnContext = { timeZone: ctx.timeZone };
  const sub = (x: Expr) => compile(x, ctx);
  switch (e.k) {
    case "lit": {
      const v = e.v;
      return {
        type: e.t,
        ...(e.t === "CHAR" ? { charLen: String(v).length } : {}),
        fn: () => v,
      };
    }
    case "col": {
      const index = resolveColumn(e, ctx.fields, ctx.using);
      if (index < 0) {
        const aliased = !e.qualifier ? ctx.aliases?.get(e.name) : undefined;
        if (aliased) return compile(aliased, { ...ctx, aliases: null });
        throw columnNotFound(e);
      }
      if (ctx.group)
        throw new SqlError(
          `Expression '${e.qualifier ? `${e.qualifier.parts.join(".")}.` : ""}${e.name}' is not being grouped`,
          e.span,
        );
      const field = ctx.fields[index];
      return { type: field?.type ?? "VARCHAR", fn: (env) => env.row[index] ?? null };
    }
    case "now": {
      // CURRENT_DATE is the day of the query's now in sqlTimeZone, typed DATE (a real Druid 33: "DATE", LONG).
      if (e.date) {
        const today = new Timestamp(floorInZone(ctx.now, "P1D", ctx.timeZone));
        return { type: "DATE", fn: () => today };
      }
      const now = new Timestamp(ctx.now);
      return { type: "TIMESTAMP", fn: () => now };
    }
    case "interval":
      // Druid's planner has no interval column type: an interval is only an operand of timestamp arithmetic.
      throw new SqlError(
        `Cannot handle literal [${e.amount}:INTERVAL ${e.label}] of unsupported type [INTERVAL_${e.label}].`,
      );
    case "un": {
      const x = sub(e.e);
      if (e.op === "NOT")
        return { type: "BOOLEAN", fn: (env) => ((v) => (v === null ? null : truthy(v) ? 0 : 1))(x.fn(env)) };
      return { type: x.type, fn: (env) => ((v) => (v === null ? null : -Number(v)))(x.fn(env)) };
    }
    case "bin":
      return compileBinary(e, ctx);
    case "in": {
      const x = sub(e.e);
      const list = e.list.map((item) => timeComparable(x, sub(item), ctx.timeZone)[1]);
      return {
        type: "BOOLEAN",
        fn: (env) => {
          const v = x.fn(env);
          if (v === null) return null;
          let unknown = false;
          for (const item of list) {
            const c = compare(v, item.fn(env));
            if (c === 0) return bool(!e.not);
            if (c === null) unknown = true;
          }
          return unknown ? null : bool(e.not);
        },
      };
    }
    case "insub": {
      const x = sub(e.e);
      // Druid runs an uncorrelated IN subquery once, before the outer query (a join on its distinct values).
      const inner = ctx.runSubquery(e.q);
      if (inner.fields.length !== 1)
        throw new SqlError("Values passed to IN operator must have compatible types", e.span);
      const values = inner.rows.map((row) => row[0] ?? null);
      return {
        type: "BOOLEAN",
        fn: (env) => {
          const v = x.fn(env);
          if (v === null) return null;
          let unknown = false;
          for (const item of values) {
            const c = compare(v, item);
            if (c === 0) return bool(!e.not);
            if (c === null) unknown = true;
          }
          return unknown ? null : bool(e.not);
        },
      };
    }
    case "sub": {
      const r = ctx.runSubquery(e.q);
      if (r.fields.length !== 1) throw new SqlError("Subquery must return exactly one column", e.span);
      return {
        type: r.fields[0]?.type ?? "VARCHAR",
        fn: () => {
          // Druid runs a scalar subquery as its own query first; more than one row fails the whole query.
          if (r.rows.length > 1)
            throw new SqlRuntimeError("Subquery expression returned more than one row", "legacy");
          return r.rows[0]?.[0] ?? null;
        },
      };
    }
    case "isnull": {
      const x = sub(e.e);
      return { type: "BOOLEAN", fn: (env) => bool((x.fn(env) === null) !== e.not) };
    }
    case "istrue": {
      const x = sub(e.e);
      return {
        type: "BOOLEAN",
        fn: (env) => {
          const v = x.fn(env);
          const is = v !== null && truthy(v) === e.value;
          return bool(is !== e.not);
        },
      };
    }
    case "like": {
      const x = sub(e.e);
      const p = sub(e.pattern);
      return {
        type: "BOOLEAN",
        fn: (env) => {
          const v = x.fn(env);
          const pattern = p.fn(env);
          if (v === null || pattern === null) return null;
          const re = new RegExp(
            `^${String(pattern)
              .replace(/[.+^${}()|[\]\\*?]/g, "\\$&")
              .replace(/%/g, ".*")
              .replace(/_/g, ".")}$`,
            "s",
          );
          return bool(re.test(textOf(v, ctx.timeZone)) !== e.not);
        },
      };
    }
    case "between": {
      const x = sub(e.e);
      const [loRaw, hiRaw] = [sub(e.lo), sub(e.hi)];
      refuseTimeWithNumber(
        "BETWEEN ASYMMETRIC",
        [x.type, loRaw.type, hiRaw.type],
        ["<COMPARABLE_TYPE> BETWEEN <COMPARABLE_TYPE> AND <COMPARABLE_TYPE>"],
        e.span,
      );
      const lo = timeComparable(x, loRaw, ctx.timeZone)[1];
      const hi = timeComparable(x, hiRaw, ctx.timeZone)[1];
      return {
        type: "BOOLEAN",
        fn: (env) => {
          const v = x.fn(env);
          const a = compare(v, lo.fn(env));
          const b = compare(v, hi.fn(env));
          if (a === null || b === null) return null;
          return bool((a >= 0 && b <= 0) !== e.not);
        },
      };
    }
    case "cast": {
      const x = sub(e.e);
      return { type: e.to, fn: (env) => castValue(x.fn(env), e.to, ctx.timeZone, x.type) };
    }
    case "case": {
      const operand = e.operand ? sub(e.operand) : null;
      const whens = e.whens.map(([w, t]) => [sub(w), sub(t)] as const);
      const otherwise = e.otherwise ? sub(e.otherwise) : null;
      const type = leastRestrictive([...whens.map(([, t]) => t), ...(otherwise ? [otherwise] : [])]);
      return {
        ...type,
        fn: (env) => {
          const base = operand ? operand.fn(env) : null;
          for (const [w, t] of whens) {
            const hit = operand ? compare(base, w.fn(env)) === 0 : truthy(w.fn(env));
            if (hit) return t.fn(env);
          }
          return otherwise ? otherwise.fn(env) : null;
        },
      };
    }
    case "fn":
      if (AGGREGATES.has(e.name)) return compileAggregate(e, ctx, compile);
      return compileScalar(e, ctx, fnCtx);
  }
}

function compileBinary(e: Extract<Expr, { k: "bin" }>, ctx: CompileCtx): Compiled {
  if (e.op === "AND" || e.op === "OR") {
    const l = compile(e.l, ctx);
    const r = compile(e.r, ctx);
    const and = e.op === "AND";
    // Three-valued logic: FALSE wins an AND, TRUE wins an OR, else unknown stays unknown.
    return {
      type: "BOOLEAN",
      fn: (env) => {
        const a = l.fn(env);
        if (a !== null && truthy(a) !== and) return bool(!and);
        const b = r.fn(env);
        if (b !== null && truthy(b) !== and) return bool(!and);
        return a === null || b === null ? null : bool(and);
      },
    };
  }
  // Timestamp ± interval: day-time intervals add milliseconds, year-month ones calendar months in the zone.
  if ((e.op === "+" || e.op === "-") && (e.r.k === "interval" || e.l.k === "interval")) {
    const interval = (e.r.k === "interval" ? e.r : e.l) as Extract<Expr, { k: "interval" }>;
    const other = compile(e.r.k === "interval" ? e.l : e.r, ctx);
    if (e.op === "-" && e.l.k === "interval") throw unsupported("An interval minus a timestamp");
    const sign = e.op === "-" ? -1 : 1;
    return {
      type: other.type === "DATE" ? "DATE" : "TIMESTAMP",
      fn: (env) => {
        const v = other.fn(env);
        if (v === null) return null;
        const ms = msOf(v);
        return new Timestamp(
          interval.unit === "ms"
            ? ms + sign * interval.amount
            : plusMonths(ms, sign * interval.amount, ctx.timeZone),
        );
      },
    };
  }
  const l = compile(e.l, ctx);
  const r = compile(e.r, ctx);
  if (e.op === "||") {
    // CHAR stays CHAR (Druid 33: 'a' || 'bc' and 'a' || NULL are CHAR), anything else with text is VARCHAR.
    const chars =
      [l, r].every((x) => x.type === "CHAR" || x.type === "NULL") && [l, r].some((x) => x.type === "CHAR");
    return {
      ...(chars
        ? { type: "CHAR" as const, charLen: (l.charLen ?? 0) + (r.charLen ?? 0) }
        : { type: "VARCHAR" as const }),
      fn: (env) => {
        const a = l.fn(env);
        const b = r.fn(env);
        return a === null || b === null
          ? null
          : `${typedText(a, l.type, ctx.timeZone)}${typedText(b, r.type, ctx.timeZone)}`;
      },
    };
  }
  if (["+", "-", "*", "/", "%"].includes(e.op)) {
    const types = [l.type, r.type];
    if (e.op === "+")
      refuseTimeWithNumber(
        "+",
        types,
        [
          "<NUMERIC> + <NUMERIC>",
          "<DATETIME_INTERVAL> + <DATETIME_INTERVAL>",
          "<DATETIME> + <DATETIME_INTERVAL>",
          "<DATETIME_INTERVAL> + <DATETIME>",
        ],
        e.span,
      );
    if (e.op === "-")
      refuseTimeWithNumber(
        "-",
        types,
        [
          "<NUMERIC> - <NUMERIC>",
          "<DATETIME_INTERVAL> - <DATETIME_INTERVAL>",
          "<DATETIME> - <DATETIME_INTERVAL>",
        ],
        e.span,
      );
    const type: SqlType = types.some((t) => t === "DOUBLE" || t === "FLOAT")
      ? "DOUBLE"
      : types.includes("DECIMAL")
        ? "DECIMAL"
        : types.includes("BIGINT") || types.includes("TIMESTAMP")
          ? "BIGINT"
          : "INTEGER";
    const integral = INTEGERS.has(l.type) && INTEGERS.has(r.type);
    return {
      type,
      fn: (env) => {
        const a = l.fn(env);
        const b = r.fn(env);
        if (a === null || b === null) return null;
        const x = numOf(a);
        const y = numOf(b);
        if (x === null || y === null) return null;
        switch (e.op) {
          case "+":
            return x + y;
          case "-":
            return x - y;
          case "*":
            return x * y;
          case "%":
            return x % y;
          default:
            if (!integral) return x / y;
            // Integer division as Druid's long math does it (`/ by zero` is Java's ArithmeticException).
            if (y === 0) throw new SqlRuntimeError("/ by zero");
            return Math.trunc(x / y);
        }
      },
    };
  }
  const op = e.op;
  const shown = op === "!=" ? "<>" : op;
  refuseTimeWithNumber(shown, [l.type, r.type], [`<COMPARABLE_TYPE> ${shown} <COMPARABLE_TYPE>`], e.span);
  const [a, b] = timeComparable(l, r, ctx.timeZone);
  return {
    type: "BOOLEAN",
    fn: (env) => {
      const c = compare(a.fn(env), b.fn(env));
      if (c === null) return null;
      return bool(
        op === "="
          ? c === 0
          : op === "!="
            ? c !== 0
            : op === "<"
              ? c < 0
              : op === "<="
                ? c <= 0
                : op === ">"
                  ? c > 0
                  : c >= 0,
      );
    },
  };
}

/**
 * Calcite's implicit cast where a TIMESTAMP meets text (`__time >= '2026-03-02 12:00:00'`): the text is read as a
 * timestamp in `sqlTimeZone` (a real Druid 33 counted from local noon under America/Los_Angeles).
 */
export function timeComparable(l: Compiled, r: Compiled, zone: Zone): [Compiled, Compiled] {
  const text = (c: Compiled) => c.type === "CHAR" || c.type === "VARCHAR";
  const asTime = (c: Compiled): Compiled => ({
    type: "TIMESTAMP",
    fn: (env) => castValue(c.fn(env), "TIMESTAMP", zone),
  });
  if (l.type === "TIMESTAMP" && text(r)) return [l, asTime(r)];
  if (r.type === "TIMESTAMP" && text(l)) return [asTime(l), r];
  return [l, r];
}

function compileScalar(e: Extract<Expr, { k: "fn" }>, ctx: CompileCtx, fnCtx: FnContext): Compiled {
  const def = SCALARS[e.name];
  if (!def) {
    if (DRUID_FUNCTIONS.has(e.name)) throw unsupported(`The function ${e.name}`);
    // Calcite types the operands first (an unknown column is reported before the function).
    const types = e.args.map((a) => compile(a, ctx).type);
    throw new SqlError(
      `No match found for function signature ${e.name}(${types.map((t) => `<${operandFamily(t)}>`).join(", ")})`,
      e.span,
    );
  }
  if (e.distinct || e.star)
    throw new SqlError(`Invalid use of ${e.star ? "*" : "DISTINCT"} in ${e.name}`, e.span);
  if (e.name === "MV_TO_ARRAY") refuseMvToArrayOfExpression(e.args[0]);
  if (e.args.length < def.min || e.args.length > def.max)
    throw new SqlError(
      // Calcite names one count, the fewest the function takes (Druid 33: TIME_FLOOR(t) "Was expecting 2 arguments").
      `Invalid number of arguments to function '${e.name}'. Was expecting ${def.min} arguments`,
      e.span,
    );
  for (const i of def.refusesNull ?? []) {
    const a = e.args[i];
    if (a?.k === "lit" && a.t === "NULL") throw new SqlError("Illegal use of 'NULL'", a.span);
  }
  const args = e.args.map((a) => compile(a, ctx));
  const refused = operandRefusal(def, args);
  if (refused) throw new SqlError(refused, e.span);
  const type = def.type(args);
  // The arguments' types go along: Druid's long math and Calcite's CHAR padding depend on them.
  const callCtx: FnContext = { ...fnCtx, argTypes: args };
  // A function of constants is folded while planning, as Calcite's reducer does: its errors are planning errors.
  return {
    ...type,
    fn: (env) => {
      try {
        return def.run(
          args.map((a) => a.fn(env)),
          callCtx,
        );
      } catch (error) {
        if (error instanceof PatternError) throw unsupported(`The time format ${error.message}`);
        throw error;
      }
    },
  };
}

/**
 * MV_TO_ARRAY reads a column only: Druid's native `mv_to_array` refuses anything else while planning (a real
 * Druid 33: "Function[mv_to_array] argument 1 should be an identifier expression. Use array() instead", 500
 * ADMIN). The emulator words it for literals; another expression is its gap.
 */
function refuseMvToArrayOfExpression(arg: Expr | undefined): void {
  if (!arg || arg.k === "col") return;
  if (arg.k === "lit" && !(arg.v instanceof Timestamp))
    throw new SqlRuntimeError(
      `Function[mv_to_array] argument ${arg.v === null ? "null" : String(arg.v)} should be an identifier expression. Use array() instead`,
    );
  throw unsupported("MV_TO_ARRAY of an expression");
}

/** An operand's type family as Calcite names it in "No match found for function signature" (observed on Druid 33). */
function operandFamily(t: SqlType): string {
  if (t === "CHAR" || t === "VARCHAR") return "CHARACTER";
  if (NUMBERS.has(t)) return "NUMERIC";
  return t;
}

/** CAST; `from` is the operand's SQL type where known (a DOUBLE's text, a number's truth depend on it). */
export function castValue(v: Value, to: SqlType, zone: Zone, from?: SqlType): Value {
  if (v === null) return null;
  // Empty or blank text is no number (Druid 33: CAST('' AS BIGINT) of a column is null).
  const n = v instanceof Timestamp ? v.ms : typeof v === "string" && v.trim() === "" ? Number.NaN : Number(v);
  switch (to) {
    case "BIGINT":
    case "INTEGER":
      return Number.isFinite(n) ? Math.trunc(n) : null;
    case "DOUBLE":
    case "FLOAT":
    case "DECIMAL":
      return Number.isFinite(n) ? n : null;
    case "TIMESTAMP": {
      if (v instanceof Timestamp) return v;
      if (typeof v === "number") return new Timestamp(v);
      const ms = parseTimestampLiteral(String(v), zone);
      return Number.isNaN(ms) ? null : new Timestamp(ms);
    }
    case "DATE": {
      // A DATE is the day a time falls on in sqlTimeZone (Druid 33: CAST(__time AS DATE) groups by day).
      const t = castValue(v, "TIMESTAMP", zone);
      return t instanceof Timestamp ? new Timestamp(floorInZone(t.ms, "P1D", zone)) : null;
    }
    case "BOOLEAN":
      // Druid 33: text is 'true'/'false' or a number whose whole part is above 0, else null; so is a double; an
      // integer is true when not 0 (CAST(-3 AS BOOLEAN) true; CAST(-2.5 …), CAST(0.125 …), CAST('-3' …) false).
      if (typeof v === "string") {
        if (/^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === "true" ? 1 : 0;
        return Number.isFinite(n) ? (Math.trunc(n) > 0 ? 1 : 0) : null;
      }
      if (from === "DOUBLE" || from === "FLOAT" || from === "DECIMAL") return Math.trunc(n) > 0 ? 1 : 0;
      return truthy(v) ? 1 : 0;
    default:
      return castText(v, from, zone);
  }
}
