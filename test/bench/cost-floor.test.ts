import { describe, expect, it } from "vitest";
import { bulkStatusIds } from "../../bench/lib/bulk-ids.js";
import { costFloor, smallestStatusEntry } from "../../bench/lib/cost-floor.js";

/** The cost floor's arithmetic (bench/lib/cost-floor.ts) and the bulk-status id count it is fed with. */
describe("cost floor", () => {
  const inputs = {
    runTimesMs: [2000, 2001, 59_000, 0],
    makespanMs: 61_000,
    statusEntry: [
      { source: "bulk", bytes: 27 },
      { source: "GET", bytes: 247 },
    ],
    reportBytes: 384,
    submitBytes: 72,
    intervalMs: 2000,
  };

  it("looks at each task once per started D of its run (at least once), at the cheapest measured entry", () => {
    const f = costFloor(inputs);
    // ⌈2000/2000⌉ + ⌈2001/2000⌉ + ⌈59000/2000⌉ + max(1, ⌈0⌉) = 1 + 2 + 30 + 1
    expect(f.looks).toBe(34);
    expect(f.looksPerTask).toBe(8.5);
    expect(f.statusEntry.source).toBe("bulk");
    expect(f.bytesPerTask).toBeCloseTo(8.5 * 27 + 384 + 72, 9);
    // ⌈61000 / 2000⌉ = 31 shared bulk lookups over 4 tasks, plus a submission and a report each
    expect(f.bulkLookups).toBe(31);
    expect(f.requestsPerTask).toBe(2 + 31 / 4);
  });

  it("halving D about doubles the looks and the shared lookups", () => {
    const f = costFloor({ ...inputs, intervalMs: 1000 });
    expect(f.looks).toBe(2 + 3 + 59 + 1);
    expect(f.bulkLookups).toBe(61);
  });

  it("takes the smallest positive measured entry cost and refuses when none was measured", () => {
    expect(
      smallestStatusEntry([
        { source: "a", bytes: 30 },
        { source: "b", bytes: 0 },
        { source: "c", bytes: 29.5 },
      ]),
    ).toEqual({ source: "c", bytes: 29.5 });
    expect(() => smallestStatusEntry([{ source: "a", bytes: Number.NaN }])).toThrow(
      /no measured status-answer cost/,
    );
  });

  it("refuses bad input naming the field", () => {
    expect(() => costFloor({ ...inputs, intervalMs: 0 })).toThrow(/intervalMs must be a positive/);
    expect(() => costFloor({ ...inputs, runTimesMs: [] })).toThrow(/runTimesMs is empty/);
    expect(() => costFloor({ ...inputs, runTimesMs: [-1] })).toThrow(/a run time must be/);
    expect(() => costFloor({ ...inputs, reportBytes: Number.NaN })).toThrow(/reportBytes/);
  });

  it("counts the ids of a bulk status request body, and nothing for other requests", () => {
    expect(bulkStatusIds("POST", "/druid/indexer/v1/taskStatus", '["a","b","c"]')).toBe(3);
    expect(bulkStatusIds("POST", "/druid/indexer/v1/taskStatus", Buffer.from('["a"]'))).toBe(1);
    expect(bulkStatusIds("POST", "/druid/indexer/v1/task", '["a","b"]')).toBe(0);
    expect(bulkStatusIds("GET", "/druid/indexer/v1/task/a/status", null)).toBe(0);
    expect(bulkStatusIds("POST", "/druid/indexer/v1/taskStatus", "not json")).toBe(0);
  });
});
