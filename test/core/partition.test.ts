import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bucketsOverlapping, parseGranularity, parseInstantInZone } from "../../src/core/granularity.js";
import { formatInterval, type Interval, parseInterval } from "../../src/core/interval.js";
import { checkPartitions, PartitionError, splitInterval } from "../../src/core/partition.js";

const iv = parseInterval;
const fmt = (list: Interval[]) => list.map(formatInterval);

describe("splitting a range into partitions", () => {
  it("splits by DAY, HOUR and MONTH on calendar boundaries", () => {
    expect(fmt(splitInterval(iv("2026-01-30/2026-02-02"), "DAY"))).toEqual([
      "2026-01-30T00:00:00.000Z/2026-01-31T00:00:00.000Z",
      "2026-01-31T00:00:00.000Z/2026-02-01T00:00:00.000Z",
      "2026-02-01T00:00:00.000Z/2026-02-02T00:00:00.000Z",
    ]);
    expect(splitInterval(iv("2026-01-01T00Z/2026-01-01T05Z"), "hour")).toHaveLength(5);
    expect(fmt(splitInterval(iv("2026-01-01/2026-04-01"), "MONTH")).map((s) => s.slice(0, 10))).toEqual([
      "2026-01-01",
      "2026-02-01",
      "2026-03-01",
    ]);
  });

  it("splits by WEEK on ISO Mondays", () => {
    const weeks = splitInterval(iv("2025-12-29/2026-01-12"), "WEEK");
    expect(fmt(weeks)).toEqual([
      "2025-12-29T00:00:00.000Z/2026-01-05T00:00:00.000Z",
      "2026-01-05T00:00:00.000Z/2026-01-12T00:00:00.000Z",
    ]);
  });

  it("refuses a misaligned range, naming the nearest aligned bounds", () => {
    const attempt = () => splitInterval(iv("2026-01-01T05:00Z/2026-01-03T00:00Z"), "DAY");
    expect(attempt).toThrow(PartitionError);
    expect(attempt).toThrow(
      /start 2026-01-01T05:00:00.000Z is not on a DAY boundary \(nearest: 2026-01-01T00:00:00.000Z before, 2026-01-02T00:00:00.000Z after\)/,
    );
    expect(attempt).toThrow(/Use 2026-01-01T00:00:00.000Z\/2026-01-03T00:00:00.000Z/);
    try {
      attempt();
    } catch (e) {
      expect((e as PartitionError).code).toBe("Usage");
    }
  });

  it("widens a misaligned range outwards when allowed", () => {
    const parts = splitInterval(iv("2026-01-01T05:00Z/2026-01-02T01:00Z"), "DAY", { widen: true });
    expect(fmt(parts)).toEqual([
      "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
      "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
    ]);
  });

  it("refuses ALL and NONE, and plans that are too large", () => {
    expect(() => splitInterval(iv("2026-01-01/2026-01-02"), "all")).toThrow(/granularity ALL/);
    expect(() => splitInterval(iv("2026-01-01/2026-01-02"), "none")).toThrow(/granularity NONE/);
    expect(() => splitInterval(iv("2026-01-01/2027-01-01"), "minute", { maxPartitions: 1000 })).toThrow(
      /more than 1000 partitions/,
    );
  });

  it("covers the range exactly, in order, with no overlap and no gap (property)", () => {
    // Lengths scaled per granularity so each run plans at most a few hundred partitions.
    const grans = fc.constantFrom(
      ["PT15M", 2],
      ["PT1H", 10],
      ["PT6H", 30],
      ["P1D", 200],
      ["P1W", 800],
      ["P1M", 3000],
      ["P3M", 3000],
      ["P1Y", 9000],
    );
    const cases = grans.chain(([name, days]) =>
      fc.tuple(
        fc.constant(parseGranularity(name)),
        fc.integer({ min: 0, max: 3_000_000_000_000 }),
        fc.integer({ min: 1, max: (days as number) * 86_400_000 }),
      ),
    );
    fc.assert(
      fc.property(cases, ([g, start, len]) => {
        const parts = splitInterval({ start, end: start + len }, g, { widen: true });
        const first = parts[0] as Interval;
        const last = parts[parts.length - 1] as Interval;
        expect(first.start).toBeLessThanOrEqual(start);
        expect(last.end).toBeGreaterThanOrEqual(start + len);
        // Widening is minimal: the first and last partitions still intersect the range.
        expect(first.end).toBeGreaterThan(start);
        expect(last.start).toBeLessThan(start + len);
        for (let i = 1; i < parts.length; i++) expect(parts[i]?.start).toBe(parts[i - 1]?.end);
        expect(checkPartitions(parts, g)).toEqual([]);
        // Splitting the widened range again, strictly, gives the same partitions.
        expect(splitInterval({ start: first.start, end: last.end }, g)).toEqual(parts);
      }),
      { numRuns: 300 },
    );
  });
});

