import { Duration, IANAZone } from "luxon";
import { SegopsError } from "./errors.js";
import { formatInstant, type Interval, parseInstant } from "./interval.js";
import { jsonSyntaxProblem } from "./json-text.js";

/**
 * Druid granularities, bucketed exactly as Druid buckets them (docs/druid-api.md §5).
 *
 * The model follows Druid's own classes in `org.apache.druid.java.util.common.granularity` (read from
 * apache/druid, `processing/src/main/java/.../granularity/PeriodGranularity.java`, `Granularity.java`,
 * `GranularityType.java`, `core/src/main/java/.../granularity/DurationGranularity.java`), and the Joda-Time
 * semantics they rely on (JodaOrg/joda-time: `chrono/ZonedChronology.java`, `DateTimeZone.java`,
 * `chrono/BasicMonthOfYearDateTimeField.java`, `chrono/BasicGJChronology.java`). No Java is copied; the
 * rules are restated here:
 *
 * **Forms** (`GranularityModule`: JSON types `period`, `duration`, `all`, `none`; `Granularity.fromString`):
 * a `GranularityType` name in any case (`day`, `fifteen_minute`, …, `all`, `none`: each a
 * `PeriodGranularity(period, origin = null, timeZone = null)`, i.e. UTC); `{"type":"period","period":ISO,
 * "timeZone":id,"origin":instant}`; `{"type":"duration","duration":ms,"origin":instant}`. segops also accepts a
 * bare ISO period string (`PT6H`, as SQL's TIME_FLOOR and `--granularity` do), meaning that period in UTC;
 * Druid's JSON does not (`parseGranularity(v, { druidJson: true })` refuses it as Druid would).
 *
 * **PeriodGranularity.bucketStart** (`truncate`), in the ISO chronology of the zone (UTC when none):
 * - The default origin (none given) is local `1970-01-01T00:00` in the zone (`withZoneRetainFields`), e.g.
 *   1970-01-01T08:00Z for America/Los_Angeles, 1969-12-31T23:00Z for Europe/London (on +01:00 in 1970).
 * - A period with one field of size 1 and no origin truncates the local wall time: `P1Y` to the local
 *   1 January, `P1M` to the local first of the month, `P1W` to local midnight and then back to Monday,
 *   `P1D` to local midnight, `PT1H`/`PT1M` to the local hour/minute (time-field arithmetic: floor
 *   `t + offset(t)`, subtract the same offset), `PT1S` to the whole second.
 * - A single field of size > 1, or any single field with an origin, counts whole fields from the origin
 *   (Joda's `getDifference`, truncated toward zero), rounds the count down to a multiple of the size, adds
 *   that many fields to the origin, and steps back one period when that lands after `t`. Years, months,
 *   weeks and days count and add in local wall time (`P3M` is January/April/July/October local midnight);
 *   hours, minutes, seconds and milliseconds are absolute durations (so `PT6H` in Europe/London starts at
 *   23:00/05:00/11:00/17:00 GMT, from its 1970 origin on +01:00). For hours with a negative origin (one
 *   before 1970, or the default origin of a zone east of UTC) the result is then floored to the local hour
 *   (`minuteOfHour().set(0)`); where the offset moved by 30 minutes since 1970 (Australia/Lord_Howe) that
 *   makes Druid's PT6H buckets miss their own instants.
 * - A compound period (`P1DT12H`, several fields): without years or months and in a zone of fixed offset,
 *   `t - ((t % len) - (origin % len))` with Java's signed remainder (one period early for part of each
 *   bucket when `origin % len` is negative); otherwise the iterates `origin + k·period` are walked to the
 *   last one not after `t`.
 * - Local wall times are resolved as Joda does: truncations map the floored wall time back with the offset
 *   of `t` when that offset still holds there, otherwise with `convertLocalToUTC(local, false)`; field
 *   arithmetic maps back with `getOffsetFromLocal`. Either way a wall time in a DST **gap** moves forward
 *   by the gap (a local midnight that does not exist, as in America/Havana on 2026-03-08, starts that day at
 *   01:00), and an ambiguous wall time in an **overlap** takes the earlier instant (the offset of `t` when
 *   truncating, if it fits).
 *
 * **increment** adds the period field by field (years first) in that chronology; a bucket is
 * `[bucketStart(t), increment(bucketStart(t)))` (`Granularity.bucket`, `bucketEnd`) and the buckets over an
 * interval are that chain from `bucketStart(start)` (`Granularity.getIterable`). So `P1D` in
 * America/Los_Angeles gives 23-hour buckets on 2026-03-08 and 25-hour ones on 2026-11-01, each from local
 * midnight. Where Druid's own rules disagree (a chain point that is not its own bucketStart: PT1H in
 * Australia/Lord_Howe around its 30-minute DST shift, P1D across a missing midnight, `P1M` from an origin on
 * the 31st), the functions here still answer as Druid would; {@link checkTiling} names the disagreement.
 *
 * **DurationGranularity**: origin reduced to `origin % duration` (signed), `bucketStart(t) = t - offset`
 * with `offset = t % duration - origin`, plus `duration` when negative; `increment(t) = t + duration`. UTC.
 *
 * **Time zones** (`DateTimes.inferTzFromString`): Druid takes a Joda id and otherwise a Java id, and falls
 * back **silently to UTC** for an id neither knows (a typo, a lower-cased name). segops refuses those. Offsets
 * come from the platform's tz database (Node's ICU), Druid's from its Joda-Time build; they agree for any
 * zone whose rules did not change between the two releases.
 */
export type Granularity = { readonly kind: "all" } | { readonly kind: "none" } | BucketGranularity;

/**
 * A granularity that buckets time (`kind: "period"`, the name kept for compatibility): Druid's
 * PeriodGranularity (`type: "period"`) or DurationGranularity (`type: "duration"`).
 */
