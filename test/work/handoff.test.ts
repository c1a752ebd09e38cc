import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import type { DataSegment } from "../../src/druid/types.js";
import {
  CheckSchedule,
  HandoffChecker,
  type HandoffQuestion,
  handoffVerdict,
  hullsOf,
  METADATA_MAX_AGE_TICKS,
  overlapIndex,
  RULES_TTL_MS,
  supersededBeforeSeen,
} from "../../src/work/handoff.js";
import { coalesceIntervals, servedByHistoricals } from "../../src/work/segments.js";
import type { TimelineSegment } from "../../src/work/timeline.js";

const day = parseInterval("2026-01-01/P1D");
function seg(version: string, extra: Partial<TimelineSegment> = {}): TimelineSegment {
  return {
    id: `wiki_${version}_${extra.partitionNum ?? 0}`,
    start: day.start,
    end: day.end,
    version,
    partitionNum: 0,
    corePartitions: 1,
    tombstone: false,
    sizeBytes: 10,
    numRows: 5,
    served: true,
    ...extra,
  };
}
const replace = (versions: string[] = [], ids: string[] = []): HandoffQuestion => ({
  interval: day,
  mode: "replace",
  baseline: { versions, segmentIds: ids },
});

describe("handoff gate", () => {
  it("waits while our new version is published but not yet served", () => {
    const v = handoffVerdict(replace(["v1"]), [seg("v1"), seg("v2", { served: false })]);
    expect(v).toEqual({
      state: "waiting",
      version: "v2",
      missing: ["wiki_v2_0 not served"],
      proof: "baseline",
    });
  });

  it("passes once our version is live and served, ignoring the overshadowed old one", () => {
    const v = handoffVerdict(replace(["v1"]), [seg("v1", { served: false }), seg("v2")]);
    expect(v).toMatchObject({ state: "handed-off", version: "v2" });
  });

  it("does not wait for tombstones to be loaded", () => {
    const v = handoffVerdict(replace(["v1"]), [
      seg("v1"),
      seg("v2", { tombstone: true, served: false, numRows: 0 }),
    ]);
    expect(v.state).toBe("handed-off");
  });

  it("waits while our version's core partition set is incomplete", () => {
    const v = handoffVerdict(replace(["v1"]), [seg("v1"), seg("v2", { corePartitions: 2 })]);
    expect(v.state).toBe("waiting");
  });

  it("reports a newer foreign version over ours as superseded once ours is known", () => {
    const q = { ...replace(["v1"]), version: "v2" };
    const v = handoffVerdict(q, [seg("v1"), seg("v2"), seg("v3")]);
    expect(v).toEqual({ state: "superseded", version: "v2", liveVersions: ["v3"] });
  });

  it("takes the oldest new version not older than our task, not a later foreign replace", () => {
    // v2 is ours; v3 is someone's replace that landed before our first check.
    const v = handoffVerdict(replace(["v1"]), [seg("v1"), seg("v2"), seg("v3", { served: false })]);
    expect(v).toMatchObject({ state: "superseded", version: "v2", liveVersions: ["v3"] });
  });

  it("ignores a foreign version that locked the interval before our task was created", () => {
    const q = { ...replace([]), notBefore: "2026-05-01T10:00:00.000Z" };
    const early = "2026-05-01T09:59:59.000Z";
    const ours = "2026-05-01T10:00:00.500Z";
    const v = handoffVerdict(q, [seg(early), seg(ours, { served: false })]);
    expect(v).toEqual({
      state: "waiting",
      version: ours,
      missing: [`wiki_${ours}_0 not served`],
      proof: "baseline",
    });
  });

  it("identifies appended segments by id, not version", () => {
    const q: HandoffQuestion = {
      interval: day,
      mode: "append",
      baseline: { versions: ["v1"], segmentIds: ["wiki_v1_0"] },
    };
    const v = handoffVerdict(q, [seg("v1"), seg("v1", { partitionNum: 1, served: false })]);
    expect(v).toEqual({
      state: "waiting",
      version: "v1",
      missing: ["wiki_v1_1 not served"],
      proof: "baseline",
    });
  });

  it("checks every waiting partition of a datasource with one pair of Coordinator calls per tick", async () => {
    const clock = new ManualClock(0);
    const calls: string[] = [];
    const segment = (interval: string): DataSegment => ({
      dataSource: "wiki",
      interval,
      version: "v9",
      loadSpec: {},
      dimensions: "",
      metrics: "",
      shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
      size: 1,
      totalRows: 1,
    });
    const checker = new HandoffChecker({
      clock,
      tickMs: 1000,
      source: {
        async metadataSegments(ds, intervals) {
          calls.push(`meta ${ds} ${intervals.length}`);
          return intervals.map(segment);
        },
        async servedSegments(ds) {
          calls.push(`served ${ds}`);
          return [];
        },
      },
    });
    const days = Array.from({ length: 10 }, (_, i) =>
      parseInterval(`2026-01-${String(i + 1).padStart(2, "0")}/P1D`),
    );
    const verdicts = Promise.all(
      days.map((interval) =>
        checker.check("wiki", { interval, mode: "replace", baseline: { versions: [], segmentIds: [] } }),
      ),
    );
    await clock.advance(1000);
    const results = await verdicts;
    // The served view first: which partitions need the metadata store read afresh depends on it.
    expect(calls).toEqual(["served wiki", "meta wiki 10"]);
    expect(results.every((r) => r.state === "waiting")).toBe(true);
    await checker.stop();
  });
});