describe("splitting by a period in a time zone", () => {
  const LA = "America/Los_Angeles";
  const laDay = parseGranularity({ type: "period", period: "P1D", timeZone: LA });
  const local = (day: string) => parseInstantInZone(day, LA);
  const lengths = (list: Interval[]) => list.map((p) => (p.end - p.start) / 3_600_000);

  it("cuts local days: 23 hours on 2026-03-08, 25 on 2026-11-01, each from local midnight", () => {
    const spring = splitInterval({ start: local("2026-03-06"), end: local("2026-03-11") }, laDay);
    expect(fmt(spring)).toEqual([
      "2026-03-06T08:00:00.000Z/2026-03-07T08:00:00.000Z",
      "2026-03-07T08:00:00.000Z/2026-03-08T08:00:00.000Z",
      "2026-03-08T08:00:00.000Z/2026-03-09T07:00:00.000Z",
      "2026-03-09T07:00:00.000Z/2026-03-10T07:00:00.000Z",
      "2026-03-10T07:00:00.000Z/2026-03-11T07:00:00.000Z",
    ]);
    expect(lengths(spring)).toEqual([24, 24, 23, 24, 24]);
    // The audit's time chunks and the emulator's segment buckets are the same local days.
    expect(bucketsOverlapping(laDay, { start: local("2026-03-06"), end: local("2026-03-11") })).toEqual(
      spring,
    );
    expect(
      bucketsOverlapping(laDay, { start: local("2026-03-06") + 3_600_000, end: local("2026-03-10") }),
    ).toEqual(spring.slice(0, 4));
    const fall = splitInterval({ start: local("2026-10-30"), end: local("2026-11-03") }, laDay);
    expect(lengths(fall)).toEqual([24, 24, 25, 24]);
    expect(fmt(fall)[2]).toBe("2026-11-01T07:00:00.000Z/2026-11-02T08:00:00.000Z");
    // A whole year of local days: 365 partitions, 8760 hours, one 23 and one 25.
    const year = splitInterval({ start: local("2026-01-01"), end: local("2027-01-01") }, laDay);
    expect(year).toHaveLength(365);
    expect(lengths(year).filter((h) => h !== 24)).toEqual([23, 25]);
    expect(checkPartitions(year, laDay)).toEqual([]);
  });

  it("accepts a range starting at local midnight and refuses one that does not, in local time too", () => {
    expect(splitInterval(iv("2026-03-07T08:00:00Z/2026-03-08T08:00:00Z"), laDay)).toHaveLength(1);
    const attempt = () => splitInterval(iv("2026-03-07T00:00:00Z/2026-03-09T07:00:00Z"), laDay);
    expect(attempt).toThrow(PartitionError);
    expect(attempt).toThrow(
      "range 2026-03-07T00:00:00.000Z/2026-03-09T07:00:00.000Z is not aligned to P1D in America/Los_Angeles: the start 2026-03-07T00:00:00.000Z (2026-03-06T16:00:00.000-08:00) is not on a P1D in America/Los_Angeles boundary (nearest: 2026-03-06T08:00:00.000Z (2026-03-06T00:00:00.000-08:00) before, 2026-03-07T08:00:00.000Z (2026-03-07T00:00:00.000-08:00) after). Use 2026-03-06T08:00:00.000Z/2026-03-09T07:00:00.000Z instead, or a finer granularity",
    );
    const widened = splitInterval(iv("2026-03-07T00:00:00Z/2026-03-09T07:00:00Z"), laDay, { widen: true });
    expect(lengths(widened)).toEqual([24, 24, 23]);
  });

  it("cuts local hours, months and quarters", () => {
    const laHour = parseGranularity({ type: "period", period: "PT1H", timeZone: LA });
    expect(splitInterval({ start: local("2026-03-08"), end: local("2026-03-09") }, laHour)).toHaveLength(23);
    expect(splitInterval({ start: local("2026-11-01"), end: local("2026-11-02") }, laHour)).toHaveLength(25);
    const kolkataHour = parseGranularity({ type: "period", period: "PT1H", timeZone: "Asia/Kolkata" });
    expect(fmt(splitInterval(iv("2026-03-07T18:30:00Z/2026-03-07T20:30:00Z"), kolkataHour))).toEqual([
      "2026-03-07T18:30:00.000Z/2026-03-07T19:30:00.000Z",
      "2026-03-07T19:30:00.000Z/2026-03-07T20:30:00.000Z",
    ]);
    const laMonth = parseGranularity({ type: "period", period: "P1M", timeZone: LA });
    expect(fmt(splitInterval({ start: local("2026-02-01"), end: local("2026-05-01") }, laMonth))).toEqual([
      "2026-02-01T08:00:00.000Z/2026-03-01T08:00:00.000Z",
      "2026-03-01T08:00:00.000Z/2026-04-01T07:00:00.000Z",
      "2026-04-01T07:00:00.000Z/2026-05-01T07:00:00.000Z",
    ]);
    const laQuarter = parseGranularity({ type: "period", period: "P3M", timeZone: LA });
    expect(splitInterval({ start: local("2026-01-01"), end: local("2027-01-01") }, laQuarter)).toHaveLength(
      4,
    );
  });

  it("refuses ranges where Druid's own buckets do not tile", () => {
    // America/Havana has no local midnight on 2026-03-08: that day starts at 01:00 and Druid's increments
    // keep 01:00 while rows go to midnight, so neighbouring chunks would overlap.
    const havanaDay = parseGranularity({ type: "period", period: "P1D", timeZone: "America/Havana" });
    const havana = (d: string) => parseInstantInZone(d, "America/Havana");
    expect(() =>
      splitInterval({ start: havana("2026-03-07"), end: havana("2026-03-10") }, havanaDay),
    ).toThrow(
      /cannot partition .* by P1D in America\/Havana: Druid's P1D in America\/Havana buckets do not tile here: the chain of buckets reaches 2026-03-09T05:00:00\.000Z \(2026-03-09T01:00:00\.000-04:00\)/,
    );
    // Up to the missing midnight, and from the day after it, they do.
    expect(splitInterval({ start: havana("2026-03-01"), end: havana("2026-03-08") }, havanaDay)).toHaveLength(
      7,
    );
    expect(splitInterval({ start: havana("2026-03-09"), end: havana("2026-03-20") }, havanaDay)).toHaveLength(
      11,
    );
    // PT1H in Australia/Lord_Howe across its 30-minute DST shift.
    const lordHowe = parseGranularity({ type: "period", period: "PT1H", timeZone: "Australia/Lord_Howe" });
    expect(() => splitInterval(iv("2026-10-03T13:30:00Z/2026-10-04T13:00:00Z"), lordHowe)).toThrow(
      /PT1H in Australia\/Lord_Howe buckets do not tile here/,
    );
    // PT6H on Lord Howe in standard time: not even a local midnight is a bucket start.
    const lordHowe6 = parseGranularity({ type: "period", period: "PT6H", timeZone: "Australia/Lord_Howe" });
    expect(() =>
      splitInterval(iv("2026-05-31T13:30:00Z/2026-06-01T13:30:00Z"), lordHowe6, { widen: true }),
    ).toThrow(/PT6H in Australia\/Lord_Howe buckets do not tile here/);
    // A month from the 31st: Jan 31 → Feb 28 → Mar 28, but Mar 28's rows belong to Feb 28's bucket.
    const from31 = parseGranularity({ type: "period", period: "P1M", origin: "2026-01-31T00:00:00Z" });
    expect(() => splitInterval(iv("2026-01-31/2026-04-30"), from31)).toThrow(/do not tile/);
  });

  it("checks partitions against the zone's boundaries", () => {
    const problems = checkPartitions([iv("2026-03-08T08:00:00Z/2026-03-09T08:00:00Z")], laDay);
    expect(problems.map((p) => p.message)).toEqual([
      "partition #0 2026-03-08T08:00:00.000Z/2026-03-09T08:00:00.000Z is not aligned to P1D in America/Los_Angeles (2026-03-09T08:00:00.000Z (2026-03-09T01:00:00.000-07:00))",
    ]);
  });
});