export interface BucketGranularity {
  readonly kind: "period";
  /** Druid's JSON type: `period` (PeriodGranularity) or `duration` (DurationGranularity). */
  readonly type: "period" | "duration";
  /** As it is shown: a name (`day`), an ISO period (`P2D`), or with its zone and origin (`P1D in America/Los_Angeles`). */
  readonly name: string;
  /** The period's fields; a duration has only `milliseconds`. */
  readonly period: Readonly<PeriodFields>;
  /** The time zone id (`UTC` when none; always `UTC` for a duration). */
  readonly timeZone: string;
  /** The origin given, in epoch ms; `null` for Druid's default (local 1970-01-01 in the zone). */
  readonly origin: number | null;
}

export interface PeriodFields {
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
type Field = (typeof FIELD_ORDER)[number];

const SECOND = 1000;
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const WEEK = 7 * DAY;
/** Joda's `useTimeArithmetic`: fields shorter than 12 hours add as absolute durations. */
const PRECISE_UNIT: Partial<Record<Field, number>> = {
  weeks: WEEK,
  days: DAY,
  hours: HOUR,
  minutes: MINUTE,
  seconds: SECOND,
  milliseconds: 1,
};
const isTimeField = (f: Field) => f === "hours" || f === "minutes" || f === "seconds" || f === "milliseconds";
/** The instants JavaScript dates (and so the tz database lookups) support, with room for a year of arithmetic. */
const MAX_INSTANT = 8.64e15 - 400 * DAY;

// ---------------------------------------------------------------------------------------------------------
// Arithmetic helpers (Java semantics where Druid relies on them)

const floorMod = (a: number, b: number) => ((a % b) + b) % b;
const floorTo = (v: number, size: number) => v - floorMod(v, size);
/** Java's long division: truncates toward zero (exact for safe integers). */
function truncDiv(a: number, b: number): number {
  let q = Math.trunc(a / b);
  const r = a - q * b;
  if (r !== 0 && Math.sign(r) !== Math.sign(a)) q += a > 0 ? -1 : 1;
  else if (Math.abs(r) >= Math.abs(b)) q += Math.sign(a) * Math.sign(b);
  return q;
}

// Proleptic Gregorian calendar on "local milliseconds" (Joda's ISO chronology in UTC).
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): { y: number; m: number; d: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d };
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysInMonth = (y: number, m: number) => (m === 2 && isLeap(y) ? 29 : (DAYS_IN_MONTH[m - 1] as number));
const yearMillis = (y: number) => daysFromCivil(y, 1, 1) * DAY;
const yearMonthMillis = (y: number, m: number) => daysFromCivil(y, m, 1) * DAY;

function fields(local: number) {
  const days = Math.floor(local / DAY);
  return { ...civilFromDays(days), ms: local - days * DAY };
}

/** ISO day of week of a local instant, 1 = Monday … 7 = Sunday (1970-01-01 was a Thursday). */
const dayOfWeek = (local: number) => floorMod(Math.floor(local / DAY) + 3, 7) + 1;

/** `BasicMonthOfYearDateTimeField.add`: month arithmetic, day of month clamped, time of day kept. */
function addMonths(local: number, months: number): number {
  const { y, m, d, ms } = fields(local);
  const total = y * 12 + (m - 1) + months;
  const ny = Math.floor(total / 12);
  const nm = total - ny * 12 + 1;
  return daysFromCivil(ny, nm, Math.min(d, daysInMonth(ny, nm))) * DAY + ms;
}

/** `BasicGJChronology.setYear` via `BasicYearDateTimeField.add`: 29 February becomes the 28th. */
function addYears(local: number, years: number): number {
  const { y, m, d, ms } = fields(local);
  const ny = y + years;
  return daysFromCivil(ny, m, Math.min(d, daysInMonth(ny, m))) * DAY + ms;
}

/** `BasicMonthOfYearDateTimeField.getDifferenceAsLong`: whole months from `b` to `a`. */
function monthDifference(a: number, b: number): number {
  if (a < b) return -monthDifference(b, a);
  const fa = fields(a);
  const fb = fields(b);
  let difference = (fa.y - fb.y) * 12 + fa.m - fb.m;
  let sub = b;
  // The last day of a month is a whole month after a larger day of month (add clamps the same way).
  if (fa.d === daysInMonth(fa.y, fa.m) && fb.d > fa.d) sub = b - (fb.d - fa.d) * DAY;
  if (a - yearMonthMillis(fa.y, fa.m) < sub - yearMonthMillis(fb.y, fb.m)) difference--;
  return difference;
}

/** `BasicGJChronology.getYearDifference`: whole years from `b` to `a`, leap days balanced. */
function yearDifference(a: number, b: number): number {
  if (a < b) return -yearDifference(b, a);
  const ya = fields(a).y;
  const yb = fields(b).y;
  let remA = a - yearMillis(ya);
  let remB = b - yearMillis(yb);
  const FEB_29 = 59 * DAY;
  if (remB >= FEB_29) {
    if (isLeap(yb)) {
      if (!isLeap(ya)) remB -= DAY;
    } else if (remA >= FEB_29 && isLeap(ya)) {
      remA -= DAY;
    }
  }
  return ya - yb - (remA < remB ? 1 : 0);
}

// ---------------------------------------------------------------------------------------------------------
// Time zones

interface Zone {
  /** The id as segops writes it (`UTC` for every UTC alias, `+05:30` for offsets). */
  readonly id: string;
  /** Joda's `DateTimeZone.isFixed()`: one offset in all of history. */
  readonly fixed: boolean;
  /** Offset from UTC at instant `t`, in ms. */
  offset(t: number): number;
  /** Whether some transition T has `lo < T <= hi`. */
  hasTransitionIn(lo: number, hi: number): boolean;
  /** The latest transition T with `t - window < T <= t`. */
  lastTransition(t: number, window: number): number | undefined;
}