describe("done only with data that provably came from our attempt", () => {
  const old = "2026-04-01T00:00:00.000Z";
  const created = "2026-05-01T10:00:00.000Z";
  const ended = "2026-05-01T10:05:00.000Z";
  const ours = "2026-05-01T10:00:01.000Z";
  const foreign = "2026-05-01T11:00:00.000Z";
  const q = (extra: Partial<HandoffQuestion> = {}): HandoffQuestion => ({
    ...replace([old]),
    notBefore: created,
    notAfter: ended,
    rowsIngested: 8,
    ...extra,
  });

  it("no version of ours found is not handed off when the task ingested rows", () => {
    const v = handoffVerdict(q(), [seg(old)]);
    expect(v).toMatchObject({ state: "lost" });
    expect((v as { reason: string }).reason).toContain("ingested 8 row(s)");
  });

  it("an attempt that ingested no rows and published nothing is handed off with no version", () => {
    expect(handoffVerdict(q({ rowsIngested: 0 }), [seg(old)])).toMatchObject({
      state: "handed-off",
      version: null,
    });
  });

  it("nothing new and no report to say the task ingested nothing is not done", () => {
    expect(handoffVerdict(q({ rowsIngested: null }), [seg(old)]).state).toBe("lost");
  });

  it("a recorded version whose segments vanished is lost, not handed off", () => {
    const v = handoffVerdict(q({ version: ours }), [seg(old)]);
    expect(v).toMatchObject({ state: "lost" });
    expect((v as { reason: string }).reason).toContain(`our version ${ours} is no longer used`);
  });

  it("a foreign version later than our task's lifetime is never taken for ours", () => {
    // Ours became unused; only the later replace is left, and it is past our task's end.
    const v = handoffVerdict(q(), [seg(old), seg(foreign)]);
    expect(v).toMatchObject({ state: "unproven", candidate: foreign });
  });

  it("a version within our task's lifetime is ours, proven by the window", () => {
    const v = handoffVerdict(q(), [seg(old), seg(ours)]);
    expect(v).toMatchObject({ state: "handed-off", version: ours, proof: "window" });
  });

  it("an adopted task's old version under a newer live one is superseded", () => {
    // The task existed before this job read the interval: its version is in the baseline, and
    // another spec's replace is live over it.
    const adopted = q({
      baseline: { versions: [old, ours, foreign], segmentIds: [] },
      baselineTrusted: false,
    });
    const v = handoffVerdict(adopted, [seg(old), seg(ours), seg(foreign)]);
    expect(v).toEqual({ state: "superseded", version: ours, liveVersions: [foreign] });
  });

  it("an adopted task whose version is gone, under another's replace, is not done", () => {
    const adopted = q({ baseline: { versions: [old, foreign], segmentIds: [] }, baselineTrusted: false });
    expect(handoffVerdict(adopted, [seg(old), seg(foreign)]).state).toBe("unproven");
  });

  it("an adopted append cannot tell its segments apart: unproven, never done", () => {
    const adopted: HandoffQuestion = { ...q(), mode: "append", baselineTrusted: false };
    expect(handoffVerdict(adopted, [seg(old), seg(old, { partitionNum: 1 })]).state).toBe("unproven");
  });
});

