import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import {
  compactedFromOurs,
  compactionInputInterval,
  type DruidCompaction,
  type NewerSegment,
} from "../../src/work/compacted.js";

/**
 * The version audit and Druid's own compaction: a version Druid's auto-compaction (the Coordinator's
 * `coordinator-issued_compact_…` up to 36, `auto_compact_…` from 37: apache/druid #19252) or a minor compaction's
 * upgrade (apache/druid #19059) published over ours after our task SUCCEEDED is ours compacted, not foreign.
 */

const DAY = parseInterval("2026-01-01/2026-01-02");
const OURS = "2026-03-01T00:00:10.000Z";
const V1 = "2026-03-01T00:01:00.000Z";
const V2 = "2026-03-01T00:05:00.000Z";

const seg = (version: string, compactionState = true, interval = DAY): NewerSegment => ({
  version,
  start: interval.start,
  end: interval.end,
  compactionState,
});

const compaction = (over: Partial<DruidCompaction> & { id: string }): DruidCompaction => ({
  state: "SUCCESS",
  createdTime: "2026-03-01T00:00:50.000Z",
  durationMs: 30_000,
  inputInterval: DAY,
  ...over,
});

describe("a newer version over ours that Druid's compaction wrote", () => {
  it("is ours compacted by the Coordinator's auto-compaction (Druid 33 ids)", () => {
    const id = "coordinator-issued_compact_wiki_abc_2026-03-01T00:00:50.000Z";
    const v = compactedFromOurs({
      interval: DAY,
      ours: OURS,
      newer: [seg(V1)],
      compactions: [compaction({ id })],
    });
    expect(v).toMatchObject({ kind: "compacted", by: [{ taskId: id, version: V1 }] });
    expect(v.kind === "compacted" && v.note).toBe(
      `compacted by Druid from ours: our version ${OURS} of 2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z was rewritten by ${id} (the Coordinator's auto-compaction) as ${V1}`,
    );
  });

  it("is ours compacted by a compaction supervisor (Druid 37 auto_ ids), upgraded segments included", () => {
    const id = "auto_compact_wiki_abc_2026-03-01T00:00:50.000Z";
    // A minor compaction rewrites part of the chunk and upgrades the rest to its version: both carry it.
    const half = parseInterval("2026-01-01T00:00:00Z/2026-01-01T12:00:00Z");
    const v = compactedFromOurs({
      interval: DAY,
      ours: OURS,
      newer: [seg(V1, true, half), seg(V1, false)],
      compactions: [compaction({ id })],
    });
    expect(v).toMatchObject({ kind: "compacted", by: [{ taskId: id, version: V1 }] });
    expect(v.kind === "compacted" && v.note).toContain("(Druid's auto-compaction)");
  });

  it("follows a compaction of a compaction of ours", () => {
    const first = compaction({ id: "auto_compact_wiki_1" });
    const second = compaction({
      id: "auto_compact_wiki_2",
      createdTime: "2026-03-01T00:04:50.000Z",
      inputInterval: parseInterval("2026-01-01/2026-02-01"),
    });
    const v = compactedFromOurs({
      interval: DAY,
      ours: OURS,
      newer: [seg(V1), seg(V2, true, parseInterval("2026-01-01/2026-02-01"))],
      compactions: [second, first],
    });
    expect(v).toMatchObject({
      kind: "compacted",
      by: [
        { taskId: "auto_compact_wiki_1", version: V1 },
        { taskId: "auto_compact_wiki_2", version: V2 },
      ],
    });
  });

  it("says so when the compacted segments carry no lastCompactionState", () => {
    const v = compactedFromOurs({
      interval: DAY,
      ours: OURS,
      newer: [seg(V1, false)],
      compactions: [compaction({ id: "auto_compact_wiki_1" })],
    });
    expect(v.kind === "compacted" && v.note).toMatch(
      /\(no lastCompactionState on 2026-03-01T00:01:00.000Z\)$/,
    );
  });
});

describe("a newer version that cannot be shown to be a compaction of ours", () => {
  it("is another writer's when no compaction ran as it was locked", () => {
    expect(compactedFromOurs({ interval: DAY, ours: OURS, newer: [seg(V1)], compactions: [] })).toEqual({
      kind: "foreign",
      reason: `no automatic compaction of the datasource (coordinator-issued_compact_… or auto_compact_…) ran when version ${V1} was locked: another writer's`,
    });
    // A compact task someone submitted by hand (or another tool's) is another writer, not Druid's compaction.
    const manual = compaction({ id: "other-ledger_compact_wiki_1" });
    expect(
      compactedFromOurs({ interval: DAY, ours: OURS, newer: [seg(V1)], compactions: [manual] }).kind,
    ).toBe("foreign");
    // A compaction that had ended before the version was locked did not publish it.
    const ended = compaction({ id: "auto_compact_wiki_1", durationMs: 1_000 });
    expect(
      compactedFromOurs({ interval: DAY, ours: OURS, newer: [seg(V1)], compactions: [ended] }).kind,
    ).toBe("foreign");
  });

  it("is foreign when the compaction's input interval does not cover ours, or could not be read", () => {
    const other = compaction({
      id: "auto_compact_wiki_1",
      inputInterval: parseInterval("2026-01-01T00:00:00Z/2026-01-01T06:00:00Z"),
    });
    expect(
      compactedFromOurs({ interval: DAY, ours: OURS, newer: [seg(V1)], compactions: [other] }),
    ).toMatchObject({
      kind: "foreign",
      reason: expect.stringContaining("its input interval does not cover"),
    });
    const unread = compaction({ id: "auto_compact_wiki_1", inputInterval: null });
    expect(
      compactedFromOurs({ interval: DAY, ours: OURS, newer: [seg(V1)], compactions: [unread] }),
    ).toMatchObject({
      kind: "foreign",
      reason: expect.stringContaining("input interval could not be read"),
    });
  });

  it("is foreign when another writer's version came between ours and the compaction (its input was not ours)", () => {
    const v = compactedFromOurs({
      interval: DAY,
      ours: OURS,
      newer: [seg("2026-03-01T00:00:30.000Z", false), seg(V1)],
      compactions: [compaction({ id: "auto_compact_wiki_1" })],
    });
    expect(v).toMatchObject({ kind: "foreign", reason: expect.stringContaining("2026-03-01T00:00:30.000Z") });
  });

  it("waits while a compaction that may have published it has not ended", () => {
    const running = compaction({ id: "auto_compact_wiki_1", state: "RUNNING", durationMs: -1 });
    expect(
      compactedFromOurs({ interval: DAY, ours: OURS, newer: [seg(V1)], compactions: [running] }),
    ).toEqual({
      kind: "not-yet",
      reason: `compaction auto_compact_wiki_1 may have published ${V1} and has not ended`,
    });
  });
});

describe("a compact task's input interval", () => {
  it("is read from ioConfig.inputSpec or the legacy interval, null otherwise", () => {
    const spec = { ioConfig: { inputSpec: { type: "interval", interval: "2026-01-01/2026-01-02" } } };
    expect(compactionInputInterval(spec, parseInterval)).toEqual(DAY);
    expect(compactionInputInterval({ interval: "2026-01-01/2026-01-02" }, parseInterval)).toEqual(DAY);
    expect(
      compactionInputInterval({ ioConfig: { inputSpec: { type: "segments" } } }, parseInterval),
    ).toBeNull();
    expect(compactionInputInterval({ interval: "yesterday" }, parseInterval)).toBeNull();
  });
});