function fixedZone(id: string, offset: number): Zone {
  return {
    id,
    fixed: true,
    offset: () => offset,
    hasTransitionIn: () => false,
    lastTransition: () => undefined,
  };
}

const UTC_ZONE = fixedZone("UTC", 0);

/**
 * Transitions of a tz database zone, found by sampling once a day and bisecting to the millisecond (two
 * transitions less than a day apart, which the tz database has not had since 1970, would be missed).
 */
class TzdbZone implements Zone {
  private static readonly CHUNK = 2 ** 33; // ≈ 99 days
  private static readonly STEP = DAY;
  readonly fixed: boolean;
  private readonly chunks = new Map<number, { transitions: number[]; offsets: number[] }>();

  constructor(
    readonly id: string,
    private readonly zone: IANAZone,
  ) {
    const samples: number[] = [];
    for (const y of [1800, 1850, 1890, 1910, 1930, 1950, 1970, 1990, 2010, 2030])
      samples.push(Date.UTC(y, 0, 1), Date.UTC(y, 6, 1));
    const first = this.raw(samples[0] as number);
    this.fixed = samples.every((s) => this.raw(s) === first);
  }

  private raw(t: number): number {
    const minutes = this.zone.offset(t);
    if (!Number.isFinite(minutes)) throw new GranularityError(`instant ${t} is outside the supported range`);
    return Math.round(minutes * MINUTE);
  }

  /** Transitions in `[k·CHUNK, (k+1)·CHUNK)` and the offsets around them (`offsets[0]` holds before the first). */
  private chunk(k: number) {
    let c = this.chunks.get(k);
    if (c) return c;
    const start = k * TzdbZone.CHUNK;
    const end = start + TzdbZone.CHUNK;
    const transitions: number[] = [];
    const offsets = [this.raw(start - 1)];
    let a = start - 1;
    let oa = offsets[0] as number;
    while (a < end - 1) {
      const b = Math.min(a + TzdbZone.STEP, end - 1);
      const ob = this.raw(b);
      if (ob !== oa) {
        let lo = a;
        let hi = b;
        while (hi - lo > 1) {
          const mid = Math.floor((lo + hi) / 2);
          if (this.raw(mid) === oa) lo = mid;
          else hi = mid;
        }
        transitions.push(hi);
        offsets.push(ob);
      }
      a = b;
      oa = ob;
    }
    c = { transitions, offsets };
    this.chunks.set(k, c);
    return c;
  }

  offset(t: number): number {
    if (!(Math.abs(t) <= MAX_INSTANT))
      throw new GranularityError(`instant ${t} is outside the supported range`);
    const c = this.chunk(Math.floor(t / TzdbZone.CHUNK));
    let i = 0;
    while (i < c.transitions.length && (c.transitions[i] as number) <= t) i++;
    return c.offsets[i] as number;
  }

  hasTransitionIn(lo: number, hi: number): boolean {
    for (let k = Math.floor((lo + 1) / TzdbZone.CHUNK); k <= Math.floor(hi / TzdbZone.CHUNK); k++) {
      if (this.chunk(k).transitions.some((tr) => tr > lo && tr <= hi)) return true;
    }
    return false;
  }

  lastTransition(t: number, window: number): number | undefined {
    for (let k = Math.floor(t / TzdbZone.CHUNK); k >= Math.floor((t - window) / TzdbZone.CHUNK); k--) {
      const found = this.chunk(k).transitions.filter((tr) => tr <= t && tr > t - window);
      if (found.length > 0) return found[found.length - 1];
    }
    return undefined;
  }
}

const UTC_ALIASES = new Set(
  [
    "UTC",
    "UCT",
    "Z",
    "Zulu",
    "GMT",
    "GMT0",
    "GMT+0",
    "GMT-0",
    "Greenwich",
    "Universal",
    "Etc/UTC",
    "Etc/UCT",
    "Etc/GMT",
    "Etc/GMT0",
    "Etc/GMT+0",
    "Etc/GMT-0",
    "Etc/Greenwich",
    "Etc/Universal",
    "Etc/Zulu",
  ].map((z) => z.toLowerCase()),
);
const zoneCache = new Map<string, Zone>();
let canonicalZones: Map<string, string> | undefined;

function zoneError(id: string, why: string): GranularityError {
  return new GranularityError(
    `unknown granularity time zone "${id}"${why}: Druid would silently bucket in UTC instead; expected a tz database id such as "America/Los_Angeles", "UTC" or an offset such as "+05:30"`,
    { timeZone: id },
  );
}

