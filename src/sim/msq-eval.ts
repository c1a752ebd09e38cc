import { DateTime } from "luxon";
import { inputJson, type JsonValue } from "./json-value.js";
import type { Expr } from "./msq-sql.js";
import { MsqPlanError } from "./msq-text.js";
import {
  type SqlType as BrokerSqlType,
  type Value as BrokerValue,
  SqlError,
  Timestamp,
  UnsupportedSqlError,
} from "./sql.js";
import { SCALARS as BROKER_SCALARS } from "./sql-functions.js";
import { floorInZone, PatternError, UTC } from "./sql-time.js";

/**
 * Typing and evaluating an MSQ query's expressions over input rows, with Druid SQL's semantics
 * (`docs/querying/sql-scalar.md`, `docs/querying/sql-operators.md`, `docs/querying/sql-data-types.md`): SQL NULL for missing values and
 * failed parses (`TIME_PARSE` answers null, it does not fail), integer division of two BIGINTs, string
 * functions over VARCHAR, times as TIMESTAMP millis. Functions the emulator does not know are refused at
 * planning (`unsupported`), and a function Druid does not have is Calcite's "No match found" error.
 */

/** `COMPLEX<json>`: a nested column (sql-json.ts), its values JsonValues. */
export type SqlType =
  | "VARCHAR"
  | "BIGINT"
  | "DOUBLE"
  | "FLOAT"
  | "TIMESTAMP"
  | "BOOLEAN"
  | "ARRAY"
  | "COMPLEX<json>";
export type Value = string | number | boolean | null | Value[] | JsonValue;
export type Row = Record<string, unknown>;

/** The SQL type of an input column's native type (`Columns`: long → BIGINT, string → VARCHAR…). */
export function sqlTypeOf(native: string): SqlType {
  const t = native.toLowerCase();
  if (t === "long") return "BIGINT";
  if (t === "double") return "DOUBLE";
  if (t === "float") return "FLOAT";
  if (t.startsWith("array")) return "ARRAY";
  if (t === "complex<json>") return "COMPLEX<json>";
  return "VARCHAR";
}

/** The native type a dimension of this SQL type is stored as. */
export function nativeOf(t: SqlType): "string" | "long" | "double" | "float" | "json" {
  if (t === "COMPLEX<json>") return "json";
  if (t === "BIGINT" || t === "TIMESTAMP" || t === "BOOLEAN") return "long";
  if (t === "DOUBLE") return "double";
  if (t === "FLOAT") return "float";
  return "string";
}

const NUMERIC = new Set<SqlType>(["BIGINT", "DOUBLE", "FLOAT", "TIMESTAMP", "BOOLEAN"]);
export const isNumeric = (t: SqlType) => NUMERIC.has(t);

/** Scalar functions the emulator evaluates, with their result type (a function of the argument types). */
const SCALARS: Record<string, (args: SqlType[]) => SqlType> = {
  TIMESTAMP_TO_MILLIS: () => "BIGINT",
  CURRENT_TIMESTAMP: () => "TIMESTAMP",
  CURRENT_DATE: () => "TIMESTAMP",
  SUBSTRING: () => "VARCHAR",
  SUBSTR: () => "VARCHAR",
};

/** Aggregates an ingestion may write as metrics, and what they combine into (`docs/querying/sql-aggregations.md`). */
export const AGGREGATES = new Set(["COUNT", "SUM", "MIN", "MAX"]);
/** Aggregates Druid has that the emulator does not store (sketches, first/last, AVG): refused as unsupported. */
const OTHER_AGGREGATES = new Set([
  "AVG",
  "EARLIEST",
  "LATEST",
  "EARLIEST_BY",
  "LATEST_BY",
  "ANY_VALUE",
  "APPROX_COUNT_DISTINCT",
  "APPROX_COUNT_DISTINCT_DS_HLL",
  "APPROX_COUNT_DISTINCT_DS_THETA",
  "APPROX_QUANTILE_DS",
  "DS_HLL",
  "DS_THETA",
  "DS_QUANTILES_SKETCH",
  "ARRAY_AGG",
  "STRING_AGG",
  "LISTAGG",
  "BIT_AND",
  "BIT_OR",
  "BIT_XOR",
  "STDDEV",
  "VARIANCE",
  "GROUPING",
]);

