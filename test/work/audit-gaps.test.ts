import { describe, expect, it } from "vitest";
import { parseGranularity } from "../../src/core/granularity.js";
import { parseInterval } from "../../src/core/interval.js";
import { auditTimeline, describeGap, explainGaps, type GapFact } from "../../src/work/audit.js";
import type { TimelineSegment } from "../../src/work/timeline.js";

/** The version audit's gaps: the parts of the interval with no live data, and the ledger's reasons for them. */

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

/** One day segment of version `v1` per day of `from`..`to` (exclusive), skipping `missing`. */
function days(from: string, to: string, missing: readonly string[] = []): TimelineSegment[] {
  const out: TimelineSegment[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t < Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    const day = new Date(t).toISOString().slice(0, 10);
    if (!missing.includes(day)) out.push(seg(`${day}/P1D`, "v1"));
  }
  return out;
}

const audit = (interval: string, segments: TimelineSegment[], extra: object = {}) =>
  auditTimeline({ datasource: "wiki", interval: parseInterval(interval), segments, ...extra });

const I = (text: string) => parseInterval(text);
const iv = (text: string) => {
  const { start, end } = parseInterval(text);
  return `${new Date(start).toISOString()}/${new Date(end).toISOString()}`;
};

describe("gaps in the version audit", () => {
  it("a 44-day range with two days missing: the audit holds, and lists both days as gaps", () => {
    const report = audit(
      "2026-01-01/2026-02-14",
      days("2026-01-01", "2026-02-14", ["2026-01-09", "2026-01-20"]),
    );
    expect(report.ok).toBe(true);
    expect(report.chunks).toHaveLength(42);
    expect(report.gaps).toEqual([
      { interval: iv("2026-01-09/2026-01-10"), reason: "no-segments" },
      { interval: iv("2026-01-20/2026-01-21"), reason: "no-segments" },
    ]);
  });

  it("no gaps when every part of the range is live", () => {
    expect(audit("2026-01-01/2026-01-04", days("2026-01-01", "2026-01-04")).gaps).toEqual([]);
  });

  it("without a granularity, adjacent empty days are one stretch; with one, a gap per bucket", () => {
    const segments = days("2026-01-01", "2026-01-06", ["2026-01-02", "2026-01-03"]);
    expect(audit("2026-01-01/2026-01-06", segments).gaps).toEqual([
      { interval: iv("2026-01-02/2026-01-04"), reason: "no-segments" },
    ]);
    expect(
      audit("2026-01-01/2026-01-06", segments, { granularity: parseGranularity("day") }).gaps.map(
        (g) => g.interval,
      ),
    ).toEqual([iv("2026-01-02/2026-01-03"), iv("2026-01-03/2026-01-04")]);
  });

  it("the range's uncovered ends are gaps: the stretch before the first and after the last segment", () => {
    expect(audit("2026-01-01/2026-01-06", days("2026-01-02", "2026-01-04")).gaps).toEqual([
      { interval: iv("2026-01-01/2026-01-02"), reason: "no-segments" },
      { interval: iv("2026-01-04/2026-01-06"), reason: "no-segments" },
    ]);
  });

  it("gapsWithin bounds where gaps are looked for (all time: between the first and last segment)", () => {
    const report = auditTimeline({
      datasource: "wiki",
      interval: I("1000-01-01/3000-01-01"),
      segments: days("2026-01-01", "2026-01-05", ["2026-01-03"]),
      gapsWithin: I("2026-01-01/2026-01-05"),
    });
    expect(report.gaps).toEqual([{ interval: iv("2026-01-03/2026-01-04"), reason: "no-segments" }]);
  });

  it("a tombstone-only chunk is a gap holding no rows; a tombstone under newer data is not", () => {
    const segments = [
      ...days("2026-01-01", "2026-01-04"),
      seg("2026-01-02/P1D", "v2", { tombstone: true, numRows: 0, sizeBytes: 0 }),
      seg("2026-01-03/P1D", "v0", { tombstone: true, numRows: 0, sizeBytes: 0 }),
    ];
    const report = audit("2026-01-01/2026-01-04", segments);
    expect(report.gaps).toEqual([{ interval: iv("2026-01-02/2026-01-03"), reason: "tombstone" }]);
    expect(report.chunks.find((c) => c.interval === iv("2026-01-02/2026-01-03"))?.tombstone).toBe(true);
  });

  it("a tombstone stretch next to an empty one stays two gaps: their reasons differ", () => {
    const segments = [seg("2026-01-01/P1D", "v1", { tombstone: true, numRows: 0, sizeBytes: 0 })];
    expect(audit("2026-01-01/2026-01-03", segments).gaps.map((g) => g.reason)).toEqual([
      "tombstone",
      "no-segments",
    ]);
  });

  it("an incomplete version is no data: its chunk is a gap unless an older complete one shows", () => {
    const partial = (day: string, v: string) => seg(`${day}/P1D`, v, { partitionNum: 1, corePartitions: 2 });
    const report = audit("2026-01-01/2026-01-03", [
      seg("2026-01-01/P1D", "v1"),
      partial("2026-01-01", "v2"),
      partial("2026-01-02", "v2"),
    ]);
    expect(report.gaps).toEqual([{ interval: iv("2026-01-02/2026-01-03"), reason: "no-segments" }]);
  });

  it("a month segment partly overshadowed by days leaves no gap", () => {
    const report = audit("2026-01-01/2026-02-01", [seg("2026-01-01/P1M", "v1"), seg("2026-01-10/P1D", "v2")]);
    expect(report.gaps).toEqual([]);
  });

  it("a datasource with no segment at all in the range is one gap over all of it", () => {
    expect(audit("2026-01-01/2026-01-03", []).gaps).toEqual([
      { interval: iv("2026-01-01/2026-01-03"), reason: "no-segments" },
    ]);
  });
});

