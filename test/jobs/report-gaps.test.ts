import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { factsOf } from "../../src/jobs/actions.js";
import { formatGaps, gapReasonOf, jobGaps } from "../../src/jobs/report.js";
import type { TaskRow } from "../../src/ledger/types.js";
import { ingestTaskRow } from "../helpers/task-row.js";

/** What the ledger says about gaps: a job report's partitions that put no data in, and the facts the audit reads. */

function day(d: string, over: Partial<TaskRow>): TaskRow {
  const base = ingestTaskRow();
  const start = Date.parse(`${d}T00:00:00Z`);
  const interval = `${new Date(start).toISOString()}/${new Date(start + 86_400_000).toISOString()}`;
  return { ...base, id: `job/${d}`, payload: { ...base.payload, interval }, ...over };
}

describe("a partition's reason for a gap", () => {
  it("done is none; dead, canceled, failed and unfinished each say so", () => {
    expect(gapReasonOf(day("2026-01-01", { state: "done" }))).toBeNull();
    expect(gapReasonOf(day("2026-01-01", { state: "dead", canceled: true }))).toBe("dead-lettered");
    expect(gapReasonOf(day("2026-01-01", { state: "failed", canceled: true }))).toBe("canceled");
    expect(gapReasonOf(day("2026-01-01", { state: "new", canceled: true }))).toBe("canceled");
    expect(gapReasonOf(day("2026-01-01", { state: "failed" }))).toBe("failed");
    expect(gapReasonOf(day("2026-01-01", { state: "suspended" }))).toBe("pending");
  });
});

describe("a job report's gaps", () => {
  const tasks = [
    day("2026-01-03", { state: "failed", lastError: "boom" }),
    day("2026-01-01", { state: "done" }),
    day("2026-01-02", { state: "dead", lastError: "poison" }),
    day("2026-01-04", { state: "new" }),
  ];

  it("lists the partitions that put no data in, oldest first, with their errors", () => {
    expect(jobGaps("job", tasks)).toEqual([
      {
        interval: "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
        reason: "dead-lettered",
        job: "job",
        task: "job/2026-01-02",
        error: "poison",
      },
      {
        interval: "2026-01-03T00:00:00.000Z/2026-01-04T00:00:00.000Z",
        reason: "failed",
        job: "job",
        task: "job/2026-01-03",
        error: "boom",
      },
      {
        interval: "2026-01-04T00:00:00.000Z/2026-01-05T00:00:00.000Z",
        reason: "pending",
        job: "job",
        task: "job/2026-01-04",
      },
    ]);
  });

  it("while a partition runs, the pending ones are not gaps yet (only not reached)", () => {
    const running = [...tasks, day("2026-01-05", { state: "running" })];
    expect(jobGaps("job", running).map((g) => g.reason)).toEqual(["dead-lettered", "failed"]);
  });

  it("partitions of other kinds (a kill's, a compaction's) are no gaps of the job", () => {
    expect(jobGaps("job", [day("2026-01-01", { kind: "compact", state: "failed" })])).toEqual([]);
  });

  it("in words: a header, one line each, at most ten and how many more", () => {
    const many = Array.from({ length: 12 }, (_, i) =>
      day(`2026-02-${String(i + 1).padStart(2, "0")}`, { state: "dead" }),
    );
    const lines = formatGaps(jobGaps("job", many), "GAPS:", { inJob: false });
    expect(lines[0]).toBe("GAPS:");
    expect(lines[1]).toBe("  2026-02-01/2026-02-02 (dead-lettered)");
    expect(lines).toHaveLength(12);
    expect(lines[11]).toBe("  … and 2 more (--json lists every one)");
    expect(formatGaps([], "GAPS:")).toEqual([]);
  });
});

describe("the ledger's facts for the audit", () => {
  it("an ingestion partition is one fact over its interval, null when done", () => {
    const done = day("2026-01-01", { state: "done", updatedAt: 7 });
    expect(factsOf("job", done, "wiki")).toEqual([
      {
        job: "job",
        task: "job/2026-01-01",
        at: 7,
        interval: parseInterval("2026-01-01/2026-01-02"),
        reason: null,
        error: null,
      },
    ]);
  });

  it("a done kill is a fact over the segments it deleted, not over its batch's whole span", () => {
    const kill: TaskRow = {
      ...ingestTaskRow(),
      id: "kill/x",
      kind: "kill",
      state: "done",
      updatedAt: 9,
      payload: {
        datasource: "wiki",
        interval: "2026-01-01T00:00:00.000Z/2026-01-10T00:00:00.000Z",
        segmentIds: [
          "wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_v1",
          "wiki_2026-01-02T00:00:00.000Z_2026-01-03T00:00:00.000Z_v1_1",
          "wiki_2026-01-09T00:00:00.000Z_2026-01-10T00:00:00.000Z_v1",
          "other_2026-01-05T00:00:00.000Z_2026-01-06T00:00:00.000Z_v1",
        ],
      },
    };
    expect(factsOf("kill", kill, "wiki").map((f) => [f.interval, f.reason])).toEqual([
      [parseInterval("2026-01-01/2026-01-03"), "killed"],
      [parseInterval("2026-01-09/2026-01-10"), "killed"],
    ]);
    expect(factsOf("kill", { ...kill, state: "failed" }, "wiki")).toEqual([]);
  });
});
