import { describe, expect, it } from "vitest";
import { CAPABILITY_ROWS, flagsFor } from "../../src/druid/capabilities.js";
import type { DataSegment } from "../../src/druid/types.js";
import { servedByHistoricals } from "../../src/work/segments.js";

/** The rows for Druid 35 and 37: virtual storage, MSQ in core, parser and Hadoop ingestion removed. */
describe("capability rows for Druid 35 to 37", () => {
  it.each([
    ["virtualStorage", 35, "#18176"],
    ["msqInCore", 35, "#18394"],
    ["parserRemoved", 37, "#19173"],
    ["hadoopRemoved", 37, "#19109"],
  ] as const)("%s holds from %i on (apache/druid %s)", (key, since, change) => {
    const row = CAPABILITY_ROWS.find((r) => r.key === key);
    expect(row?.source).toContain(`apache/druid ${change}`);
    expect(flagsFor(since - 1)[key]).toBe(false);
    expect(flagsFor(since)[key]).toBe(true);
    expect(flagsFor(39)[key]).toBe(true);
  });

  // Virtual storage (apache/druid #18176): a Historical announces an assigned segment without downloading it, and
  // the Broker routes to what is announced; served is what a Historical announces, virtual or not.
  it("counts a segment a virtual storage Historical announces as served, and nothing nobody announces", () => {
    const segment: DataSegment = {
      dataSource: "wiki",
      interval: "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
      version: "v1",
      loadSpec: {},
      dimensions: "",
      metrics: "",
      shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
      size: 1,
    };
    const virtual = { type: "historical", name: "vs:8083", hostAndPort: "vs:8083" };
    expect(servedByHistoricals([{ segment, servers: [virtual] }])).toHaveLength(1);
    expect(servedByHistoricals([{ segment, servers: [] }])).toEqual([]);
  });
});
