import { DateTime } from "luxon";
import { bucketStart, parseGranularity } from "../core/granularity.js";
import { SqlError, SqlRuntimeError, type SqlType, Timestamp, unsupported, type Value } from "./sql.js";
import { JSON_SCALARS } from "./sql-json.js";
import { MULTIVALUE_SCALARS } from "./sql-multivalue.js";
import { SKETCH_SCALARS } from "./sql-sketches.js";
import {
  floorInZone,
  formatTime,
  IllegalPatternError,
  ISO_PATTERN,
  PatternError,
  parseTime,
  parseTimestampLiteral,
  resolveZone,
  UTC,
  type Zone,
} from "./sql-time.js";

/**
 * Druid SQL's scalar functions the emulator runs (docs/querying/sql-scalar.md, docs/querying/sql-functions.md),
 * each with the result type Druid's operator conversions give it (`sqlTypesHeader`, observed on a real Druid 33).
 */

/** An argument's type as the validator sees it; CHAR literals carry their length (Calcite's CHAR(n)). */
export interface ArgType {
  type: SqlType;
  charLen?: number;
}

export interface FnContext {
  timeZone: Zone;
  /**
   * The arguments' SQL types where the caller knows them (the Broker engine): Druid's integer math (SAFE_DIVIDE
   * of two integers divides as longs) and Calcite's CHAR padding depend on them. Absent, the values decide.
   */
  argTypes?: ArgType[];
}

export interface ScalarFn {
  min: number;
  max: number;
  /**
   * Argument positions where an untyped NULL literal is Calcite's "Illegal use of 'NULL'" (the operand type
   * checker of Druid's operator wants a family an untyped NULL has no type for).
   */
  refusesNull?: readonly number[];
  /**
   * The operand families of Druid's own operator (OperatorConversions' operandTypes) and the form Calcite's
   * "Cannot apply" refusal shows: an argument of another type is refused while planning.
   */
  operands?: { form: string; families: readonly Family[] };
  type(args: ArgType[]): ArgType;
  run(args: Value[], ctx: FnContext): Value;
}

const NUMERIC_RANK: Partial<Record<SqlType, number>> = {
  BOOLEAN: 0,
  INTEGER: 1,
  BIGINT: 2,
  DECIMAL: 3,
  FLOAT: 4,
  DOUBLE: 4,
};

/**
 * Calcite's least restrictive type of CASE branches and COALESCE arguments as Druid reports it: CHAR literals
 * of one length stay CHAR, mixed lengths or any other type with text give VARCHAR, numbers widen
 * INTEGER → BIGINT → DECIMAL → DOUBLE (observed on Druid 33: `CASE … THEN 'x' END` is CHAR, `'big'`/`'small'`
 * branches VARCHAR, `COALESCE(bigint, 0.5)` DECIMAL, `COALESCE(varchar, 1)` VARCHAR).
 */
export function leastRestrictive(types: ArgType[]): ArgType {
  const known = types.filter((t) => t.type !== "NULL");
  if (known.length === 0) return { type: "NULL" };
  if (known.every((t) => t.type === "CHAR")) {
    const lens = new Set(known.map((t) => t.charLen));
    return lens.size === 1 ? { type: "CHAR", charLen: known[0]?.charLen } : { type: "VARCHAR" };
  }
  if (known.some((t) => t.type === "CHAR" || t.type === "VARCHAR")) return { type: "VARCHAR" };
  if (known.every((t) => t.type === "TIMESTAMP")) return { type: "TIMESTAMP" };
  let best: SqlType = "BOOLEAN";
  for (const t of known) {
    const rank = NUMERIC_RANK[t.type];
    if (rank === undefined) return { type: t.type };
    if (rank > (NUMERIC_RANK[best] as number)) best = t.type === "FLOAT" ? "DOUBLE" : t.type;
  }
  return { type: best };
}

export function msOf(v: Exclude<Value, null>): number {
  return v instanceof Timestamp ? v.ms : typeof v === "number" ? v : Date.parse(String(v));
}

/**
 * Text of a value inside an expression (`||`, LIKE, LOWER): a timestamp as Calcite casts it to VARCHAR, SQL's
 * 'yyyy-MM-dd HH:mm:ss' in the query's zone without milliseconds (Druid 33: `__time || ''`, `LOWER(__time)`,
 * `__time LIKE '2026-03-01 %'`).
 */
export function textOf(v: Exclude<Value, null>, zone: Zone): string {
  return v instanceof Timestamp ? sqlTimeText(v.ms, zone, false) : String(v);
}

function sqlTimeText(ms: number, zone: Zone, date: boolean): string {
  return DateTime.fromMillis(ms, { zone: luxonZone(zone) }).toFormat(
    date ? "yyyy-MM-dd" : "yyyy-MM-dd HH:mm:ss",
  );
}

/** Zone ids that name UTC itself (so `resolveZone`'s UTC is not a fallback for them). */
const isUtcId = (z: string) => /^(?:UTC|GMT|Etc\/UTC|Etc\/GMT|[+-]0{1,2}(?::?00)?)$/.test(z);

/**
 * Whether Joda's DateTimeZone.forID knows a zone id: UTC, an offset, or a tz id as the database spells it (the
 * lookup is case-sensitive: a real Druid 33 refused 'utc', which JavaScript's Intl would read).
 */
const jodaKnows = (z: string) =>
  isUtcId(z) || /^[+-]\d/.test(z) || (resolveZone(z) !== UTC && /[A-Z]/.test(z) && z === z.trim());

/**
 * A double as Java's `Double.toString` writes it, which is how Druid turns a DOUBLE into text (`CAST(d AS
 * VARCHAR)`, `d || ''`): at least one fraction digit ("10.0"), and powers of ten at or above 10^7 or below 10^-3
 * as "1.0E20" (a real Druid 33 answered these).
 */
