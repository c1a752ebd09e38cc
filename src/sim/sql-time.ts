import { DateTime, IANAZone } from "luxon";
import { bucketStart, parseGranularity } from "../core/granularity.js";

/**
 * Time zones and Joda-style time formats for Broker SQL (`sqlTimeZone`, `TIME_FLOOR`, `TIME_FORMAT`,
 * `TIME_PARSE`; docs/querying/sql-scalar.md "Date and time functions", docs/querying/sql-query-context.md).
 * A real Druid 33 renders TIMESTAMP results in the query's time zone (`2026-05-01T18:00:00.000-07:00`, `Z` for
 * UTC), reads `TIMESTAMP '…'` literals as local times there, floors in local time, and silently falls back to
 * UTC for a zone id it does not know (`Nowhere/Bogus`).
 */
export type Zone = string;

export const UTC: Zone = "UTC";

/** The zone for a `sqlTimeZone` value: an IANA id or a fixed offset (`+05:30`); anything else is UTC. */
export function resolveZone(value: unknown): Zone {
  if (typeof value !== "string" || value.trim() === "") return UTC;
  const v = value.trim();
  const offset = /^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(v);
  if (offset) {
    const minutes = Number(offset[2]) * 60 + Number(offset[3] ?? 0);
    if (minutes === 0) return UTC;
    return `UTC${offset[1]}${String(offset[2]).padStart(2, "0")}:${offset[3] ?? "00"}`;
  }
  if (/^(UTC|GMT|Z|Etc\/UTC)$/i.test(v)) return UTC;
  return IANAZone.isValidZone(v) ? v : UTC;
}

function dt(ms: number, zone: Zone): DateTime {
  return DateTime.fromMillis(ms, { zone: zone === UTC ? "utc" : zone });
}

/** A TIMESTAMP value as Druid's JSON writes it in `zone`. */
export function timestampText(ms: number, zone: Zone): string {
  const d = dt(ms, zone);
  if (!d.isValid) return new Date(ms).toISOString();
  return d.offset === 0 ? `${d.toUTC().toISO({ includeOffset: false })}Z` : (d.toISO() as string);
}

/** `TIMESTAMP 'yyyy-MM-dd[ HH:mm:ss[.SSS]]'` read as a local time in `zone` (an explicit offset wins). */
export function parseTimestampLiteral(text: string, zone: Zone): number {
  const t = text.trim();
  if (/[zZ]$|[+-]\d\d:?\d\d$/.test(t)) return Date.parse(t.replace(" ", "T"));
  const d = DateTime.fromISO(t.replace(" ", "T"), { zone: zone === UTC ? "utc" : zone });
  return d.isValid ? d.toMillis() : Number.NaN;
}

/** `TIME_FLOOR(ts, period)` in `zone`: the bucket of Druid's PeriodGranularity with that time zone. */
export function floorInZone(ms: number, period: string, zone: Zone): number {
  const g = parseGranularity(period);
  if (zone === UTC) return bucketStart(g, ms);
  const local = dt(ms, zone);
  const wall = ms + local.offset * 60_000;
  const floored = DateTime.fromMillis(bucketStart(g, wall), { zone: "utc" });
  return DateTime.fromObject(
    {
      year: floored.year,
      month: floored.month,
      day: floored.day,
      hour: floored.hour,
      minute: floored.minute,
      second: floored.second,
      millisecond: floored.millisecond,
    },
    { zone },
  ).toMillis();
}

type Piece = { kind: "field"; letter: string; count: number } | { kind: "text"; text: string };

/** Splits a Joda `DateTimeFormat` pattern into fields and literal text (`'…'` quotes, `''` a quote). */
function pieces(pattern: string): Piece[] {
  const out: Piece[] = [];
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i] as string;
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        out.push({ kind: "text", text: "'" });
        i += 2;
        continue;
      }
      const end = pattern.indexOf("'", i + 1);
      out.push({ kind: "text", text: pattern.slice(i + 1, end < 0 ? pattern.length : end) });
      i = end < 0 ? pattern.length : end + 1;
    } else if (/[A-Za-z]/.test(c)) {
      let n = 1;
      while (pattern[i + n] === c) n++;
      out.push({ kind: "field", letter: c, count: n });
      i += n;
    } else {
      out.push({ kind: "text", text: c });
      i++;
    }
  }
  return out;
}

/** Thrown for a pattern letter the emulator does not implement. */
export class PatternError extends Error {}

/**
 * Joda's DateTimeFormat letters; any other letter is its IllegalArgumentException "Illegal pattern component: q",
 * which a real Druid 33 answers as a 500 (`IllegalPatternError` carries it to the caller).
 */
const JODA_LETTERS = new Set("GCYxwe EDMdaKhHkmsSzZy".replace(" ", ""));

/** A letter Joda refuses in a pattern. */
export class IllegalPatternError extends Error {}

function checkLetters(parts: Piece[]): void {
  for (const p of parts)
    if (p.kind === "field" && !JODA_LETTERS.has(p.letter))
      throw new IllegalPatternError(`Illegal pattern component: ${p.letter.repeat(p.count)}`);
}

const pad = (n: number, width: number) => String(Math.abs(n)).padStart(width, "0");

function offsetText(minutes: number, colon: boolean): string {
  const sign = minutes < 0 ? "-" : "+";
  const m = Math.abs(minutes);
  return `${sign}${pad(Math.floor(m / 60), 2)}${colon ? ":" : ""}${pad(m % 60, 2)}`;
}

/** The default `TIME_FORMAT` pattern (Joda's `ISODateTimeFormat.dateTime()`). */
export const ISO_PATTERN = "yyyy-MM-dd'T'HH:mm:ss.SSSZZ";

