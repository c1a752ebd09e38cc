import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Interval } from "../../src/core/interval.js";
import { SegmentStore, type SimSegment } from "../../src/sim/timeline.js";

function segment(interval: Interval, version: string, partitionNum: number, core: number): SimSegment {
  return {
    id: `ds_${interval.start}_${interval.end}_${version}_${partitionNum}`,
    dataSource: "ds",
    interval,
    version,
    partitionNum,
    corePartitions: core,
    shardSpec: {},
    size: 1,
    numRows: 1,
    dimensions: [],
    metrics: [],
    loadSpec: {},
    tombstone: false,
    taskId: "t",
    publishedAt: 0,
    servedAt: 0,
    unusedAt: null,
    rows: null,
  };
}

/** The rule as docs/druid-api.md §4.2 states it, computed the slow way: every point covered by a complete higher version. */
function naiveOvershadowed(segments: SimSegment[]): Set<string> {
  const complete = (interval: Interval, version: string) => {
    const group = segments.filter(
      (x) => x.version === version && x.interval.start === interval.start && x.interval.end === interval.end,
    );
    const core = Math.max(...group.map((x) => x.corePartitions));
    for (let p = 0; p < core; p++) if (!group.some((x) => x.partitionNum === p)) return false;
    return true;
  };
  const out = new Set<string>();
  for (const s of segments) {
    let covered = true;
    for (let t = s.interval.start; t < s.interval.end; t++) {
      if (
        !segments.some(
          (h) =>
            h.version > s.version &&
            h.interval.start <= t &&
            t < h.interval.end &&
            complete(h.interval, h.version),
        )
      )
        covered = false;
    }
    if (covered) out.add(s.id);
  }
  return out;
}

describe("timeline overshadowing (docs/druid-api.md §4.2)", () => {
  it("matches the rule: complete higher versions covering the whole interval without gaps", () => {
    const seg = fc
      .record({
        start: fc.integer({ min: 0, max: 8 }),
        len: fc.integer({ min: 1, max: 4 }),
        version: fc.constantFrom("v1", "v2", "v3"),
        partitionNum: fc.integer({ min: 0, max: 2 }),
        core: fc.integer({ min: 0, max: 2 }),
      })
      .map((r) => segment({ start: r.start, end: r.start + r.len }, r.version, r.partitionNum, r.core));
    fc.assert(
      fc.property(fc.array(seg, { maxLength: 12 }), (list) => {
        const unique = list.filter((s, i) => list.findIndex((x) => x.id === s.id) === i);
        const store = new SegmentStore();
        store.add(unique);
        expect([...store.overshadowed("ds")].sort()).toEqual([...naiveOvershadowed(unique)].sort());
      }),
      { numRuns: 500, seed: 3 },
    );
  });

  it("does not let an incomplete higher version overshadow a complete lower one", () => {
    const store = new SegmentStore();
    const day = { start: 0, end: 10 };
    store.add([segment(day, "v1", 0, 1), segment(day, "v2", 0, 2)]);
    expect(store.overshadowed("ds").size).toBe(0);
    store.add([segment(day, "v2", 1, 2)]);
    expect([...store.overshadowed("ds")]).toEqual(["ds_0_10_v1_0"]);
  });

  it("keeps a datasource's timeline when another datasource changes, and rebuilds it when its own does", () => {
    const store = new SegmentStore();
    const day = { start: 0, end: 10 };
    const other = (s: SimSegment): SimSegment => ({ ...s, id: `other_${s.id}`, dataSource: "other" });
    store.add([segment(day, "v1", 0, 1), other(segment(day, "v1", 0, 1))]);
    const before = store.overshadowed("ds");
    // A publish to another datasource leaves this one's analysis as it was (the same object, not re-analysed).
    store.add([other(segment(day, "v2", 0, 1))]);
    expect(store.overshadowed("ds")).toBe(before);
    expect([...store.overshadowed("other")]).toEqual(["other_ds_0_10_v1_0"]);
    expect(store.overlapping("ds", day).map((s) => s.id)).toEqual(["ds_0_10_v1_0"]);
    // Its own publish and its own removal are seen at once.
    store.add([segment(day, "v2", 0, 1)]);
    expect([...store.overshadowed("ds")]).toEqual(["ds_0_10_v1_0"]);
    expect(store.overlapping("ds", day)).toHaveLength(2);
    store.remove("ds", (s) => s.version === "v2");
    expect(store.overshadowed("ds").size).toBe(0);
    expect(store.overlapping("ds", day)).toHaveLength(1);
    // A change in place (markUnused) concerns every datasource.
    store.touch();
    expect(store.overshadowed("ds")).not.toBe(before);
  });
});