export function isAggregate(e: Expr): boolean {
  return e.k === "fn" && (AGGREGATES.has(e.name) || OTHER_AGGREGATES.has(e.name));
}

function widest(types: SqlType[]): SqlType {
  if (types.includes("VARCHAR")) return "VARCHAR";
  if (types.includes("DOUBLE")) return "DOUBLE";
  if (types.includes("FLOAT")) return "FLOAT";
  if (types.includes("TIMESTAMP")) return "TIMESTAMP";
  return types[0] ?? "VARCHAR";
}

/** Resolves a column reference to its SQL type, or fails with Calcite's message. */
export type Scope = (name: string, table: string | null, at: number) => SqlType;

const CAST_TYPES: Record<string, SqlType> = {
  VARCHAR: "VARCHAR",
  CHAR: "VARCHAR",
  BIGINT: "BIGINT",
  INTEGER: "BIGINT",
  INT: "BIGINT",
  SMALLINT: "BIGINT",
  TINYINT: "BIGINT",
  DOUBLE: "DOUBLE",
  DECIMAL: "DOUBLE",
  FLOAT: "FLOAT",
  REAL: "FLOAT",
  TIMESTAMP: "TIMESTAMP",
  DATE: "TIMESTAMP",
  BOOLEAN: "BOOLEAN",
};

/** The expression's SQL type; checks columns exist and functions are known (planning errors). */
export function typeOf(e: Expr, scope: Scope): SqlType {
  switch (e.k) {
    case "lit":
      return e.v === null
        ? "VARCHAR"
        : typeof e.v === "number"
          ? Number.isInteger(e.v) && !e.decimal
            ? "BIGINT"
            : "DOUBLE"
          : typeof e.v === "boolean"
            ? "BOOLEAN"
            : "VARCHAR";
    case "ts":
      return "TIMESTAMP";
    case "interval":
      return "BIGINT";
    case "col":
      return scope(e.name, e.table, e.at);
    case "star":
      throw new MsqPlanError("The emulator reads * only as a whole SELECT item", "unsupported");
    case "not":
    case "isnull":
    case "isbool":
    case "in":
    case "between":
    case "like":
      for (const sub of subExprs(e)) typeOf(sub, scope);
      return "BOOLEAN";
    case "neg":
      return typeOf(e.e, scope);
    case "cast": {
      typeOf(e.e, scope);
      const t = CAST_TYPES[e.type];
      if (!t) throw new MsqPlanError(`The emulator reads no CAST to ${e.type}`, "unsupported");
      return t;
    }
    case "case": {
      if (e.operand) typeOf(e.operand, scope);
      // Each WHEN is typed (its columns checked); the results make the CASE's type.
      const types = e.whens.map((w) => {
        typeOf(w.when, scope);
        return typeOf(w.result, scope);
      });
      if (e.else) types.push(typeOf(e.else, scope));
      return widest(types.filter((_, i) => !isNullLiteral(i < e.whens.length ? e.whens[i]?.result : e.else)));
    }
    case "floor": {
      const t = typeOf(e.e, scope);
      if (t !== "TIMESTAMP")
        throw new MsqPlanError(
          `Cannot apply '${e.fn}' to arguments of type '${e.fn}(<${t}> TO <INTERVAL_${e.unit}>)'`,
        );
      if (!UNIT_PERIOD[e.unit]) throw new MsqPlanError(`Invalid time unit [${e.unit}]`);
      return "TIMESTAMP";
    }
    case "bin": {
      const l = typeOf(e.l, scope);
      const r = typeOf(e.r, scope);
      if (e.op === "AND" || e.op === "OR" || ["=", "<>", "<", "<=", ">", ">="].includes(e.op))
        return "BOOLEAN";
      if (e.op === "||") return "VARCHAR";
      if (l === "TIMESTAMP" || r === "TIMESTAMP") return "TIMESTAMP";
      if ((l === "VARCHAR" && !isNullLiteral(e.l)) || (r === "VARCHAR" && !isNullLiteral(e.r)))
        throw new MsqPlanError(
          `Cannot apply '${e.op}' to arguments of type '<${l}> ${e.op} <${r}>'. Supported form(s): '<NUMERIC> ${e.op} <NUMERIC>'`,
          "invalidInput",
          firstAt(e),
        );
      // Remembered for evaluation: two BIGINTs divide as integers.
      e.int = l === "BIGINT" && r === "BIGINT";
      return e.int ? "BIGINT" : l === "FLOAT" && r === "FLOAT" ? "FLOAT" : "DOUBLE";
    }
    case "fn": {
      if (isAggregate(e)) throw new MsqPlanError(`Aggregate ${e.name} is not allowed here`, "invalidInput");
      const types = e.args.map((a) => typeOf(a, scope));
      if (SHARED.has(e.name)) return sharedType(e, types);
      const sig = SCALARS[e.name];
      if (!sig) {
        throw new MsqPlanError(
          KNOWN_ELSEWHERE.has(e.name)
            ? `The emulator does not evaluate ${e.name}`
            : `No match found for function signature ${e.name}(${types.map((t) => `<${t === "BIGINT" || t === "DOUBLE" || t === "FLOAT" ? "NUMERIC" : t === "VARCHAR" ? "CHARACTER" : t}>`).join(", ")})`,
          KNOWN_ELSEWHERE.has(e.name) ? "unsupported" : "invalidInput",
          e.at,
        );
      }
      return sig(types);
    }
  }
}

