import fc from "fast-check";
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import {
  bucketOf,
  bucketStart,
  bucketsOverlapping,
  checkTiling,
  formatInstantInZone,
  type Granularity,
  increment,
  isAligned,
  parseGranularity,
} from "../../src/core/granularity.js";
import type { Interval } from "../../src/core/interval.js";
import { checkPartitions, splitInterval } from "../../src/core/partition.js";

/**
 * Properties of period granularities in time zones: buckets contain their instants, every bucket's start is
 * its own bucketStart, and the buckets over a range tile it without gaps or overlaps. Checked in
 * America/Los_Angeles, Europe/London, Asia/Kolkata (+05:30) and Australia/Lord_Howe (a 30-minute DST shift),
 * and against luxon's local calendar as an independent oracle. (That the rules are Druid's is
 * druid-golden.test.ts.)
 */

const ZONES = ["America/Los_Angeles", "Europe/London", "Asia/Kolkata", "Australia/Lord_Howe"] as const;
type Zone = (typeof ZONES)[number];
const CALENDAR = ["P1D", "P1W", "P1M", "P3M", "P1Y"] as const;
/** Sub-day periods whose local boundaries survive every DST change of the zone. */
const TIME: Record<Zone, readonly string[]> = {
  "America/Los_Angeles": ["PT1H", "PT30M", "PT15M"],
  "Europe/London": ["PT1H", "PT30M", "PT15M"],
  "Asia/Kolkata": ["PT1H", "PT30M", "PT15M"],
  "Australia/Lord_Howe": ["PT30M", "PT15M"],
};
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** How long a range to tile, per period, so a run plans at most a few hundred buckets. */
const SPAN: Record<string, number> = {
  PT15M: 3 * DAY,
  PT30M: 5 * DAY,
  PT1H: 10 * DAY,
  P1D: 200 * DAY,
  P1W: 900 * DAY,
  P1M: 3000 * DAY,
  P3M: 6000 * DAY,
  P1Y: 20000 * DAY,
};

const granularities = fc.constantFrom(...ZONES).chain((zone) =>
  fc.constantFrom(...CALENDAR, ...TIME[zone]).map((period) => ({
    zone,
    period,
    g: parseGranularity({ type: "period", period, timeZone: zone }),
  })),
);
// 1990 .. 2040
const instant = fc.integer({ min: 631_152_000_000, max: 2_208_988_800_000 });

function expectTiles(g: Granularity, buckets: readonly Interval[], range: Interval): void {
  const first = buckets[0] as Interval;
  const last = buckets[buckets.length - 1] as Interval;
  expect(first.start).toBeLessThanOrEqual(range.start);
  expect(first.end).toBeGreaterThan(range.start);
  expect(last.end).toBeGreaterThanOrEqual(range.end);
  expect(last.start).toBeLessThan(range.end);
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i] as Interval;
    expect(b.end).toBeGreaterThan(b.start);
    if (i > 0) expect(b.start).toBe((buckets[i - 1] as Interval).end); // no gap, no overlap
    expect(bucketStart(g, b.start)).toBe(b.start); // every bucket's start is its own bucketStart
  }
  expect(checkTiling(g, buckets)).toBeUndefined();
}

