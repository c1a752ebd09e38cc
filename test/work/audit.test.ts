import { describe, expect, it } from "vitest";
import { parseGranularity } from "../../src/core/granularity.js";
import { parseInterval } from "../../src/core/interval.js";
import { auditTimeline } from "../../src/work/audit.js";
import { liveTimeline, type TimelineSegment } from "../../src/work/timeline.js";

const day = parseGranularity("day");
let seq = 0;
function seg(interval: string, version: string, extra: Partial<TimelineSegment> = {}): TimelineSegment {
  const { start, end } = parseInterval(interval);
  return {
    id: `wiki_${interval}_${version}_${seq++}`,
    start,
    end,
    version,
    partitionNum: 0,
    corePartitions: 1,
    tombstone: false,
    sizeBytes: 400 * 1024 * 1024,
    numRows: 100,
    served: true,
    ...extra,
  };
}

describe("live timeline (docs/druid-api.md §4.2)", () => {
  it("shows the highest complete version and ignores an incomplete higher one", () => {
    const segs = [
      seg("2026-01-01/P1D", "v1"),
      seg("2026-01-01/P1D", "v2", { partitionNum: 1, corePartitions: 2 }), // partition 0 of v2 missing
    ];
    const pieces = liveTimeline(segs, parseInterval("2026-01-01/P1D"));
    expect(pieces.map((p) => p.liveVersion)).toEqual(["v1"]);
  });

  it("splits a month segment where day segments of a higher version overshadow part of it", () => {
    const segs = [seg("2026-01-01/P1M", "v1"), seg("2026-01-10/P1D", "v2")];
    const pieces = liveTimeline(segs, parseInterval("2026-01-01/P1M"));
    expect(pieces.map((p) => p.liveVersion)).toEqual(["v1", "v2", "v1"]);
  });
});

describe("version audit", () => {
  it("passes when every chunk shows our version, served, once", () => {
    const report = auditTimeline({
      datasource: "wiki",
      interval: parseInterval("2026-01-01/P2D"),
      granularity: day,
      segments: [seg("2026-01-01/P1D", "v1"), seg("2026-01-01/P1D", "v2"), seg("2026-01-02/P1D", "v2")],
      expect: { version: "v2" },
    });
    expect(report.violations).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.chunks.map((c) => c.liveVersions)).toEqual([["v2"], ["v2"]]);
    expect(report.totals).toMatchObject({ rows: 200, segments: 2 });
  });

  it("fails a chunk whose live version is someone else's newer replace", () => {
    const report = auditTimeline({
      datasource: "wiki",
      interval: parseInterval("2026-01-01/P1D"),
      granularity: day,
      segments: [seg("2026-01-01/P1D", "v2"), seg("2026-01-01/P1D", "v3")],
      expect: { version: "v2" },
    });
    expect(report.ok).toBe(false);
    expect(report.violations[0]).toMatchObject({
      kind: "not-ours",
      message: "live version v3 is not ours (v2)",
    });
  });

  it("fails a time chunk with two live versions (mixed granularity)", () => {
    const report = auditTimeline({
      datasource: "wiki",
      interval: parseInterval("2026-01-01/P1M"),
      segments: [seg("2026-01-01/P1M", "v1"), seg("2026-01-10/P1D", "v2")],
    });
    expect(report.violations.map((v) => v.kind)).toContain("mixed-versions");
  });

  it("catches an append that doubled rows", () => {
    const core = seg("2026-01-01/P1D", "v1", { numRows: 300, sizeBytes: 9000 });
    const twin = seg("2026-01-01/P1D", "v1", { partitionNum: 1, numRows: 300, sizeBytes: 9000 });
    const report = auditTimeline({
      datasource: "wiki",
      interval: parseInterval("2026-01-01/P1D"),
      granularity: day,
      segments: [core, twin],
      expect: { mode: "append", rowsPerChunk: { "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z": 300 } },
    });
    expect(report.violations.map((v) => v.kind).sort()).toEqual(["duplicate-append", "rows-mismatch"]);
    expect(report.chunks[0]?.rows).toBe(600);
  });

  it("fails live segments that are not served yet, but not tombstones", () => {
    const report = auditTimeline({
      datasource: "wiki",
      interval: parseInterval("2026-01-01/P2D"),
      granularity: day,
      segments: [
        seg("2026-01-01/P1D", "v1", { served: false }),
        seg("2026-01-02/P1D", "v1", { served: false, tombstone: true, numRows: 0 }),
      ],
      expect: { version: "v1" },
    });
    expect(report.violations.map((v) => v.kind)).toEqual(["not-served"]);
    expect(report.chunks[1]?.tombstone).toBe(true);
  });

  it("flags segments outside the size band as compaction candidates without failing", () => {
    const report = auditTimeline({
      datasource: "wiki",
      interval: parseInterval("2026-01-01/P2D"),
      granularity: day,
      segments: [
        seg("2026-01-01/P1D", "v1", { sizeBytes: 1000 }),
        seg("2026-01-02/P1D", "v1", { numRows: 6_000_000 }),
      ],
    });
    expect(report.ok).toBe(true);
    expect(report.compactionCandidates.map((c) => c.reason)).toEqual(["small", "rows"]);
  });
});
