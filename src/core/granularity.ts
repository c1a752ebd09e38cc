import { DateTime, Duration, type DurationLikeObject } from "luxon";
import { SegopsError } from "./errors.js";
import type { Interval } from "./interval.js";

/**
 * Druid granularities (api-contract §5: `GranularityType` names, ISO periods, and `{type:"period"}` objects).
 * `all` is one bucket spanning all time; `none` keeps millisecond precision. Periods truncate the way
 * Druid's PeriodGranularity does in UTC: each field is floored to a multiple of its size within its
 * parent (years from 0, months within a year, weeks from the ISO week, days within a month, hours within a day…).
 */
export type Granularity =
  | { readonly kind: "all" }
  | { readonly kind: "none" }
  | { readonly kind: "period"; readonly name: string; readonly period: Readonly<PeriodFields> };

interface PeriodFields {
  years: number;
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
  milliseconds: number;
}

export class GranularityError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("Granularity", message, details);
  }
}

/** Druid's named granularities mapped to their ISO periods (`GranularityType.java`). */
export const GRANULARITY_NAMES: Readonly<Record<string, string | null>> = {
  second: "PT1S",
  minute: "PT1M",
  five_minute: "PT5M",
  ten_minute: "PT10M",
  fifteen_minute: "PT15M",
  thirty_minute: "PT30M",
  hour: "PT1H",
  six_hour: "PT6H",
  eight_hour: "PT8H",
  day: "P1D",
  week: "P1W",
  month: "P1M",
  quarter: "P3M",
  year: "P1Y",
  all: null,
  none: null,
};

const FIELD_ORDER = [
  "years",
  "months",
  "weeks",
  "days",
  "hours",
  "minutes",
  "seconds",
  "milliseconds",
] as const;

function fromPeriod(name: string, iso: string): Granularity {
  const d = Duration.fromISO(iso);
  if (!d.isValid) throw new GranularityError(`unknown granularity "${name}"`, { value: name });
  const o = d.toObject() as DurationLikeObject;
  const period: PeriodFields = {
    years: o.years ?? 0,
    months: (o.months ?? 0) + 3 * (o.quarters ?? 0),
    weeks: o.weeks ?? 0,
    days: o.days ?? 0,
    hours: o.hours ?? 0,
    minutes: o.minutes ?? 0,
    seconds: o.seconds ?? 0,
    milliseconds: o.milliseconds ?? 0,
  };
  const nonZero = FIELD_ORDER.filter((f) => period[f] !== 0);
  if (nonZero.length === 0 || nonZero.some((f) => period[f] < 0 || !Number.isInteger(period[f]))) {
    throw new GranularityError(`granularity period "${iso}" must be a positive whole period`, {
      value: name,
    });
  }
  return { kind: "period", name, period };
}

/**
 * Accepts what Druid accepts in a granularitySpec: a name (any case), an ISO period string, or
 * `{"type":"period","period":"P1D","timeZone":"UTC"}` / `{"type":"all"}` / `{"type":"none"}`.
 * Non-UTC time zones and origins are refused explicitly rather than silently truncated wrong.
 */
export function parseGranularity(input: unknown): Granularity {
  if (typeof input === "string") {
    const key = input.toLowerCase();
    if (key in GRANULARITY_NAMES) {
      const iso = GRANULARITY_NAMES[key];
      if (iso === null) return key === "all" ? { kind: "all" } : { kind: "none" };
      return fromPeriod(key, iso as string);
    }
    if (/^P/i.test(input)) return fromPeriod(input.toUpperCase(), input.toUpperCase());
    throw new GranularityError(
      `unknown granularity "${input}": expected one of ${Object.keys(GRANULARITY_NAMES).join(", ")} or an ISO period such as PT1H`,
      { value: input },
    );
  }
  if (input && typeof input === "object") {
    const o = input as Record<string, unknown>;
    if (o.type === "all" || o.type === "none") return parseGranularity(o.type);
    if (o.type === "period" && typeof o.period === "string") {
      if (
        o.timeZone !== undefined &&
        o.timeZone !== null &&
        !/^(UTC|Etc\/UTC|Z)$/i.test(String(o.timeZone))
      ) {
        throw new GranularityError(
          `granularity time zone "${String(o.timeZone)}" is not supported (UTC only)`,
          {
            value: input,
          },
        );
      }
      if (o.origin !== undefined && o.origin !== null) {
        throw new GranularityError("granularity origin is not supported", { value: input });
      }
      return fromPeriod(o.period.toUpperCase(), o.period.toUpperCase());
    }
  }
  throw new GranularityError(`invalid granularity ${JSON.stringify(input)}`, { value: input });
}

/** Floors `ms` to the start of its bucket. */
export function bucketStart(g: Granularity, ms: number): number {
  if (g.kind === "none") return ms;
  if (g.kind === "all") return Number.MIN_SAFE_INTEGER;
  const p = g.period;
  const t = DateTime.fromMillis(ms, { zone: "utc" });
  const floorTo = (v: number, size: number) => v - (((v % size) + size) % size);
  if (p.years > 0) return DateTime.utc(floorTo(t.year, p.years)).toMillis();
  if (p.months > 0) return DateTime.utc(t.year, floorTo(t.month - 1, p.months) + 1).toMillis();
  if (p.weeks > 0) {
    const monday = t.startOf("week");
    return monday
      .set({ weekNumber: floorTo(monday.weekNumber - 1, p.weeks) + 1 })
      .startOf("week")
      .toMillis();
  }
  if (p.days > 0) return DateTime.utc(t.year, t.month, floorTo(t.day - 1, p.days) + 1).toMillis();
  if (p.hours > 0) return DateTime.utc(t.year, t.month, t.day, floorTo(t.hour, p.hours)).toMillis();
  if (p.minutes > 0)
    return DateTime.utc(t.year, t.month, t.day, t.hour, floorTo(t.minute, p.minutes)).toMillis();
  if (p.seconds > 0)
    return DateTime.utc(t.year, t.month, t.day, t.hour, t.minute, floorTo(t.second, p.seconds)).toMillis();
  return floorTo(ms, p.milliseconds);
}

/** The first instant after `bucketStart` that starts the next bucket. */
export function bucketEnd(g: Granularity, start: number): number {
  if (g.kind === "none") return start + 1;
  if (g.kind === "all") return Number.MAX_SAFE_INTEGER;
  return bucketStart(g, DateTime.fromMillis(start, { zone: "utc" }).plus(g.period).toMillis());
}

/** The bucket containing `ms`. */
export function bucketOf(g: Granularity, ms: number): Interval {
  const start = bucketStart(g, ms);
  return { start, end: bucketEnd(g, start) };
}

export function isAligned(g: Granularity, ms: number): boolean {
  return bucketStart(g, ms) === ms;
}

/** Every bucket that overlaps `interval`, in order (unclipped: the first may start before it). */
export function bucketsOverlapping(g: Granularity, interval: Interval): Interval[] {
  if (g.kind === "all") return [{ start: Number.MIN_SAFE_INTEGER, end: Number.MAX_SAFE_INTEGER }];
  if (g.kind === "none") throw new GranularityError("cannot enumerate buckets of granularity NONE");
  const out: Interval[] = [];
  for (let s = bucketStart(g, interval.start); s < interval.end; ) {
    const e = bucketEnd(g, s);
    out.push({ start: s, end: e });
    s = e;
  }
  return out;
}