describe("period granularities in time zones (properties)", () => {
  it("every instant lies in exactly one bucket, whose start and end are bucket starts", () => {
    fc.assert(
      fc.property(granularities, instant, ({ g }, t) => {
        const b = bucketOf(g, t);
        expect(b.start <= t && t < b.end).toBe(true);
        expect(isAligned(g, b.start)).toBe(true);
        expect(isAligned(g, b.end)).toBe(true);
        expect(increment(g, b.start)).toBe(b.end);
        expect(bucketStart(g, b.end - 1)).toBe(b.start);
        expect(bucketStart(g, b.end)).toBe(b.end);
      }),
      { numRuns: 1500 },
    );
  });

  it("the buckets over a range tile it, and splitting gives exactly those buckets", () => {
    fc.assert(
      fc.property(
        granularities.chain((x) =>
          fc.tuple(fc.constant(x), instant, fc.integer({ min: 1, max: SPAN[x.period] as number })),
        ),
        ([{ g }, start, len]) => {
          const range = { start, end: start + len };
          const buckets = bucketsOverlapping(g, range);
          expectTiles(g, buckets, range);
          const widened = {
            start: (buckets[0] as Interval).start,
            end: (buckets[buckets.length - 1] as Interval).end,
          };
          const parts = splitInterval(range, g, { widen: true });
          expect(parts).toEqual(buckets);
          expect(splitInterval(widened, g)).toEqual(buckets);
          expect(checkPartitions(parts, g)).toEqual([]);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("calendar buckets start at the local midnight (or hour) luxon computes, whatever the offset that day", () => {
    const unit = {
      P1D: "day",
      P1W: "week",
      P1M: "month",
      P3M: "quarter",
      P1Y: "year",
      PT1H: "hour",
    } as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.constantFrom("P1D", "P1W", "P1M", "P3M", "P1Y", "PT1H"),
        instant,
        (zone, period, t) => {
          if (period === "PT1H" && zone === "Australia/Lord_Howe") return; // see the next test
          const g = parseGranularity({ type: "period", period, timeZone: zone });
          const local = DateTime.fromMillis(t, { zone }).startOf(unit[period as keyof typeof unit]);
          expect(bucketStart(g, t)).toBe(local.toMillis());
          const next = DateTime.fromMillis(bucketStart(g, t), { zone }).plus({
            [period === "P3M" ? "months" : unit[period as keyof typeof unit]]: period === "P3M" ? 3 : 1,
          });
          expect(increment(g, bucketStart(g, t))).toBe(next.toMillis());
        },
      ),
      { numRuns: 1500 },
    );
  });

  it("local days last 23, 24 or 25 hours (23.5, 24, 24.5 on Lord Howe) and start at 00:00 local", () => {
    const lengths: Record<Zone, number[]> = {
      "America/Los_Angeles": [23, 24, 25],
      "Europe/London": [23, 24, 25],
      "Asia/Kolkata": [24],
      "Australia/Lord_Howe": [23.5, 24, 24.5],
    };
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), instant, (zone, t) => {
        const b = bucketOf(parseGranularity({ type: "period", period: "P1D", timeZone: zone }), t);
        expect(lengths[zone]).toContain((b.end - b.start) / HOUR);
        expect(formatInstantInZone(b.start, zone).slice(11, 23)).toBe("00:00:00.000");
        expect(formatInstantInZone(b.end, zone).slice(11, 23)).toBe("00:00:00.000");
      }),
      { numRuns: 800 },
    );
  });

  it("PT1H on Lord Howe: buckets contain their instants, but Druid's hours tile a range only if no DST change falls in it", () => {
    const zone = "Australia/Lord_Howe";
    const g = parseGranularity({ type: "period", period: "PT1H", timeZone: zone });
    const offset = (t: number) => DateTime.fromMillis(t, { zone }).offset;
    fc.assert(
      fc.property(instant, fc.integer({ min: 1, max: 3 * DAY }), (t, len) => {
        const b = bucketOf(g, t);
        expect(b.start <= t && t < b.end).toBe(true);
        const start = bucketStart(g, t);
        const chain = bucketsOverlapping(g, { start, end: start + len });
        const shifted = offset(start) !== offset(start + len + HOUR);
        if (!shifted) expect(checkTiling(g, chain)).toBeUndefined();
        if (checkTiling(g, chain) !== undefined) expect(shifted).toBe(true);
      }),
      { numRuns: 600 },
    );
    // Across a DST change it is detected.
    const spring = Date.parse("2026-10-03T13:30:00Z"); // 00:00 +10:30 on the day clocks go to +11:00
    expect(checkTiling(g, bucketsOverlapping(g, { start: spring, end: spring + DAY }))).toMatch(
      /do not tile/,
    );
  });
});