function offsetZone(sign: string, hh: string, mm: string | undefined, id: string): Zone {
  const h = Number(hh);
  const m = Number(mm ?? "0");
  if (h > 23 || m > 59) throw zoneError(id, " (offset out of range)");
  const offset = (sign === "-" ? -1 : 1) * (h * HOUR + m * MINUTE);
  if (offset === 0) return UTC_ZONE;
  const text = `${offset < 0 ? "-" : "+"}${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
  return fixedZone(text, offset);
}

/**
 * Resolves a granularity `timeZone` the way Druid does (`DateTimes.inferTzFromString`: Joda's
 * `DateTimeZone.forID`, then Java's `TimeZone.getTimeZone`), refusing the ids Druid would silently turn into UTC.
 */
function resolveZone(input: unknown): Zone {
  if (input === undefined || input === null) return UTC_ZONE;
  if (typeof input !== "string")
    throw new GranularityError(`granularity time zone must be a string, found ${JSON.stringify(input)}`, {
      timeZone: input,
    });
  const cached = zoneCache.get(input);
  if (cached) return cached;
  let zone: Zone;
  // Every spelling of UTC ends as UTC in Druid (an unknown one through the UTC fallback).
  if (UTC_ALIASES.has(input.toLowerCase())) zone = UTC_ZONE;
  else {
    const offset = /^([+-])(\d{2})(?::?(\d{2}))?$/.exec(input); // Joda's forID offset form
    const javaCustom = /^GMT([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(input); // Java's custom "GMT+5:30"
    const match = offset ?? javaCustom;
    if (match) zone = offsetZone(match[1] as string, match[2] as string, match[3], input);
    else {
      if (input.trim() !== input) throw zoneError(input, " (surrounding spaces)");
      if (!IANAZone.isValidZone(input)) throw zoneError(input, "");
      // Joda and Java look ids up case-sensitively; the platform does not.
      canonicalZones ??= new Map(Intl.supportedValuesOf("timeZone").map((z) => [z.toLowerCase(), z]));
      const canonical = canonicalZones.get(input.toLowerCase());
      if (
        (canonical !== undefined && canonical !== input) ||
        !input.split("/").every((s) => /^[A-Z0-9]/.test(s))
      )
        throw zoneError(
          input,
          canonical ? ` (did you mean "${canonical}"? ids are case-sensitive)` : " (ids are case-sensitive)",
        );
      zone = new TzdbZone(input, IANAZone.create(input));
    }
  }
  zoneCache.set(input, zone);
  return zone;
}

// Joda's DateTimeZone conversions, restated.

const toLocal = (z: Zone, t: number) => t + z.offset(t);

/** `DateTimeZone.convertLocalToUTC(local, false)`: gaps resolve with the offset before them (later instant). */
function localToUtc(z: Zone, local: number): number {
  const offsetLocal = z.offset(local);
  let offset = z.offset(local - offsetLocal);
  if (offsetLocal !== offset && offsetLocal < 0) {
    const a = local - offsetLocal;
    const b = local - offset;
    if (z.hasTransitionIn(Math.min(a, b), Math.max(a, b))) offset = offsetLocal;
  }
  return local - offset;
}

/** `convertLocalToUTC(local, false, original)`: keeps the offset of `original` when it still applies. */
function localToUtcFrom(z: Zone, local: number, original: number): number {
  const offsetOriginal = z.offset(original);
  const utc = local - offsetOriginal;
  return z.offset(utc) === offsetOriginal ? utc : localToUtc(z, local);
}

/** `DateTimeZone.getOffsetFromLocal`: after any gap; in an overlap the earlier instant. */
function offsetFromLocal(z: Zone, local: number): number {
  const offsetLocal = z.offset(local);
  const adjusted = local - offsetLocal;
  const offsetAdjusted = z.offset(adjusted);
  if (offsetLocal !== offsetAdjusted) {
    if (offsetLocal - offsetAdjusted < 0 && z.hasTransitionIn(local - offsetAdjusted, adjusted))
      return offsetLocal;
  } else if (offsetLocal >= 0) {
    // Joda's previousTransition(x) is the last transition at or before x, minus 1 ms.
    const last = z.lastTransition(adjusted, 2 * DAY);
    if (last !== undefined) {
      const prev = last - 1;
      const offsetPrev = z.offset(prev);
      if (adjusted - prev <= offsetPrev - offsetLocal) return offsetPrev;
    }
  }
  return offsetAdjusted;
}

// Joda's ZonedChronology fields, restated.

/** `chronology.<field>s().add(t, value)`. */
function addField(z: Zone, f: Field, t: number, value: number): number {
  if (isTimeField(f)) return t + value * (PRECISE_UNIT[f] as number);
  const local = toLocal(z, t);
  const moved =
    f === "years"
      ? addYears(local, value)
      : f === "months"
        ? addMonths(local, value)
        : local + value * (PRECISE_UNIT[f] as number);
  return moved - offsetFromLocal(z, moved);
}

/** `chronology.<field>s().getDifferenceAsLong(t, origin)`. */
function fieldDifference(z: Zone, f: Field, t: number, origin: number): number {
  if (isTimeField(f)) return truncDiv(t - origin, PRECISE_UNIT[f] as number);
  const a = toLocal(z, t);
  const b = toLocal(z, origin);
  if (f === "years") return yearDifference(a, b);
  if (f === "months") return monthDifference(a, b);
  return truncDiv(a - b, PRECISE_UNIT[f] as number);
}

/** `roundFloor` of a date field (year, monthOfYear, dayOfMonth/dayOfWeek): floor the wall time. */
function floorDate(z: Zone, t: number, floor: (local: number) => number): number {
  return localToUtcFrom(z, floor(toLocal(z, t)), t);
}

/** `roundFloor` of a time field (hourOfDay, minuteOfHour): floor with the offset of `t`. */
function floorTime(z: Zone, t: number, unit: number): number {
  const offset = z.offset(t);
  return floorTo(t + offset, unit) - offset;
}

/**
 * `ZonedDateTimeField.set(t, value)`: moves the wall time back by `excess(local)` ms (how far the field is past
 * its target value) and maps it back; Joda fails when the field does not hold the value afterwards.
 */
function setField(z: Zone, t: number, label: string, excess: (local: number) => number): number {
  const local = toLocal(z, t);
  const result = localToUtcFrom(z, local - excess(local), t);
  if (excess(toLocal(z, result)) !== 0) {
    throw new GranularityError(
      `Druid cannot truncate ${formatInstant(t)} in ${z.id}: setting ${label} lands in a time-zone gap (Joda's IllegalFieldValueException)`,
    );
  }
  return result;
}

// ---------------------------------------------------------------------------------------------------------
// Resolved granularities

interface PeriodRule {
  readonly type: "period";
  readonly p: Readonly<PeriodFields>;
  readonly zone: Zone;
  readonly origin: number;
  readonly hasOrigin: boolean;
  readonly single: Field | undefined;
  readonly key: string;
}
interface DurationRule {
  readonly type: "duration";
  readonly duration: number;
  /** `origin % duration`, Java's signed remainder. */
  readonly origin: number;
}
type Rule = PeriodRule | DurationRule;

