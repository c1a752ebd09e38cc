import { describe, expect, it } from "vitest";
import { formatInterval, parseInterval } from "../../src/core/interval.js";
import { validateSpec } from "../../src/spec/index.js";

/** Spec validation with a segmentGranularity in a time zone (the validator uses the core functions). */

const LA_DAY = { type: "period", period: "P1D", timeZone: "America/Los_Angeles" };

function task(segmentGranularity: unknown, interval: string) {
  return {
    type: "index_parallel",
    spec: {
      dataSchema: {
        dataSource: "wiki",
        timestampSpec: { column: "ts", format: "iso" },
        dimensionsSpec: { dimensions: ["page"] },
        granularitySpec: { segmentGranularity, queryGranularity: "none", intervals: [interval] },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "local", baseDir: "/data", filter: "*.json" },
        inputFormat: { type: "json" },
        dropExisting: true,
      },
      tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic" } },
    },
  };
}

const validate = (granularity: unknown, interval: string) =>
  validateSpec(task(granularity, interval), { partition: parseInterval(interval) });

describe("validating specs with local-day segments", () => {
  it("accepts an interval from local midnight to local midnight, DST days included", () => {
    expect(validate(LA_DAY, "2026-03-07T08:00:00Z/2026-03-08T08:00:00Z").errors).toEqual([]); // 00:00 PST
    expect(validate(LA_DAY, "2026-03-08T08:00:00Z/2026-03-09T07:00:00Z").errors).toEqual([]); // 23 hours
    expect(validate(LA_DAY, "2026-11-01T07:00:00Z/2026-11-02T08:00:00Z").errors).toEqual([]); // 25 hours
    expect(validate(LA_DAY, "2026-03-01T00:00:00-08:00/2026-04-01T00:00:00-07:00").errors).toEqual([]);
  });

  it("rejects one on UTC midnights, naming the chunks Druid would lock", () => {
    const r = validate(LA_DAY, "2026-03-07T00:00:00Z/2026-03-08T00:00:00Z");
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]?.path).toBe("spec.dataSchema.granularitySpec.intervals[0]");
    expect(r.errors[0]?.message).toContain(
      `Druid would lock and replace ${formatInterval(parseInterval("2026-03-06T08:00:00Z/2026-03-08T08:00:00Z"))}`,
    );
  });

  it("rejects time zones and keys Druid would silently read as UTC", () => {
    for (const [g, message] of [
      [{ ...LA_DAY, timeZone: "America/Los_Angles" }, /unknown granularity time zone "America\/Los_Angles"/],
      [{ ...LA_DAY, timeZone: "america/los_angeles" }, /did you mean "America\/Los_Angeles"/],
      [{ type: "period", period: "P1D", timezone: "America/Los_Angeles" }, /did you mean "timeZone"/],
      [{ type: "period", period: "P0D", timeZone: "America/Los_Angeles" }, /must be a positive whole period/],
    ] as const) {
      const r = validate(g, "2026-03-07T08:00:00Z/2026-03-08T08:00:00Z");
      expect(r.valid).toBe(false);
      expect(r.errors.map((e) => e.message).join("\n")).toMatch(message);
      expect(r.errors.some((e) => e.path === "spec.dataSchema.granularitySpec.segmentGranularity")).toBe(
        true,
      );
    }
  });

  it("accepts origins and durations, aligned to their own grids", () => {
    const sixAm = { type: "period", period: "P1D", origin: "2026-01-01T06:00:00Z" };
    expect(validate(sixAm, "2026-03-07T06:00:00Z/2026-03-08T06:00:00Z").errors).toEqual([]);
    expect(validate(sixAm, "2026-03-07T00:00:00Z/2026-03-08T00:00:00Z").valid).toBe(false);
    const halfHours = { type: "duration", duration: 3_600_000, origin: "2026-01-01T00:30:00Z" };
    expect(validate(halfHours, "2026-03-07T00:30:00Z/2026-03-07T01:30:00Z").errors).toEqual([]);
    expect(validate(halfHours, "2026-03-07T00:00:00Z/2026-03-07T01:00:00Z").valid).toBe(false);
  });
});