describe("checking a list of partitions", () => {
  const d = (s: string) => iv(s);
  it("finds overlaps, including with a partition that is not the neighbour", () => {
    const problems = checkPartitions(
      [d("2026-01-01/2026-01-05"), d("2026-01-02/2026-01-03"), d("2026-01-04/2026-01-06")],
      "DAY",
    );
    expect(problems.map((p) => [p.kind, p.indexes])).toEqual([
      ["overlap", [0, 1]],
      ["overlap", [0, 2]],
    ]);
  });

  it("finds gaps with their bounds", () => {
    const problems = checkPartitions([d("2026-01-03/2026-01-04"), d("2026-01-01/2026-01-02")], "DAY");
    expect(problems).toEqual([
      {
        kind: "gap",
        indexes: [1, 0],
        message: "gap 2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z between partitions #1 and #0",
      },
    ]);
  });

  it("finds misaligned and empty partitions", () => {
    const problems = checkPartitions(
      [d("2026-01-01T01:00Z/2026-01-02"), { start: 5, end: 5 }],
      parseGranularity("day"),
    );
    expect(problems.map((p) => p.kind)).toEqual(["misaligned", "empty"]);
    expect(problems[0]?.message).toContain("2026-01-01T01:00:00.000Z");
  });

  it("accepts a tiling in any order", () => {
    expect(checkPartitions([d("2026-01-02/P1D"), d("2026-01-01/P1D"), d("2026-01-03/P1D")], "DAY")).toEqual(
      [],
    );
  });
});