/** Druid functions the emulator does not evaluate (lookups, JSON, arrays, IPs, geo): unsupported, not unknown. */
const KNOWN_ELSEWHERE = new Set(
  `LOOKUP JSON_VALUE JSON_QUERY JSON_OBJECT PARSE_JSON TRY_PARSE_JSON TO_JSON_STRING JSON_KEYS JSON_PATHS
  MV_TO_ARRAY ARRAY_TO_MV MV_CONTAINS MV_OFFSET MV_ORDINAL MV_LENGTH MV_FILTER_ONLY MV_FILTER_NONE STRING_TO_MV MV_TO_STRING
  ARRAY ARRAY_LENGTH ARRAY_OFFSET ARRAY_ORDINAL ARRAY_CONTAINS ARRAY_OVERLAP ARRAY_TO_STRING STRING_TO_ARRAY ARRAY_CONCAT
  IPV4_MATCH IPV4_PARSE IPV4_STRINGIFY HLL_SKETCH_ESTIMATE THETA_SKETCH_ESTIMATE NESTED_AGG BLOOM_FILTER_TEST
  HUMAN_READABLE_BINARY_BYTE_FORMAT HUMAN_READABLE_DECIMAL_BYTE_FORMAT HUMAN_READABLE_DECIMAL_FORMAT TIME_FORMAT_ISO
  BITWISE_AND BITWISE_OR BITWISE_XOR GEO_POINT`.split(/\s+/),
);

/** Where an expression starts, as far as its nodes know (Calcite points at the operator's first operand). */
export function firstAt(e: Expr): number | undefined {
  if (e.k === "col") return e.at;
  if (e.k === "fn" && e.at !== undefined) return e.at;
  for (const sub of subExprs(e)) {
    const at = firstAt(sub);
    if (at !== undefined) return at;
  }
  return undefined;
}

const isNullLiteral = (e: Expr | null | undefined) => !e || (e.k === "lit" && e.v === null);

export function subExprs(e: Expr): Expr[] {
  switch (e.k) {
    case "not":
    case "neg":
    case "isnull":
    case "isbool":
    case "cast":
    case "floor":
      return [e.e];
    case "in":
      return [e.e, ...e.list];
    case "between":
      return [e.e, e.lo, e.hi];
    case "like":
      return [e.e, e.pattern];
    case "bin":
      return [e.l, e.r];
    case "case":
      return [
        ...(e.operand ? [e.operand] : []),
        ...e.whens.flatMap((w) => [w.when, w.result]),
        ...(e.else ? [e.else] : []),
      ];
    case "fn":
      return e.args;
    default:
      return [];
  }
}

// ------------------------------------------------------------------------------------------- evaluation

const UNIT_PERIOD: Record<string, string> = {
  SECOND: "PT1S",
  MINUTE: "PT1M",
  HOUR: "PT1H",
  DAY: "P1D",
  WEEK: "P1W",
  MONTH: "P1M",
  QUARTER: "P3M",
  YEAR: "P1Y",
};

