// The Overlord's embedded kill on the emulator (apache/druid #18028, #18124; Druid 34): with
// druid.manager.segments.killUnused.enabled, unused segments past the buffer (P30D unless set) are deleted for good;
// before 34 the same properties do nothing. `segops kill` says so in its plan when Druid already kills.
import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { clusterOf } from "../../src/druid/cluster.js";
import { openStore } from "../../src/ledger/open.js";
import { killRequest } from "../../src/ops/kill/request.js";
import { embeddedKillBuffer, killable } from "../../src/sim/embedded-kill.js";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

const DAY_MS = 86_400_000;
const ON = { "druid.manager.segments.killUnused.enabled": "true" };
const INTERVAL = "2026-01-01/2026-01-02";

async function unusedDay(s: TestSim): Promise<DruidClient> {
  const task = parallelTask({
    id: "k1",
    inputSource: { type: "inline", data: '{"time":"2026-01-01T01:00:00Z","page":"a","user":"u"}\n' },
    context: { simDurationMs: 1000 },
  });
  expect((await s.post("/druid/indexer/v1/task", task)).status).toBe(200);
  await s.advance(1000);
  const marked = await s.post("/druid/indexer/v1/datasources/wiki/markUnused", { interval: INTERVAL });
  expect(marked.json).toMatchObject({ numChangedSegments: 1 });
  return new DruidClient({ url: s.url, clock: s.clock });
}

describe("the emulated Overlord's embedded kill", () => {
  it("reads its settings as Druid does: off by default, P30D buffer, nothing before 34, a bad period refused", () => {
    expect(embeddedKillBuffer({}, 35)).toBeNull();
    expect(embeddedKillBuffer(ON, 35)).toBe("P30D");
    expect(embeddedKillBuffer(ON, 33)).toBeNull();
    expect(() =>
      embeddedKillBuffer({ ...ON, "druid.manager.segments.killUnused.bufferPeriod": "30 days" }, 34),
    ).toThrow('runtimeProperties["druid.manager.segments.killUnused.bufferPeriod"]');
    expect(killable(0, 30 * DAY_MS, "P30D")).toBe(true);
    expect(killable(1, 30 * DAY_MS, "P30D")).toBe(false);
    expect(killable(null, 30 * DAY_MS, "P30D")).toBe(false);
  });

  it("deletes an unused segment once it has been unused for the buffer, on Druid 35", async () => {
    const s = await startTestSim({
      druidVersion: 35,
      handoffDelayMs: 0,
      runtimeProperties: { ...ON, "druid.manager.segments.killUnused.bufferPeriod": "P1D" },
    });
    const client = await unusedDay(s);
    await s.advance(DAY_MS - 1);
    expect(await client.unusedSegments("wiki", INTERVAL)).toHaveLength(1);
    await s.advance(1);
    expect(await client.unusedSegments("wiki", INTERVAL)).toEqual([]);
  });

  it("keeps it on Druid 33, which has no embedded kill, with the same properties", async () => {
    const s = await startTestSim({
      druidVersion: 33,
      handoffDelayMs: 0,
      runtimeProperties: { ...ON, "druid.manager.segments.killUnused.bufferPeriod": "P1D" },
    });
    const client = await unusedDay(s);
    await s.advance(2 * DAY_MS);
    expect(await client.unusedSegments("wiki", INTERVAL)).toHaveLength(1);
  });

  it("makes segops kill's plan say that Druid already kills, and when", async () => {
    const plan = async (s: TestSim) => {
      const client = new DruidClient({ url: s.url, clock: s.clock });
      const store = await openStore("sqlite::memory:");
      try {
        return await killRequest.plan(
          { client, store, cluster: clusterOf(client), now: () => s.clock.now() },
          { datasource: "wiki", interval: INTERVAL },
        );
      } finally {
        await store.close();
        await client.close();
      }
    };
    const on = await plan(await startTestSim({ druidVersion: 35, runtimeProperties: ON }));
    expect(on.notes?.[0]).toBe(
      "Druid already deletes unused segments itself: the Overlord's embedded kill (UnusedSegmentsKiller, Druid 34+) after P30D (druid.manager.segments.killUnused.bufferPeriod). This kill only deletes the segments it lists sooner than that.",
    );
    expect(on.detail?.druidKills).toEqual([
      { property: "druid.manager.segments.killUnused.bufferPeriod", bufferPeriod: "P30D" },
    ]);
    const off = await plan(await startTestSim({ druidVersion: 33, runtimeProperties: ON }));
    expect(off.notes?.[0]).not.toMatch(/already deletes/);
    expect(off.detail?.druidKills).toEqual([]);
    expect(parseInterval(INTERVAL).end - parseInterval(INTERVAL).start).toBe(DAY_MS);
  });
});
