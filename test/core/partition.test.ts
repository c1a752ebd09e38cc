import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseGranularity } from "../../src/core/granularity.js";
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
