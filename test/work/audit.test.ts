import { describe, expect, it } from "vitest";
import { parseGranularity } from "../../src/core/granularity.js";
import { parseInterval } from "../../src/core/interval.js";
import { readCompactionConfig } from "../../src/ops/compaction-config.js";
import { auditTimeline, DEFAULT_SIZE_BAND } from "../../src/work/audit.js";
import {
  bandWithCompactionConfig,
  compactionRows,
  datasourceCompactionConfig,
} from "../../src/work/compaction-config.js";
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

  it("flags segments compaction would split, without failing", () => {
    const report = auditTimeline({
      datasource: "wiki",
      interval: parseInterval("2026-01-01/P3D"),
      granularity: day,
      segments: [
        seg("2026-01-01/P1D", "v1", { sizeBytes: 1000 }),
        seg("2026-01-02/P1D", "v1", { numRows: 6_000_000 }),
        seg("2026-01-03/P1D", "v1", { sizeBytes: 900 * 1024 * 1024 }),
      ],
    });
    expect(report.ok).toBe(true);
    // The lone small segment of the first day is all its chunk needs: compacting it changes nothing.
    expect(report.compactionCandidates.map((c) => c.reason)).toEqual(["rows", "large"]);
  });
});

describe("compaction candidates: a chunk compaction would change", () => {
  const KB = 1024;
  const MB = 1024 * 1024;
  const audit = (segments: TimelineSegment[], extra: Partial<Parameters<typeof auditTimeline>[0]> = {}) =>
    auditTimeline({
      datasource: "wiki",
      interval: parseInterval("2026-01-01/P2D"),
      granularity: day,
      segments,
      ...extra,
    });

  it("a small datasource: several small segments of a chunk are candidates, one per chunk is not", () => {
    const fragmented = [0, 1, 2].map((p) =>
      seg("2026-01-01/P1D", "v1", { partitionNum: p, corePartitions: 3, sizeBytes: 40 * KB, numRows: 50 }),
    );
    const report = audit([...fragmented, seg("2026-01-02/P1D", "v1", { sizeBytes: 40 * KB, numRows: 50 })]);
    expect(report.compactionCandidates.map((c) => c.segment)).toEqual(fragmented.map((s) => s.id));
    expect(new Set(report.compactionCandidates.map((c) => c.reason))).toEqual(new Set(["small"]));
  });

  it("a freshly compacted small datasource has no candidates, its overshadowed inputs included", () => {
    const before = [0, 1, 2].map((p) =>
      seg("2026-01-01/P1D", "v1", { partitionNum: p, corePartitions: 3, sizeBytes: 40 * KB, numRows: 50 }),
    );
    const compacted = [
      seg("2026-01-01/P1D", "v2", { sizeBytes: 90 * KB, numRows: 150 }),
      seg("2026-01-02/P1D", "v2", { sizeBytes: 30 * KB, numRows: 40 }),
    ];
    const report = audit([...before, ...compacted]);
    expect(report.chunks.map((c) => c.liveVersions)).toEqual([["v2"], ["v2"]]);
    expect(report.compactionCandidates).toEqual([]);
  });

  it("a large datasource: segments split by the row cap are no candidates, a small surplus one is", () => {
    const split = [0, 1, 2].map((p) =>
      seg("2026-01-01/P1D", "v1", {
        partitionNum: p,
        corePartitions: 3,
        sizeBytes: p === 2 ? 20 * MB : 450 * MB,
        numRows: p === 2 ? 200_000 : 5_000_000,
      }),
    );
    // 10.2 M rows need three segments of 5 M: the small last one is what the cap leaves, no candidate.
    expect(audit(split).compactionCandidates).toEqual([]);
    const surplus = [0, 1, 2].map((p) =>
      seg("2026-01-02/P1D", "v1", {
        partitionNum: p,
        corePartitions: 3,
        sizeBytes: p === 0 ? 500 * MB : 10 * MB,
        numRows: p === 0 ? 3_000_000 : 100_000,
      }),
    );
    // 3.2 M rows and 520 MB fit one segment: the two small ones merge into the first.
    expect(audit(surplus).compactionCandidates.map((c) => c.segment)).toEqual(
      surplus.slice(1).map((s) => s.id),
    );
  });

  it("honours the rows cap of the datasource's compaction config", () => {
    const segments = [0, 1].map((p) =>
      seg("2026-01-01/P1D", "v1", { partitionNum: p, corePartitions: 2, sizeBytes: 40 * KB, numRows: 800 }),
    );
    // Under Druid's default cap the two merge into one segment.
    expect(audit(segments).compactionCandidates).toHaveLength(2);
    // With maxRowsPerSegment 1000, 1600 rows need two segments: nothing to merge.
    const config = {
      dataSource: "wiki",
      tuningConfig: { partitionsSpec: { type: "dynamic", maxRowsPerSegment: 1000 } },
    };
    const band = bandWithCompactionConfig(DEFAULT_SIZE_BAND, config);
    expect(band.maxRows).toBe(1000);
    expect(audit(segments, { sizeBand: band }).compactionCandidates).toEqual([]);
    // With 500, each segment is above the cap: compaction would split them.
    const tight = bandWithCompactionConfig(DEFAULT_SIZE_BAND, {
      ...config,
      tuningConfig: { partitionsSpec: { type: "dynamic", maxRowsPerSegment: 2000, maxTotalRows: 500 } },
    });
    expect(audit(segments, { sizeBand: tight }).compactionCandidates.map((c) => c.reason)).toEqual([
      "rows",
      "rows",
    ]);
  });
});

