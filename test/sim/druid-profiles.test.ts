// Emulator profiles for the Druid 34–38 rows of docs/druid-versions.md that are observable over HTTP: partial load
// rules (38, apache/druid #19374), cloned Historicals (34, #17863/#17899) and virtual storage Historicals (35,
// #18176). Each is checked on the wire and through what segops reads from it (the client, the handoff gate).
import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { HandoffChecker } from "../../src/work/handoff.js";
import { servedByHistoricals } from "../../src/work/segments.js";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";
const C = "/druid/coordinator/v1";
const DAY = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";

async function ingestDay(s: TestSim, id: string, dataSource = "wiki"): Promise<void> {
  const task = parallelTask({
    id,
    dataSource,
    inputSource: { type: "inline", data: '{"time":"2026-01-01T01:00:00Z","page":"a","user":"u"}\n' },
    context: { simDurationMs: 1000 },
  });
  expect((await s.post(`${V1}/task`, task)).status).toBe(200);
  await s.advance(1000);
}

const serverview = async (s: TestSim, ds = "wiki") =>
  (await s.get(`${C}/datasources/${ds}/intervals/2026-01-01_2026-01-02/serverview`)).json as Array<{
    segment: { identifier?: string };
    servers: Array<{ name: string; type: string }>;
  }>;

describe("partial load rules on the emulated Coordinator (apache/druid #19374, Druid 38)", () => {
  const PARTIAL = {
    type: "loadPartialForever",
    tieredReplicants: { _default_tier: 1 },
    matcher: { type: "exactProjection", names: ["daily"] },
  };

  it.each([33, 37])(
    "refuses loadPartialForever on Druid %i as a real Druid 33 does, storing nothing",
    async (v) => {
      const s = await startTestSim({ druidVersion: v });
      const res = await s.post(`${C}/rules/wiki`, [PARTIAL]);
      expect(res.status).toBe(400);
      // Observed on a real Druid 33.0.0: the extensions hint listing the ten rule types it knows.
      expect(res.json.error).toBe(
        "Please make sure to load all the necessary extensions and jars with type 'loadPartialForever' on 'druid/coordinator' service. Could not resolve type id 'loadPartialForever' as a subtype of `org.apache.druid.server.coordinator.rules.Rule` known type ids = [broadcastByInterval, broadcastByPeriod, broadcastForever, dropBeforeByPeriod, dropByInterval, dropByPeriod, dropForever, loadByInterval, loadByPeriod, loadForever]",
      );
      expect((await s.get(`${C}/rules/wiki`)).json).toEqual([]);
    },
  );

  it("stores a partial rule on Druid 38 with its defaults and loads the segments it matches", async () => {
    const s = await startTestSim({ druidVersion: 38, handoffDelayMs: 0 });
    expect((await s.post(`${C}/rules/wiki`, [PARTIAL])).status).toBe(200);
    expect((await s.get(`${C}/rules/wiki`)).json).toEqual([
      { ...PARTIAL, useDefaultTierForNull: true, onCannotMatch: "LOAD_ON_DEMAND" },
    ]);
    await ingestDay(s, "p1");
    const view = await serverview(s);
    expect(view).toHaveLength(1);
    expect(view[0]?.servers.map((x) => x.name)).toEqual(["localhost:8083"]);
  });

  it("refuses a partial rule without a matcher (PartialLoadRule's InvalidInput)", async () => {
    const s = await startTestSim({ druidVersion: 39 });
    const res = await s.post(`${C}/rules/wiki`, [{ type: "loadPartialByPeriod", period: "P30D" }]);
    expect(res.status).toBe(400);
    expect(res.json.error).toContain("matcher must not be null for a partial load rule");
  });

  it("passes a segment on to the next rule only with FALL_THROUGH and a matcher that cannot match", async () => {
    const s = await startTestSim({ druidVersion: 38, handoffDelayMs: 0 });
    const clusterGroup = { type: "clusterGroup", groups: [] };
    await s.post(`${C}/rules/wiki`, [
      { ...PARTIAL, matcher: clusterGroup, onCannotMatch: "FALL_THROUGH" },
      { type: "loadForever", tieredReplicants: { _default_tier: 0 } },
    ]);
    await ingestDay(s, "f1");
    // The partial rule passed it on; the next loads it nowhere.
    expect(await serverview(s)).toEqual([]);
    // A projection matcher always applies (PartialLoadRuleTest): the same chain loads it.
    await s.post(`${C}/rules/wiki`, [
      { ...PARTIAL, onCannotMatch: "FALL_THROUGH" },
      { type: "loadForever", tieredReplicants: { _default_tier: 0 } },
    ]);
    await s.advance(5000);
    expect(await serverview(s)).toHaveLength(1);
  });
});

