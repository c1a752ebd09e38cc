import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { flagsFor } from "../../src/druid/capabilities.js";
import { cloneHostsOf } from "../../src/druid/clones.js";
import type { DataSegment } from "../../src/druid/types.js";
import { CLONES_TTL_MS, HandoffChecker } from "../../src/work/handoff.js";
import { type ServedBy, segmentId, servedByHistoricals } from "../../src/work/segments.js";

/**
 * Cloned Historicals (apache/druid #17863: the Coordinator dynamic config's `cloneServers`, Druid 34; Brokers leave
 * clones out of queries by default, #17899): a segment only a clone holds is not served, so the handoff gate
 * waits for its source.
 */

const DAY = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";
const segment: DataSegment = {
  dataSource: "wiki",
  interval: DAY,
  version: "v9",
  loadSpec: {},
  dimensions: "",
  metrics: "",
  shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
  size: 1,
  totalRows: 1,
};
const SOURCE: ServedBy = { type: "historical", name: "hist-a:8083", hostAndPort: "hist-a:8083" };
const CLONE: ServedBy = { type: "historical", name: "hist-b:8083", hostAndPort: "hist-b:8083" };

describe("cloned Historicals in the served view", () => {
  it("reads the clones from the dynamic config, and none when it has no cloneServers", () => {
    expect(cloneHostsOf({ cloneServers: { "hist-b:8083": "hist-a:8083" } })).toEqual(
      new Set(["hist-b:8083"]),
    );
    expect(cloneHostsOf({ maxSegmentsToMove: 100 })).toEqual(new Set());
    expect(cloneHostsOf(null)).toEqual(new Set());
    expect(flagsFor(33).cloneServers).toBe(false);
    expect(flagsFor(34).cloneServers).toBe(true);
  });

  it("does not count a segment only a clone holds as served", () => {
    const clones = new Set(["hist-b:8083"]);
    expect(servedByHistoricals([{ segment, servers: [CLONE] }], clones)).toEqual([]);
    expect(servedByHistoricals([{ segment, servers: [CLONE, SOURCE] }], clones)).toHaveLength(1);
    // Without the clone list every Historical serves (a Druid before 34).
    expect(servedByHistoricals([{ segment, servers: [CLONE] }])).toHaveLength(1);
  });

  it("makes the handoff gate wait while only the clone holds our segment, reading the clones once a minute", async () => {
    const clock = new ManualClock(0);
    let servers: ServedBy[] = [CLONE];
    let cloneReads = 0;
    const checker = new HandoffChecker({
      clock,
      tickMs: 1000,
      source: {
        metadataSegments: async () => [segment],
        servedSegments: async () => [],
        servedInInterval: async () => [{ segment, servers }],
        cloneServers: async () => {
          cloneReads++;
          return new Set(["hist-b:8083"]);
        },
      },
    });
    const ask = () =>
      checker.check("wiki", {
        interval: parseInterval(DAY),
        mode: "replace",
        baseline: { versions: [], segmentIds: [] },
      });
    const first = ask();
    await clock.advance(1000);
    expect(await first).toMatchObject({ state: "waiting", missing: [expect.stringMatching(/not served$/)] });
    servers = [CLONE, SOURCE];
    const second = ask();
    await clock.advance(1000);
    expect((await second).state).toBe("handed-off");
    expect(cloneReads).toBe(1);
    await clock.advance(CLONES_TTL_MS);
    const third = ask();
    await clock.advance(1000);
    await third;
    expect(cloneReads).toBe(2);
    await checker.stop();
  });

  it("past maxServedRanges with clones set up, reads one served view over the whole extent, not the inventory", async () => {
    const clock = new ManualClock(0);
    const asked: string[] = [];
    let inventoryReads = 0;
    const checker = new HandoffChecker({
      clock,
      tickMs: 1000,
      maxServedRanges: 1,
      source: {
        metadataSegments: async () => [segment],
        // The Coordinator's inventory lists the clone's copy as served: it knows no servers.
        servedSegments: async () => {
          inventoryReads++;
          return [segmentId(segment)];
        },
        servedInInterval: async (_ds, interval) => {
          asked.push(interval);
          return [{ segment, servers: [CLONE] }];
        },
        cloneServers: async () => new Set(["hist-b:8083"]),
      },
    });
    const ask = (interval: string) =>
      checker.check("wiki", {
        interval: parseInterval(interval),
        mode: "replace",
        baseline: { versions: [], segmentIds: [] },
      });
    const far = ask("2026-06-01/2026-06-02");
    const ours = ask(DAY);
    await clock.advance(1000);
    expect(await ours).toMatchObject({ state: "waiting", missing: [expect.stringMatching(/not served$/)] });
    await far;
    expect(inventoryReads).toBe(0);
    expect(asked).toHaveLength(1);
    expect(checker.stats.servedFallbacks).toBe(0);
    await checker.stop();
  });
});
