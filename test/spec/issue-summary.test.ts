import { describe, expect, it } from "vitest";
import { formatSummary, InvalidSpecError, summariseIssues } from "../../src/spec/issues.js";

const day = (d: number) => `2026-06-0${d}T00:00:00.000Z/2026-06-0${d + 1}T00:00:00.000Z`;

describe("spec issues said once", () => {
  it("groups planning's per-partition copies of one problem, keeping distinct problems apart", () => {
    const issues = [
      ...[1, 2, 3].map((d) => ({ path: "spec.a", message: `${day(d)}: a is missing` })),
      { path: "spec.b", message: `${day(2)}: b is wrong` },
      { path: "spec.a", message: `${day(4)}: a is something else` },
    ];
    const summary = summariseIssues(issues);
    expect(summary.map(formatSummary)).toEqual([
      `spec.a: in 3 partitions (first ${day(1)}, last ${day(3)}): a is missing`,
      `spec.b: ${day(2)}: b is wrong`,
      `spec.a: ${day(4)}: a is something else`,
    ]);
  });

  it("leaves a plain spec's issues (no partition) as they are", () => {
    expect(summariseIssues([{ path: "x", message: "2026: not a partition" }]).map(formatSummary)).toEqual([
      "x: 2026: not a partition",
    ]);
  });

  it("InvalidSpecError's message counts distinct problems, not copies", () => {
    const error = new InvalidSpecError(
      [1, 2, 3, 4].map((d) => ({ path: "spec.a", message: `${day(d)}: a is missing` })),
    );
    expect(error.message).toBe(
      `invalid spec: spec.a: in 4 partitions (first ${day(1)}, last ${day(4)}): a is missing`,
    );
    expect(error.errors).toHaveLength(4);
  });
});
