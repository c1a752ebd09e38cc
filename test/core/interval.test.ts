import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  bucketEnd,
  bucketOf,
  bucketStart,
  bucketsOverlapping,
  isAligned,
  parseGranularity,
} from "../../src/core/granularity.js";
import {
  formatInstant,
  formatInterval,
  intervalSlug,
  parseInstant,
  parseInterval,
} from "../../src/core/interval.js";

const ms = (iso: string) => Date.parse(iso);

describe("intervals", () => {
  it("parses start/end, start/period and period/end as UTC", () => {
    expect(formatInterval(parseInterval("2026-01-01/2026-01-02"))).toBe(
      "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
    );
    expect(parseInterval("2026-01-31/P1M").end).toBe(ms("2026-02-28T00:00:00Z"));
    expect(parseInterval("P1D/2026-01-02").start).toBe(ms("2026-01-01T00:00:00Z"));
    expect(parseInterval("2026-01-01T00:00:00+02:00_2026-01-02").start).toBe(ms("2025-12-31T22:00:00Z"));
  });

  it("rejects malformed and empty intervals with the offending text", () => {
    expect(() => parseInterval("2026-01-02/2026-01-01")).toThrow(/end must be after the start/);
    expect(() => parseInterval("yesterday")).toThrow(/invalid interval "yesterday"/);
    expect(() => parseInterval("2026-13-01/P1D")).toThrow(/invalid ISO-8601 time "2026-13-01"/);
  });

  it("parses the canonical form (its fast path) exactly as luxon does, and leaves impossible dates to it", () => {
    fc.assert(
      fc.property(fc.integer({ min: -6e10, max: 253e12 }), (t) => {
        expect(parseInstant(formatInstant(t))).toBe(t);
      }),
    );
    // Shaped like the canonical form but no real instant: refused with the offending text, as before.
    for (const bad of ["2026-02-30T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-01-01T25:00:00.000Z"])
      expect(() => parseInstant(bad)).toThrow(`invalid ISO-8601 time "${bad}"`);
    expect(parseInstant("2026-01-01T24:00:00.000Z")).toBe(Date.parse("2026-01-02T00:00:00.000Z"));
  });

  it("slugs drop zero time parts and never contain path separators", () => {
    expect(intervalSlug(parseInterval("2026-01-01/P1D"))).toBe("20260101-20260102");
    expect(intervalSlug(parseInterval("2026-01-01T05:00Z/PT1H"))).toBe("20260101T05-20260101T06");
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), fc.integer({ min: 1, max: 1e10 }), (start, len) => {
        expect(intervalSlug({ start, end: start + len })).toMatch(/^[0-9T-]+$/);
      }),
    );
  });
});

describe("granularity", () => {
  it("accepts Druid's names, ISO periods and period objects", () => {
    expect(parseGranularity("DAY")).toMatchObject({ kind: "period", period: { days: 1 } });
    expect(parseGranularity("quarter")).toMatchObject({ period: { months: 3 } });
    expect(parseGranularity({ type: "period", period: "PT6H" })).toMatchObject({ period: { hours: 6 } });
    expect(parseGranularity("all")).toEqual({ kind: "all" });
    expect(() => parseGranularity("fortnight")).toThrow(/unknown granularity "fortnight"/);
    expect(parseGranularity({ type: "period", period: "P1D", timeZone: "America/New_York" })).toMatchObject({
      kind: "period",
      timeZone: "America/New_York",
      period: { days: 1 },
    });
    expect(() => parseGranularity({ type: "period", period: "P1D", timeZone: "America/NewYork" })).toThrow(
      /unknown granularity time zone "America\/NewYork"/,
    );
  });

  it("truncates like Druid in UTC", () => {
    const t = ms("2026-05-14T13:47:12.345Z");
    expect(bucketStart(parseGranularity("hour"), t)).toBe(ms("2026-05-14T13:00:00Z"));
    expect(bucketStart(parseGranularity("six_hour"), t)).toBe(ms("2026-05-14T12:00:00Z"));
    expect(bucketStart(parseGranularity("day"), t)).toBe(ms("2026-05-14T00:00:00Z"));
    expect(bucketStart(parseGranularity("week"), t)).toBe(ms("2026-05-11T00:00:00Z")); // Monday
    expect(bucketStart(parseGranularity("month"), t)).toBe(ms("2026-05-01T00:00:00Z"));
    expect(bucketStart(parseGranularity("quarter"), t)).toBe(ms("2026-04-01T00:00:00Z"));
    expect(bucketStart(parseGranularity("year"), t)).toBe(ms("2026-01-01T00:00:00Z"));
    expect(bucketStart(parseGranularity("fifteen_minute"), t)).toBe(ms("2026-05-14T13:45:00Z"));
    expect(bucketStart(parseGranularity("none"), t)).toBe(t);
  });

  it("buckets tile time: every instant lies in exactly one aligned bucket", () => {
    const names = ["minute", "fifteen_minute", "hour", "six_hour", "day", "week", "month", "quarter", "year"];
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.integer({ min: 0, max: 4e12 }), (name, t) => {
        const g = parseGranularity(name);
        const b = bucketOf(g, t);
        expect(b.start <= t && t < b.end).toBe(true);
        expect(isAligned(g, b.start) && isAligned(g, b.end)).toBe(true);
        expect(bucketStart(g, b.end)).toBe(b.end);
        expect(bucketEnd(g, b.start)).toBe(b.end);
      }),
    );
  });

  it("lists the buckets overlapping an interval contiguously", () => {
    const buckets = bucketsOverlapping(
      parseGranularity("day"),
      parseInterval("2026-01-01T12:00Z/2026-01-04"),
    );
    expect(buckets.map(formatInterval)).toEqual([
      "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
      "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
      "2026-01-03T00:00:00.000Z/2026-01-04T00:00:00.000Z",
    ]);
  });
});