const UNIT_MS: Record<string, number> = {
  MILLISECOND: 1,
  SECOND: 1000,
  MINUTE: 60_000,
  HOUR: 3_600_000,
  DAY: 86_400_000,
  WEEK: 7 * 86_400_000,
};

function num(v: Value): number | null {
  if (v === null || Array.isArray(v)) return null;
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  const t = String(v).trim();
  if (t === "") return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

function str(v: Value): string | null {
  if (v === null) return null;
  if (Array.isArray(v)) return v.map(String).join(",");
  return String(v);
}

function truth(v: Value): boolean | null {
  if (v === null) return null;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  const n = num(v);
  return n === null ? false : n !== 0;
}

function compare(a: Value, b: Value): number | null {
  if (a === null || b === null) return null;
  if (typeof a === "number" || typeof b === "number") {
    const x = num(a);
    const y = num(b);
    if (x === null || y === null) return null;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function likeRegExp(pattern: string): RegExp {
  let re = "";
  for (const ch of pattern)
    re += ch === "%" ? ".*" : ch === "_" ? "." : ch.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^${re}$`, "s");
}

function periodShift(ms: number, period: string, step: number): number {
  const d = DateTime.fromMillis(ms, { zone: "utc" });
  const m =
    /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(
      period,
    );
  if (!m) throw new MsqPlanError(`Invalid period [${period}]`);
  const [, y, mo, w, dd, h, mi, s] = m.map((x) => Number(x ?? 0));
  return d
    .plus({
      years: (y as number) * step,
      months: (mo as number) * step,
      weeks: (w as number) * step,
      days: (dd as number) * step,
      hours: (h as number) * step,
      minutes: (mi as number) * step,
      seconds: (s as number) * step,
    })
    .toMillis();
}

/** Evaluates one expression over a row (`now`: the query's start, for CURRENT_TIMESTAMP). */
export function evaluate(e: Expr, row: Row, now: number): Value {
  const ev = (x: Expr) => evaluate(x, row, now);
  switch (e.k) {
    case "lit":
      return e.v;
    case "ts":
      return e.v;
    case "interval":
      return (UNIT_MS[e.unit] ?? 0) * e.amount;
    case "col": {
      const v = row[e.name];
      return v === undefined ? null : (v as Value);
    }
    case "star":
      return null;
    case "not": {
      const v = truth(ev(e.e));
      return v === null ? null : !v;
    }
    case "neg": {
      const v = num(ev(e.e));
      return v === null ? null : -v;
    }
    case "isnull": {
      const v = ev(e.e);
      return (v === null) !== e.not;
    }
    case "isbool": {
      const v = truth(ev(e.e));
      return (v === e.v) !== e.not;
    }
    case "in": {
      const v = ev(e.e);
      if (v === null) return null;
      const hit = e.list.some((x) => compare(v, ev(x)) === 0);
      return hit !== e.not;
    }
    case "between": {
      const v = ev(e.e);
      const lo = compare(v, ev(e.lo));
      const hi = compare(v, ev(e.hi));
      if (lo === null || hi === null) return null;
      return (lo >= 0 && hi <= 0) !== e.not;
    }
    case "like": {
      const v = str(ev(e.e));
      const p = str(ev(e.pattern));
      if (v === null || p === null) return null;
      return likeRegExp(p).test(v) !== e.not;
    }
    case "case": {
      if (e.operand) {
        const v = ev(e.operand);
        for (const w of e.whens) if (compare(v, ev(w.when)) === 0) return ev(w.result);
      } else {
        for (const w of e.whens) if (truth(ev(w.when)) === true) return ev(w.result);
      }
      return e.else ? ev(e.else) : null;
    }
    case "cast":
      return cast(ev(e.e), CAST_TYPES[e.type] ?? "VARCHAR");
    case "floor": {
      const v = num(ev(e.e));
      if (v === null) return null;
      const period = UNIT_PERIOD[e.unit] as string;
      const f = floorInZone(v, period, UTC);
      return e.fn === "FLOOR" || f === v ? f : periodShift(f, period, 1);
    }
    case "bin":
      return binary(e.op, e.l, e.r, ev, e.int);
    case "fn":
      return call(e.name, e.args.map(ev), now);
  }
}

function binary(op: string, l: Expr, r: Expr, ev: (x: Expr) => Value, int?: boolean): Value {
  if (op === "AND") {
    const a = truth(ev(l));
    if (a === false) return false;
    const b = truth(ev(r));
    if (b === false) return false;
    return a === null || b === null ? null : true;
  }
  if (op === "OR") {
    const a = truth(ev(l));
    if (a === true) return true;
    const b = truth(ev(r));
    if (b === true) return true;
    return a === null || b === null ? null : false;
  }
  const a = ev(l);
  const b = ev(r);
  if (op === "||") return a === null || b === null ? null : `${str(a)}${str(b)}`;
  if (["=", "<>", "<", "<=", ">", ">="].includes(op)) {
    const c = compare(a, b);
    if (c === null) return null;
    return op === "="
      ? c === 0
      : op === "<>"
        ? c !== 0
        : op === "<"
          ? c < 0
          : op === "<="
            ? c <= 0
            : op === ">"
              ? c > 0
              : c >= 0;
  }
  const x = num(a);
  const y = num(b);
  if (x === null || y === null) return null;
  const integers = int === true;
  switch (op) {
    case "+":
      return x + y;
    case "-":
      return x - y;
    case "*":
      return x * y;
    case "/":
      // Druid's division of two longs is a long division (`docs/querying/sql-operators.md`).
      if (integers) return y === 0 ? null : Math.trunc(x / y);
      return x / y;
    case "%":
      return y === 0 ? null : x % y;
  }
  return null;
}

function cast(v: Value, t: SqlType): Value {
  if (v === null) return null;
  switch (t) {
    case "VARCHAR":
      return str(v);
    case "BIGINT": {
      const n = typeof v === "string" ? num(v) : num(v);
      return n === null ? null : Math.trunc(n);
    }
    case "DOUBLE":
    case "FLOAT":
      return num(v);
    case "TIMESTAMP": {
      if (typeof v === "number") return v;
      const text = String(v).trim();
      const ms = Date.parse(
        /[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text.replace(" ", "T") : `${text.replace(" ", "T")}Z`,
      );
      return Number.isFinite(ms) ? ms : null;
    }
    case "BOOLEAN":
      return truth(v);
    default:
      return v;
  }
}

/**
 * Functions run by their one definition in sql-functions.ts (the Broker engine's), the ingestion's UTC as the
 * query's zone: an MSQ time is epoch millis, a Broker time a Timestamp, the only difference in their values.
 */
const SHARED = new Set([
  "TIME_PARSE",
  "TIME_FLOOR",
  "TIME_SHIFT",
  "TIME_FORMAT",
  "DATE_TRUNC",
  "TIMESTAMPADD",
  "TIMESTAMPDIFF",
  "LOWER",
  "UPPER",
  "CONCAT",
  "CHAR_LENGTH",
  "CHARACTER_LENGTH",
  "LENGTH",
  "STRLEN",
  "ABS",
  "COALESCE",
  "NVL",
  "IFNULL",
  "TEXTCAT",
  "LEFT",
  "RIGHT",
  "TRIM",
  "BTRIM",
  "LTRIM",
  "RTRIM",
  "REPLACE",
  "REVERSE",
  "REPEAT",
  "LPAD",
  "RPAD",
  "STRPOS",
  "POSITION",
  "POWER",
  "SQRT",
  "EXP",
  "LN",
  "LOG10",
  "TIME_CEIL",
  "TIME_EXTRACT",
  "EXTRACT",
  "CEIL",
  "FLOOR",
  "ROUND",
  "TRUNCATE",
  "TRUNC",
  "MOD",
  "DIV",
  "SAFE_DIVIDE",
  "PARSE_LONG",
  "REGEXP_EXTRACT",
  "REGEXP_LIKE",
  "REGEXP_REPLACE",
  "CONTAINS_STRING",
  "ICONTAINS_STRING",
  "TIME_IN_INTERVAL",
  "GREATEST",
  "LEAST",
  "NULLIF",
  "MILLIS_TO_TIMESTAMP",
  "PARSE_JSON",
  "TRY_PARSE_JSON",
  "TO_JSON_STRING",
  "JSON_VALUE",
  "JSON_QUERY",
  "JSON_KEYS",
  "JSON_PATHS",
  "JSON_OBJECT",
  "JSON_MERGE",
]);

/** The planner's type of a Broker-engine type (INTEGER is BIGINT here, CHAR VARCHAR, DATE a TIMESTAMP…). */
function plannerType(t: BrokerSqlType): SqlType {
  if (t === "INTEGER" || t === "BIGINT") return "BIGINT";
  if (t === "DOUBLE" || t === "DECIMAL") return "DOUBLE";
  if (t === "FLOAT" || t === "TIMESTAMP" || t === "BOOLEAN") return t;
  if (t === "DATE") return "TIMESTAMP";
  if (t === "OTHER") return "COMPLEX<json>";
  return "VARCHAR";
}

/** A shared function's arity and result type by its one definition (Calcite's messages for a wrong arity). */
function sharedType(e: Extract<Expr, { k: "fn" }>, types: SqlType[]): SqlType {
  const fn = BROKER_SCALARS[e.name] as (typeof BROKER_SCALARS)[string];
  if (e.args.length < fn.min || e.args.length > fn.max)
    throw new MsqPlanError(
      `Invalid number of arguments to function '${e.name}'. Was expecting ${fn.min === fn.max ? fn.min : `${fn.min} to ${fn.max}`} arguments`,
      "invalidInput",
      e.at,
    );
  const args = types.map((t, i) => ({
    type: (isNullLiteral(e.args[i])
      ? "NULL"
      : t === "ARRAY"
        ? "VARCHAR"
        : t === "COMPLEX<json>"
          ? "OTHER"
          : t) as BrokerSqlType,
  }));
  return plannerType(fn.type(args).type);
}

function shared(name: string, a: Value[]): Value {
  const fn = BROKER_SCALARS[name];
  if (!fn) throw new Error(`${name} is listed as shared but sql-functions.ts has no ${name}`);
  try {
    const out = fn.run(a as BrokerValue[], { timeZone: UTC });
    if (out instanceof Timestamp) return out.ms;
    // The Broker engine holds a BOOLEAN as 1/0, the ingestion planner as a boolean.
    return typeof out === "number" && fn.type([]).type === "BOOLEAN" ? out !== 0 : out;
  } catch (error) {
    if (error instanceof PatternError)
      throw new MsqPlanError(`Unsupported ${name} ${error.message}`, "unsupported");
    if (error instanceof SqlError)
      throw new MsqPlanError(
        error.message,
        error instanceof UnsupportedSqlError ? "unsupported" : "invalidInput",
      );
    throw error;
  }
}

function call(name: string, a: Value[], now: number): Value {
  if (SHARED.has(name)) return shared(name, a);
  const s = (i: number) => str(a[i] ?? null);
  const n = (i: number) => num(a[i] ?? null);
  const nullIn = (...is: number[]) => is.some((i) => a[i] === null || a[i] === undefined);
  switch (name) {
    case "TIMESTAMP_TO_MILLIS":
      return n(0);
    case "CURRENT_TIMESTAMP":
      return now;
    case "CURRENT_DATE":
      return floorInZone(now, "P1D", UTC);
    case "SUBSTRING":
    case "SUBSTR": {
      if (nullIn(0, 1)) return null;
      const text = s(0) as string;
      const from = Math.max(0, (n(1) as number) - 1);
      return a[2] === undefined || a[2] === null
        ? text.slice(from)
        : text.slice(from, from + (n(2) as number));
    }
  }
  throw new MsqPlanError(`The emulator does not evaluate ${name}`, "unsupported");
}

/** A column's input value as its SQL type (a long column's unreadable value is null, as Druid reads it). */
export function inputValue(v: unknown, type: SqlType): Value {
  if (v === undefined || v === null) return null;
  if (type === "COMPLEX<json>") return inputJson(v);
  if (type === "BIGINT") {
    const x = num(v as Value);
    return x === null ? null : Math.trunc(x);
  }
  if (type === "DOUBLE" || type === "FLOAT") return num(v as Value);
  if (type === "ARRAY") return Array.isArray(v) ? (v as Value[]) : [v as Value];
  if (Array.isArray(v)) return v.map((x) => (x === null ? null : String(x)));
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}