describe("the ledger's reasons for gaps (explainGaps)", () => {
  const fact = (interval: string, reason: GapFact["reason"], at: number, extra: Partial<GapFact> = {}) => ({
    interval: I(interval),
    reason,
    job: "job1",
    task: `job1/${interval}`,
    at,
    ...extra,
  });
  const gap = (interval: string, reason: "no-segments" | "tombstone" = "no-segments") => ({
    interval: iv(interval),
    reason,
  });

  it("a dead-lettered partition over a gap names it, with its job, partition and error", () => {
    const out = explainGaps(
      [gap("2026-01-09/2026-01-10")],
      [
        fact("2026-01-08/2026-01-09", null, 1),
        fact("2026-01-09/2026-01-10", "dead-lettered", 1, { error: "Max parse exceptions[0] exceeded" }),
      ],
    );
    expect(out).toEqual([
      {
        interval: iv("2026-01-09/2026-01-10"),
        reason: "dead-lettered",
        job: "job1",
        task: "job1/2026-01-09/2026-01-10",
        error: "Max parse exceptions[0] exceeded",
      },
    ]);
  });

  it("a merged stretch is cut per partition where the ledger explains it; the rest stays merged", () => {
    const out = explainGaps(
      [gap("2026-01-02/2026-01-06")],
      [fact("2026-01-03/2026-01-04", "failed", 1), fact("2026-01-04/2026-01-05", "pending", 1)],
    );
    expect(out.map((g) => [g.interval, g.reason])).toEqual([
      [iv("2026-01-02/2026-01-03"), "no-segments"],
      [iv("2026-01-03/2026-01-04"), "failed"],
      [iv("2026-01-04/2026-01-05"), "pending"],
      [iv("2026-01-05/2026-01-06"), "no-segments"],
    ]);
  });

  it("the newest fact holds: a later done ingestion leaves Druid's reason, a later kill explains", () => {
    const dead = fact("2026-01-02/2026-01-03", "dead-lettered", 1);
    const redone = fact("2026-01-02/2026-01-03", null, 2, { job: "job2", task: "job2/p" });
    const killed = fact("2026-01-02/2026-01-03", "killed", 3, { job: "kill1", task: "kill1/p" });
    expect(explainGaps([gap("2026-01-02/2026-01-03")], [dead, redone])).toEqual([
      gap("2026-01-02/2026-01-03"),
    ]);
    expect(explainGaps([gap("2026-01-02/2026-01-03")], [dead, redone, killed])).toEqual([
      { interval: iv("2026-01-02/2026-01-03"), reason: "killed", job: "kill1", task: "kill1/p" },
    ]);
  });

  it("a tombstone explained by nothing stays a tombstone; gaps no fact meets are unchanged", () => {
    const gaps = [gap("2026-01-02/2026-01-03", "tombstone"), gap("2026-03-01/2026-03-02")];
    expect(explainGaps(gaps, [fact("2026-01-02/2026-01-03", null, 5)])).toEqual(gaps);
    expect(explainGaps(gaps, [])).toEqual(gaps);
  });

  it("a partition reaching past the gap explains only the gap's part of it", () => {
    const out = explainGaps([gap("2026-01-02/2026-01-03")], [fact("2026-01-01/2026-02-01", "canceled", 1)]);
    expect(out).toEqual([
      {
        interval: iv("2026-01-02/2026-01-03"),
        reason: "canceled",
        job: "job1",
        task: "job1/2026-01-01/2026-02-01",
      },
    ]);
  });
});

describe("a gap in words", () => {
  it("says the stretch (midnights left out), why, and which job", () => {
    expect(
      describeGap({
        interval: iv("2026-01-09/2026-01-10"),
        reason: "dead-lettered",
        job: "bf_1",
        task: "bf_1/x",
        error: "bad input",
      }),
    ).toBe("2026-01-09/2026-01-10 (dead-lettered in job bf_1: bad input)");
    expect(describeGap({ interval: iv("2026-01-09/2026-01-10"), reason: "killed", job: "k1" })).toBe(
      "2026-01-09/2026-01-10 (killed by job k1)",
    );
    expect(describeGap({ interval: iv("2026-01-09T06:00/2026-01-10"), reason: "no-segments" })).toBe(
      "2026-01-09T06:00:00.000Z/2026-01-10 (no segments)",
    );
    expect(
      describeGap({ interval: iv("2026-01-09/2026-01-10"), reason: "failed", job: "j" }, { inJob: false }),
    ).toBe("2026-01-09/2026-01-10 (failed)");
  });
});