const rules = new Map<string, Rule>();
const rulesByObject = new WeakMap<BucketGranularity, Rule>();

function ruleOf(g: BucketGranularity): Rule {
  const known = rulesByObject.get(g);
  if (known) return known;
  const rule = buildRule(g);
  rulesByObject.set(g, rule);
  return rule;
}

function buildRule(g: BucketGranularity): Rule {
  const key = `${g.type}|${periodIso(g.period)}|${g.timeZone}|${g.origin ?? ""}`;
  const cached = rules.get(key);
  if (cached) return cached;
  let rule: Rule;
  if (g.type === "duration") {
    const duration = g.period.milliseconds;
    rule = { type: "duration", duration, origin: (g.origin ?? 0) % duration };
  } else {
    const zone = resolveZone(g.timeZone);
    const nonZero = FIELD_ORDER.filter((f) => g.period[f] !== 0);
    rule = {
      type: "period",
      p: g.period,
      zone,
      // PeriodGranularity: without an origin, local 1970-01-01T00:00 in the zone.
      origin: g.origin ?? localToUtcFrom(zone, 0, 0),
      hasOrigin: g.origin !== null,
      single: nonZero.length === 1 ? nonZero[0] : undefined,
      key,
    };
  }
  if (rules.size > 256) rules.clear();
  rules.set(key, rule);
  return rule;
}

/** `PeriodGranularity.truncate`. */
function truncate(r: PeriodRule, t: number): number {
  const { p, zone: z, origin, hasOrigin } = r;
  const f = r.single;
  if (f === undefined) {
    // Compound: truncateMillisPeriod when every field has a fixed length, else truncateCompoundPeriod.
    if (z.fixed && p.years === 0 && p.months === 0) {
      const len = FIELD_ORDER.reduce((sum, x) => sum + p[x] * (PRECISE_UNIT[x] ?? 0), 0);
      let offset = (t % len) - (origin % len);
      if (offset < 0) offset += len;
      return t - offset;
    }
    return truncateCompound(r, t);
  }
  const size = p[f];
  const fromOrigin = size > 1 || (hasOrigin && f !== "milliseconds");
  if (!fromOrigin) {
    switch (f) {
      case "years":
        return floorDate(z, t, (l) => yearMillis(fields(l).y));
      case "months":
        return floorDate(z, t, (l) => {
          const { y, m } = fields(l);
          return yearMonthMillis(y, m);
        });
      case "weeks": {
        const midnight = floorDate(z, t, (l) => floorTo(l, DAY));
        return setField(z, midnight, "the day of week to Monday", (l) => (dayOfWeek(l) - 1) * DAY);
      }
      case "days":
        return floorDate(z, t, (l) => floorTo(l, DAY));
      case "hours":
        return floorTime(z, t, HOUR);
      case "minutes":
        return floorTime(z, t, MINUTE);
      case "seconds":
        return setField(z, t, "the milliseconds to 0", (l) => floorMod(l, SECOND));
      default:
        return t;
    }
  }
  let n = fieldDifference(z, f, t, origin);
  n -= n % size;
  const tt = addField(z, f, origin, n);
  if (f === "hours") {
    if (t < tt && origin > 0) return addField(z, f, tt, -size);
    if (t > tt && origin < 0) {
      const floored = floorTime(z, tt, MINUTE);
      return setField(z, floored, "the minute of hour to 0", (l) => floorTo(floorMod(l, HOUR), MINUTE));
    }
    return tt;
  }
  if (t >= tt) return tt;
  return isTimeField(f) ? addField(z, f, tt, -size) : addField(z, f, origin, n - size);
}

/** `chronology.add(period, t, scalar)`: field by field, largest first. */
function addPeriod(r: PeriodRule, t: number, scalar: number): number {
  let out = t;
  for (const f of FIELD_ORDER) if (r.p[f] !== 0) out = addField(r.zone, f, out, r.p[f] * scalar);
  return out;
}

/**
 * `truncateCompoundPeriod`: the last of `origin, origin + P, origin + 2P, …` not after `t` (or, before the
 * origin, the first of `origin − P, origin − 2P, …` not after it). Every 256th iterate is remembered.
 */
const compoundMarks = new Map<string, { forward: number[]; backward: number[] }>();
const MARK_EVERY = 256;
const MAX_STEPS = 1_000_000;

function truncateCompound(r: PeriodRule, t: number): number {
  let marks = compoundMarks.get(r.key);
  if (!marks) {
    if (compoundMarks.size > 64) compoundMarks.clear();
    marks = { forward: [r.origin], backward: [r.origin] };
    compoundMarks.set(r.key, marks);
  }
  const step = t >= r.origin ? 1 : -1;
  const list = step === 1 ? marks.forward : marks.backward;
  const beyond = (x: number) => (step === 1 ? x > t : x <= t);
  while (!beyond(list[list.length - 1] as number)) {
    if (list.length * MARK_EVERY > MAX_STEPS) {
      throw new GranularityError(
        `period ${periodIso(r.p)} is too fine to walk from its origin ${formatInstant(r.origin)} to ${formatInstant(t)}`,
      );
    }
    let x = list[list.length - 1] as number;
    for (let i = 0; i < MARK_EVERY; i++) x = addPeriod(r, x, step);
    list.push(x);
  }
  // The last mark not beyond t (forward: ≤ t; backward: > t), then walk from it.
  let lo = 0;
  let hi = list.length - 1; // list[hi] is beyond, list[0] (the origin) is not
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (beyond(list[mid] as number)) hi = mid;
    else lo = mid;
  }
  let current = list[lo] as number;
  if (step === 1) {
    for (let next = addPeriod(r, current, 1); t >= next; next = addPeriod(r, current, 1)) current = next;
  } else {
    do current = addPeriod(r, current, -1);
    while (t < current);
  }
  return current;
}

