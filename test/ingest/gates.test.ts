import { describe, expect, it } from "vitest";
import {
  checkDataGates,
  checkRowDrop,
  DEFAULT_GATES,
  firstParseErrors,
  parseRowDrop,
  parseUnparseableLimit,
  tuningWithGates,
} from "../../src/ingest/gates.js";

const stats = (processed: number, unparseable = 0, processedWithError = 0, thrownAway = 0) => ({
  processed,
  unparseable,
  processedWithError,
  thrownAway,
});

describe("data gates", () => {
  it("fails a partition whose input produced rows but ingested none (all unparseable)", () => {
    const verdict = checkDataGates(
      stats(0, 20),
      { ...DEFAULT_GATES, maxUnparseable: { kind: "percent", max: 100 } },
      ["Unable to parse row [{not json]"],
    );
    expect(verdict).toMatch(/produced 20 row\(s\) but none was ingested/);
    expect(verdict).toContain("unparseable 20");
    expect(verdict).toContain("Unable to parse row [{not json]");
  });

  it("passes an empty partition whose rows were all filtered out on purpose", () => {
    expect(checkDataGates(stats(0, 0, 0, 40), DEFAULT_GATES)).toBeNull();
  });

  it("counts unparseable and ingested-with-error rows against an absolute limit", () => {
    const gates = { ...DEFAULT_GATES, maxUnparseable: { kind: "count" as const, max: 2 } };
    expect(checkDataGates(stats(10, 1, 1), gates)).toBeNull();
    expect(checkDataGates(stats(10, 2, 1), gates)).toMatch(
      /3 row\(s\) with parse errors exceed --max-unparseable 2/,
    );
  });

  it("applies a percentage to the rows read", () => {
    const gates = { ...DEFAULT_GATES, maxUnparseable: { kind: "percent" as const, max: 10 } };
    expect(checkDataGates(stats(18, 2), gates)).toBeNull();
    expect(checkDataGates(stats(17, 3), gates)).toMatch(/exceed --max-unparseable 10%/);
  });

  it("enforces --min-rows", () => {
    expect(checkDataGates(stats(5), { ...DEFAULT_GATES, minRows: 6 })).toMatch(
      /5 row\(s\) ingested, fewer than --min-rows 6/,
    );
  });

  it("parses --max-unparseable as a count or a percentage, nothing else", () => {
    expect(parseUnparseableLimit("0")).toEqual({ kind: "count", max: 0 });
    expect(parseUnparseableLimit("12")).toEqual({ kind: "count", max: 12 });
    expect(parseUnparseableLimit("0.5%")).toEqual({ kind: "percent", max: 0.5 });
    for (const bad of ["", "-1", "1e3", "0x2", "101%", "5 %", "%"])
      expect(parseUnparseableLimit(bad)).toBeNull();
  });

  it("renders an absolute limit as maxParseExceptions unless the spec sets one; never a percentage", () => {
    expect(tuningWithGates({ type: "index_parallel" }, DEFAULT_GATES)).toEqual({
      type: "index_parallel",
      maxParseExceptions: 0,
      maxSavedParseExceptions: 5,
    });
    expect(tuningWithGates({ maxParseExceptions: 7, maxSavedParseExceptions: 1 }, DEFAULT_GATES)).toEqual({
      maxParseExceptions: 7,
      maxSavedParseExceptions: 1,
    });
    expect(
      tuningWithGates(undefined, { ...DEFAULT_GATES, maxUnparseable: { kind: "percent", max: 1 } }),
    ).toEqual({
      maxSavedParseExceptions: 5,
    });
  });

  it("reads parse errors from Druid's report objects and from plain strings", () => {
    const events = {
      determinePartitions: [],
      buildSegments: [
        {
          errorType: "unparseable",
          details: ["Unable to parse row [x]"],
          input: "x",
          timeOfExceptionMillis: 1,
        },
        "Timestamp[null] is unparseable! Event: {a=1}",
      ],
    };
    expect(firstParseErrors(events)).toEqual([
      "Unable to parse row [x]",
      "Timestamp[null] is unparseable! Event: {a=1}",
    ]);
    expect(firstParseErrors(null)).toEqual([]);
  });
});

describe("--max-row-drop", () => {
  it("parses a percentage from 0 to 100 and nothing else", () => {
    expect(parseRowDrop("20%")).toBe(20);
    expect(parseRowDrop("0.5%")).toBe(0.5);
    expect(parseRowDrop("100%")).toBe(100);
    expect(parseRowDrop("101%")).toBeNull();
    expect(parseRowDrop("20")).toBeNull();
  });

  it("fails a replace that shrinks past the limit, and only when both sides are known", () => {
    expect(checkRowDrop(5, 20, 50)).toMatch(
      /5 row\(s\) ingested where 20 were served: a drop of 75.0%, more than --max-row-drop 50%/,
    );
    expect(checkRowDrop(15, 20, 50)).toBeNull();
    expect(checkRowDrop(25, 20, 0)).toBeNull();
    expect(checkRowDrop(5, null, 50)).toBeNull();
    expect(checkRowDrop(null, 20, 50)).toBeNull();
    expect(checkRowDrop(5, 20, undefined)).toBeNull();
  });
});