describe("cloned Historicals on the emulated Coordinator (apache/druid #17863, #17899; Druid 34)", () => {
  const CLONE = "localhost:9083";

  it("has no cloneServers before 34 and ignores one posted", async () => {
    const s = await startTestSim({ druidVersion: 33, handoffDelayMs: 0 });
    expect((await s.get(`${C}/config`)).json).not.toHaveProperty("cloneServers");
    await s.post(`${C}/config`, { cloneServers: { [CLONE]: "localhost:8083" } });
    await ingestDay(s, "c0");
    expect((await serverview(s))[0]?.servers.map((x) => x.name)).toEqual(["localhost:8083"]);
  });

  it("lists a clone beside its source, and only the clone once the source stops: not served for segops", async () => {
    const s = await startTestSim({ druidVersion: 35, handoffDelayMs: 0 });
    expect((await s.get(`${C}/config`)).json.cloneServers).toEqual({});
    expect((await s.post(`${C}/config`, { cloneServers: { [CLONE]: "localhost:8083" } })).status).toBe(200);
    await ingestDay(s, "c1");
    expect((await serverview(s))[0]?.servers.map((x) => x.name)).toEqual(["localhost:8083", CLONE]);

    const client = new DruidClient({ url: s.url, clock: s.clock });
    const clones = await client.cloneServers();
    expect(clones).toEqual(new Set([CLONE]));
    expect(servedByHistoricals(await client.servedInInterval("wiki", DAY), clones)).toHaveLength(1);

    expect((await s.post("/__sim/historical/stop", "")).status).toBe(204);
    const view = await serverview(s);
    expect(view.map((v) => v.servers.map((x) => x.name))).toEqual([[CLONE]]);
    // Brokers leave clones out of queries: with nothing else serving it the table is unknown to the Broker.
    const count = await s.post("/druid/v2/sql", { query: 'SELECT COUNT(*) AS n FROM "wiki"' });
    expect([count.status, count.json.errorMessage]).toEqual([
      400,
      "Object 'wiki' not found (line [1], column [27])",
    ]);
    // What the handoff gate reads: the clone's segment is not served; without the clone list it would be.
    const served = await client.servedInInterval("wiki", DAY);
    expect(servedByHistoricals(served, clones)).toEqual([]);
    expect(servedByHistoricals(served)).toHaveLength(1);
  });

  it("makes the handoff gate wait while only the clone holds the segment, and hand off when its source is back", async () => {
    const s = await startTestSim({ druidVersion: 34, handoffDelayMs: 0 });
    await s.post(`${C}/config`, { cloneServers: { [CLONE]: "localhost:8083" } });
    await ingestDay(s, "g1");
    s.sim.setHistoricalUp(false);
    const client = new DruidClient({ url: s.url, clock: s.clock });
    const checker = new HandoffChecker({ clock: s.clock, tickMs: 1000, source: client });
    const ask = async () => {
      const verdict = checker.check("wiki", {
        interval: parseInterval(DAY),
        mode: "replace",
        baseline: { versions: [], segmentIds: [] },
      });
      await s.advance(1000);
      return verdict;
    };
    expect(await ask()).toMatchObject({ state: "waiting", missing: [expect.stringMatching(/not served$/)] });
    s.sim.setHistoricalUp(true);
    expect((await ask()).state).toBe("handed-off");
  });
});

describe("a virtual storage Historical on the emulator (apache/druid #18176, Druid 35)", () => {
  it("is opt-in from 35 on, with a message naming both options before", async () => {
    await expect(startTestSim({ druidVersion: 33, virtualStorage: true })).rejects.toThrow(
      "Expected `virtualStorage` only with `druidVersion` 35 or newer (Druid 35 added virtual storage), got druidVersion 33: raise druidVersion or drop virtualStorage",
    );
  });

  it("says so in /status/properties, and the handoff gate hands off on what the Historical announces", async () => {
    const s = await startTestSim({ druidVersion: 35, virtualStorage: true, handoffDelayMs: 2000 });
    expect((await s.get("/status/properties")).json).toMatchObject({
      "druid.segmentCache.virtualStorage": "true",
    });
    const client = new DruidClient({ url: s.url, clock: s.clock });
    const checker = new HandoffChecker({ clock: s.clock, tickMs: 1000, source: client });
    await ingestDay(s, "v1");
    const ask = async () => {
      const verdict = checker.check("wiki", {
        interval: parseInterval(DAY),
        mode: "replace",
        baseline: { versions: [], segmentIds: [] },
      });
      await s.advance(1000);
      return verdict;
    };
    // Published, not yet assigned: not served (no lie).
    expect((await ask()).state).toBe("waiting");
    // Assigned and announced, nothing downloaded yet: served, since the Broker routes to it (no hang).
    expect((await ask()).state).toBe("handed-off");
    const count = await s.post("/druid/v2/sql", { query: 'SELECT COUNT(*) AS n FROM "wiki"' });
    expect(count.json).toEqual([{ n: 1 }]);
  });
});

describe("a dataSchema's parser by release (apache/druid #19173, Druid 37)", () => {
  const withParser = parallelTask({
    dataSchema: {
      parser: {
        type: "string",
        parseSpec: { format: "json", timestampSpec: { column: "time" }, dimensionsSpec: { dimensions: [] } },
      },
    },
  });

  it("is refused beside an inputSource on 33 as a real Druid 33 answered (observed)", async () => {
    const s = await startTestSim({ druidVersion: 33 });
    const res = await s.post(`${V1}/task`, withParser);
    expect([res.status, res.json]).toEqual([
      400,
      {
        error:
          "Cannot construct instance of `org.apache.druid.indexing.common.task.batch.parallel.ParallelIndexIngestionSpec`, problem: Cannot use parser and inputSource together. Try using inputFormat instead of parser.",
      },
    ]);
  });

  it("is refused by the DataSchema from 37 on", async () => {
    const s = await startTestSim({ druidVersion: 37 });
    const res = await s.post(`${V1}/task`, withParser);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe(
      "Cannot construct instance of `org.apache.druid.segment.indexing.DataSchema`, problem: parser was removed in Druid 37, define the timestampSpec and dimensionsSpec on the schema directly instead of nested inside the parser definition",
    );
  });
});