// ---------------------------------------------------------------------------------------------------------
// Parsing

const ZERO: PeriodFields = {
  years: 0,
  months: 0,
  weeks: 0,
  days: 0,
  hours: 0,
  minutes: 0,
  seconds: 0,
  milliseconds: 0,
};

/** Joda's `ISOPeriodFormat.standard()`: `PnYnMnWnDTnHnMn.nnnS`, whole numbers except the seconds. */
const ISO_PERIOD =
  /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:[.,](\d{1,3}))?S)?)?$/i;

function parsePeriod(text: string, context: string): PeriodFields {
  const m = ISO_PERIOD.exec(text);
  if (!m || text.length < 2) {
    if (Duration.fromISO(text).isValid) {
      throw new GranularityError(
        `granularity period "${text}" must be a positive whole period (fractions only in the seconds, e.g. P1D, PT1H, P1DT12H)`,
        { value: context },
      );
    }
    throw new GranularityError(
      `unknown granularity "${context}": "${text}" is not an ISO-8601 period such as P1D or PT1H`,
      {
        value: context,
      },
    );
  }
  const n = (i: number) => Number(m[i] ?? "0");
  const period: PeriodFields = {
    years: n(1),
    months: n(2),
    weeks: n(3),
    days: n(4),
    hours: n(5),
    minutes: n(6),
    seconds: n(7),
    milliseconds: Number((m[8] ?? "").padEnd(3, "0")),
  };
  if (FIELD_ORDER.every((f) => period[f] === 0)) {
    throw new GranularityError(
      `granularity period "${text}" must be a positive whole period (zero is refused by Druid)`,
      {
        value: context,
      },
    );
  }
  if (FIELD_ORDER.some((f) => period[f] > 2_147_483_647)) {
    throw new GranularityError(`granularity period "${text}" is too large`, { value: context });
  }
  return period;
}

/** The canonical ISO text of a period (Joda's `Period.toString()`): `P1D`, `PT1H30M`, `PT0.500S`. */
export function periodIso(p: Readonly<PeriodFields>): string {
  const date = `${p.years ? `${p.years}Y` : ""}${p.months ? `${p.months}M` : ""}${p.weeks ? `${p.weeks}W` : ""}${p.days ? `${p.days}D` : ""}`;
  const secs = p.milliseconds
    ? `${p.seconds}.${String(p.milliseconds).padStart(3, "0")}S`
    : p.seconds
      ? `${p.seconds}S`
      : "";
  const time = `${p.hours ? `${p.hours}H` : ""}${p.minutes ? `${p.minutes}M` : ""}${secs}`;
  return `P${date}${time ? `T${time}` : ""}`;
}

function parseOrigin(value: unknown, input: unknown): number | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value === "number") {
    if (Number.isSafeInteger(value)) return value;
  } else if (typeof value === "string") {
    try {
      return parseInstant(value);
    } catch {
      // fall through to the error below
    }
  }
  throw new GranularityError(
    `granularity origin ${JSON.stringify(value)} is not an instant: expected ISO-8601 (2026-01-01T00:00:00Z; UTC when no offset is given) or epoch milliseconds`,
    { value: input },
  );
}

const STANDARD_BY_PERIOD = new Map(
  Object.entries(GRANULARITY_NAMES)
    .filter((e): e is [string, string] => e[1] !== null)
    .map(([name, iso]) => [iso, name]),
);

function describe(type: "period" | "duration", base: string, zone: Zone, origin: number | null): string {
  const parts = [base];
  if (type === "period" && zone !== UTC_ZONE) parts.push(`in ${zone.id}`);
  if (origin !== null) parts.push(`from ${formatInstant(origin)}`);
  return parts.join(" ");
}

function periodGranularity(
  period: PeriodFields,
  name: string,
  timeZone: unknown,
  origin: unknown,
  input: unknown,
) {
  const zone = resolveZone(timeZone);
  const o = parseOrigin(origin, input);
  const g: BucketGranularity = {
    kind: "period",
    type: "period",
    name: zone === UTC_ZONE && o === null ? name : describe("period", periodIso(period), zone, o),
    period,
    timeZone: zone.id,
    origin: o,
  };
  ruleOf(g);
  return g;
}

/** Keys a granularity object may carry, per type; a near miss ("timezone") would be ignored by Druid. */
const KEYS: Record<string, readonly string[]> = {
  period: ["type", "period", "timeZone", "origin"],
  duration: ["type", "duration", "origin"],
  all: ["type"],
  none: ["type"],
};

function checkKeys(o: Record<string, unknown>, type: string, input: unknown): void {
  const allowed = KEYS[type] ?? [];
  for (const key of Object.keys(o)) {
    if (allowed.includes(key)) continue;
    const near = [...allowed, "timeZone"].find(
      (k) => k.toLowerCase() === key.toLowerCase().replace(/[_-]/g, ""),
    );
    if (near === "timeZone" && type === "duration") {
      throw new GranularityError(
        `a duration granularity has no time zone (Druid ignores "${key}" and buckets in UTC): use {"type":"period","period":…,"timeZone":…} for local buckets`,
        { value: input },
      );
    }
    if (near) {
      throw new GranularityError(
        `unknown key "${key}" in a ${type} granularity: Druid ignores it${near === "timeZone" ? " and buckets in UTC" : ""}; did you mean "${near}"?`,
        { value: input },
      );
    }
  }
}

export interface ParseGranularityOptions {
  /**
   * Read the value as Druid reads a granularity in a JSON spec: a plain string must be a name
   * (`Granularity.fromString` refuses `"PT1H"`; write `{"type":"period","period":"PT1H"}`). @default false
   */
  readonly druidJson?: boolean;
}