/**
 * Ours published, replaced by another writer and marked unused before the gate first looked (so never
 * recorded): the unused versions hold it, within our task's lifetime.
 */
describe("a version of ours replaced before the gate first saw it", () => {
  const old = "2026-04-01T00:00:00.000Z";
  const created = "2026-05-01T10:00:00.000Z";
  const ended = "2026-05-01T10:05:00.000Z";
  const ours = "2026-05-01T10:00:01.000Z";
  const foreign = "2026-05-01T11:00:00.000Z";
  const q: HandoffQuestion = { ...replace([old]), notBefore: created, notAfter: ended, rowsIngested: 8 };

  it("is superseded when an unused version within our task's lifetime lies under a newer one over the whole interval", () => {
    expect(handoffVerdict(q, [seg(old), seg(foreign)]).state).toBe("unproven");
    expect(supersededBeforeSeen(q, [seg(old), seg(foreign)], [ours, old])).toEqual({
      state: "superseded",
      version: ours,
      liveVersions: [foreign],
    });
  });

  it("is not when no unused version is ours: outside our task's lifetime, or there before we ran", () => {
    const used = [seg(old), seg(foreign)];
    expect(supersededBeforeSeen(q, used, [])).toBeNull();
    expect(supersededBeforeSeen(q, used, ["2026-05-01T10:30:00.000Z"])).toBeNull(); // after our task ended
    expect(supersededBeforeSeen(q, used, ["2026-05-01T09:59:00.000Z"])).toBeNull(); // before it was created
    expect(
      supersededBeforeSeen({ ...q, baseline: { versions: [old, ours], segmentIds: [] } }, used, [ours]),
    ).toBeNull();
  });

  it("is not when part of the interval shows nothing newer than ours, an append, or a recorded version", () => {
    const half = { start: day.start, end: day.start + 12 * 3_600_000 };
    expect(supersededBeforeSeen(q, [seg(old), seg(foreign, half)], [ours])).toBeNull();
    expect(supersededBeforeSeen({ ...q, mode: "append" }, [seg(foreign)], [ours])).toBeNull();
    expect(supersededBeforeSeen({ ...q, version: ours }, [seg(foreign)], [ours])).toBeNull();
  });
});

/**
 * Druid's Coordinator marks our overshadowed version unused soon after the newer segments over it load
 * (`MarkOvershadowedSegmentsAsUnused`): the same supersession, read later, must not turn into "lost".
 */
