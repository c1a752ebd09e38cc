import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { DruidClient } from "../../src/druid/client.js";
import { isHandedOff } from "../../src/druid/sql.js";
import { startSim } from "../../src/sim/index.js";
import { bindParameters } from "../../src/sim/sql-parameters.js";

describe("Broker SQL dynamic parameters (docs/druid-api.md §3.6)", () => {
  it("binds each ? outside quotes by position, escaping string literals", () => {
    expect(
      bindParameters("SELECT '?' AS q, \"a?b\" FROM t WHERE x = ? AND n > ? AND s = ?", [
        { type: "VARCHAR", value: "it's" },
        { type: "BIGINT", value: 5 },
        { type: "VARCHAR", value: null },
      ]),
    ).toBe("SELECT '?' AS q, \"a?b\" FROM t WHERE x = 'it''s' AND n > 5 AND s = NULL");
    expect(() =>
      bindParameters("SELECT * FROM t WHERE a = ? AND b = ?", [{ type: "VARCHAR", value: "x" }]),
    ).toThrow("Parameter at position [1] is not bound");
  });

  it("answers the client's handoff query (Druid's own SegmentLoadStatusFetcher form) before and after handoff", async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 1));
    const sim = await startSim({ clock, handoffDelayMs: 10_000 });
    const client = new DruidClient({ url: sim.url });
    try {
      await client.submitTask({
        type: "index_parallel",
        id: "loadq",
        spec: {
          dataSchema: {
            dataSource: "loadq",
            timestampSpec: { column: "ts" },
            dimensionsSpec: { dimensions: [] },
            granularitySpec: { segmentGranularity: "day", intervals: ["2026-01-01/2026-01-02"] },
          },
          ioConfig: {
            type: "index_parallel",
            inputSource: { type: "s3", uris: ["s3://b/x.json"] },
            inputFormat: { type: "json" },
          },
          tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic" } },
        },
        context: { simDurationMs: 1000 },
      });
      await clock.advance(2000); // SUCCESS, published, not yet loaded
      const [segment] = await client.metadataSegments("loadq", ["2026-01-01/2026-01-02"]);
      const version = segment?.version as string;
      const before = await client.segmentLoadCounts("loadq", [version]);
      expect(before).toMatchObject({ usedSegments: 1, pendingSegments: 1 });
      expect(isHandedOff(before)).toBe(false);
      await clock.advance(10_000);
      const after = await client.segmentLoadCounts("loadq", [version]);
      expect(after).toMatchObject({ usedSegments: 1, pendingSegments: 0 });
      expect(isHandedOff(after)).toBe(true);
      expect(await client.segmentLoadCounts("loadq", ["1999-01-01T00:00:00.000Z"])).toMatchObject({
        usedSegments: 0,
      });
    } finally {
      await client.close();
      await sim.close();
    }
  });
});