describe("a datasource's compaction config", () => {
  const cluster = {
    compactionConfigs: [
      { dataSource: "other", tuningConfig: { partitionsSpec: { type: "dynamic", maxRowsPerSegment: 7 } } },
      {
        dataSource: "wiki",
        tuningConfig: { partitionsSpec: { type: "hashed", targetRowsPerSegment: 3_000_000 } },
      },
    ],
    compactionTaskSlotRatio: 0.1,
  };

  it("is the datasource's entry of the cluster config, none when auto-compaction is not configured", () => {
    expect(datasourceCompactionConfig(cluster, "wiki")?.dataSource).toBe("wiki");
    expect(datasourceCompactionConfig(cluster, "absent")).toBeNull();
    expect(datasourceCompactionConfig({ compactionConfigs: [] }, "wiki")).toBeNull();
    expect(datasourceCompactionConfig("not an object", "wiki")).toBeNull();
  });

  it("names its rows cap and where it was read", () => {
    expect(compactionRows(datasourceCompactionConfig(cluster, "wiki"))).toEqual({
      maxRows: 3_000_000,
      from: "tuningConfig.partitionsSpec.targetRowsPerSegment",
    });
    expect(compactionRows({ dataSource: "wiki", maxRowsPerSegment: 42 })).toEqual({
      maxRows: 42,
      from: "maxRowsPerSegment",
    });
    // A config without a cap (Druid's defaults) leaves the band as it is.
    expect(
      compactionRows({ dataSource: "wiki", tuningConfig: { partitionsSpec: { type: "dynamic" } } }),
    ).toBeNull();
    expect(bandWithCompactionConfig(DEFAULT_SIZE_BAND, null)).toEqual(DEFAULT_SIZE_BAND);
  });

  it("is none when the cluster config cannot be read (the band alone judges then)", async () => {
    const denied = { compactionConfig: () => Promise.reject(new Error("403 Forbidden")) };
    expect(await readCompactionConfig(denied, "wiki")).toBeNull();
    const ok = { compactionConfig: () => Promise.resolve(cluster as Record<string, unknown>) };
    expect((await readCompactionConfig(ok, "wiki"))?.dataSource).toBe("wiki");
  });
});
