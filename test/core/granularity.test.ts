import { describe, expect, it } from "vitest";
import {
  type BucketGranularity,
  bucketEnd,
  bucketOf,
  bucketStart,
  bucketsOverlapping,
  checkTiling,
  describeInstant,
  formatInstantInZone,
  type Granularity,
  GranularityError,
  granularityLabel,
  granularityToJson,
  increment,
  isAligned,
  parseGranularity,
  parseGranularityText,
  parseInstantInZone,
  sameGranularity,
} from "../../src/core/granularity.js";
import { formatInterval } from "../../src/core/interval.js";

const ms = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();
const HOUR = 3_600_000;
const LA = "America/Los_Angeles";
const period = (p: string, timeZone?: string, origin?: string | number) =>
  parseGranularity({
    type: "period",
    period: p,
    ...(timeZone ? { timeZone } : {}),
    ...(origin !== undefined ? { origin } : {}),
  }) as BucketGranularity;
const hours = (g: Granularity, t: number) => {
  const b = bucketOf(g, t);
  return (b.end - b.start) / HOUR;
};

describe("parsing granularities", () => {
  it("reads names (any case) and ISO periods as UTC periods without origin", () => {
    expect(parseGranularity("Fifteen_Minute")).toEqual({
      kind: "period",
      type: "period",
      name: "fifteen_minute",
      period: { years: 0, months: 0, weeks: 0, days: 0, hours: 0, minutes: 15, seconds: 0, milliseconds: 0 },
      timeZone: "UTC",
      origin: null,
    });
    expect(parseGranularity("p1dt12h")).toMatchObject({ name: "P1DT12H", period: { days: 1, hours: 12 } });
    expect(parseGranularity("PT1.5S")).toMatchObject({
      name: "PT1.500S",
      period: { seconds: 1, milliseconds: 500 },
    });
    expect(parseGranularity({ type: "none" })).toEqual({ kind: "none" });
  });

  it("reads period objects with a time zone and an origin", () => {
    expect(period("P1D", LA)).toMatchObject({
      kind: "period",
      type: "period",
      name: "P1D in America/Los_Angeles",
      timeZone: LA,
      origin: null,
      period: { days: 1 },
    });
    // Origins: ISO with or without offset (UTC then), or epoch milliseconds; "" and null mean none.
    expect(period("PT1H", undefined, "2026-01-01T00:30:00+05:30").origin).toBe(ms("2025-12-31T19:00:00Z"));
    expect(period("PT1H", undefined, "2026-01-01").origin).toBe(ms("2026-01-01T00:00:00Z"));
    expect(period("PT1H", undefined, 1800000).origin).toBe(1_800_000);
    expect(period("PT1H", undefined, "").origin).toBeNull();
    expect(period("P1D", LA, "2026-01-01T06:00:00Z").name).toBe(
      "P1D in America/Los_Angeles from 2026-01-01T06:00:00.000Z",
    );
    // Every spelling of UTC is UTC; offsets are fixed zones, as Joda prints them.
    for (const z of ["UTC", "utc", "Etc/UTC", "GMT", "Z", "+00:00", "-00:00"])
      expect(period("P1D", z).timeZone).toBe("UTC");
    expect(period("P1D", "+0530").timeZone).toBe("+05:30");
    expect(period("P1D", "+05").timeZone).toBe("+05:00");
    expect(period("P1D", "GMT+5:30").timeZone).toBe("+05:30"); // Java's custom id
    expect(period("P1D", "Etc/GMT+8").timeZone).toBe("Etc/GMT+8"); // the tz database's inverted sign: -08:00
    expect(bucketStart(period("P1D", "Etc/GMT+8"), ms("2026-03-08T12:00:00Z"))).toBe(
      ms("2026-03-08T08:00:00Z"),
    );
    expect(period("P1D", "US/Pacific").timeZone).toBe("US/Pacific"); // a link, kept as written
  });

  it("reads duration objects", () => {
    expect(
      parseGranularity({ type: "duration", duration: 3_600_000, origin: "2026-01-01T00:30:00Z" }),
    ).toMatchObject({
      kind: "period",
      type: "duration",
      name: "duration 3600000ms from 2026-01-01T00:30:00.000Z",
      period: { milliseconds: 3_600_000 },
      timeZone: "UTC",
      origin: ms("2026-01-01T00:30:00Z"),
    });
    expect(parseGranularity({ type: "duration", duration: "900000" })).toMatchObject({
      period: { milliseconds: 900_000 },
    });
  });

  it("refuses time zones Druid would silently replace with UTC", () => {
    const zone = (z: unknown) => () => period("P1D", z as string);
    expect(zone("America/Los_Angles")).toThrow(
      /unknown granularity time zone "America\/Los_Angles": Druid would silently bucket in UTC instead/,
    );
    expect(zone("america/los_angeles")).toThrow(
      /did you mean "America\/Los_Angeles"\? ids are case-sensitive/,
    );
    expect(zone("America/LOS_ANGELES")).toThrow(/did you mean "America\/Los_Angeles"/);
    expect(zone(" America/Los_Angeles")).toThrow(/surrounding spaces/);
    expect(zone("UTC+05:30")).toThrow(/unknown granularity time zone "UTC\+05:30"/);
    expect(zone("+24:00")).toThrow(/offset out of range/);
    expect(zone(-8)).toThrow(/time zone must be a string/);
    expect(zone("America/Los_Angles")).toThrow(GranularityError);
  });

  it("refuses bad periods, durations, origins and keys with the reason", () => {
    const bad = (v: unknown) => () => parseGranularity(v);
    expect(bad("P0D")).toThrow(/must be a positive whole period \(zero is refused by Druid\)/);
    expect(bad("P1.5D")).toThrow(/must be a positive whole period \(fractions only in the seconds/);
    expect(bad("P-1D")).toThrow(/must be a positive whole period/);
    expect(bad("PXD")).toThrow(/unknown granularity "PXD": "PXD" is not an ISO-8601 period/);
    expect(bad({ type: "period", period: "day" })).toThrow(
      /granularity period "day" is a name, not an ISO-8601 period: write "period": "P1D", or the plain string "day"/,
    );
    expect(bad({ type: "period", period: "all" })).toThrow(/write \{"type":"all"\}/);
    expect(bad({ type: "period" })).toThrow(/a period granularity needs "period"/);
    expect(bad({ type: "period", period: "P1D", timezone: LA })).toThrow(
      /unknown key "timezone" in a period granularity: Druid ignores it and buckets in UTC; did you mean "timeZone"\?/,
    );
    expect(bad({ type: "period", period: "P1D", Origin: "2026-01-01" })).toThrow(/did you mean "origin"\?/);
    expect(bad({ type: "period", period: "P1D", origin: "yesterday" })).toThrow(
      /granularity origin "yesterday" is not an instant/,
    );
    expect(bad({ type: "duration", duration: "PT1H" })).toThrow(/a positive number of milliseconds/);
    expect(bad({ type: "duration", duration: 0 })).toThrow(/a positive number of milliseconds/);
    expect(bad({ type: "duration", duration: 86_400_000, timeZone: LA })).toThrow(
      /a duration granularity has no time zone \(Druid ignores "timeZone" and buckets in UTC\)/,
    );
    expect(bad({ type: "Period", period: "P1D" })).toThrow(/granularity type "Period" is case-sensitive/);
    expect(bad(["day"])).toThrow(/invalid granularity \["day"\]/);
  });

  it("reads a JSON spec's value as Druid does when asked: plain strings are names only", () => {
    expect(parseGranularity("day", { druidJson: true })).toMatchObject({ name: "day" });
    expect(() => parseGranularity("PT1H", { druidJson: true })).toThrow(
      /Druid reads a plain string as a granularity name only .*; write \{"type":"period","period":"PT1H"\}/,
    );
    expect(parseGranularity({ type: "period", period: "PT1H" }, { druidJson: true })).toMatchObject({
      name: "PT1H",
    });
  });

  it("reads command-line text: a name, a period or JSON", () => {
    expect(
      parseGranularityText(' {"type":"period","period":"P1D","timeZone":"Asia/Kolkata"} '),
    ).toMatchObject({
      timeZone: "Asia/Kolkata",
    });
    expect(parseGranularityText("hour")).toMatchObject({ name: "hour" });
    expect(() => parseGranularityText("{type:period}")).toThrow(/invalid granularity JSON/);
  });
});

describe("the canonical form", () => {
  it("is what Druid accepts: a name when standard, else a period or duration object", () => {
    expect(granularityToJson(parseGranularity("DAY"))).toBe("day");
    expect(granularityToJson(parseGranularity({ type: "period", period: "PT1H", timeZone: "UTC" }))).toBe(
      "hour",
    );
    expect(granularityToJson(parseGranularity("all"))).toBe("all");
    expect(granularityToJson(parseGranularity("P2D"))).toEqual({
      type: "period",
      period: "P2D",
      timeZone: "UTC",
    });
    expect(granularityToJson(period("P1D", LA))).toEqual({ type: "period", period: "P1D", timeZone: LA });
    expect(granularityToJson(period("PT1H", "utc", "2026-01-01T00:30:00+05:30"))).toEqual({
      type: "period",
      period: "PT1H",
      timeZone: "UTC",
      origin: "2025-12-31T19:00:00.000Z",
    });
    expect(granularityToJson(parseGranularity({ type: "duration", duration: 60_000 }))).toEqual({
      type: "duration",
      duration: 60_000,
    });
  });

  it("round-trips: parsing it gives the same granularity, and its form again", () => {
    const inputs: unknown[] = [
      "day",
      "WEEK",
      "PT6H",
      "p1dt12h",
      "PT0.250S",
      "none",
      { type: "all" },
      { type: "period", period: "P1D", timeZone: LA },
      { type: "period", period: "P3M", timeZone: "Europe/London", origin: "2026-02-01T00:00:00Z" },
      { type: "period", period: "PT30M", timeZone: "+05:30", origin: 0 },
      { type: "duration", duration: 5_400_000, origin: "2026-01-01T00:15:00Z" },
    ];
    for (const input of inputs) {
      const g = parseGranularity(input);
      const json = granularityToJson(g);
      const again = parseGranularity(json);
      expect(sameGranularity(again, g)).toBe(true);
      expect(granularityToJson(again)).toEqual(json);
      expect(JSON.parse(JSON.stringify(json))).toEqual(json);
      if (g.kind === "period") {
        for (const t of [ms("2026-03-08T10:30:00Z"), ms("2026-11-01T09:30:00Z"), 0]) {
          expect(bucketStart(again, t)).toBe(bucketStart(g, t));
        }
      }
    }
    expect(sameGranularity(period("P1D", LA), period("P1D"))).toBe(false);
  });

  it("labels granularities for messages", () => {
    expect(granularityLabel(parseGranularity("day"))).toBe("DAY");
    expect(granularityLabel(parseGranularity("pt6h"))).toBe("PT6H");
    expect(granularityLabel(period("P1D", LA))).toBe("P1D in America/Los_Angeles");
    expect(granularityLabel(parseGranularity("all"))).toBe("ALL");
  });
});

describe("bucketing in UTC like Druid's PeriodGranularity", () => {
  const t = ms("2026-05-14T13:47:12.345Z");

  it("counts periods of size > 1 from 1970-01-01, not within the parent field", () => {
    expect(iso(bucketStart(parseGranularity("P2D"), t))).toBe("2026-05-13T00:00:00.000Z");
    expect(iso(bucketStart(parseGranularity("P2W"), t))).toBe("2026-05-07T00:00:00.000Z"); // Thursdays, like 1970-01-01
    expect(iso(bucketStart(parseGranularity("P3Y"), t))).toBe("2024-01-01T00:00:00.000Z"); // 1970, 1973, …, 2024
    expect(iso(bucketStart(parseGranularity("P5M"), t))).toBe("2026-04-01T00:00:00.000Z");
    expect(iso(bucketStart(parseGranularity("PT7M"), t))).toBe("2026-05-14T13:46:00.000Z");
    expect(iso(bucketStart(parseGranularity("PT2S"), t))).toBe("2026-05-14T13:47:12.000Z");
  });

  it("floors compound periods on a fixed grid from the origin", () => {
    const g = parseGranularity("P1DT12H");
    expect(iso(bucketStart(g, t))).toBe("2026-05-14T12:00:00.000Z");
    expect(iso(bucketEnd(g, t))).toBe("2026-05-16T00:00:00.000Z");
    const m = parseGranularity("P1M1D"); // months: walked from the origin, one period at a time
    expect(iso(bucketStart(m, t))).toBe(iso(bucketStart(m, bucketStart(m, t))));
    expect(iso(increment(m, ms("2026-01-31T00:00:00Z")))).toBe("2026-03-01T00:00:00.000Z");
  });

  it("counts from an origin, also before it", () => {
    const g = period("P1D", undefined, "2026-01-01T06:00:00Z");
    expect(iso(bucketStart(g, ms("2026-05-14T05:00:00Z")))).toBe("2026-05-13T06:00:00.000Z");
    expect(iso(bucketStart(g, ms("2020-05-14T05:00:00Z")))).toBe("2020-05-13T06:00:00.000Z");
    expect(iso(bucketStart(g, ms("2020-05-14T07:00:00Z")))).toBe("2020-05-14T06:00:00.000Z");
    // A month from the 31st: increments clamp (Jan 31 → Feb 28 → Mar 28) but buckets count from the origin.
    const m = period("P1M", undefined, "2026-01-31T00:00:00Z");
    expect(iso(bucketStart(m, ms("2026-03-29T00:00:00Z")))).toBe("2026-02-28T00:00:00.000Z");
    expect(iso(increment(m, ms("2026-02-28T00:00:00Z")))).toBe("2026-03-28T00:00:00.000Z");
    expect(
      checkTiling(
        m,
        bucketsOverlapping(m, { start: ms("2026-01-31T00:00:00Z"), end: ms("2026-04-30T00:00:00Z") }),
      ),
    ).toMatch(
      /reaches 2026-03-28T00:00:00.000Z, but a row at that instant belongs to the bucket starting 2026-02-28T00:00:00.000Z/,
    );
  });

  it("buckets durations from their origin, with Java's signed remainder", () => {
    const g = parseGranularity({ type: "duration", duration: HOUR, origin: "2026-01-01T00:30:00Z" });
    expect(iso(bucketStart(g, ms("2026-05-14T12:10:00Z")))).toBe("2026-05-14T11:30:00.000Z");
    expect(iso(increment(g, ms("2026-05-14T11:30:00Z")))).toBe("2026-05-14T12:30:00.000Z");
    // An origin before 1970 leaves a negative remainder: Druid's bucketStart is then an hour early for the
    // second half of each bucket (modelled, not fixed).
    const early = parseGranularity({ type: "duration", duration: HOUR, origin: "1969-12-31T23:30:00Z" });
    expect(iso(bucketStart(early, ms("2026-05-14T00:15:00Z")))).toBe("2026-05-13T23:30:00.000Z");
    expect(iso(bucketStart(early, ms("2026-05-14T00:45:00Z")))).toBe("2026-05-13T23:30:00.000Z");
  });

  it("keeps ALL and NONE", () => {
    expect(bucketStart(parseGranularity("none"), t)).toBe(t);
    expect(increment(parseGranularity("none"), t)).toBe(t + 1);
    expect(bucketOf(parseGranularity("all"), t)).toEqual({
      start: Number.MIN_SAFE_INTEGER,
      end: Number.MAX_SAFE_INTEGER,
    });
  });
});

describe("bucketing in a time zone like Druid's PeriodGranularity", () => {
  it("P1D in America/Los_Angeles: local midnights, 23 hours on 2026-03-08 and 25 on 2026-11-01", () => {
    const g = period("P1D", LA);
    expect(iso(bucketStart(g, ms("2026-03-08T12:00:00Z")))).toBe("2026-03-08T08:00:00.000Z"); // 00:00 PST
    expect(iso(bucketEnd(g, ms("2026-03-08T12:00:00Z")))).toBe("2026-03-09T07:00:00.000Z"); // 00:00 PDT
    expect(hours(g, ms("2026-03-07T12:00:00Z"))).toBe(24);
    expect(hours(g, ms("2026-03-08T12:00:00Z"))).toBe(23);
    expect(hours(g, ms("2026-11-01T12:00:00Z"))).toBe(25);
    expect(hours(g, ms("2026-11-02T12:00:00Z"))).toBe(24);
    expect(isAligned(g, ms("2026-03-07T08:00:00Z"))).toBe(true); // local midnight PST
    expect(isAligned(g, ms("2026-03-07T00:00:00Z"))).toBe(false);
    expect(
      bucketsOverlapping(g, { start: ms("2026-10-31T12:00:00Z"), end: ms("2026-11-02T08:00:00Z") }).map(
        formatInterval,
      ),
    ).toEqual([
      "2026-10-31T07:00:00.000Z/2026-11-01T07:00:00.000Z",
      "2026-11-01T07:00:00.000Z/2026-11-02T08:00:00.000Z",
    ]);
  });

  it("truncates the local wall time for the standard periods", () => {
    const t = ms("2026-05-14T13:47:12.345Z"); // 06:47 PDT, a Thursday
    expect(iso(bucketStart(period("PT1H", LA), t))).toBe("2026-05-14T13:00:00.000Z");
    expect(iso(bucketStart(period("P1W", LA), t))).toBe("2026-05-11T07:00:00.000Z"); // Monday 00:00 PDT
    expect(iso(bucketStart(period("P1M", LA), t))).toBe("2026-05-01T07:00:00.000Z");
    expect(iso(bucketStart(period("P3M", LA), t))).toBe("2026-04-01T07:00:00.000Z");
    expect(iso(bucketStart(period("P1Y", LA), t))).toBe("2026-01-01T08:00:00.000Z"); // 1 January is in PST
    expect(iso(bucketStart(period("P1D", "Asia/Kolkata"), t))).toBe("2026-05-13T18:30:00.000Z");
    expect(iso(bucketStart(period("PT1H", "Asia/Kolkata"), t))).toBe("2026-05-14T13:30:00.000Z");
    expect(iso(bucketStart(period("P1W", "Asia/Kolkata"), t))).toBe("2026-05-10T18:30:00.000Z");
    expect(hours(period("P1D", "Australia/Lord_Howe"), ms("2026-10-04T06:00:00Z"))).toBe(23.5);
    expect(hours(period("P1D", "Australia/Lord_Howe"), ms("2026-04-05T06:00:00Z"))).toBe(24.5);
    expect(hours(period("P1D", "Europe/London"), ms("2026-03-29T12:00:00Z"))).toBe(23);
  });

  it("counts multi-unit time periods as absolute durations from local 1970-01-01", () => {
    // Europe/London was on +01:00 in 1970, so its PT6H grid is 23:00/05:00/11:00/17:00 UTC all year.
    const g = period("PT6H", "Europe/London");
    expect(iso(bucketStart(g, ms("2026-01-15T04:00:00Z")))).toBe("2026-01-14T23:00:00.000Z");
    expect(iso(bucketStart(g, ms("2026-07-15T04:00:00Z")))).toBe("2026-07-14T23:00:00.000Z"); // 00:00 BST
  });

  it("an ambiguous local time takes the earlier instant; truncating keeps the offset that applies", () => {
    const h = period("PT1H", LA);
    expect(iso(bucketStart(h, ms("2026-11-01T08:40:00Z")))).toBe("2026-11-01T08:00:00.000Z"); // 01:40 PDT → 01:00 PDT
    expect(iso(bucketStart(h, ms("2026-11-01T09:40:00Z")))).toBe("2026-11-01T09:00:00.000Z"); // 01:40 PST → 01:00 PST
    // Days from an origin at 01:30: 2026-11-01 01:30 happens twice, the bucket starts at the first.
    const d = period("P1D", LA, "2026-10-31T01:30:00-07:00");
    expect(iso(bucketStart(d, ms("2026-11-01T09:45:00Z")))).toBe("2026-11-01T08:30:00.000Z");
    expect(iso(increment(d, ms("2026-10-31T08:30:00Z")))).toBe("2026-11-01T08:30:00.000Z");
  });

  it("a local midnight that does not exist starts the day at the end of the gap, and Druid's days stop tiling", () => {
    // America/Havana moves from 00:00 CST to 01:00 CDT on 2026-03-08.
    const g = period("P1D", "America/Havana");
    expect(describeInstant(g, bucketStart(g, ms("2026-03-08T16:00:00Z")))).toBe(
      "2026-03-08T05:00:00.000Z (2026-03-08T01:00:00.000-04:00)",
    );
    expect(iso(increment(g, ms("2026-03-07T05:00:00Z")))).toBe("2026-03-08T05:00:00.000Z");
    // The next increment keeps 01:00, but the next day's rows go to its local midnight.
    expect(iso(increment(g, ms("2026-03-08T05:00:00Z")))).toBe("2026-03-09T05:00:00.000Z");
    expect(iso(bucketStart(g, ms("2026-03-09T05:00:00Z")))).toBe("2026-03-09T04:00:00.000Z");
    const chain = bucketsOverlapping(g, {
      start: ms("2026-03-07T05:00:00Z"),
      end: ms("2026-03-10T04:00:00Z"),
    });
    expect(checkTiling(g, chain)).toBe(
      "Druid's P1D in America/Havana buckets do not tile here: the chain of buckets reaches 2026-03-09T05:00:00.000Z (2026-03-09T01:00:00.000-04:00), but a row at that instant belongs to the bucket starting 2026-03-09T04:00:00.000Z (2026-03-09T00:00:00.000-04:00)",
    );
    expect(
      checkTiling(
        period("P1D", LA),
        bucketsOverlapping(period("P1D", LA), { start: 0, end: ms("2027-01-01") }),
      ),
    ).toBe(undefined);
  });

  it("PT1H in Australia/Lord_Howe: Druid's hours overlap across the 30-minute DST shift", () => {
    const g = period("PT1H", "Australia/Lord_Howe");
    // 01:40 +10:30 → 01:00 +10:30; 02:40 +11:00 → 02:00 +11:00, which is 01:30 +10:30.
    expect(iso(bucketStart(g, ms("2026-10-03T15:10:00Z")))).toBe("2026-10-03T14:30:00.000Z");
    expect(iso(bucketStart(g, ms("2026-10-03T15:40:00Z")))).toBe("2026-10-03T15:00:00.000Z");
    const chain = bucketsOverlapping(g, {
      start: ms("2026-10-03T13:30:00Z"),
      end: ms("2026-10-04T13:00:00Z"),
    });
    expect(checkTiling(g, chain)).toMatch(/PT1H in Australia\/Lord_Howe buckets do not tile/);
  });

  it("PT6H on Lord Howe: the 1970 origin was on +10:00, and Druid's flooring to the local hour misses instants", () => {
    // Origin 1969-12-31T14:00Z; in standard time (+10:30) the 6-hour grid is at xx:30 local, and Druid
    // then sets the minutes to 0: the bucket it gives 13:45Z ends before 13:45Z.
    const g = period("PT6H", "Australia/Lord_Howe");
    const b = bucketOf(g, ms("2026-06-01T13:45:00Z"));
    expect(formatInterval(b)).toBe("2026-06-01T07:30:00.000Z/2026-06-01T13:30:00.000Z");
    expect(b.end).toBeLessThan(ms("2026-06-01T13:45:00Z"));
    // In daylight time (+11:00) the grid is on the local hour and consistent.
    expect(iso(bucketStart(g, ms("2026-01-15T13:45:00Z")))).toBe("2026-01-15T08:00:00.000Z");
  });

  it("durations ignore zones: a duration of a day is 24 hours from its origin", () => {
    const g = parseGranularity({ type: "duration", duration: 86_400_000, origin: "2026-01-01T08:00:00Z" });
    expect(hours(g, ms("2026-03-08T12:00:00Z"))).toBe(24);
    expect(iso(bucketStart(g, ms("2026-03-08T12:00:00Z")))).toBe("2026-03-08T08:00:00.000Z");
  });
});

describe("local time helpers", () => {
  it("reads wall times in a zone the way Joda resolves them", () => {
    expect(iso(parseInstantInZone("2026-03-08", LA))).toBe("2026-03-08T08:00:00.000Z");
    expect(iso(parseInstantInZone("2026-03-08T02:30", LA))).toBe("2026-03-08T10:30:00.000Z"); // gap: 03:30 PDT
    expect(iso(parseInstantInZone("2026-11-01T01:30", LA))).toBe("2026-11-01T08:30:00.000Z"); // the first 01:30
    expect(iso(parseInstantInZone("2026-10-25T01:30", "Europe/London"))).toBe("2026-10-25T00:30:00.000Z"); // the first
    expect(iso(parseInstantInZone("2026-03-08", "America/Havana"))).toBe("2026-03-08T05:00:00.000Z"); // 01:00 CDT
    expect(iso(parseInstantInZone("2026-03-08T00:00:00Z", LA))).toBe("2026-03-08T00:00:00.000Z");
    expect(iso(parseInstantInZone("2026-03-08T00:00:00+01:00", LA))).toBe("2026-03-07T23:00:00.000Z");
    expect(iso(parseInstantInZone("2026-03-08", "UTC"))).toBe("2026-03-08T00:00:00.000Z");
  });

  it("prints instants in a zone", () => {
    expect(formatInstantInZone(ms("2026-03-08T10:30:00Z"), LA)).toBe("2026-03-08T03:30:00.000-07:00");
    expect(formatInstantInZone(ms("2026-03-08T10:30:00Z"), "Asia/Kathmandu")).toBe(
      "2026-03-08T16:15:00.000+05:45",
    );
    expect(formatInstantInZone(ms("2026-03-08T10:30:00Z"), "UTC")).toBe("2026-03-08T10:30:00.000Z");
    expect(describeInstant(parseGranularity("day"), 0)).toBe("1970-01-01T00:00:00.000Z");
  });
});
