import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { type HandoffQuestion, handoffVerdict } from "../../src/work/handoff.js";
import { neverLoaded, periodStart, ruleApplies, ruleFor } from "../../src/work/load-rules.js";
import type { TimelineSegment } from "../../src/work/timeline.js";

const now = Date.parse("2026-06-15T00:00:00Z");
const day = (d: string) => parseInterval(`${d}/P1D`);

describe("load rules (Druid's RunRules: the first applicable rule of the chain decides)", () => {
  it("Druid's default chain loads everything with 2 replicas", () => {
    const defaults = [{ type: "loadForever", tieredReplicants: { _default_tier: 2 } }];
    expect(ruleFor(defaults, day("2020-01-01"), now)?.loads).toBe(true);
    expect(neverLoaded(defaults, [day("2026-06-01")], now)).toBeNull();
  });

  it("IntervalDropRule drops segments its interval contains; IntervalLoadRule loads what it overlaps", () => {
    const drop = { type: "dropByInterval", interval: "2026-06-01/2026-06-03" };
    expect(ruleApplies(drop, day("2026-06-02"), now)).toBe(true);
    expect(ruleApplies(drop, parseInterval("2026-06-02T12:00:00Z/2026-06-03T12:00:00Z"), now)).toBe(false);
    const load = {
      type: "loadByInterval",
      interval: "2026-06-01T12:00:00Z/2026-06-01T13:00:00Z",
      tieredReplicants: { hot: 1 },
    };
    expect(ruleApplies(load, day("2026-06-01"), now)).toBe(true);
  });

  it("period rules count back from now; includeFuture defaults to true", () => {
    const recent = { type: "loadByPeriod", period: "P7D", tieredReplicants: { _default_tier: 1 } };
    expect(ruleApplies(recent, day("2026-06-10"), now)).toBe(true);
    expect(ruleApplies(recent, day("2026-06-01"), now)).toBe(false);
    expect(ruleApplies(recent, day("2026-07-01"), now)).toBe(true);
    expect(ruleApplies({ ...recent, includeFuture: false }, day("2026-07-01"), now)).toBe(false);
    expect(ruleApplies({ type: "dropBeforeByPeriod", period: "P30D" }, day("2026-05-01"), now)).toBe(true);
    expect(ruleApplies({ type: "dropBeforeByPeriod", period: "P30D" }, day("2026-06-01"), now)).toBe(false);
    // Calendar periods, as Joda counts them back: a month before March 31 is the end of February.
    expect(new Date(periodStart("P1M", Date.parse("2026-03-31T00:00:00Z")) as number).toISOString()).toBe(
      "2026-02-28T00:00:00.000Z",
    );
    expect(periodStart("PT1H30M", now)).toBe(now - 5_400_000);
    expect(periodStart("P", now)).toBeNull();
  });

  it("says why an interval can never be served: a drop rule, zero replicas, or no rule at all", () => {
    const interval = day("2026-06-02");
    expect(neverLoaded([{ type: "dropForever" }], [interval], now)).toMatch(
      /matched first by .*dropForever.*does not load it/,
    );
    expect(neverLoaded([{ type: "loadForever", tieredReplicants: {} }], [interval], now)).toMatch(
      /does not load it/,
    );
    expect(
      neverLoaded(
        [{ type: "loadByPeriod", period: "P1D", includeFuture: false, tieredReplicants: { t: 1 } }],
        [interval],
        now,
      ),
    ).toMatch(/no load rule matches/);
    // Order matters: a load rule before a drop rule wins.
    expect(
      neverLoaded(
        [
          { type: "loadByInterval", interval: "2026-06-02/2026-06-03", tieredReplicants: { t: 1 } },
          { type: "dropForever" },
        ],
        [interval],
        now,
      ),
    ).toBeNull();
  });
});

