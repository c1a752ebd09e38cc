import { describe, expect, it } from "vitest";
import { ticks } from "../../web/src/timeline-axis.js";

/** The timeline's time axis: a handful of ticks at whole days, Mondays, months or years, inside the span. */

const at = (text: string) => Date.parse(`${text}T00:00:00Z`);
const labels = (a: string, b: string) => ticks(at(a), at(b)).map((t) => t.label);

describe("timeline axis ticks", () => {
  it("days for a week, Mondays for a month, months for a quarter, years for decades", () => {
    expect(labels("2026-01-01", "2026-01-05")).toEqual([
      "2026-01-01",
      "2026-01-02",
      "2026-01-03",
      "2026-01-04",
      "2026-01-05",
    ]);
    // 2026-01-05 is a Monday.
    expect(labels("2026-01-01", "2026-02-01")).toEqual([
      "2026-01-05",
      "2026-01-12",
      "2026-01-19",
      "2026-01-26",
    ]);
    expect(labels("2026-01-01", "2026-04-01")).toEqual(["2026-01", "2026-02", "2026-03", "2026-04"]);
    expect(labels("2026-01-15", "2026-04-01")).toEqual(["2026-02", "2026-03", "2026-04"]);
    expect(labels("2000-01-01", "2030-01-01")).toEqual([
      "2000",
      "2005",
      "2010",
      "2015",
      "2020",
      "2025",
      "2030",
    ]);
  });

  it("every tick lies in the span, and there are not many", () => {
    for (const [a, b] of [
      ["2026-01-01", "2026-01-02"],
      ["2026-03-07", "2026-05-19"],
      ["2019-06-30", "2026-02-01"],
    ] as const) {
      const list = ticks(at(a), at(b));
      expect(list.length).toBeGreaterThan(0);
      expect(list.length).toBeLessThanOrEqual(9);
      for (const t of list) expect(t.at >= at(a) && t.at <= at(b)).toBe(true);
    }
    expect(ticks(5, 5)).toEqual([]);
  });
});