describe("a recorded version of ours no longer used", () => {
  const old = "2026-04-01T00:00:00.000Z";
  const ours = "2026-05-01T10:00:01.000Z";
  const newer = "2026-05-01T11:00:00.000Z";
  const q: HandoffQuestion = { ...replace([old]), version: ours, rowsIngested: 8 };
  const hours = (from: number, to: number) => ({
    start: day.start + from * 3_600_000,
    end: day.start + to * 3_600_000,
  });

  it("is superseded when a newer version is live over the whole interval", () => {
    expect(handoffVerdict(q, [seg(old), seg(newer)])).toEqual({
      state: "superseded",
      version: ours,
      liveVersions: [newer],
    });
  });

  it("is superseded by a newer tombstone, or by several newer versions covering the interval between them", () => {
    const tombstone = seg(newer, { tombstone: true, numRows: 0, served: false });
    expect(handoffVerdict(q, [tombstone]).state).toBe("superseded");
    const later = "2026-05-01T12:00:00.000Z";
    const halves = [seg(newer, { id: "a", ...hours(0, 12) }), seg(later, { id: "b", ...hours(12, 24) })];
    expect(handoffVerdict(q, halves)).toEqual({
      state: "superseded",
      version: ours,
      liveVersions: [newer, later],
    });
  });

  it("is lost when nothing or only an older version is live (a kill, a rollback)", () => {
    expect(handoffVerdict(q, []).state).toBe("lost");
    const v = handoffVerdict(q, [seg(old)]);
    expect(v).toMatchObject({ state: "lost" });
    expect((v as { reason: string }).reason).toContain(`our version ${ours} is no longer used`);
  });

  it("is lost when the newer version covers only part of the interval (a gap, or an older version, elsewhere)", () => {
    const part = seg(newer, { ...hours(0, 12) });
    expect(handoffVerdict(q, [part]).state).toBe("lost");
    expect(handoffVerdict(q, [seg(old), part]).state).toBe("lost");
  });

  it("is lost when the newer version is incomplete (not live: Druid would not have overshadowed ours with it)", () => {
    expect(handoffVerdict(q, [seg(old), seg(newer, { corePartitions: 2 })]).state).toBe("lost");
  });

  it("says superseded before asking the load rules, as it does while ours is still used", () => {
    const rules = [{ type: "dropForever" }];
    expect(handoffVerdict(q, [seg(newer)], { rules, now: day.end }).state).toBe("superseded");
    expect(handoffVerdict(q, [seg(old)], { rules, now: day.end }).state).toBe("never-loaded");
  });
});

/**
 * The checker hands each verdict only the segments overlapping its interval (a datasource with
 * 10,000 waiting partitions cost 10,000 × all its segments a tick). The index must find exactly what a
 * scan finds, in the same order.
 */
describe("overlapIndex", () => {
  it("returns exactly the overlapping segments, in their original order", () => {
    const seg = fc.record({
      start: fc.integer({ min: 0, max: 1000 }),
      len: fc.integer({ min: 1, max: 200 }),
    });
    fc.assert(
      fc.property(
        fc.array(seg, { maxLength: 60 }),
        fc.integer({ min: -100, max: 1100 }),
        fc.integer({ min: 1, max: 300 }),
        (raw, start, len) => {
          const segments = raw.map(
            (r, i) => ({ id: `s${i}`, start: r.start, end: r.start + r.len }) as unknown as TimelineSegment,
          );
          const interval = { start, end: start + len };
          const expected = segments.filter((s) => s.start < interval.end && interval.start < s.end);
          expect(overlapIndex(segments)(interval)).toEqual(expected);
        },
      ),
    );
  });
});