/**
 * Accepts what Druid accepts as a granularity (see the module comment): a name (any case), an ISO period,
 * `{"type":"period","period":"P1D","timeZone":"America/Los_Angeles","origin":"2026-01-01T00:00:00Z"}`,
 * `{"type":"duration","duration":3600000,"origin":…}`, `{"type":"all"}` / `{"type":"none"}`. Unknown or
 * mistyped time zones, zero, negative or fractional periods and misspelt keys are refused with the reason.
 */
export function parseGranularity(input: unknown, options: ParseGranularityOptions = {}): Granularity {
  if (typeof input === "string") {
    const key = input.toLowerCase();
    if (key in GRANULARITY_NAMES) {
      const iso = GRANULARITY_NAMES[key];
      if (iso === null || iso === undefined) return key === "all" ? { kind: "all" } : { kind: "none" };
      return periodGranularity(parsePeriod(iso, input), key, null, null, input);
    }
    if (/^P/i.test(input) && options.druidJson) {
      throw new GranularityError(
        `granularity "${input}": Druid reads a plain string as a granularity name only (${Object.keys(GRANULARITY_NAMES).join(", ")}); write {"type":"period","period":"${input.toUpperCase()}"}`,
        { value: input },
      );
    }
    if (/^P/i.test(input)) {
      const period = parsePeriod(input.toUpperCase(), input);
      return periodGranularity(period, periodIso(period), null, null, input);
    }
    throw new GranularityError(
      `unknown granularity "${input}": expected one of ${Object.keys(GRANULARITY_NAMES).join(", ")} or an ISO period such as PT1H`,
      { value: input },
    );
  }
  if (input && typeof input === "object" && !Array.isArray(input)) {
    const o = input as Record<string, unknown>;
    if (o.type === "all" || o.type === "none") {
      checkKeys(o, o.type, input);
      return { kind: o.type };
    }
    if (o.type === "period") {
      checkKeys(o, "period", input);
      if (typeof o.period !== "string") {
        throw new GranularityError(
          `a period granularity needs "period", an ISO-8601 period such as "P1D", found ${JSON.stringify(o.period ?? null)}`,
          { value: input },
        );
      }
      const named = GRANULARITY_NAMES[o.period.toLowerCase()];
      if (named !== undefined && !/^P/i.test(o.period)) {
        const instead = named === null ? `{"type":"${o.period.toLowerCase()}"}` : `"period": "${named}"`;
        throw new GranularityError(
          `granularity period "${o.period}" is a name, not an ISO-8601 period: write ${instead}, or the plain string "${o.period}"`,
          { value: input },
        );
      }
      const period = parsePeriod(o.period.toUpperCase(), o.period);
      return periodGranularity(period, periodIso(period), o.timeZone, o.origin, input);
    }
    if (o.type === "duration") {
      checkKeys(o, "duration", input);
      const d = typeof o.duration === "string" && /^\d+$/.test(o.duration) ? Number(o.duration) : o.duration;
      if (typeof d !== "number" || !Number.isSafeInteger(d) || d <= 0) {
        throw new GranularityError(
          `a duration granularity needs "duration", a positive number of milliseconds (3600000 for an hour), found ${JSON.stringify(o.duration ?? null)}`,
          { value: input },
        );
      }
      const origin = parseOrigin(o.origin, input);
      return {
        kind: "period",
        type: "duration",
        name: describe("duration", `duration ${d}ms`, UTC_ZONE, origin),
        period: { ...ZERO, milliseconds: d },
        timeZone: "UTC",
        origin,
      };
    }
    if (typeof o.type === "string" && o.type.toLowerCase() in KEYS) {
      throw new GranularityError(
        `granularity type "${o.type}" is case-sensitive: write "${o.type.toLowerCase()}"`,
        {
          value: input,
        },
      );
    }
  }
  throw new GranularityError(
    `invalid granularity ${JSON.stringify(input)}: expected a name such as "day", an ISO period, or {"type":"period","period":"P1D","timeZone":…}`,
    { value: input },
  );
}

/**
 * Parses a granularity given as text on a command line: a name, an ISO period, or a JSON object
 * (`{"type":"period","period":"P1D","timeZone":"America/Los_Angeles"}`).
 */
export function parseGranularityText(text: string): Granularity {
  const t = text.trim();
  if (t.startsWith("{")) {
    let value: unknown;
    try {
      value = JSON.parse(t);
    } catch (error) {
      const at = jsonSyntaxProblem(t, error as Error);
      throw new GranularityError(`invalid granularity JSON ${t}: column ${at.column}: ${at.message}`, {
        value: text,
      });
    }
    return parseGranularity(value);
  }
  return parseGranularity(t);
}

/**
 * The canonical JSON form, accepted by Druid and by {@link parseGranularity} (which gives back an equal
 * granularity): a standard granularity as its lower-case name (`day`), others as `{"type":"period",
 * "period":…,"timeZone":…}` with `origin` when one was given (Druid's serializer, without the null origin),
 * or `{"type":"duration","duration":…}`.
 */
export function granularityToJson(g: Granularity): string | { [key: string]: string | number } {
  if (g.kind !== "period") return g.kind;
  let json: { [key: string]: string | number };
  if (g.type === "duration") json = { type: "duration", duration: g.period.milliseconds };
  else {
    const iso = periodIso(g.period);
    const standard = STANDARD_BY_PERIOD.get(iso);
    if (standard && g.timeZone === "UTC" && g.origin === null) return standard;
    json = { type: "period", period: iso, timeZone: g.timeZone };
  }
  if (g.origin !== null) json.origin = formatInstant(g.origin);
  return json;
}