export function javaDouble(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const abs = Math.abs(x);
  if (abs >= 1e-3 && abs < 1e7) {
    const t = String(x);
    return t.includes(".") ? t : `${t}.0`;
  }
  const [mantissa = "", exponent = "0"] = x.toExponential().split("e");
  return `${mantissa.includes(".") ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

const FRACTIONAL = new Set<SqlType>(["DOUBLE", "FLOAT", "DECIMAL"]);

/** Text of a value of a known SQL type: a DOUBLE as Java writes it, a DATE as 'yyyy-MM-dd'; else `textOf`. */
export function typedText(v: Exclude<Value, null>, type: SqlType | undefined, zone: Zone): string {
  if (v instanceof Timestamp) return sqlTimeText(v.ms, zone, type === "DATE");
  return typeof v === "number" && type !== undefined && FRACTIONAL.has(type)
    ? javaDouble(v)
    : textOf(v, zone);
}

/**
 * `CAST(x AS VARCHAR)`: a TIMESTAMP as SQL's 'yyyy-MM-dd HH:mm:ss' and a DATE as 'yyyy-MM-dd' in `zone`, without
 * milliseconds (Druid 33: CAST(__time AS VARCHAR) is '2024-02-29 12:34:56' for 12:34:56.789); a DOUBLE as Java
 * writes it.
 */
export function castText(v: Exclude<Value, null>, from: SqlType | undefined, zone: Zone): string {
  return typedText(v, from, zone);
}

/** Runs a Joda pattern; a letter Joda refuses fails the query as Druid 33 does (500 "Illegal pattern component"). */
function jodaPattern<T>(f: () => T): T {
  try {
    return f();
  } catch (error) {
    if (error instanceof IllegalPatternError) throw new SqlRuntimeError(error.message);
    throw error;
  }
}

const luxonZone = (zone: Zone) => (zone === UTC ? "utc" : zone);

/** Adds `months` calendar months in `zone` (Joda's `plusMonths`: the day is clamped to the month's end). */
export function plusMonths(ms: number, months: number, zone: Zone): number {
  return DateTime.fromMillis(ms, { zone: luxonZone(zone) })
    .plus({ months })
    .toMillis();
}

const PERIOD =
  /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;
const isPeriod = (p: string) => PERIOD.test(p) && p !== "P" && !p.endsWith("T");

/** An ISO period (`P1D`, `PT1H`, `P1M`) added `step` times in `zone`, as `TIME_SHIFT` does (Joda's Period). */
function shift(ms: number, period: string, step: number, zone: Zone): number {
  const m = PERIOD.exec(period);
  // Joda's ISOPeriodFormat refusal, unwrapped (TIME_SHIFT on a real Druid 33: 500 `Invalid format: "P1X"`).
  if (!m || period === "P" || period.endsWith("T")) throw new SqlRuntimeError(`Invalid format: "${period}"`);
  const n = (i: number) => Number(m[i] ?? 0) * step;
  return DateTime.fromMillis(ms, { zone: luxonZone(zone) })
    .plus({
      years: n(1),
      months: n(2),
      weeks: n(3),
      days: n(4),
      hours: n(5),
      minutes: n(6),
      seconds: n(7),
    })
    .toMillis();
}

/**
 * `DATE_TRUNC` units (Druid's `DateTruncOperatorConversion` TRUNC_PERIOD_MAP, case-insensitive); any other is
 * "Operator[DATE_TRUNC] cannot truncate to[…]" (observed on Druid 33).
 */
const TRUNC_PERIODS: Record<string, string> = {
  microseconds: "PT0.001S",
  milliseconds: "PT0.001S",
  second: "PT1S",
  minute: "PT1M",
  hour: "PT1H",
  day: "P1D",
  week: "P1W",
  month: "P1M",
  quarter: "P3M",
  year: "P1Y",
  decade: "P10Y",
  century: "P100Y",
  millennium: "P1000Y",
};

/** `TIMESTAMPDIFF` units: fixed-length ones in milliseconds, calendar ones in months (Calcite's TimeUnit). */
const DIFF_MS: Record<string, number> = {
  MILLISECOND: 1,
  SECOND: 1000,
  MINUTE: 60_000,
  HOUR: 3_600_000,
  DAY: 86_400_000,
  WEEK: 7 * 86_400_000,
};
const DIFF_MONTHS: Record<string, number> = { MONTH: 1, QUARTER: 3, YEAR: 12 };

/** Whole months from a to b, as Joda's `Months.monthsBetween` counts them (Jan 31 → Mar 1 is one month). */
function monthsBetween(a: number, b: number, zone: Zone): number {
  const x = DateTime.fromMillis(a, { zone: luxonZone(zone) });
  const y = DateTime.fromMillis(b, { zone: luxonZone(zone) });
  let months = (y.year - x.year) * 12 + (y.month - x.month);
  if (months > 0 && x.plus({ months }).toMillis() > b) months--;
  else if (months < 0 && x.plus({ months }).toMillis() < b) months++;
  return months;
}

const same = (a: ArgType[]): ArgType => a[0] ?? { type: "VARCHAR" };
/** A math function's type: its argument's, text read as DECIMAL (Druid 33: ABS('5') and ROUND('2.5') are DECIMAL). */
const sameNumber = (a: ArgType[]): ArgType =>
  a[0]?.type === "CHAR" || a[0]?.type === "VARCHAR" ? { type: "DECIMAL" } : same(a);
const fixed = (type: SqlType) => (): ArgType => ({ type });
/**
 * A function's own CHAR/VARCHAR: of a CHAR literal it stays CHAR of that length (Calcite's ARG0 type: Druid 33
 * answers CHAR for `LOWER('AbC')` and `SUBSTRING('abc', 5)`), of an untyped NULL it is NULL.
 */
const textLike = (a: ArgType[]): ArgType =>
  a[0]?.type === "CHAR"
    ? { type: "CHAR", charLen: a[0].charLen }
    : a[0]?.type === "NULL"
      ? { type: "NULL" }
      : { type: "VARCHAR" };

/**
 * A CHAR(n) result as Calcite folds it: blank-padded to n (Druid 33: `SUBSTRING('hello', 2)` is 'ello ').
 * Only where the caller knows the argument is a CHAR literal.
 */
function charPadded(v: string | null, ctx: FnContext): string | null {
  const t = ctx.argTypes?.[0];
  return v !== null && t?.type === "CHAR" && t.charLen !== undefined ? v.padEnd(t.charLen, " ") : v;
}

/** An argument's text; a DOUBLE argument as Java writes it where the caller gave the types. */
const str = (v: Value, ctx: FnContext, i?: number): string | null =>
  v === null ? null : typedText(v, i === undefined ? undefined : ctx.argTypes?.[i]?.type, ctx.timeZone);
/**
 * A zone argument (TIME_FLOOR, TIME_SHIFT, TIME_EXTRACT, TIME_PARSE): an id Joda does not know is UTC (a real
 * Druid 33 floored, shifted and extracted in UTC for 'Mars/Olympus'; TIME_FORMAT refuses it, see there).
 */
const zoneArg = (v: Value | undefined, ctx: FnContext): Zone =>
  v === undefined || v === null ? ctx.timeZone : resolveZone(String(v));

export const SCALARS: Record<string, ScalarFn> = {
  TIME_FLOOR: {
    min: 2,
    max: 4,
    type: fixed("TIMESTAMP"),
    run([t, period, origin, zone], ctx) {
      if (t === null || t === undefined) return null;
      const p = String(period);
      // TimestampFloorExprMacro refuses a period Joda cannot read while the expression is built (Druid 33: 400).
      if (!isPeriod(p))
        throw new SqlError(
          `Invalid period['${p}'] specified for expression[timestamp_floor(${msOf(t)}, '${p}', ${origin === undefined || origin === null ? "null" : msOf(origin)}, '${zoneArg(zone, ctx)}')]: [Invalid format: "${p}"]`,
        );
      if (origin !== undefined && origin !== null) {
        // With an origin, Druid floors with PeriodGranularity(period, origin, zone): buckets counted from it.
        const g = parseGranularity({
          type: "period",
          period: String(period),
          origin: new Date(msOf(origin)).toISOString(),
          timeZone: zoneArg(zone, ctx),
        });
        return new Timestamp(bucketStart(g, msOf(t)));
      }
      return new Timestamp(floorInZone(msOf(t), String(period), zoneArg(zone, ctx)));
    },
  },
  TIME_SHIFT: {
    min: 3,
    max: 4,
    type: fixed("TIMESTAMP"),
    run([t, period, step, zone], ctx) {
      if (t === null || t === undefined) return null;
      // TimestampShiftExprMacro reads a null step as 0: the time unshifted (Druid 33, a null long column).
      if (step === null || step === undefined) return t;
      return new Timestamp(shift(msOf(t), String(period), Number(step), zoneArg(zone, ctx)));
    },
  },
  DATE_TRUNC: {
    min: 2,
    max: 2,
    type: fixed("TIMESTAMP"),
    run([unit, t], ctx) {
      const period = TRUNC_PERIODS[String(unit).toLowerCase()];
      if (!period) throw new SqlError(`Operator[DATE_TRUNC] cannot truncate to[${String(unit)}]`);
      if (t === null || t === undefined) return null;
      return new Timestamp(floorInZone(msOf(t), period, ctx.timeZone));
    },
  },
  TIMESTAMPDIFF: {
    min: 3,
    max: 3,
    type: fixed("INTEGER"),
    run([unit, a, b], ctx) {
      if (a === null || b === null || a === undefined || b === undefined) return null;
      const u = String(unit);
      const diff = msOf(b) - msOf(a);
      // Calcite counts sub-second units from whole seconds (a real Druid 33: 1.5 s is 1000 MILLISECOND and
      // 1000000 MICROSECOND), and the INTEGER result wraps as Java's int does.
      if (u === "MILLISECOND" || u === "MICROSECOND")
        return (Math.trunc(diff / 1000) * (u === "MILLISECOND" ? 1000 : 1_000_000)) | 0;
      const ms = DIFF_MS[u];
      if (ms !== undefined) return Math.trunc(diff / ms) | 0;
      const months = DIFF_MONTHS[u];
      if (months === undefined) throw unsupported(`TIMESTAMPDIFF(${u}, …)`);
      return Math.trunc(monthsBetween(msOf(a), msOf(b), ctx.timeZone) / months) | 0;
    },
  },
  TIMESTAMPADD: {
    min: 3,
    max: 3,
    type: fixed("TIMESTAMP"),
    run([unit, n, t], ctx) {
      if (n === null || t === null || n === undefined || t === undefined) return null;
      const u = String(unit);
      // Microseconds land on whole milliseconds (a real Druid 33: 1500 MICROSECOND adds 1 ms).
      if (u === "MICROSECOND") return new Timestamp(msOf(t) + Math.trunc(Number(n) / 1000));
      const ms = DIFF_MS[u];
      if (ms !== undefined) return new Timestamp(msOf(t) + Number(n) * ms);
      const months = DIFF_MONTHS[u];
      if (months === undefined) throw unsupported(`TIMESTAMPADD(${u}, …)`);
      return new Timestamp(plusMonths(msOf(t), Number(n) * months, ctx.timeZone));
    },
  },
  TIME_FORMAT: {
    min: 1,
    max: 3,
    type: fixed("VARCHAR"),
    run([t, pattern, zone], ctx) {
      if (t === null || t === undefined) return null;
      // TimestampFormatExprMacro reads its zone with Joda's DateTimeZone.forID, which refuses an unknown id
      // (Druid 33: 500 "The datetime zone id 'Mars/Olympus' is not recognised").
      if (zone !== undefined && zone !== null && !jodaKnows(String(zone)))
        throw new SqlRuntimeError(`The datetime zone id '${String(zone)}' is not recognised`);
      return jodaPattern(() =>
        formatTime(
          msOf(t),
          pattern === undefined || pattern === null ? ISO_PATTERN : String(pattern),
          zoneArg(zone, ctx),
        ),
      );
    },
  },
  TIME_PARSE: {
    min: 1,
    max: 3,
    type: fixed("TIMESTAMP"),
    run([text, pattern, zone], ctx) {
      if (text === null || text === undefined) return null;
      const p = pattern === undefined || pattern === null ? null : String(pattern);
      let t = textOf(text, ctx.timeZone);
      // Without a pattern Druid reads ISO 8601 with a blank for the 'T' too (Druid 33: '2026-03-02 13:45:12').
      if (p === null) t = t.trim().replace(/^(\d{4}-\d\d-\d\d) (?=\d)/, "$1T");
      const ms = jodaPattern(() => parseTime(t, p, zoneArg(zone, ctx)));
      return ms === null ? null : new Timestamp(ms);
    },
  },
  MILLIS_TO_TIMESTAMP: {
    min: 1,
    max: 1,
    type: fixed("TIMESTAMP"),
    run: ([v]) => (v === null || v === undefined ? null : new Timestamp(Number(v))),
  },
  TIMESTAMP_TO_MILLIS: {
    min: 1,
    max: 1,
    type: fixed("BIGINT"),
    run: ([v]) => (v instanceof Timestamp ? v.ms : null),
  },
  LOWER: {
    min: 1,
    max: 1,
    type: textLike,
    run: ([v], ctx) => str(v ?? null, ctx, 0)?.toLowerCase() ?? null,
  },
  UPPER: {
    min: 1,
    max: 1,
    type: textLike,
    run: ([v], ctx) => str(v ?? null, ctx, 0)?.toUpperCase() ?? null,
  },
  CHAR_LENGTH: {
    min: 1,
    max: 1,
    type: fixed("INTEGER"),
    run: ([v], ctx) => str(v ?? null, ctx, 0)?.length ?? null,
  },
  CONCAT: {
    min: 1,
    max: Number.POSITIVE_INFINITY,
    type: fixed("VARCHAR"),
    // Druid's concat expression sees a TIMESTAMP as its epoch milliseconds (Druid 33: CONCAT(__time, '!')).
    run: (args, ctx) =>
      args.some((a) => a === null)
        ? null
        : args.map((a, i) => (a instanceof Timestamp ? String(a.ms) : (str(a, ctx, i) as string))).join(""),
  },
  ABS: {
    min: 1,
    max: 1,
    type: sameNumber,
    run: ([v]) => (v === null || v === undefined ? null : Math.abs(Number(v))),
  },
  /**
   * `SUBSTRING(s, start[, length])`, 1-based (Function.SubstringFunc via SubstringOperatorConversion). A real
   * Druid 33 answers null past the end, fails a start below 1 inside the function ("Function[substring]
   * encountered unknown exception.", 500 DEFENSIVE) and a null start or length unboxing it (500). A negative
   * length is the rest of the text and 0 none (Druid 33: SUBSTRING(s, 1, -1) is s); on a bare column Druid plans
   * a substring extractionFn instead, which refuses a length below 1 — the emulator does not tell the two apart.
   */
  SUBSTRING: {
    min: 2,
    max: 3,
    type: textLike,
    run([s, start, length], ctx) {
      if (s === null || s === undefined) return null;
      if (start === null || start === undefined || length === null)
        throw new SqlRuntimeError('Cannot invoke "java.lang.Number.intValue()" because "value" is null');
      const text = str(s, ctx) as string;
      const from = Math.trunc(Number(start)) - 1;
      const len = length === undefined ? null : Math.trunc(Number(length));
      if (from < 0)
        throw new SqlRuntimeError("Function[substring] encountered unknown exception.", "defensive");
      if (from >= text.length) return null;
      return charPadded(len === null || len < 0 ? text.slice(from) : text.slice(from, from + len), ctx);
    },
  },
  COALESCE: {
    min: 1,
    max: Number.POSITIVE_INFINITY,
    type: leastRestrictive,
    run: (args) => args.find((a) => a !== null) ?? null,
  },
  NULLIF: {
    min: 2,
    max: 2,
    type: same,
    run: ([a, b]) =>
      a === null || a === undefined ? null : b !== null && compare(a, b as Value) === 0 ? null : a,
  },
};
/** A numeric argument: a number, or text that reads as one (blank text is null, as Druid's expressions read it). */
function numArg(v: Value | undefined): number | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Timestamp) return v.ms;
  if (typeof v === "number") return v;
  const t = String(v).trim();
  if (t === "") return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/** A function of text arguments and numbers: null when a required one is null (Druid's string functions). */
function textFn(
  min: number,
  max: number,
  type: SqlType,
  run: (text: Array<string | null>, nums: Array<number | null>) => Value,
): ScalarFn {
  return {
    min,
    max,
    type: fixed(type),
    run: (args, ctx) => {
      const text = args.map((a, i) => str(a ?? null, ctx, i));
      if (text.slice(0, min).some((t) => t === null)) return null;
      return run(
        text,
        args.map((a) => numArg(a)),
      );
    },
  };
}

/** A one-argument DOUBLE function of a number (Druid's math functions: docs/querying/sql-scalar.md). */
const mathFn = (f: (x: number) => number): ScalarFn => ({
  min: 1,
  max: 1,
  type: fixed("DOUBLE"),
  run: ([v]) => {
    const x = numArg(v);
    return x === null ? null : f(x);
  },
});

/**
 * LEFT/RIGHT's count: a negative one fails the query (Function.LeftFunc/RightFunc: "needs a positive integer as
 * the second argument"; Druid 33 gave 400 for a constant and 500 on a column — the emulator answers 500).
 */
function nonNegative(fn: string, n: number): number {
  if (n < 0) throw new SqlRuntimeError(`Function[${fn}] needs a positive integer as the second argument`);
  return n;
}

/** Trims `chars` (a space by default) from the start and/or end, as BTRIM/LTRIM/RTRIM do. */
function trim(text: string, chars: string, start: boolean, end: boolean): string {
  let from = 0;
  let to = text.length;
  while (start && from < to && chars.includes(text[from] as string)) from++;
  while (end && to > from && chars.includes(text[to - 1] as string)) to--;
  return text.slice(from, to);
}

// String and numeric functions (docs/querying/sql-scalar.md, string and numeric functions).
Object.assign(SCALARS, {
  TEXTCAT: textFn(2, 2, "VARCHAR", ([a, b]) => `${a}${b}`),
  LEFT: textFn(2, 2, "VARCHAR", ([s], [, n = null]) =>
    n === null ? null : (s as string).slice(0, nonNegative("left", n)),
  ),
  RIGHT: textFn(2, 2, "VARCHAR", ([s], [, n = null]) =>
    n === null ? null : nonNegative("right", n) === 0 ? "" : (s as string).slice(-n),
  ),
  BTRIM: textFn(1, 2, "VARCHAR", ([s, c]) => trim(s as string, c ?? " ", true, true)),
  LTRIM: textFn(1, 2, "VARCHAR", ([s, c]) => trim(s as string, c ?? " ", true, false)),
  RTRIM: textFn(1, 2, "VARCHAR", ([s, c]) => trim(s as string, c ?? " ", false, true)),
  TRIM: textFn(1, 1, "VARCHAR", ([s]) => trim(s as string, " ", true, true)),
  /**
   * Java's `String.replace`: an empty target matches before every character and at the end ('abc' → 'XaXbXcX');
   * a null target or replacement fails inside the function (Druid 33: 500 DEFENSIVE).
   */
  REPLACE: {
    min: 3,
    max: 3,
    type: fixed("VARCHAR"),
    run: ([s, from, to], ctx) => {
      if (s === null || s === undefined) return null;
      if (from === null || to === null || from === undefined || to === undefined)
        throw new SqlRuntimeError("Function[replace] encountered unknown exception.", "defensive");
      const target = str(from, ctx) as string;
      const by = str(to, ctx) as string;
      return (str(s, ctx) as string).replaceAll(target, () => by);
    },
  },
  REVERSE: textFn(1, 1, "VARCHAR", ([s]) => [...(s as string)].reverse().join("")),
  /** Function.RepeatStringFunc: a count below 1 is null (Druid 33: REPEAT(s, 0) and REPEAT(s, -1) on a column). */
  REPEAT: textFn(2, 2, "VARCHAR", ([s], [, n = null]) =>
    n === null || n < 1 ? null : (s as string).repeat(n),
  ),
  LPAD: textFn(2, 3, "VARCHAR", ([s, , pad], [, n = null]) => padded(s as string, n, pad, true)),
  RPAD: textFn(2, 3, "VARCHAR", ([s, , pad], [, n = null]) => padded(s as string, n, pad, false)),
  STRPOS: textFn(2, 2, "INTEGER", ([s, needle]) => (s as string).indexOf(needle as string) + 1),
  /** `POSITION(needle IN haystack [FROM start])`: 1-based, 0 when absent. */
  POSITION: textFn(2, 3, "INTEGER", ([needle, hay], [, , from = null]) => {
    const start = Math.max(0, (from ?? 1) - 1);
    return (hay as string).indexOf(needle as string, start) + 1;
  }),
  POWER: {
    min: 2,
    max: 2,
    type: fixed("DOUBLE"),
    run: ([x, y]) => {
      const a = numArg(x);
      const b = numArg(y);
      return a === null || b === null ? null : a ** b;
    },
  },
  SQRT: mathFn(Math.sqrt),
  EXP: mathFn(Math.exp),
  LN: mathFn(Math.log),
  LOG10: mathFn(Math.log10),
} satisfies Record<string, ScalarFn>);

/** A numeric function of the first argument's own type (FLOOR(BIGINT) is BIGINT, of DOUBLE is DOUBLE). */
function sameTypeFn(
  min: number,
  max: number,
  f: (x: number, args: Array<number | null>) => number | null,
): ScalarFn {
  return {
    min,
    max,
    type: sameNumber,
    run: (args) => {
      const nums = args.map((a) => numArg(a));
      const x = nums[0] ?? null;
      return x === null ? null : f(x, nums);
    },
  };
}

const INTEGRAL = new Set<SqlType>(["INTEGER", "BIGINT", "BOOLEAN"]);

/**
 * Whether both operands are integers to Druid's expressions (long math): by their SQL types where known, else
 * by the values (MSQ's engine passes none).
 */
function longMath(ctx: FnContext, x: number, y: number): boolean {
  const t = ctx.argTypes;
  if (t && t.length >= 2) return t.slice(0, 2).every((a) => INTEGRAL.has(a.type));
  return Number.isInteger(x) && Number.isInteger(y);
}

/** Two numbers, null when either is null (MOD, DIV, SAFE_DIVIDE); `f` sees whether they divide as longs. */
function divFn(
  type: (a: ArgType[]) => ArgType,
  f: (x: number, y: number, longs: boolean) => Value,
): ScalarFn {
  return {
    min: 2,
    max: 2,
    type,
    run: ([a, b], ctx) => {
      const x = numArg(a);
      const y = numArg(b);
      return x === null || y === null ? null : f(x, y, longMath(ctx, x, y));
    },
  };
}

/**
 * MOD's type as Druid 33 reports it: DECIMAL when either operand is not an integer, else the divisor's type
 * (MOD(BIGINT, 3) is INTEGER, MOD(3, BIGINT) BIGINT).
 */
const modType = (a: ArgType[]): ArgType =>
  a.some((t) => t.type === "DOUBLE" || t.type === "FLOAT" || t.type === "DECIMAL")
    ? { type: "DECIMAL" }
    : (a[1] ?? { type: "INTEGER" });

/**
 * A field of a time in `zone` (`EXTRACT(unit FROM t)`, `TIME_EXTRACT(t, unit, zone)`): Druid's
 * TimestampExtractExprMacro units. DOW and ISODOW are ISO (Monday 1); EPOCH is whole seconds toward zero (Java's
 * long division); DECADE is year / 10, CENTURY and MILLENNIUM round the year up (2026: 202, 21, 3). ISOYEAR is
 * the calendar year: a real Druid 33 answered 2027 for 2027-01-01, a day of ISO week 53 of 2026.
 */
function extract(ms: number, unit: string, zone: Zone): number | null {
  const d = DateTime.fromMillis(ms, { zone: luxonZone(zone) });
  const parts: Record<string, number> = {
    EPOCH: Math.trunc(ms / 1000),
    MILLISECOND: d.millisecond,
    SECOND: d.second,
    MINUTE: d.minute,
    HOUR: d.hour,
    DAY: d.day,
    DOW: d.weekday,
    ISODOW: d.weekday,
    DOY: d.ordinal,
    WEEK: d.weekNumber,
    MONTH: d.month,
    QUARTER: d.quarter,
    YEAR: d.year,
    ISOYEAR: d.year,
    DECADE: Math.trunc(d.year / 10),
    CENTURY: Math.ceil(d.year / 100),
    MILLENNIUM: Math.ceil(d.year / 1000),
  };
  const u = unit.toUpperCase();
  // Unit.valueOf's refusal of a name it does not have (Druid 33: 500, the enum constant named).
  if (!(u in parts))
    throw new SqlRuntimeError(
      `No enum constant org.apache.druid.query.expression.TimestampExtractExprMacro.Unit.${u}`,
    );
  return parts[u] ?? null;
}

/**
 * ROUND to `scale` digits as Druid's `round` does: `BigDecimal.valueOf(x).setScale(scale, RoundingMode.HALF_UP)`,
 * so halves go away from zero and the double's shortest decimal text is what is rounded (Druid 33:
 * ROUND(-2.5) = -3, ROUND(1.005, 2) = 1.01, ROUND(-15, -1) = -20).
 */
function round(x: number, scale: number): number {
  if (!Number.isFinite(x)) return x;
  // Shift the decimal point by text, not by a multiplication that would change the double.
  const shiftText = (v: number, n: number) => {
    const [digits, exp = "0"] = String(v).split("e");
    return Number(`${digits}e${Number(exp) + n}`);
  };
  const back = shiftText(Math.round(shiftText(Math.abs(x), scale)), -scale);
  return x < 0 ? -back : back;
}

// Time, numeric and parsing functions (docs/querying/sql-scalar.md).
Object.assign(SCALARS, {
  /** TIME_CEIL(t, period[, origin[, zone]]): the bucket's end unless t starts one (TIME_FLOOR shifted once). */
  TIME_CEIL: {
    min: 2,
    max: 4,
    type: fixed("TIMESTAMP"),
    run(args, ctx) {
      const floor = (SCALARS.TIME_FLOOR as ScalarFn).run(args, ctx);
      if (!(floor instanceof Timestamp)) return floor;
      const t = msOf(args[0] as Exclude<Value, null>);
      if (floor.ms === t) return floor;
      return new Timestamp(shift(floor.ms, String(args[1]), 1, zoneArg(args[3], ctx)));
    },
  },
  EXTRACT: {
    min: 2,
    max: 2,
    type: fixed("BIGINT"),
    run: ([unit, t], ctx) =>
      t === null || t === undefined ? null : extract(msOf(t), String(unit), ctx.timeZone),
  },
  /** TIME_EXTRACT(t, unit[, zone]): Druid 33 refuses it without a unit. */
  TIME_EXTRACT: {
    min: 2,
    max: 3,
    type: fixed("BIGINT"),
    run: ([t, unit, zone], ctx) =>
      t === null || t === undefined
        ? null
        : extract(
            msOf(t),
            unit === undefined || unit === null ? "MILLISECOND" : String(unit),
            zoneArg(zone, ctx),
          ),
  },
  CEIL: sameTypeFn(1, 1, Math.ceil),
  FLOOR: sameTypeFn(1, 1, Math.floor),
  ROUND: sameTypeFn(1, 2, (x, [, scale]) => round(x, scale ?? 0)),
  TRUNCATE: sameTypeFn(1, 2, (x, [, scale]) => Math.trunc(x * 10 ** (scale ?? 0)) / 10 ** (scale ?? 0)),
  /** Java's `%`: long division by zero throws (Druid 33: 500 "/ by zero"), a double one is NaN. */
  MOD: divFn(modType, (x, y, longs) => {
    if (longs && y === 0) throw new SqlRuntimeError("/ by zero");
    return x % y;
  }),
  /** Function.DivFunc: long division; by zero it fails inside the function (Druid 33: 500 DEFENSIVE). */
  DIV: divFn(fixed("BIGINT"), (x, y) => {
    if (Math.trunc(y) === 0)
      throw new SqlRuntimeError("Function[div] encountered unknown exception.", "defensive");
    return Math.trunc(x / y);
  }),
  /** Function.SafeDivide: null for a zero divisor, long division when both are integers (SAFE_DIVIDE(10, 4) = 2). */
  SAFE_DIVIDE: divFn(leastRestrictive, (x, y, longs) => (y === 0 ? null : longs ? Math.trunc(x / y) : x / y)),
  /**
   * PARSE_LONG(text[, radix]): Java's `Long.parseLong` — the whole text in that radix, an optional sign, no
   * blanks — else null; with radix 16 a leading "0x" is dropped first (Function.ParseLong; Druid 33:
   * '12x' → null, '0x1A' → null in radix 10, 26 in radix 16).
   */
  PARSE_LONG: {
    min: 1,
    max: 2,
    type: fixed("BIGINT"),
    run: ([s, radix], ctx) => {
      // A null radix is a null answer (Druid 33: PARSE_LONG('1', NULL)).
      if (s === null || s === undefined || radix === null) return null;
      const base = numArg(radix) ?? 10;
      let text = str(s, ctx) as string;
      if (base === 16 && /^0x/i.test(text)) text = text.slice(2);
      const digits = "0123456789abcdefghijklmnopqrstuvwxyz".slice(0, base);
      const m = /^([+-]?)(.+)$/.exec(text);
      if (!m || ![...(m[2] as string).toLowerCase()].every((c) => digits.includes(c))) return null;
      const v = Number.parseInt(text, base);
      return Number.isFinite(v) ? v : null;
    },
  },
} satisfies Record<string, ScalarFn>);

/**
 * A Java regular expression as JavaScript reads it (the common syntax is shared); one that does not compile
 * fails the query as Druid's PatternSyntaxException does (500), with JavaScript's description of the fault.
 */
function regex(pattern: string, flags = ""): RegExp {
  try {
    return new RegExp(pattern, flags);
  } catch (error) {
    throw new SqlRuntimeError((error as Error).message);
  }
}

/** A BOOLEAN as the Broker engine holds one (1/0). */
const truth = (b: boolean): Value => (b ? 1 : 0);

// Regular-expression and containment functions (docs/querying/sql-scalar.md, string functions), and
// TIME_IN_INTERVAL (date and time functions): an ISO 8601 `start/end` or `start/period`, start inclusive.
Object.assign(SCALARS, {
  /**
   * REGEXP_EXTRACT(expr, pattern[, index]): the first match's group `index` (0: the whole match), else null; a
   * group the pattern does not have fails as Java's Matcher.group does (Druid 33: 500 "No group 3").
   */
  REGEXP_EXTRACT: textFn(2, 3, "VARCHAR", ([s, pattern], [, , index = null]) => {
    const re = regex(pattern as string);
    const group = index ?? 0;
    const m = re.exec(s as string);
    if (m && group >= m.length) throw new SqlRuntimeError(`No group ${group}`);
    return m ? (m[group] ?? null) : null;
  }),
  /** REGEXP_LIKE(expr, pattern): whether the pattern matches anywhere in the text. */
  REGEXP_LIKE: textFn(2, 2, "BOOLEAN", ([s, pattern]) => truth(regex(pattern as string).test(s as string))),
  /** REGEXP_REPLACE: Java's Matcher.replaceAll, its replacement syntax (`$1`, `$0` the match, `\$` a dollar). */
  REGEXP_REPLACE: textFn(3, 3, "VARCHAR", ([s, pattern, by]) =>
    (s as string).replace(regex(pattern as string, "g"), (...m: unknown[]) =>
      (by as string).replace(/\\(.)|\$(\d)/g, (_, escaped: string | undefined, group: string | undefined) =>
        escaped !== undefined ? escaped : String(m[Number(group)] ?? ""),
      ),
    ),
  ),
  CONTAINS_STRING: textFn(2, 2, "BOOLEAN", ([s, needle]) => truth((s as string).includes(needle as string))),
  ICONTAINS_STRING: textFn(2, 2, "BOOLEAN", ([s, needle]) =>
    truth((s as string).toLowerCase().includes((needle as string).toLowerCase())),
  ),
  TIME_IN_INTERVAL: {
    min: 2,
    max: 2,
    type: fixed("BOOLEAN"),
    run: ([t, interval], ctx) => {
      if (t === null || t === undefined || interval === null || interval === undefined) return null;
      const text = String(interval);
      const [a = "", b, extra] = text.split("/");
      // Joda's Interval in the query's zone: a time without an offset is local there, either end may be a period
      // (Druid 33: '2026-03-01/P1D' under Asia/Kolkata starts at 2026-02-28T18:30Z; 'P1D/2026-03-02' is read).
      const instant = (x: string) => {
        const d = DateTime.fromISO(x, { zone: luxonZone(ctx.timeZone) });
        return d.isValid ? d.toMillis() : Number.NaN;
      };
      const bad = () => new SqlError(`Invalid interval [${text}]`);
      if (b === undefined || extra !== undefined || (a.startsWith("P") && b.startsWith("P"))) throw bad();
      const start = a.startsWith("P") ? shift(instant(b), a, -1, ctx.timeZone) : instant(a);
      const end = b.startsWith("P") ? shift(start, b, 1, ctx.timeZone) : instant(b);
      if (!Number.isFinite(start) || !Number.isFinite(end)) throw bad();
      const ms = msOf(t);
      return truth(ms >= start && ms < end);
    },
  },
} satisfies Record<string, ScalarFn>);

/**
 * LPAD/RPAD (Druid's StringUtils.lpad/rpad): cut to `len` when longer; a null or empty pad leaves shorter text
 * as it is. A length of 0 is null and a negative one empty text (Druid 33, on a column).
 */
function padded(text: string, len: number | null, pad: string | null | undefined, left: boolean): Value {
  if (len === null || len === 0) return null;
  if (text.length >= len) return text.slice(0, Math.max(0, len));
  const p = pad === undefined ? " " : pad;
  if (p === null) return null;
  if (p === "") return text;
  return left ? text.padStart(len, p) : text.padEnd(len, p);
}

/**
 * GREATEST/LEAST's type (Druid's GreatestOperatorConversion/LeastOperatorConversion, as Druid 33 reports it):
 * text when any argument is text (the text arguments' common type), else DOUBLE when any is fractional, else
 * BIGINT — `GREATEST(1, 5)` is BIGINT, `GREATEST(1, 2.5)` DOUBLE, `LEAST(1, '0')` CHAR.
 */
function extremeType(a: ArgType[]): ArgType {
  const text = a.filter((t) => t.type === "CHAR" || t.type === "VARCHAR");
  if (text.length > 0) return leastRestrictive(text);
  if (a.length > 0 && a.every((t) => t.type === "NULL")) return { type: "NULL" };
  if (a.some((t) => t.type === "TIMESTAMP" || t.type === "DATE")) return leastRestrictive(a);
  return a.some((t) => t.type === "DOUBLE" || t.type === "FLOAT" || t.type === "DECIMAL")
    ? { type: "DOUBLE" }
    : { type: "BIGINT" };
}

/**
 * GREATEST/LEAST: the largest/smallest non-null argument, null when all are null; with any text argument all
 * compare as text and the answer is text (Druid 33: `GREATEST(s, n)` is '0' for s = '' and n = 0).
 */
function extreme(sign: 1 | -1): ScalarFn {
  return {
    min: 1,
    max: Number.POSITIVE_INFINITY,
    type: extremeType,
    run: (args, ctx) => {
      const values = args.filter((v): v is Exclude<Value, null> => v !== null && v !== undefined);
      if (values.length === 0) return null;
      const asText = ctx.argTypes
        ? ctx.argTypes.some((t) => t.type === "CHAR" || t.type === "VARCHAR")
        : values.some((v) => typeof v === "string");
      if (asText) {
        const texts = values.map((v) => textOf(v, ctx.timeZone));
        return texts.reduce((x, y) => ((x < y ? -1 : x > y ? 1 : 0) * sign >= 0 ? x : y));
      }
      return values.reduce((x, y) => ((compare(x, y) ?? 0) * sign >= 0 ? x : y));
    },
  };
}
/** Calcite's SqlTypeFamily of an operand, as Druid's operators declare them. */
export type Family = "CHARACTER" | "INTEGER" | "NUMERIC" | "EXACT_NUMERIC" | "TIMESTAMP";

const FAMILY_TYPES: Record<Family, readonly SqlType[]> = {
  CHARACTER: ["CHAR", "VARCHAR"],
  INTEGER: ["INTEGER", "BIGINT"],
  EXACT_NUMERIC: ["INTEGER", "BIGINT", "DECIMAL"],
  NUMERIC: ["INTEGER", "BIGINT", "DECIMAL", "DOUBLE", "FLOAT"],
  TIMESTAMP: ["TIMESTAMP"],
};

/** A type as Calcite writes it in "Cannot apply" (a CHAR literal with its length, __time as TIMESTAMP(3)). */
function calciteType(t: ArgType): string {
  if (t.type === "CHAR") return `CHAR(${t.charLen ?? 1})`;
  if (t.type === "TIMESTAMP") return "TIMESTAMP(3)";
  return t.type;
}

/**
 * Calcite's refusal of arguments outside the operator's families (Druid 33: `TIME_FLOOR(s, 'P1D')` of a VARCHAR
 * column, `LEFT(n, 2)` of a BIGINT, `TIME_FLOOR(CAST(__time AS DATE), …)`), or null when they fit. An untyped
 * NULL fits any family (where it does not, `refusesNull` said so first).
 */
export function operandRefusal(fn: ScalarFn, args: ArgType[]): string | null {
  if (!fn.operands) return null;
  const { form, families } = fn.operands;
  const fits = args.every((a, i) => {
    const family = families[i];
    return family === undefined || a.type === "NULL" || FAMILY_TYPES[family].includes(a.type);
  });
  if (fits) return null;
  const shown = form.slice(0, form.indexOf("("));
  return `Cannot apply '${shown}' to arguments of type '${shown}(${args.map((a) => `<${calciteType(a)}>`).join(", ")})'. Supported form(s): '${form}'`;
}

/** Druid 33's operand forms (its "Supported form(s)"), by function. */
const OPERANDS: Record<string, { form: string; families: readonly Family[] }> = {
  LEFT: { form: "LEFT(<CHARACTER>, <INTEGER>)", families: ["CHARACTER", "INTEGER"] },
  RIGHT: { form: "RIGHT(<CHARACTER>, <INTEGER>)", families: ["CHARACTER", "INTEGER"] },
  REVERSE: { form: "REVERSE(<CHARACTER>)", families: ["CHARACTER"] },
  STRPOS: { form: "STRPOS(<CHARACTER>, <CHARACTER>)", families: ["CHARACTER", "CHARACTER"] },
  LPAD: {
    form: "LPAD(<CHARACTER>, <INTEGER>, [<CHARACTER>])",
    families: ["CHARACTER", "INTEGER", "CHARACTER"],
  },
  RPAD: {
    form: "RPAD(<CHARACTER>, <INTEGER>, [<CHARACTER>])",
    families: ["CHARACTER", "INTEGER", "CHARACTER"],
  },
  TEXTCAT: { form: "textcat(<CHARACTER>, <CHARACTER>)", families: ["CHARACTER", "CHARACTER"] },
  SUBSTRING: {
    form: "SUBSTRING(<CHARACTER>, <INTEGER>, [<INTEGER>])",
    families: ["CHARACTER", "INTEGER", "INTEGER"],
  },
  CONTAINS_STRING: {
    form: "CONTAINS_STRING(<CHARACTER>, <CHARACTER>)",
    families: ["CHARACTER", "CHARACTER"],
  },
  ICONTAINS_STRING: {
    form: "ICONTAINS_STRING(<CHARACTER>, <CHARACTER>)",
    families: ["CHARACTER", "CHARACTER"],
  },
  REGEXP_LIKE: { form: "REGEXP_LIKE(<CHARACTER>, <CHARACTER>)", families: ["CHARACTER", "CHARACTER"] },
  REGEXP_EXTRACT: {
    form: "REGEXP_EXTRACT(<CHARACTER>, <CHARACTER>, [<INTEGER>])",
    families: ["CHARACTER", "CHARACTER", "INTEGER"],
  },
  REGEXP_REPLACE: {
    form: "REGEXP_REPLACE(<CHARACTER>, <CHARACTER>, <CHARACTER>)",
    families: ["CHARACTER", "CHARACTER", "CHARACTER"],
  },
  TIME_FLOOR: {
    form: "TIME_FLOOR(<TIMESTAMP>, <CHARACTER>, [<TIMESTAMP>, [<CHARACTER>]])",
    families: ["TIMESTAMP", "CHARACTER", "TIMESTAMP", "CHARACTER"],
  },
  TIME_CEIL: {
    form: "TIME_CEIL(<TIMESTAMP>, <CHARACTER>, [<TIMESTAMP>, [<CHARACTER>]])",
    families: ["TIMESTAMP", "CHARACTER", "TIMESTAMP", "CHARACTER"],
  },
  TIME_FORMAT: {
    form: "TIME_FORMAT(<TIMESTAMP>, [<CHARACTER>, [<CHARACTER>]])",
    families: ["TIMESTAMP", "CHARACTER", "CHARACTER"],
  },
  TIME_EXTRACT: {
    form: "TIME_EXTRACT(<TIMESTAMP>, <CHARACTER>, [<CHARACTER>])",
    families: ["TIMESTAMP", "CHARACTER", "CHARACTER"],
  },
  TIME_SHIFT: {
    form: "TIME_SHIFT(<TIMESTAMP>, <CHARACTER>, <INTEGER>, [<CHARACTER>])",
    families: ["TIMESTAMP", "CHARACTER", "INTEGER", "CHARACTER"],
  },
  TIME_PARSE: {
    form: "TIME_PARSE(<CHARACTER>, [<CHARACTER>, [<CHARACTER>]])",
    families: ["CHARACTER", "CHARACTER", "CHARACTER"],
  },
  BTRIM: { form: "BTRIM(<CHARACTER>, [<CHARACTER>])", families: ["CHARACTER", "CHARACTER"] },
  LTRIM: { form: "LTRIM(<CHARACTER>, [<CHARACTER>])", families: ["CHARACTER", "CHARACTER"] },
  RTRIM: { form: "RTRIM(<CHARACTER>, [<CHARACTER>])", families: ["CHARACTER", "CHARACTER"] },
  REPEAT: { form: "REPEAT(<CHARACTER>, <INTEGER>)", families: ["CHARACTER", "INTEGER"] },
  PARSE_LONG: { form: "PARSE_LONG(<CHARACTER>, [<INTEGER>])", families: ["CHARACTER", "INTEGER"] },
  TIME_IN_INTERVAL: {
    form: "TIME_IN_INTERVAL(<timestamp>, <interval>)",
    families: ["TIMESTAMP", "CHARACTER"],
  },
  DATE_TRUNC: { form: "DATE_TRUNC(<CHARACTER>, <TIMESTAMP>)", families: ["CHARACTER", "TIMESTAMP"] },
  MILLIS_TO_TIMESTAMP: { form: "MILLIS_TO_TIMESTAMP(<EXACT_NUMERIC>)", families: ["EXACT_NUMERIC"] },
  TIMESTAMP_TO_MILLIS: { form: "TIMESTAMP_TO_MILLIS(<TIMESTAMP>)", families: ["TIMESTAMP"] },
  TRUNCATE: { form: "TRUNCATE(<NUMERIC>, [<INTEGER>])", families: ["NUMERIC", "INTEGER"] },
  SAFE_DIVIDE: { form: "SAFE_DIVIDE(<NUMERIC>, <NUMERIC>)", families: ["NUMERIC", "NUMERIC"] },
};

/** A function of two numbers (null when either is null), with the result type `type`. */
function twoNumbers(type: SqlType, f: (x: number, y: number) => number): ScalarFn {
  return {
    min: 2,
    max: 2,
    type: fixed(type),
    run: ([a, b]) => {
      const x = numArg(a);
      const y = numArg(b);
      return x === null || y === null ? null : f(x, y);
    },
  };
}

/** A long as Druid's bitwise functions take it: a double is cast to long first (BITWISE_AND(12.7, 10) is 8). */
const long = (x: number) => BigInt.asIntN(64, BigInt(Math.trunc(x)));
/** Java's long shift: the distance is taken modulo 64. */
const shiftBy = (y: number) => BigInt(Math.trunc(y) & 63);

// Trigonometric and bitwise functions (docs/querying/sql-scalar.md, numeric functions; Druid's Function.Sin, …,
// Function.BitwiseAnd, …): DOUBLE and BIGINT results, text read as a number (Druid 33: SIN('1')).
Object.assign(SCALARS, {
  SIN: mathFn(Math.sin),
  COS: mathFn(Math.cos),
  TAN: mathFn(Math.tan),
  COT: mathFn((x) => Math.cos(x) / Math.sin(x)),
  ASIN: mathFn(Math.asin),
  ACOS: mathFn(Math.acos),
  ATAN: mathFn(Math.atan),
  ATAN2: twoNumbers("DOUBLE", Math.atan2),
  // Java's Math.toDegrees/toRadians: one multiplication by the constant ratio.
  DEGREES: mathFn((x) => x * (180 / Math.PI)),
  RADIANS: mathFn((x) => x * (Math.PI / 180)),
  BITWISE_AND: twoNumbers("BIGINT", (x, y) => Number(BigInt.asIntN(64, long(x) & long(y)))),
  BITWISE_OR: twoNumbers("BIGINT", (x, y) => Number(BigInt.asIntN(64, long(x) | long(y)))),
  BITWISE_XOR: twoNumbers("BIGINT", (x, y) => Number(BigInt.asIntN(64, long(x) ^ long(y)))),
  BITWISE_SHIFT_LEFT: twoNumbers("BIGINT", (x, y) => Number(BigInt.asIntN(64, long(x) << shiftBy(y)))),
  BITWISE_SHIFT_RIGHT: twoNumbers("BIGINT", (x, y) => Number(BigInt.asIntN(64, long(x) >> shiftBy(y)))),
  BITWISE_COMPLEMENT: {
    min: 1,
    max: 1,
    type: fixed("BIGINT"),
    run: ([v]) => {
      const x = numArg(v);
      return x === null ? null : Number(BigInt.asIntN(64, ~long(x)));
    },
  },
} satisfies Record<string, ScalarFn>);

/** Java's `%.Nf`: HALF_UP on the double's shortest decimal text (1.005 with 2 digits is "1.01"). */
const javaFixed = (x: number, digits: number) => round(x, digits).toFixed(digits);

/**
 * HUMAN_READABLE_*_FORMAT(value[, precision]) as Druid's HumanReadableBytes.format writes a long (a double is cast
 * to long first): below one unit the number itself; binary units by the highest bit (KiB … EiB), decimal ones by
 * whole divisions by 1000 before the last (1234567 with 3 digits is "1.234 M"); the precision 0 to 3, 2 by default.
 */
function humanReadable(name: string, unitSystem: "binary" | "decimalByte" | "decimal"): ScalarFn {
  return {
    min: 1,
    max: 2,
    type: fixed("VARCHAR"),
    run: ([v, p]) => {
      const x = numArg(v);
      if (x === null) return null;
      const precision = p === undefined ? 2 : numArg(p);
      if (precision === null || precision < 0 || precision > 3)
        throw new SqlError(`Function[${name}] given precision[${precision}] must be in the range of [0,3]`);
      let bytes = Math.trunc(x);
      const suffix = unitSystem === "decimal" ? "" : "B";
      if (unitSystem === "binary") {
        if (bytes > -1024 && bytes < 1024) return `${bytes} ${suffix}`;
        const unit = Math.floor((BigInt(Math.abs(bytes)).toString(2).length - 1) / 10);
        const units = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
        return `${javaFixed(bytes / 2 ** (unit * 10), precision)} ${units[unit]}${suffix}`;
      }
      if (bytes > -1000 && bytes < 1000) return `${bytes} ${suffix}`.trim();
      let unit = 0;
      while (bytes <= -1_000_000 || bytes >= 1_000_000) {
        bytes = Math.trunc(bytes / 1000);
        unit++;
      }
      return `${javaFixed(bytes / 1000, precision)} ${["K", "M", "G", "T", "P", "E"][unit]}${suffix}`;
    },
  };
}

SCALARS.HUMAN_READABLE_BINARY_BYTE_FORMAT = humanReadable("human_readable_binary_byte_format", "binary");
SCALARS.HUMAN_READABLE_DECIMAL_BYTE_FORMAT = humanReadable(
  "human_readable_decimal_byte_format",
  "decimalByte",
);
SCALARS.HUMAN_READABLE_DECIMAL_FORMAT = humanReadable("human_readable_decimal_format", "decimal");

/** A dotted-quad IPv4 address as a long, or null (surrounding blanks are read past: ' 1.2.3.4' is an address). */
function ipv4(text: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text.trim());
  if (!m) return null;
  const octets = m.slice(1).map(Number);
  return octets.some((o) => o > 255) ? null : octets.reduce((a, o) => a * 256 + o, 0);
}

const ipv4Text = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");

/** An address argument: a dotted quad, or a long within 0 … 2^32 - 1 (Druid's IPv4AddressExprUtils). */
const ipv4Of = (v: Value | undefined): number | null => {
  if (typeof v === "number") return Number.isInteger(v) && v >= 0 && v < 2 ** 32 ? v : null;
  return typeof v === "string" ? ipv4(v) : null;
};

// IP address functions (docs/querying/sql-scalar.md; Druid's IPv4AddressParseExprMacro, …StringifyExprMacro,
// …MatchExprMacro): IPV4_STRINGIFY is typed CHAR and IPV4_MATCH of a null or bad address false, as Druid 33 answers.
Object.assign(SCALARS, {
  IPV4_PARSE: {
    min: 1,
    max: 1,
    type: fixed("BIGINT"),
    run: ([v]) => (typeof v === "string" ? ipv4(v) : ipv4Of(v)),
  },
  IPV4_STRINGIFY: {
    min: 1,
    max: 1,
    type: fixed("CHAR"),
    run: ([v]) => {
      const n = ipv4Of(v);
      return n === null ? null : ipv4Text(n);
    },
  },
  IPV4_MATCH: {
    min: 2,
    max: 2,
    type: fixed("BOOLEAN"),
    run: ([v, subnet]) => {
      const cidr = /^(.+)\/(\d{1,2})$/.exec(String(subnet ?? ""));
      const base = cidr ? ipv4(cidr[1] as string) : null;
      const bits = cidr ? Number(cidr[2]) : Number.NaN;
      if (base === null || !(bits <= 32))
        throw new SqlRuntimeError(`Function[ipv4_match] subnet arg has an invalid format: ${String(subnet)}`);
      const n = ipv4Of(v ?? null);
      if (n === null) return truth(false);
      const size = 2 ** (32 - bits);
      return truth(Math.floor(n / size) === Math.floor(base / size));
    },
  },
  /** Java's Base64 decoder: a character outside the alphabet fails (Druid 33: "Illegal base64 character 21"). */
  DECODE_BASE64_UTF8: {
    min: 1,
    max: 1,
    type: fixed("VARCHAR"),
    run: ([v], ctx) => {
      const text = str(v ?? null, ctx);
      if (text === null) return null;
      const bad = /[^A-Za-z0-9+/=]/.exec(text);
      if (bad)
        throw new SqlRuntimeError(`Illegal base64 character ${(bad[0].codePointAt(0) ?? 0).toString(16)}`);
      return Buffer.from(text, "base64").toString("utf8");
    },
  },
  /** The IEEE 754 bits of a double as a long, and back (Double.doubleToLongBits / longBitsToDouble). */
  BITWISE_CONVERT_DOUBLE_TO_LONG_BITS: {
    min: 1,
    max: 1,
    type: fixed("BIGINT"),
    run: ([v]) => {
      const x = numArg(v);
      if (x === null) return null;
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, x);
      return Number(view.getBigInt64(0));
    },
  },
  BITWISE_CONVERT_LONG_BITS_TO_DOUBLE: {
    min: 1,
    max: 1,
    type: fixed("DOUBLE"),
    run: ([v]) => {
      const x = numArg(v);
      if (x === null) return null;
      const view = new DataView(new ArrayBuffer(8));
      view.setBigInt64(0, BigInt.asIntN(64, BigInt(Math.trunc(x))));
      return view.getFloat64(0);
    },
  },
} satisfies Record<string, ScalarFn>);

/** An argument as Java's String.format sees it: a long, a double, text or null (a TIMESTAMP is its millis). */
type JavaArg = { kind: "long" | "double"; n: number } | { kind: "text"; s: string } | null;

/**
 * Java's `String.format` for the conversions tools use (`%s %d %f %x %X %o %e %%` with flags `-0+, ` and width
 * and precision); a pattern it refuses (a missing argument, `%d` of text, `%f` of a long, an unknown conversion)
 * is null here, so STRING_FORMAT can fall back as Druid does.
 */
function javaFormat(pattern: string, args: JavaArg[]): string | null {
  let next = 0;
  let failed = false;
  const out = pattern.replace(
    /%([-#+ 0,(]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g,
    (_, flags: string, width: string | undefined, precision: string | undefined, conv: string) => {
      if (conv === "%") return "%";
      if (conv === "n") return "\n";
      if (next >= args.length) {
        failed = true;
        return "";
      }
      const a = args[next++] ?? null;
      let body: string;
      const num = a !== null && a.kind !== "text" ? a.n : null;
      switch (conv) {
        case "s":
        case "S":
          body =
            a === null
              ? "null"
              : a.kind === "text"
                ? a.s
                : a.kind === "double"
                  ? javaDouble(a.n)
                  : String(a.n);
          if (precision !== undefined) body = body.slice(0, Number(precision));
          if (conv === "S") body = body.toUpperCase();
          break;
        case "d":
          if (a !== null && a.kind !== "long") failed = true;
          body = num === null ? "null" : String(Math.abs(num));
          if (flags.includes(",")) body = body.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
          break;
        case "x":
        case "X":
        case "o":
          if (a !== null && a.kind !== "long") failed = true;
          body = num === null ? "null" : BigInt.asUintN(64, BigInt(num)).toString(conv === "o" ? 8 : 16);
          if (conv === "X") body = body.toUpperCase();
          break;
        case "f":
        case "e":
          if (a !== null && a.kind !== "double") failed = true;
          body =
            num === null
              ? "null"
              : conv === "f"
                ? javaFixed(Math.abs(num), Number(precision ?? 6))
                : Math.abs(num)
                    .toExponential(Number(precision ?? 6))
                    .replace(/e([+-])(\d)$/, "e$10$2");
          break;
        default:
          failed = true;
          return "";
      }
      const negative = num !== null && num < 0 && "dfe".includes(conv);
      const sign = negative
        ? "-"
        : num !== null && flags.includes("+")
          ? "+"
          : num !== null && flags.includes(" ")
            ? " "
            : "";
      const w = Number(width ?? 0);
      if (flags.includes("0") && !flags.includes("-") && num !== null)
        return sign + body.padStart(w - sign.length, "0");
      const text = sign + body;
      return flags.includes("-") ? text.padEnd(w) : text.padStart(w);
    },
  );
  return failed ? null : out;
}

/**
 * STRING_FORMAT(pattern, args…) as Druid's StringUtils.nonStrictFormat: the pattern as it is without arguments
 * ('100%%' stays), Java's String.format with them, and for a pattern Java refuses the pattern with "; arg" for
 * each argument (Druid 33: STRING_FORMAT('%d', 'x') is '%d; x').
 */
SCALARS.STRING_FORMAT = {
  min: 1,
  max: Number.POSITIVE_INFINITY,
  type: fixed("VARCHAR"),
  run: (args, ctx) => {
    const [pattern, ...rest] = args;
    if (pattern === null || pattern === undefined) return null;
    const p = str(pattern, ctx) as string;
    if (rest.length === 0) return p;
    const types = ctx.argTypes?.slice(1);
    const javaArgs: JavaArg[] = rest.map((v, i) => {
      if (v === null || v === undefined) return null;
      if (v instanceof Timestamp) return { kind: "long", n: v.ms };
      if (typeof v === "number") {
        const t = types?.[i]?.type;
        const fractional = t ? FRACTIONAL.has(t) : !Number.isInteger(v);
        return { kind: fractional ? "double" : "long", n: v };
      }
      return { kind: "text", s: String(v) };
    });
    const shown = (a: JavaArg) =>
      a === null ? "null" : a.kind === "text" ? a.s : a.kind === "double" ? javaDouble(a.n) : String(a.n);
    return javaFormat(p, javaArgs) ?? `${p}${javaArgs.map((a) => `; ${shown(a)}`).join("")}`;
  },
};

/**
 * Where a real Druid 33 refuses an untyped NULL argument ("Illegal use of 'NULL'" at the literal): the text,
 * pattern, period and time operands of its own operators. LOWER, UPPER, CONCAT, REPLACE, POSITION, the math
 * functions, MOD, DIV, COALESCE and friends, and the optional zone, origin and pattern arguments take one.
 */
const NULL_REFUSED: Record<string, readonly number[]> = {
  TEXTCAT: [0, 1],
  LEFT: [0, 1],
  RIGHT: [0, 1],
  SUBSTRING: [0, 1],
  BTRIM: [0],
  LTRIM: [0],
  RTRIM: [0],
  REVERSE: [0],
  REPEAT: [0, 1],
  LPAD: [0, 1],
  RPAD: [0, 1],
  STRPOS: [0, 1],
  CONTAINS_STRING: [0, 1],
  ICONTAINS_STRING: [0, 1],
  REGEXP_EXTRACT: [0, 1],
  REGEXP_LIKE: [0, 1],
  REGEXP_REPLACE: [0, 1, 2],
  TRUNCATE: [0],
  SAFE_DIVIDE: [0, 1],
  PARSE_LONG: [0],
  TIME_FLOOR: [0, 1],
  TIME_CEIL: [0, 1],
  TIME_SHIFT: [0, 1, 2],
  TIME_EXTRACT: [0, 1],
  TIME_FORMAT: [0],
  TIME_PARSE: [0],
  MILLIS_TO_TIMESTAMP: [0],
  TIMESTAMP_TO_MILLIS: [0],
  DATE_TRUNC: [0, 1],
  TIME_IN_INTERVAL: [0, 1],
};
for (const [name, at] of Object.entries(NULL_REFUSED))
  SCALARS[name] = { ...(SCALARS[name] as ScalarFn), refusesNull: at };
for (const [name, operands] of Object.entries(OPERANDS))
  SCALARS[name] = { ...(SCALARS[name] as ScalarFn), operands };
SCALARS.TRUNC = SCALARS.TRUNCATE as ScalarFn;
// TRIM(x) is Calcite's own TRIM, typed like its operand: an untyped NULL gives NULL (Druid 33: TRIM(NULL)).
SCALARS.TRIM = {
  ...(SCALARS.TRIM as ScalarFn),
  type: (a) => (a[0]?.type === "NULL" ? { type: "NULL" } : { type: "VARCHAR" }),
};
SCALARS.GREATEST = extreme(1);
SCALARS.LEAST = extreme(-1);
SCALARS.SUBSTR = SCALARS.SUBSTRING as ScalarFn; // after NULL_REFUSED: the alias refuses what SUBSTRING does
SCALARS.NVL = { ...(SCALARS.COALESCE as ScalarFn), min: 2, max: 2 };
SCALARS.IFNULL = SCALARS.NVL;
SCALARS.LENGTH = SCALARS.CHAR_LENGTH as ScalarFn;
SCALARS.CHARACTER_LENGTH = SCALARS.CHAR_LENGTH as ScalarFn;
SCALARS.STRLEN = SCALARS.CHAR_LENGTH as ScalarFn;
Object.assign(SCALARS, MULTIVALUE_SCALARS);
// JSON functions over nested columns (docs/querying/sql-json-functions.md).
Object.assign(SCALARS, JSON_SCALARS);
Object.assign(SCALARS, SKETCH_SCALARS);

/**
 * SQL comparison of two values: null when either is null (unknown); timestamps by time; numbers numerically,
 * text against a number as numbers when both read as numbers; else text order.
 */
export function compare(a: Value, b: Value): number | null {
  if (a === null || b === null) return null;
  // The common cases first: a filter compares like with like on every row of a scan.
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (a instanceof Timestamp || b instanceof Timestamp) return msOf(a) - msOf(b);
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "number" || typeof b === "number") {
    const x = Number(a);
    const y = Number(b);
    if (!Number.isNaN(x) && !Number.isNaN(y)) return x - y;
  }
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Order of sort keys: nulls first (Druid's ascending order), then `compare`. */
export function orderCompare(a: Value, b: Value): number {
  if (a === null) return b === null ? 0 : -1;
  if (b === null) return 1;
  return compare(a, b) as number;
}

export { PatternError, parseTimestampLiteral };