describe("handoff checker: the served view per waiting interval (docs/druid-api.md §3.2a)", () => {
  const dataSegment = (interval: string, version = "v9"): DataSegment => ({
    dataSource: "wiki",
    interval,
    version,
    loadSpec: {},
    dimensions: "",
    metrics: "",
    shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
    size: 1,
    totalRows: 1,
  });
  const ask = (interval: string) => ({
    interval: parseInterval(interval),
    mode: "replace" as const,
    baseline: { versions: [], segmentIds: [] },
  });
  const iv = (start: number, end: number) => ({ start, end });
  const hour = (h: number) => {
    const start = Date.UTC(2026, 0, 1, h);
    return `${new Date(start).toISOString()}/${new Date(start + 3_600_000).toISOString()}`;
  };

  /** A source whose serverview serves `servedBy(interval)` over each range asked, and records every call. */
  function source(servedBy: (range: string) => Array<{ type: string }> = () => [{ type: "historical" }]) {
    const calls: string[] = [];
    return {
      calls,
      async metadataSegments(_ds: string, intervals: readonly string[]) {
        calls.push(`meta ${intervals.length}`);
        return intervals.map((i) => dataSegment(i));
      },
      async servedSegments() {
        calls.push("served list");
        return [];
      },
      async servedInInterval(_ds: string, range: string) {
        calls.push(`view ${range}`);
        const { start, end } = parseInterval(range);
        const out = [];
        for (let t = start; t < end; t += 3_600_000) {
          const i = `${new Date(t).toISOString()}/${new Date(t + 3_600_000).toISOString()}`;
          out.push({ segment: dataSegment(i), servers: servedBy(i) });
        }
        return out;
      },
    };
  }

  it("asks the serverview once per range of touching intervals, not the datasource's whole served list", async () => {
    const clock = new ManualClock(0);
    const src = source();
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: src });
    // Hours 0–2 touch (one range); hour 20 stands alone, too far for one read of both (MAX_HULL_SPAN).
    const verdicts = Promise.all([0, 1, 2, 20].map((h) => checker.check("wiki", ask(hour(h)))));
    await clock.advance(1000);
    const results = await verdicts;
    expect(results.map((r) => r.state)).toEqual(["handed-off", "handed-off", "handed-off", "handed-off"]);
    // Each verdict carries what it judged (its interval's segments, served flags included) for the audit.
    const first = results[0];
    expect(first?.state === "handed-off" ? first.seen?.map((s) => [s.start, s.served]) : null).toEqual([
      [Date.UTC(2026, 0, 1, 0), true],
    ]);
    expect(src.calls.sort()).toEqual(
      [
        "meta 4",
        "view 2026-01-01T00:00:00.000Z/2026-01-01T03:00:00.000Z",
        "view 2026-01-01T20:00:00.000Z/2026-01-01T21:00:00.000Z",
      ].sort(),
    );
    expect(checker.stats).toMatchObject({ rounds: 1, requests: 3, servedRanges: 2, servedFallbacks: 0 });
    await checker.stop();
  });

  it("reads ranges that lie close with one serverview over their hull, and judges each partition alike", async () => {
    const clock = new ManualClock(0);
    const src = source((i) => (i === hour(4) ? [] : [{ type: "historical" }]));
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: src });
    // Hours 0, 2 and 4 apart: a hull of 5 hours for 3 hours waiting (within MAX_HULL_SPAN); hour 4 is not served.
    const verdicts = Promise.all([0, 2, 4].map((h) => checker.check("wiki", ask(hour(h)))));
    await clock.advance(1000);
    expect((await verdicts).map((r) => r.state)).toEqual(["handed-off", "handed-off", "waiting"]);
    expect(src.calls.sort()).toEqual(["meta 3", "view 2026-01-01T00:00:00.000Z/2026-01-01T05:00:00.000Z"]);
    expect(checker.stats).toMatchObject({ rounds: 1, requests: 2, servedRanges: 1 });
    expect(hullsOf([iv(0, 1), iv(2, 3), iv(20, 21), iv(40, 41)], 4)).toEqual([
      iv(0, 3),
      iv(20, 21),
      iv(40, 41),
    ]);
    expect(hullsOf([iv(0, 1), iv(2, 3), iv(4, 5)], 1)).toEqual([iv(0, 1), iv(2, 3), iv(4, 5)]);
    await checker.stop();
  });

  it("checks a partition that keeps waiting less and less often, and every tick again once more is served", async () => {
    const clock = new ManualClock(0);
    let served = false;
    const src = source((i) => (i === hour(1) && !served ? [] : [{ type: "historical" }]));
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: src, maxCheckIntervalMs: 4000 });
    const checkedAt: number[] = [];
    // The partition's handler asks again as soon as each verdict comes (as steps/handoff.ts does).
    const loop = (async () => {
      for (;;) {
        const v = await checker.check("wiki", ask(hour(1)));
        checkedAt.push(clock.now());
        if (v.state !== "waiting") return v;
      }
    })();
    for (let t = 0; t < 20; t++) await clock.advance(1000);
    // The first check after the gathering pause, then pauses of 1, 2, 4, 4, … seconds, each due on its own grid
    // (a multiple of the pause at least half a pause away), so partitions waiting together share rounds.
    expect(checkedAt).toEqual([50, 1050, 4000, 8000, 12000, 16000, 20000]);
    // Nothing new served over it: its used segments, read at the first check, stand (METADATA_MAX_AGE_TICKS).
    const meta = () => src.calls.filter((c) => c.startsWith("meta")).length;
    expect(meta()).toBe(1);
    expect(checker.stats.metadataReused).toBe(6);
    served = true;
    for (let t = 0; t < 4; t++) await clock.advance(1000);
    expect((await loop).state).toBe("handed-off");
    // What is served changed: the metadata store is read afresh for the verdict.
    expect(meta()).toBe(2);
    // Seen at the next grid point of the longest pause: the trade of fewer checks for a later handoff.
    expect(checkedAt.at(-1)).toBe(24000);
    expect(checker.stats.deferred).toBeGreaterThan(0);
    await checker.stop();
  });

  it("reads the metadata store again for a waiting partition once METADATA_MAX_AGE_TICKS passed, served view unchanged", async () => {
    const clock = new ManualClock(0);
    let unused = false;
    const base = source(() => []);
    // Our version is marked unused (by hand, say) before it was ever served: only the metadata store shows it.
    const src = {
      ...base,
      async metadataSegments(ds: string, intervals: readonly string[]) {
        const used = await base.metadataSegments(ds, intervals);
        return unused ? [] : used;
      },
    };
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: src, maxCheckIntervalMs: 1000 });
    const q = { ...ask(hour(1)), version: "v9" };
    const verdicts: string[] = [];
    for (let t = 0; t < 2 * METADATA_MAX_AGE_TICKS && verdicts.at(-1) !== "lost"; t++) {
      if (t === 3) unused = true;
      const v = checker.check("wiki", q);
      await clock.advance(1000);
      verdicts.push((await v).state);
    }
    // Read at the first check, again METADATA_MAX_AGE_TICKS later: the loss is seen then, not at tick 3.
    expect(base.calls.filter((c) => c.startsWith("meta"))).toHaveLength(2);
    expect(verdicts).toEqual([...Array(METADATA_MAX_AGE_TICKS).fill("waiting"), "lost"]);
    await checker.stop();
  });

  it("answers a used-segment read (a baseline) in the same metadata POST as the round's checks", async () => {
    const clock = new ManualClock(0);
    const src = source(() => []);
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: src });
    const check = checker.check("wiki", ask(hour(1)));
    const baseline = checker.readUsed("wiki", parseInterval(hour(5)));
    await clock.advance(1000);
    expect((await check).state).toBe("waiting");
    // Only the segments overlapping the read's own interval.
    expect((await baseline).map((s) => s.interval)).toEqual([hour(5)]);
    expect(src.calls.filter((c) => c.startsWith("meta"))).toEqual(["meta 2"]);
    // A read with no check due: one POST of its own, and no served-view read.
    const alone = checker.readUsed("wiki", parseInterval(hour(7)));
    await clock.advance(1000);
    expect((await alone).map((s) => s.interval)).toEqual([hour(7)]);
    expect(src.calls.filter((c) => c.startsWith("meta"))).toEqual(["meta 2", "meta 1"]);
    expect(src.calls.filter((c) => c.startsWith("view"))).toHaveLength(1);
    expect(checker.stats).toMatchObject({ usedReads: 2, metadataReads: 2 });
    await checker.stop();
  });

  it("resets a partition's pause when what is served over it changes", () => {
    const schedule = new CheckSchedule(1000, 8000);
    schedule.waiting("p", "", 1000);
    schedule.waiting("p", "", 2000);
    schedule.waiting("p", "", 4000);
    // Paused 4 s from 4 s: due at 8 s, not before.
    expect(schedule.due("p", 7999)).toBe(false);
    expect(schedule.due("p", 8000)).toBe(true);
    // One of its segments is now served (others still missing): a tick again.
    schedule.waiting("p", "seg1", 8000);
    expect(schedule.due("p", 9000)).toBe(true);
    schedule.done("p");
    expect(schedule.size).toBe(0);
    // A partition nobody asks about any more (canceled) is forgotten.
    schedule.waiting("q", "", 0);
    schedule.prune(100_000);
    expect(schedule.size).toBe(0);
  });

  it("counts a segment only a realtime task announces as not served (Druid's replication-target rule)", async () => {
    const clock = new ManualClock(0);
    const src = source((i) => (i === hour(1) ? [{ type: "indexer-executor" }] : [{ type: "historical" }]));
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: src });
    const verdicts = Promise.all([0, 1].map((h) => checker.check("wiki", ask(hour(h)))));
    await clock.advance(1000);
    const [first, second] = await verdicts;
    expect(first?.state).toBe("handed-off");
    expect(second).toMatchObject({ state: "waiting", missing: [expect.stringMatching(/not served$/)] });
    await checker.stop();
  });

  it("reads a datasource's load rules once a minute, not every round, and again after a failed read", async () => {
    const clock = new ManualClock(0);
    const src = source((i) => (i === hour(1) ? [] : [{ type: "historical" }]));
    let reads = 0;
    let fail = false;
    const rules = {
      ...src,
      async loadRules() {
        reads++;
        if (fail) throw new Error("the Coordinator did not answer");
        return [{ type: "loadForever", tieredReplicants: { _default_tier: 2 } }];
      },
    };
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: rules, maxCheckIntervalMs: 1000 });
    // Hour 1 is never served: it keeps waiting, one round a tick (no pause between checks).
    for (let round = 0; round < 5; round++) {
      const verdict = checker.check("wiki", ask(hour(1)));
      await clock.advance(1000);
      expect((await verdict).state).toBe("waiting");
    }
    expect(reads).toBe(1);
    // A served read each round, the metadata once (nothing new served since), the rules once.
    expect(checker.stats).toMatchObject({ rounds: 5, requests: 5 + 1 + 1 });
    await clock.advance(RULES_TTL_MS);
    fail = true;
    for (let round = 0; round < 2; round++) {
      const verdict = checker.check("wiki", ask(hour(1)));
      await clock.advance(1000);
      expect((await verdict).state).toBe("waiting");
    }
    // Past the minute the rules are read again; a failed read is not kept, so the next round asks again.
    expect(reads).toBe(3);
    await checker.stop();
  });

  it("reads the whole served list once when more ranges wait than maxServedRanges", async () => {
    const clock = new ManualClock(0);
    const src = source();
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: src, maxServedRanges: 2 });
    // Three ranges too far apart for one hull: hours 0, 10 and 20.
    const verdicts = Promise.all([0, 10, 20].map((h) => checker.check("wiki", ask(hour(h)))));
    await clock.advance(1000);
    expect((await verdicts).every((r) => r.state === "waiting")).toBe(true);
    expect(src.calls.sort()).toEqual(["meta 3", "served list"]);
    expect(checker.stats).toMatchObject({ requests: 2, servedRanges: 0, servedFallbacks: 1 });
    await checker.stop();
  });

  it("rejects every waiting verdict when a served-view request fails", async () => {
    const clock = new ManualClock(0);
    const src = {
      ...source(),
      async servedInInterval(): Promise<never> {
        throw new Error("coordinator down");
      },
    };
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: src });
    const verdicts = [0, 3].map((h) => checker.check("wiki", ask(hour(h))));
    for (const v of verdicts) v.catch(() => {});
    await clock.advance(1000);
    for (const v of verdicts) await expect(v).rejects.toThrow("coordinator down");
    await checker.stop();
  });

  it("a failed served view of one range fails only the partitions inside it", async () => {
    const clock = new ManualClock(0);
    const healthy = source();
    const src = {
      ...healthy,
      async servedInInterval(ds: string, range: string) {
        if (range.startsWith("2026-01-01T20:")) throw new Error("503 from the Coordinator");
        return healthy.servedInInterval(ds, range);
      },
    };
    const checker = new HandoffChecker({ clock, tickMs: 1000, source: src });
    // Hours 0–1 are one range, hour 20 another (whose view fails), hour 40 a third: too far apart for one hull.
    const verdicts = [0, 1, 20, 40].map((h) => checker.check("wiki", ask(hour(h))));
    for (const v of verdicts) v.catch(() => {});
    await clock.advance(1000);
    const settled = await Promise.allSettled(verdicts);
    expect(settled.map((s) => (s.status === "fulfilled" ? s.value.state : String(s.reason)))).toEqual([
      "handed-off",
      "handed-off",
      "Error: 503 from the Coordinator",
      "handed-off",
    ]);
    await checker.stop();
  });
});