/** Whether two granularities have the same canonical form (and so bucket alike; zone links are not resolved). */
export function sameGranularity(a: Granularity, b: Granularity): boolean {
  return JSON.stringify(granularityToJson(a)) === JSON.stringify(granularityToJson(b));
}

/**
 * A granularity as shown in messages: `DAY`, `PT6H`, `ALL`, or, with a zone or origin, its period with them
 * (`P1D in America/Los_Angeles`, zone ids kept as written).
 */
export function granularityLabel(g: Granularity): string {
  if (g.kind !== "period") return g.kind.toUpperCase();
  return g.type === "period" && g.timeZone === "UTC" && g.origin === null ? g.name.toUpperCase() : g.name;
}

// ---------------------------------------------------------------------------------------------------------
// Bucketing

/** `Granularity.bucketStart`: floors `ms` to the start of its bucket. */
export function bucketStart(g: Granularity, ms: number): number {
  if (g.kind === "none") return ms;
  if (g.kind === "all") return Number.MIN_SAFE_INTEGER;
  const r = ruleOf(g);
  if (r.type === "duration") {
    let offset = (ms % r.duration) - r.origin;
    if (offset < 0) offset += r.duration;
    return ms - offset;
  }
  return truncate(r, ms);
}

/** `Granularity.increment`: `ms` plus one period (in the granularity's zone, field by field). */
export function increment(g: Granularity, ms: number): number {
  if (g.kind === "none") return ms + 1;
  if (g.kind === "all") return Number.MAX_SAFE_INTEGER;
  const r = ruleOf(g);
  return r.type === "duration" ? ms + r.duration : addPeriod(r, ms, 1);
}

/** `Granularity.bucketEnd`: the end of the bucket containing `start`, `increment(bucketStart(start))`. */
export function bucketEnd(g: Granularity, start: number): number {
  return increment(g, bucketStart(g, start));
}

/** `Granularity.bucket`: the bucket containing `ms`. */
export function bucketOf(g: Granularity, ms: number): Interval {
  const start = bucketStart(g, ms);
  return { start, end: increment(g, start) };
}

/** Whether `ms` starts a bucket (`bucketStart(ms) === ms`). */
export function isAligned(g: Granularity, ms: number): boolean {
  return bucketStart(g, ms) === ms;
}

/**
 * Every bucket that overlaps `interval`, in order (unclipped: the first may start before it):
 * `Granularity.getIterable`, the chain of increments from `bucketStart(interval.start)`.
 */
export function bucketsOverlapping(g: Granularity, interval: Interval): Interval[] {
  if (g.kind === "all") return [{ start: Number.MIN_SAFE_INTEGER, end: Number.MAX_SAFE_INTEGER }];
  if (g.kind === "none") throw new GranularityError("cannot enumerate buckets of granularity NONE");
  const out: Interval[] = [];
  for (let s = bucketStart(g, interval.start); s < interval.end; ) {
    const e = increment(g, s);
    out.push({ start: s, end: e });
    s = e;
  }
  return out;
}

/**
 * Where Druid's bucketing of `g` disagrees with itself among `buckets` (a chain from
 * {@link bucketsOverlapping}): a bucket whose start is not its own bucketStart. Rows at such a start go to
 * another bucket than the chain's, so the time chunks Druid locks for an interval and the ones it puts rows
 * in differ. `undefined` when every bucket is consistent.
 */
export function checkTiling(g: Granularity, buckets: readonly Interval[]): string | undefined {
  for (const b of buckets) {
    const own = bucketStart(g, b.start);
    if (own !== b.start) {
      return `Druid's ${granularityLabel(g)} buckets do not tile here: the chain of buckets reaches ${describeInstant(g, b.start)}, but a row at that instant belongs to the bucket starting ${describeInstant(g, own)}`;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Local time

function zoneOf(g: Granularity): Zone {
  return g.kind === "period" && g.type === "period" ? resolveZone(g.timeZone) : UTC_ZONE;
}

/** `ms` as ISO-8601 in a time zone: `2026-03-08T00:00:00.000-08:00` (`Z` in UTC). */
export function formatInstantInZone(ms: number, timeZone: string): string {
  const z = resolveZone(timeZone);
  const offset = z.offset(ms);
  if (offset === 0) return formatInstant(ms);
  const abs = Math.abs(offset);
  const sign = offset < 0 ? "-" : "+";
  const hh = String(Math.floor(abs / HOUR)).padStart(2, "0");
  const mm = String(Math.floor((abs % HOUR) / MINUTE)).padStart(2, "0");
  const ss = abs % MINUTE ? `:${String(Math.floor((abs % MINUTE) / SECOND)).padStart(2, "0")}` : "";
  return `${new Date(ms + offset).toISOString().slice(0, 23)}${sign}${hh}:${mm}${ss}`;
}

/** An instant for messages: UTC, and the local time when the granularity has a zone. */
export function describeInstant(g: Granularity, ms: number): string {
  const z = zoneOf(g);
  return z === UTC_ZONE ? formatInstant(ms) : `${formatInstant(ms)} (${formatInstantInZone(ms, z.id)})`;
}

/**
 * Parses an ISO-8601 instant, reading a wall time without an offset in `timeZone` (a date alone is that
 * day's local midnight). A wall time in a DST gap moves forward by the gap; an ambiguous one takes the
 * earlier instant (Joda's `getOffsetFromLocal`). With an explicit offset or `Z` the zone is not used.
 */
export function parseInstantInZone(text: string, timeZone: string): number {
  const z = resolveZone(timeZone);
  const trimmed = text.trim();
  if (z === UTC_ZONE || /(?:Z|[+-]\d{2}(?::?\d{2})?)$/i.test(trimmed.split("T")[1] ?? ""))
    return parseInstant(trimmed);
  const local = parseInstant(trimmed); // the wall time, read as if in UTC
  return local - offsetFromLocal(z, local);
}
