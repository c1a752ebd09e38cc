import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";

describe("version-specific shapes (api-contract §8)", () => {
  const task = parallelTask({
    id: "v",
    inputSource: {
      type: "inline",
      data: '{"time":"2026-01-01T01:00:00Z","page":"a","user":"u"}\n{"time":"2025-01-01T00:00:00Z","page":"x","user":"u"}\n',
    },
    context: { simDurationMs: 10 },
  });

  it("matches a real Druid 33: no DataSegment totalRows, no thrownAwayByReason", async () => {
    const s = await startTestSim({ druidVersion: 33, handoffDelayMs: 0 });
    await s.post(`${V1}/task`, task);
    await s.advance(10);
    const seg = (await s.get("/druid/coordinator/v1/metadata/datasources/wiki/segments?full")).json[0];
    expect(seg).not.toHaveProperty("totalRows");
    const build = (await s.get(`${V1}/task/v/reports`)).json.ingestionStatsAndErrors.payload.rowStats
      .buildSegments;
    expect(build).toEqual({
      processed: 1,
      processedBytes: expect.any(Number),
      processedWithError: 0,
      thrownAway: 1,
      unparseable: 0,
    });
    expect((await s.post(`${V1}/task`, task)).json.errorCode).toBe("entryAlreadyExists");
  });

  it("adds totalRows and thrownAwayByReason for current Druid", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await s.post(`${V1}/task`, task);
    await s.advance(10);
    const seg = (await s.get("/druid/coordinator/v1/metadata/datasources/wiki/segments?full")).json[0];
    expect(seg.totalRows).toBe(1);
    const build = (await s.get(`${V1}/task/v/reports`)).json.ingestionStatsAndErrors.payload.rowStats
      .determinePartitions;
    expect(build.thrownAwayByReason).toEqual({});
  });
});