describe("coalesceIntervals and servedByHistoricals", () => {
  it("merges overlapping and touching intervals into sorted disjoint ranges", () => {
    const iv = (s: number, e: number) => ({ start: s, end: e });
    expect(coalesceIntervals([iv(5, 6), iv(0, 2), iv(2, 3), iv(1, 2), iv(8, 9)])).toEqual([
      iv(0, 3),
      iv(5, 6),
      iv(8, 9),
    ]);
    expect(coalesceIntervals([])).toEqual([]);
  });

  it("keeps segments a historical or bridge serves, once each, by Druid's segment id", () => {
    const segment = (version: string): DataSegment => ({
      dataSource: "wiki",
      interval: "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
      version,
      loadSpec: {},
      dimensions: "",
      metrics: "",
      shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
      size: 1,
    });
    const ids = servedByHistoricals([
      { segment: segment("a"), servers: [{ type: "realtime" }, { type: "historical" }] },
      { segment: segment("a"), servers: [{ type: "historical" }] },
      { segment: segment("b"), servers: [{ type: "bridge" }] },
      { segment: segment("c"), servers: [{ type: "indexer-executor" }] },
      { segment: segment("d"), servers: [] },
    ]);
    expect(ids).toEqual([
      "wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_a",
      "wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_b",
    ]);
  });
});

describe("handoff checker: cadence", () => {
  it("checks a question asked after quiet within a short gathering pause, then at most once a tick", async () => {
    const clock = new ManualClock(0);
    let rounds = 0;
    const checker = new HandoffChecker({
      clock,
      tickMs: 1000,
      source: {
        async metadataSegments() {
          rounds++;
          return [];
        },
        async servedSegments() {
          return [];
        },
      },
    });
    const q = {
      interval: parseInterval("2026-01-01/P1D"),
      mode: "replace" as const,
      baseline: { versions: [], segmentIds: [] },
      rowsIngested: 0,
    };
    const first = checker.check("wiki", q);
    await clock.advance(50);
    expect((await first).state).toBe("handed-off");
    expect(rounds).toBe(1);
    // Asked right after a check: it waits out the rest of the tick.
    let done = false;
    const second = checker.check("wiki", q).then((v) => {
      done = true;
      return v;
    });
    await clock.advance(500);
    expect(done).toBe(false);
    await clock.advance(500);
    expect((await second).state).toBe("handed-off");
    expect(rounds).toBe(2);
    await checker.stop();
  });
});
