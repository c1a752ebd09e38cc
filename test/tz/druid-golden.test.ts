import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bucketStart, GranularityError, increment, parseGranularity } from "../../src/core/granularity.js";
import { formatInstant } from "../../src/core/interval.js";
import { goldenCases } from "./fixtures/golden-cases.js";

/**
 * segops' bucketing against Apache Druid's own: druid-33-buckets.json holds bucketStart and increment as
 * computed by druid-processing 33.0.0's PeriodGranularity / DurationGranularity (Joda-Time 2.12.5) for every
 * case of fixtures/golden-cases.ts: standard names, 15 periods in 11 zones (DST gaps and overlaps,
 * 30- and 45-minute offsets, a missing local midnight), origins, compound periods and durations. Regenerate
 * with fixtures/generate-druid-golden.ts.
 */

interface Fixture {
  druid: string;
  instants: number[];
  cases: {
    granularity: unknown;
    druid?: string;
    starts?: (number | string)[];
    increments?: (number | string)[];
    error?: string;
  }[];
}

const fixture = JSON.parse(
  readFileSync(new URL("./fixtures/druid-33-buckets.json", import.meta.url), "utf8"),
) as Fixture;

const answer = (fn: () => number, t: number): number | string => {
  try {
    return fn() - t;
  } catch (error) {
    if (error instanceof GranularityError) return "error";
    throw error;
  }
};

describe("bucketing like Druid 33.0.0", () => {
  it("the fixture covers the cases it was generated from", () => {
    expect(fixture.druid).toBe("33.0.0");
    expect(fixture.cases.map((c) => c.granularity)).toEqual(goldenCases().map((c) => c.granularity));
    expect(fixture.cases.every((c) => c.error === undefined)).toBe(true);
  });

  it.each(fixture.cases.map((c) => [JSON.stringify(c.granularity), c] as const))(
    "%s: bucketStart and increment equal Druid's",
    (_, c) => {
      const g = parseGranularity(c.granularity);
      const mismatches: string[] = [];
      fixture.instants.forEach((t, i) => {
        const druidStart = c.starts?.[i];
        const druidIncrement = c.increments?.[i];
        const start = answer(() => bucketStart(g, t), t);
        const next = answer(() => increment(g, t), t);
        // Druid's failures (Joda's IllegalFieldValueException in a DST gap) are GranularityErrors here.
        const want = (v: number | string | undefined) => (typeof v === "string" ? "error" : v);
        if (start !== want(druidStart) || next !== want(druidIncrement)) {
          mismatches.push(
            `${formatInstant(t)}: bucketStart ${start} vs Druid ${druidStart}, increment ${next} vs Druid ${druidIncrement}`,
          );
        }
      });
      expect(mismatches).toEqual([]);
    },
  );
});
