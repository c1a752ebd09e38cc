import { DateTime } from "luxon";
import { bucketStart, parseGranularity } from "../core/granularity.js";
import { SqlError, SqlRuntimeError, type SqlType, Timestamp, unsupported, type Value } from "./sql.js";
import { MULTIVALUE_SCALARS } from "./sql-multivalue.js";
import {
  floorInZone,
  formatTime,
  ISO_PATTERN,
  PatternError,
  parseTime,
  parseTimestampLiteral,
  timestampText,
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
}

export interface ScalarFn {
  min: number;
  max: number;
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
  return v instanceof Timestamp ? v.ms : typeof v === "number" ? v : Date.parse(v);
}

/** Text of a value inside an expression (`||`, LIKE, LOWER): timestamps in the query's zone. */
export function textOf(v: Exclude<Value, null>, zone: Zone): string {
  return v instanceof Timestamp ? timestampText(v.ms, zone) : String(v);
}

const luxonZone = (zone: Zone) => (zone === UTC ? "utc" : zone);

/** Adds `months` calendar months in `zone` (Joda's `plusMonths`: the day is clamped to the month's end). */
export function plusMonths(ms: number, months: number, zone: Zone): number {
  return DateTime.fromMillis(ms, { zone: luxonZone(zone) })
    .plus({ months })
    .toMillis();
}

