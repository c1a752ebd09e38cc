import { describe, expect, it } from "vitest";
import { segmentViews } from "../../src/serve/dashboard/timeline.js";
import { type ChunkSegment, timelineChunks } from "../../src/serve/dashboard/timeline-chunks.js";

/** The timeline's time chunks: one entry per segment interval, whatever the number of versions there. */

const D1 = ["2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"] as const;
const D2 = ["2026-01-02T00:00:00.000Z", "2026-01-03T00:00:00.000Z"] as const;

function seg(
  day: readonly [string, string],
  version: string,
  extra: Partial<ChunkSegment> = {},
): ChunkSegment {
  return {
    start: day[0],
    end: day[1],
    version,
    status: "live",
    tombstone: false,
    sizeBytes: 1000,
    rows: 10,
    served: true,
    compactionCandidate: null,
    ...extra,
  };
}

describe("timeline chunks", () => {
  it("a re-run and a compaction: one chunk with the live version, counts per lane, versions newest first", () => {
    const chunks = timelineChunks(
      [
        seg(D2, "v3"),
        seg(D1, "v3", { rows: 30, sizeBytes: 3000 }),
        seg(D1, "v2", { status: "overshadowed" }),
        seg(D1, "v2", { status: "overshadowed" }),
        seg(D1, "v1", { status: "unused" }),
      ],
      new Set(["v1", "v2"]),
    );
    expect(chunks.map((c) => c.interval)).toEqual([D1.join("/"), D2.join("/")]);
    const [first] = chunks;
    expect(first?.live).toEqual({
      version: "v3",
      state: "served",
      segments: 1,
      rows: 30,
      bytes: 3000,
      candidates: 0,
    });
    expect(first?.overshadowed).toEqual({ versions: 1, segments: 2 });
    expect(first?.unused).toEqual({ versions: 1, segments: 1 });
    expect(first?.versions.map((v) => [v.version, v.status, v.segments, v.ours])).toEqual([
      ["v3", "live", 1, false],
      ["v2", "overshadowed", 2, true],
      ["v1", "unused", 1, true],
    ]);
  });

  it("names the live version's state: ours, not served, tombstone; none when nothing is live", () => {
    const [ours, unserved, tomb, none] = timelineChunks(
      [
        seg(D1, "v1", { compactionCandidate: "small" }),
        seg(D2, "v1", { served: false }),
        seg(["2026-01-03T00:00:00.000Z", "2026-01-04T00:00:00.000Z"], "v1", { tombstone: true, rows: 0 }),
        seg(["2026-01-04T00:00:00.000Z", "2026-01-05T00:00:00.000Z"], "v0", { status: "unused" }),
      ],
      new Set(["v1"]),
    );
    expect(ours?.live).toMatchObject({ state: "ours", candidates: 1 });
    expect(unserved?.live?.state).toBe("not-served");
    expect(tomb?.live).toMatchObject({ state: "tombstone", rows: 0, bytes: 0 });
    expect(none?.live).toBeNull();
    expect(none?.unused).toEqual({ versions: 1, segments: 1 });
  });

  it("rows are unknown when one segment's are", () => {
    const [c] = timelineChunks([seg(D1, "v1"), seg(D1, "v1", { rows: null })], new Set());
    expect(c?.live?.rows).toBeNull();
    expect(c?.live?.segments).toBe(2);
  });
});

describe("the timeline's segments", () => {
  const window = { start: Date.parse(D1[0]), end: Date.parse(D2[1]) };
  const view = (day: readonly [string, string], version: string) => ({
    id: `ds_${day[0]}_${day[1]}_${version}`,
    start: Date.parse(day[0]),
    end: Date.parse(day[1]),
    version,
    partitionNum: 0,
    corePartitions: 1,
    tombstone: false,
    sizeBytes: 1000,
    numRows: 10,
    served: true,
  });

  it("a segment marked unused between the two reads is in both lists and shown once, as the used list has it", () => {
    const older = view(D1, "v1");
    const segments = segmentViews(
      [older, view(D1, "v2"), view(D2, "v2")],
      [older, view(D2, "v1")],
      window,
      new Map(),
    );
    expect(segments.map((s) => [s.version, s.start.slice(0, 10), s.status])).toEqual([
      ["v2", "2026-01-01", "live"],
      ["v2", "2026-01-02", "live"],
      ["v1", "2026-01-01", "overshadowed"],
      ["v1", "2026-01-02", "unused"],
    ]);
  });
});
