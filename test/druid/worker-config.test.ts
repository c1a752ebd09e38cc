import { describe, expect, it } from "vitest";
import { slotLimitFor, taskLimitsOf } from "../../src/druid/worker-config.js";
import { slotLimit, taskLimitsIn } from "../../src/sim/task-limits.js";

const config = (taskLimits: unknown, type = "equalDistribution") => ({
  type: "default",
  selectStrategy: { type, taskLimits },
  autoScaler: null,
});

describe("the worker select strategy's taskLimits (apache/druid #16889)", () => {
  it("reads them from any strategy, and nothing from a config without them", () => {
    const limits = { maxSlotCountByType: { index_parallel: 3 }, maxSlotRatioByType: { kill: 0.25 } };
    for (const type of ["equalDistribution", "fillCapacity", "equalDistributionWithCategorySpec"])
      expect(taskLimitsOf(config(limits, type))).toEqual(limits);
    expect(taskLimitsOf(null)).toBeNull();
    expect(taskLimitsOf({ type: "default", selectStrategy: { type: "equalDistribution" } })).toBeNull();
    expect(taskLimitsOf(config({ maxSlotCountByType: {}, maxSlotRatioByType: {} }))).toBeNull();
  });

  it("leaves out what Druid's validateLimits refuses", () => {
    expect(
      taskLimitsOf(
        config({ maxSlotCountByType: { a: -1, b: 2, c: 1.5 }, maxSlotRatioByType: { d: 1.5, e: 0.5 } }),
      ),
    ).toEqual({ maxSlotCountByType: { b: 2 }, maxSlotRatioByType: { e: 0.5 } });
  });

  // TaskLimits.getLimitForTask: min(count, max(1, min(floor(ratio × capacity), capacity))).
  it.each([
    [{ index_parallel: 3 }, {}, "index_parallel", 10, 3],
    [{}, { index_parallel: 0.5 }, "index_parallel", 10, 5],
    [{}, { index_parallel: 0.05 }, "index_parallel", 10, 1],
    [{}, { index_parallel: 1 }, "index_parallel", 7, 7],
    [{ index_parallel: 3 }, { index_parallel: 0.5 }, "index_parallel", 4, 2],
    [{ index_parallel: 3 }, { index_parallel: 0.5 }, "index_parallel", 10, 3],
    [{ kill: 0 }, {}, "kill", 10, 0],
    [{ index_parallel: 3 }, {}, "compact", 10, null],
  ])("counts %j and ratios %j give %s on %i slots a limit of %s", (counts, ratios, type, capacity, limit) => {
    const limits = { maxSlotCountByType: counts, maxSlotRatioByType: ratios };
    expect(slotLimitFor(limits, type, capacity)).toBe(limit);
    // The emulator follows the same rule.
    expect(slotLimit(taskLimitsIn(config(limits)) ?? limits, type, capacity)).toBe(limit);
  });
});
