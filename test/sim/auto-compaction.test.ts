import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

/**
 * The emulated Coordinator's auto-compaction (src/sim/auto-compact.ts): the datasource compaction config API,
 * and a duty that compacts the newest chunk needing it, honouring `skipIntervals` from Druid 39 (apache/druid
 * #19792, `DataSourceCompactionConfig.getSkipIntervals`) and dropping the field before.
 */

const CO = "/druid/coordinator/v1";
const rows = (days: string[]) => days.map((d) => `{"time":"${d}T01:00:00Z","page":"p"}`).join("\n");
const DAYS = ["2026-01-01", "2026-01-02", "2026-01-03"];

/** Sim time moves only with `advance`, and the emulator acts at its next request: one look of the duty. */
async function look(s: TestSim, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) {
    await s.advance(1000);
    await s.get("/druid/indexer/v1/tasks");
  }
}

async function seeded(druidVersion: number) {
  const s = await startTestSim({
    druidVersion,
    handoffDelayMs: 0,
    compactionPeriodMs: 1000,
    baseDurationMs: 200,
  });
  await s.post(
    "/druid/indexer/v1/task",
    parallelTask({
      id: "seed",
      intervals: ["2026-01-01/2026-01-04"],
      inputSource: { type: "inline", data: rows(DAYS) },
      context: { simDurationMs: 10 },
    }),
  );
  await s.advance(10);
  return s;
}

const compactions = (s: Awaited<ReturnType<typeof seeded>>) =>
  [...s.sim.engine.tasks.values()]
    .filter((t) => t.id.startsWith("coordinator-issued_compact_wiki_"))
    .map((t) => t.plan.compact?.interval);

describe("the emulator's auto-compaction", () => {
  it("serves the datasource configs: added with Druid's defaults, read, listed, deleted", async () => {
    const s = await startTestSim({ druidVersion: 39 });
    expect((await s.post(`${CO}/config/compaction`, { skipOffsetFromLatest: "PT0S" })).status).toBe(400);
    const body = {
      dataSource: "wiki",
      skipOffsetFromLatest: "PT0S",
      skipIntervals: ["2026-01-02/2026-01-03"],
    };
    expect((await s.post(`${CO}/config/compaction`, body)).status).toBe(200);
    const one = await s.get(`${CO}/config/compaction/wiki`);
    expect(one.json).toMatchObject({ ...body, taskPriority: 25 });
    expect((await s.get(`${CO}/config/compaction`)).json.compactionConfigs).toEqual([one.json]);
    expect((await s.get(`${CO}/config/compaction/other`)).status).toBe(404);
    const bad = await s.post(`${CO}/config/compaction`, { ...body, skipIntervals: ["yesterday"] });
    expect(bad.status).toBe(400);
    const deleted = await fetch(`${s.url}${CO}/config/compaction/wiki`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect((await s.get(`${CO}/config/compaction`)).json.compactionConfigs).toEqual([]);
  });

  it("compacts nothing while no datasource has a config", async () => {
    const s = await seeded(39);
    await look(s, 10);
    expect(compactions(s)).toEqual([]);
  });

  it("on Druid 39 compacts every chunk but the skipped one, newest first, at compaction priority", async () => {
    const s = await seeded(39);
    await s.post(`${CO}/config/compaction`, {
      dataSource: "wiki",
      skipOffsetFromLatest: "PT0S",
      skipIntervals: ["2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z"],
    });
    await look(s, 10);
    const done = compactions(s);
    expect(done.map((i) => new Date(i?.start ?? 0).toISOString().slice(0, 10))).toEqual([
      "2026-01-03",
      "2026-01-01",
    ]);
    const task = [...s.sim.engine.tasks.values()].find((t) => t.id.startsWith("coordinator-issued_"));
    expect(task?.plan.priority).toBe(25);
    // Out of the skip list, the day is compacted at the next look.
    await s.post(`${CO}/config/compaction`, {
      dataSource: "wiki",
      skipOffsetFromLatest: "PT0S",
      skipIntervals: [],
    });
    await look(s, 3);
    expect(compactions(s)).toHaveLength(3);
  });

  it("before Druid 39 drops skipIntervals from the config and compacts the interval anyway", async () => {
    const s = await seeded(38);
    await s.post(`${CO}/config/compaction`, {
      dataSource: "wiki",
      skipOffsetFromLatest: "PT0S",
      skipIntervals: ["2026-01-02/2026-01-03"],
    });
    expect((await s.get(`${CO}/config/compaction/wiki`)).json).not.toHaveProperty("skipIntervals");
    await look(s, 10);
    expect(compactions(s)).toHaveLength(3);
  });

  it("leaves the newest day to skipOffsetFromLatest (P1D by default) and a chunk an ingestion locks", async () => {
    const s = await seeded(39);
    await s.post("/druid/indexer/v1/task", {
      ...parallelTask({
        id: "busy",
        intervals: ["2026-01-01/2026-01-02"],
        inputSource: { type: "inline", data: rows(["2026-01-01"]) },
        context: { simDurationMs: 60_000 },
      }),
    });
    await s.post(`${CO}/config/compaction`, { dataSource: "wiki" });
    await look(s, 10);
    // Jan 3 ends at the newest segment's end (within P1D of it), Jan 1 is locked by "busy": only Jan 2.
    expect(compactions(s).map((i) => new Date(i?.start ?? 0).toISOString().slice(0, 10))).toEqual([
      "2026-01-02",
    ]);
  });
});