/** An ISO period (`P1D`, `PT1H`, `P1M`) added `step` times in `zone`, as `TIME_SHIFT` does (Joda's Period). */
function shift(ms: number, period: string, step: number, zone: Zone): number {
  const m =
    /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(
      period,
    );
  if (!m || period === "P" || period.endsWith("T")) throw new SqlError(`Invalid period [${period}]`);
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
const fixed = (type: SqlType) => (): ArgType => ({ type });
/** A function's own CHAR/VARCHAR: SUBSTRING of a CHAR literal stays CHAR (Druid 33: `SUBSTRING('abc', 5)`). */
const textLike = (a: ArgType[]): ArgType => (a[0]?.type === "CHAR" ? { type: "CHAR" } : { type: "VARCHAR" });

const str = (v: Value, ctx: FnContext): string | null => (v === null ? null : textOf(v, ctx.timeZone));
const zoneArg = (v: Value | undefined, ctx: FnContext): Zone =>
  v === undefined || v === null ? ctx.timeZone : String(v);

export const SCALARS: Record<string, ScalarFn> = {
  TIME_FLOOR: {
    min: 2,
    max: 4,
    type: fixed("TIMESTAMP"),
    run([t, period, origin, zone], ctx) {
      if (t === null || t === undefined) return null;
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
      if (t === null || t === undefined || step === null || step === undefined) return null;
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
      const ms = DIFF_MS[u];
      if (ms !== undefined) return Math.trunc((msOf(b) - msOf(a)) / ms);
      const months = DIFF_MONTHS[u];
      if (months === undefined) throw unsupported(`TIMESTAMPDIFF(${u}, …)`);
      return Math.trunc(monthsBetween(msOf(a), msOf(b), ctx.timeZone) / months);
    },
  },
  TIMESTAMPADD: {
    min: 3,
    max: 3,
    type: fixed("TIMESTAMP"),
    run([unit, n, t], ctx) {
      if (n === null || t === null || n === undefined || t === undefined) return null;
      const u = String(unit);
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
      return formatTime(
        msOf(t),
        pattern === undefined || pattern === null ? ISO_PATTERN : String(pattern),
        zoneArg(zone, ctx),
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
      const ms = parseTime(textOf(text, ctx.timeZone), p, zoneArg(zone, ctx));
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
    type: fixed("VARCHAR"),
    run: ([v], ctx) => str(v ?? null, ctx)?.toLowerCase() ?? null,
  },
  UPPER: {
    min: 1,
    max: 1,
    type: fixed("VARCHAR"),
    run: ([v], ctx) => str(v ?? null, ctx)?.toUpperCase() ?? null,
  },
  CHAR_LENGTH: {
    min: 1,
    max: 1,
    type: fixed("INTEGER"),
    run: ([v], ctx) => str(v ?? null, ctx)?.length ?? null,
  },
  CONCAT: {
    min: 1,
    max: Number.POSITIVE_INFINITY,
    type: fixed("VARCHAR"),
    run: (args, ctx) =>
      args.some((a) => a === null) ? null : args.map((a) => str(a, ctx) as string).join(""),
  },
  ABS: {
    min: 1,
    max: 1,
    type: same,
    run: ([v]) => (v === null || v === undefined ? null : Math.abs(Number(v))),
  },
  /**
   * `SUBSTRING(s, start[, length])`, 1-based. Druid's `substring` expression answers null past the end and throws
   * for a start below 1 (a real Druid 33: "Function[substring] encountered unknown exception.", 500 DEFENSIVE).
   */
  SUBSTRING: {
    min: 2,
    max: 3,
    type: textLike,
    run([s, start, length], ctx) {
      if (s === null || s === undefined || start === null || start === undefined) return null;
      const text = str(s, ctx) as string;
      const from = Math.trunc(Number(start)) - 1;
      const len = length === undefined || length === null ? null : Math.trunc(Number(length));
      if (from < 0 || (len !== null && len < 0))
        throw new SqlRuntimeError("Function[substring] encountered unknown exception.", "defensive");
      if (from >= text.length) return null;
      return len === null ? text.slice(from) : text.slice(from, from + len);
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
  const t = v.trim();
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
      const text = args.map((a) => str(a ?? null, ctx));
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
    n === null ? null : (s as string).slice(0, Math.max(0, n)),
  ),
  RIGHT: textFn(2, 2, "VARCHAR", ([s], [, n = null]) =>
    n === null ? null : n <= 0 ? "" : (s as string).slice(-n),
  ),
  BTRIM: textFn(1, 2, "VARCHAR", ([s, c]) => trim(s as string, c ?? " ", true, true)),
  LTRIM: textFn(1, 2, "VARCHAR", ([s, c]) => trim(s as string, c ?? " ", true, false)),
  RTRIM: textFn(1, 2, "VARCHAR", ([s, c]) => trim(s as string, c ?? " ", false, true)),
  TRIM: textFn(1, 1, "VARCHAR", ([s]) => trim(s as string, " ", true, true)),
  REPLACE: textFn(3, 3, "VARCHAR", ([s, from, to]) => (s as string).split(from as string).join(to as string)),
  REVERSE: textFn(1, 1, "VARCHAR", ([s]) => [...(s as string)].reverse().join("")),
  REPEAT: textFn(2, 2, "VARCHAR", ([s], [, n = null]) =>
    n === null ? null : (s as string).repeat(Math.max(0, n)),
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
    type: same,
    run: (args) => {
      const nums = args.map((a) => numArg(a));
      const x = nums[0] ?? null;
      return x === null ? null : f(x, nums);
    },
  };
}

/** Two numbers, null when either is null or the divisor is 0 (MOD, DIV, SAFE_DIVIDE). */
function divFn(type: (a: ArgType[]) => ArgType, f: (x: number, y: number) => number): ScalarFn {
  return {
    min: 2,
    max: 2,
    type,
    run: ([a, b]) => {
      const x = numArg(a);
      const y = numArg(b);
      return x === null || y === null || y === 0 ? null : f(x, y);
    },
  };
}

/**
 * A field of a time in `zone` (`EXTRACT(unit FROM t)`, `TIME_EXTRACT(t, unit, zone)`): docs/querying/sql-scalar.md,
 * date and time functions; DOW and ISODOW are ISO (Monday 1), EPOCH whole seconds.
 */
function extract(ms: number, unit: string, zone: Zone): number | null {
  const d = DateTime.fromMillis(ms, { zone: luxonZone(zone) });
  const parts: Record<string, number> = {
    EPOCH: Math.floor(ms / 1000),
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
    ISOYEAR: d.weekYear,
  };
  return parts[unit.toUpperCase()] ?? null;
}

/** ROUND to `scale` digits (the emulator's MSQ rule, kept: halves toward +∞; Druid's own tie rule is not yet checked). */
function round(x: number, scale: number): number {
  const p = 10 ** scale;
  return Math.round(x * p) / p;
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
  /** TIME_EXTRACT(t[, unit[, zone]]), the unit MILLISECOND by default. */
  TIME_EXTRACT: {
    min: 1,
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
  MOD: divFn(leastRestrictive, (x, y) => x % y),
  DIV: divFn(fixed("BIGINT"), (x, y) => Math.trunc(x / y)),
  SAFE_DIVIDE: divFn(leastRestrictive, (x, y) => x / y),
  /** PARSE_LONG(text[, radix]): null when the text is not a number in that radix. */
  PARSE_LONG: {
    min: 1,
    max: 2,
    type: fixed("BIGINT"),
    run: ([s, radix], ctx) => {
      if (s === null || s === undefined) return null;
      const v = Number.parseInt(str(s, ctx) as string, numArg(radix) ?? 10);
      return Number.isFinite(v) ? v : null;
    },
  },
} satisfies Record<string, ScalarFn>);
SCALARS.TRUNC = SCALARS.TRUNCATE as ScalarFn;

/** A BOOLEAN as the Broker engine holds one (1/0). */
const truth = (b: boolean): Value => (b ? 1 : 0);

// Regular-expression and containment functions (docs/querying/sql-scalar.md, string functions), and
// TIME_IN_INTERVAL (date and time functions): an ISO 8601 `start/end` or `start/period`, start inclusive.
Object.assign(SCALARS, {
  /** REGEXP_EXTRACT(expr, pattern[, index]): the first match's group `index` (0: the whole match), else null. */
  REGEXP_EXTRACT: textFn(2, 3, "VARCHAR", ([s, pattern], [, , index = null]) => {
    const m = new RegExp(pattern as string).exec(s as string);
    return m ? (m[index ?? 0] ?? null) : null;
  }),
  /** REGEXP_LIKE(expr, pattern): whether the pattern matches anywhere in the text. */
  REGEXP_LIKE: textFn(2, 2, "BOOLEAN", ([s, pattern]) =>
    truth(new RegExp(pattern as string).test(s as string)),
  ),
  REGEXP_REPLACE: textFn(3, 3, "VARCHAR", ([s, pattern, by]) =>
    (s as string).replace(new RegExp(pattern as string, "g"), by as string),
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
      const [a, b] = text.split("/");
      const start = Date.parse(a ?? "");
      if (!Number.isFinite(start) || b === undefined) throw new SqlError(`Invalid interval [${text}]`);
      const end = b.startsWith("P") ? shift(start, b, 1, ctx.timeZone) : Date.parse(b);
      const ms = msOf(t);
      return truth(ms >= start && ms < end);
    },
  },
} satisfies Record<string, ScalarFn>);

/** LPAD/RPAD: cut to `len` when longer; a null or empty pad leaves shorter text as it is. */
function padded(text: string, len: number | null, pad: string | null | undefined, left: boolean): Value {
  if (len === null) return null;
  if (text.length >= len) return text.slice(0, Math.max(0, len));
  const p = pad === undefined ? " " : pad;
  if (p === null) return null;
  if (p === "") return text;
  return left ? text.padStart(len, p) : text.padEnd(len, p);
}

/** GREATEST/LEAST: the largest/smallest non-null argument by SQL comparison, null when all are null. */
function extreme(sign: 1 | -1): ScalarFn {
  return {
    min: 1,
    max: Number.POSITIVE_INFINITY,
    type: leastRestrictive,
    run: (args) => {
      const values = args.filter((v): v is Exclude<Value, null> => v !== null && v !== undefined);
      if (values.length === 0) return null;
      return values.reduce((x, y) => ((compare(x, y) ?? 0) * sign >= 0 ? x : y));
    },
  };
}
SCALARS.GREATEST = extreme(1);
SCALARS.LEAST = extreme(-1);
SCALARS.SUBSTR = SCALARS.SUBSTRING as ScalarFn;
SCALARS.NVL = { ...(SCALARS.COALESCE as ScalarFn), min: 2, max: 2 };
SCALARS.IFNULL = SCALARS.NVL;
SCALARS.LENGTH = SCALARS.CHAR_LENGTH as ScalarFn;
SCALARS.CHARACTER_LENGTH = SCALARS.CHAR_LENGTH as ScalarFn;
SCALARS.STRLEN = SCALARS.CHAR_LENGTH as ScalarFn;
Object.assign(SCALARS, MULTIVALUE_SCALARS);

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