describe("handoff with load rules", () => {
  const seg = (version: string, served: boolean): TimelineSegment => ({
    id: `wiki_${version}_0`,
    start: day("2026-06-02").start,
    end: day("2026-06-02").end,
    version,
    partitionNum: 0,
    corePartitions: 1,
    tombstone: false,
    sizeBytes: 10,
    numRows: 5,
    served,
  });
  const q: HandoffQuestion = {
    interval: day("2026-06-02"),
    mode: "replace",
    baseline: { versions: [], segmentIds: [] },
  };

  it("an interval excluded by a drop rule is never queryable: said at once, not at the handoff timeout", () => {
    const rules = [{ type: "dropByInterval", interval: "2026-06-01/2026-06-05" }, { type: "loadForever" }];
    const v = handoffVerdict(q, [seg("v1", false)], { rules, now });
    expect(v).toMatchObject({ state: "never-loaded", version: "v1" });
  });

  it("waits as before when the rules load the interval, or when they could not be read", () => {
    expect(handoffVerdict(q, [seg("v1", false)], { rules: [{ type: "loadForever" }], now }).state).toBe(
      "waiting",
    );
    expect(handoffVerdict(q, [seg("v1", false)], { rules: null, now }).state).toBe("waiting");
  });
});

describe("handoff with load rules, when Druid already dropped our segments", () => {
  it("reports never-loaded (the cause) rather than lost when a rule drops the interval", () => {
    const interval = day("2026-06-02");
    const q: HandoffQuestion = {
      interval,
      mode: "replace",
      baseline: { versions: [], segmentIds: [] },
      rowsIngested: 8,
    };
    const rules = [{ type: "dropByInterval", interval: "2026-06-01/2026-06-05" }, { type: "loadForever" }];
    expect(handoffVerdict(q, [], { rules, now }).state).toBe("never-loaded");
    expect(handoffVerdict(q, [], { rules: [{ type: "loadForever" }], now }).state).toBe("lost");
  });
});

describe("rule types from newer releases in the handoff gate (neither hung on nor lied about)", () => {
  const interval = day("2026-06-02");
  const seg = (served: boolean): TimelineSegment => ({
    id: "wiki_v1_0",
    start: interval.start,
    end: interval.end,
    version: "v1",
    partitionNum: 0,
    corePartitions: 1,
    tombstone: false,
    sizeBytes: 10,
    numRows: 5,
    served,
  });
  const q: HandoffQuestion = { interval, mode: "replace", baseline: { versions: [], segmentIds: [] } };

  // apache/druid #19374 (PartialLoadRule: loadPartialForever, loadPartialByInterval, loadPartialByPeriod), Druid 38.
  it.each([
    [{ type: "loadPartialForever", tieredReplicants: { _default_tier: 1 } }],
    [{ type: "loadPartialByInterval", interval: "2026-06-01/2026-06-05", tieredReplicants: { hot: 1 } }],
    [{ type: "loadPartialByPeriod", period: "P30D", tieredReplicants: { hot: 1 } }],
  ])("reads the partial load rule %j as a load rule: served once the segment is", (rule) => {
    const rules = [rule, { type: "dropForever" }];
    expect(ruleFor(rules, interval, now)).toEqual({ rule, loads: true });
    expect(handoffVerdict(q, [seg(false)], { rules, now }).state).toBe("waiting");
    expect(handoffVerdict(q, [seg(true)], { rules, now }).state).toBe("handed-off");
  });

  it("does not decide for a partial rule that may pass the segment on (onCannotMatch FALL_THROUGH)", () => {
    const rules = [{ type: "loadPartialForever", onCannotMatch: "FALL_THROUGH" }, { type: "dropForever" }];
    const v = handoffVerdict(q, [seg(false)], { rules, now });
    expect(v.state).toBe("waiting");
    expect(v.state === "waiting" && v.missing.join("; ")).toContain(
      "may pass the segment on to the next rule",
    );
  });

  it("says a rule type it does not know decides, and goes by the served view instead of calling it never loaded", () => {
    const rules = [{ type: "loadVirtualForever", tieredReplicants: { _default_tier: 1 } }];
    // Before, an unknown type matched nothing: "no load rule matches", a never-loaded verdict Druid may contradict.
    expect(neverLoaded(rules, [interval], now)).toBeNull();
    const waiting = handoffVerdict(q, [seg(false)], { rules, now });
    expect(waiting.state).toBe("waiting");
    expect(waiting.state === "waiting" && waiting.missing.join("; ")).toContain(
      "a rule type segops does not know (loadVirtualForever), so only the served view says whether it loads",
    );
    expect(handoffVerdict(q, [seg(true)], { rules, now }).state).toBe("handed-off");
  });
});
