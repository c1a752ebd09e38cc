import { describe, expect, it } from "vitest";
import { heldByOthers, leftoverSkips, type SkipHolding } from "../../src/ingest/compaction-leftovers.js";
import { openStore } from "../../src/ledger/open.js";
import { sharedMonthAndLeftover } from "../helpers/compaction-leftovers.js";

/**
 * Compaction skipIntervals (apache/druid #19792, Druid 39) that outlive the partition that added them: the ledger
 * records each (the partition's `compactionSkip`), so two hosts whose partitions share a widened interval do not
 * take it from each other, and what a partition left behind (a job canceled while no host ran it) is taken out by
 * the next process that runs ingestion on the ledger.
 */

const hold = (taskId: string, interval: string, active: boolean, datasource = "ds"): SkipHolding => ({
  taskId,
  datasource,
  interval,
  active,
});

describe("what the ledger says about skip intervals", () => {
  it("keeps an entry another unfinished partition records, and calls leftover what only finished ones record", () => {
    const holdings = [
      hold("a", "M1", false),
      hold("b", "M1", true),
      hold("c", "M2", false),
      hold("d", "M2", false),
      hold("e", "M2", true, "other"),
    ];
    expect(heldByOthers(holdings, "ds", "M1", "a")).toBe(true);
    expect(heldByOthers(holdings, "ds", "M1", "b")).toBe(false);
    expect(heldByOthers(holdings, "ds", "M2", "c")).toBe(false);
    expect(leftoverSkips(holdings)).toEqual([{ datasource: "ds", interval: "M2", recordedBy: "c" }]);
  });
});

describe("skip intervals across hosts and after a cancel, on an emulated Druid 39 (SQLite ledger)", () => {
  it("lets a second host's partition share the month, and the next run takes out what a canceled job left", async () => {
    await sharedMonthAndLeftover(() => openStore("sqlite::memory:"));
  });
});
