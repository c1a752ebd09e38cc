import { describe, expect, it } from "vitest";
import { isHandedOff, parseSegmentLoadRow, segmentLoadQuery } from "../../src/druid/sql.js";

describe("segmentLoadQuery", () => {
  it("builds Druid's handoff query with one parameter per version", () => {
    const { query, parameters } = segmentLoadQuery("wiki", ["v1", "v2"]);
    expect(query).toContain("FROM sys.segments");
    expect(query).toContain("WHERE datasource = ? AND is_overshadowed = 0 AND (version = ? OR version = ?)");
    expect(query.match(/\?/g)).toHaveLength(parameters.length);
    expect(parameters.map((p) => p.value)).toEqual(["wiki", "v1", "v2"]);
  });

  it("drops the version clause when no versions are given", () => {
    const { query, parameters } = segmentLoadQuery("wiki", []);
    expect(query).not.toContain("version = ?");
    expect(parameters).toEqual([{ type: "VARCHAR", value: "wiki" }]);
  });
});

describe("handoff counts", () => {
  it("reads numeric strings and missing columns as numbers", () => {
    expect(parseSegmentLoadRow({ usedSegments: "3", pendingSegments: 1 })).toEqual({
      usedSegments: 3,
      precachedSegments: 0,
      onDemandSegments: 0,
      pendingSegments: 1,
      unknownSegments: 0,
    });
    expect(parseSegmentLoadRow(undefined).usedSegments).toBe(0);
  });

  it("is handed off only with nothing pending, nothing unknown and enough segments visible", () => {
    const done = {
      usedSegments: 4,
      precachedSegments: 4,
      onDemandSegments: 0,
      pendingSegments: 0,
      unknownSegments: 0,
    };
    expect(isHandedOff(done)).toBe(true);
    expect(isHandedOff(done, 4)).toBe(true);
    expect(isHandedOff(done, 5)).toBe(false);
    expect(isHandedOff({ ...done, pendingSegments: 1 })).toBe(false);
    expect(isHandedOff({ ...done, unknownSegments: 2 })).toBe(false);
  });
});