/** `TIME_FORMAT(ts, pattern, zone)` for the common Joda pattern letters. */
export function formatTime(ms: number, pattern: string, zone: Zone): string {
  const d = dt(ms, zone);
  let out = "";
  const parts = pieces(pattern);
  checkLetters(parts);
  for (const p of parts) {
    if (p.kind === "text") {
      out += p.text;
      continue;
    }
    const n = p.count;
    switch (p.letter) {
      case "y":
      case "Y":
        out += n === 2 ? pad(d.year % 100, 2) : pad(d.year, n);
        break;
      // Joda's weekyear, week of weekyear, ISO day of week, era, century of era and the 1-24 / 0-11 hours (a real
      // Druid 33 formatted 2026-03-02 13:45 as 'x' 2026, 'ww' 10, 'e' 1, 'G' AD, 'C' 20, 'k' 13, 'K' 1).
      case "x":
        out += n === 2 ? pad(d.weekYear % 100, 2) : pad(d.weekYear, n);
        break;
      case "w":
        out += pad(d.weekNumber, n);
        break;
      case "e":
        out += pad(d.weekday, n);
        break;
      case "G":
        out += d.year > 0 ? "AD" : "BC";
        break;
      case "C":
        out += pad(Math.floor(d.year / 100), n);
        break;
      case "k":
        out += pad(d.hour === 0 ? 24 : d.hour, n);
        break;
      case "K":
        out += pad(d.hour % 12, n);
        break;
      case "M":
        out += n >= 4 ? d.toFormat("LLLL") : n === 3 ? d.toFormat("LLL") : pad(d.month, n);
        break;
      case "d":
        out += pad(d.day, n);
        break;
      case "D":
        out += pad(d.ordinal, n);
        break;
      case "H":
        out += pad(d.hour, n);
        break;
      case "h":
        out += pad(d.hour % 12 === 0 ? 12 : d.hour % 12, n);
        break;
      case "m":
        out += pad(d.minute, n);
        break;
      case "s":
        out += pad(d.second, n);
        break;
      case "S":
        out += pad(d.millisecond, 3).slice(0, n).padEnd(n, "0");
        break;
      case "a":
        out += d.hour < 12 ? "AM" : "PM";
        break;
      case "E":
        out += n >= 4 ? d.toFormat("cccc") : d.toFormat("ccc");
        break;
      case "Z":
        out += n === 1 ? offsetText(d.offset, false) : n === 2 ? offsetText(d.offset, true) : zone;
        break;
      default:
        throw new PatternError(`pattern letter '${p.letter}'`);
    }
  }
  return out;
}

/** `TIME_PARSE(text, pattern, zone)`: null when the text does not match (as Druid answers). */
export function parseTime(text: string, pattern: string | null, zone: Zone): number | null {
  const luxonZone = zone === UTC ? "utc" : zone;
  if (pattern === null) {
    const d = DateTime.fromISO(text.trim(), { zone: luxonZone });
    return d.isValid ? d.toMillis() : null;
  }
  let re = "";
  const fields: string[] = [];
  const parts = pieces(pattern);
  checkLetters(parts);
  for (const p of parts) {
    if (p.kind === "text") {
      re += p.text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      continue;
    }
    const digits = (min: number, max: number) => `(\\d{${min},${max}})`;
    switch (p.letter) {
      case "y":
      case "Y":
        re += p.count === 2 ? digits(2, 2) : digits(p.count === 1 ? 1 : 4, 9);
        break;
      case "M":
        // MMM and MMMM read an English month name (Joda's text field: 'Mar 2, 2026' with 'MMM d, yyyy').
        re += p.count >= 3 ? "([A-Za-z]+)" : digits(p.count, 2);
        break;
      case "d":
      case "H":
      case "m":
      case "s":
        re += digits(p.count === 1 ? 1 : p.count, 2);
        break;
      case "Z":
        // An offset: Z reads +0100, ZZ +01:00 (Joda accepts either and 'Z' for UTC).
        re += "(Z|[+-]\\d{2}:?\\d{2})";
        break;
      case "S":
        re += digits(1, 9);
        break;
      default:
        throw new PatternError(`pattern letter '${p.letter}'`);
    }
    fields.push(p.letter);
  }
  const m = new RegExp(`^${re}$`).exec(text.trim());
  if (!m) return null;
  const o: Record<string, number> = {
    year: 1970,
    month: 1,
    day: 1,
    hour: 0,
    minute: 0,
    second: 0,
    millisecond: 0,
  };
  let offset: string | null = null;
  const months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
  let badMonth = false;
  fields.forEach((f, i) => {
    const v = m[i + 1] as string;
    if (f === "Z") {
      offset = v;
      return;
    }
    if (f === "M" && /^[A-Za-z]/.test(v)) {
      const k = months.indexOf(v.slice(0, 3).toLowerCase());
      if (k < 0) badMonth = true;
      o.month = k + 1;
      return;
    }
    const key = {
      y: "year",
      Y: "year",
      M: "month",
      d: "day",
      H: "hour",
      m: "minute",
      s: "second",
      S: "millisecond",
    }[f] as string;
    o[key] = key === "millisecond" ? Number(v.padEnd(3, "0").slice(0, 3)) : Number(v);
  });
  if (badMonth) return null;
  const fixed =
    offset === null
      ? null
      : offset === "Z"
        ? "utc"
        : `UTC${(offset as string).replace(/^([+-]\d\d):?/, "$1:")}`;
  const d = DateTime.fromObject(o, { zone: fixed ?? luxonZone });
  return d.isValid ? d.toMillis() : null;
}
