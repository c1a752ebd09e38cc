// The emulated Coordinator's load rules and handoff (src/sim/coordinator.ts, src/sim/rules.ts): the rules API
// bodies a real Druid 33 answered, RunRules (first matching rule wins; drop → unused; zero replicas or an absent
// tier → used but never loaded), MarkOvershadowedSegmentsAsUnused (only once the overshadowing segments are
// served), and a Broker that only sees served segments. Every step is driven by a ManualClock.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { startSim } from "../../src/sim/index.js";
import { parseRules, ruleApplies } from "../../src/sim/rules.js";
import { parallelTask, startTestSim, T0, type TestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";
const C = "/druid/coordinator/v1";
const DEFAULT_RULE = {
  tieredReplicants: { _default_tier: 2 },
  useDefaultTierForNull: true,
  type: "loadForever",
};
const DAY1 = "wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_2026-03-01T00:00:00.000Z";
const DAY2 = "wiki_2026-01-02T00:00:00.000Z_2026-01-03T00:00:00.000Z_2026-03-01T00:00:00.000Z";

const DATA = [
  '{"time":"2026-01-01T01:00:00Z","page":"a","added":5}',
  '{"time":"2026-01-01T02:00:00Z","page":"b","added":7}',
  '{"time":"2026-01-02T03:00:00Z","page":"c","added":2}',
].join("\n");

function ingest(id: string, over: Parameters<typeof parallelTask>[0] = {}) {
  return parallelTask({
    id,
    intervals: ["2026-01-01/2026-01-03"],
    inputSource: { type: "inline", data: DATA },
    dataSchema: {
      dimensionsSpec: { dimensions: ["page", { type: "long", name: "added" }] },
      metricsSpec: [],
    },
    ...over,
    context: { simDurationMs: 1000, ...over.context },
  });
}

/** Submits and lets the 1 s task finish (publish at T0 + 1 s, or later for queued tasks). */
async function run(s: TestSim, task: Record<string, unknown>): Promise<void> {
  expect((await s.post(`${V1}/task`, task)).status).toBe(200);
  await s.advance(1000);
}

async function setRules(s: TestSim, ds: string, rules: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}${C}/rules/${ds}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof rules === "string" ? rules : JSON.stringify(rules),
  });
  return { status: res.status, text: await res.text(), contentType: res.headers.get("content-type") };
}

const usedIds = async (s: TestSim) =>
  (await s.post(`${C}/metadata/datasources/wiki/segments`, ["2026-01-01/2026-01-03"])).json as string[];
const servedIds = async (s: TestSim) => {
  const res = await s.get(`${C}/datasources/wiki/segments`);
  return res.status === 204 ? [] : (res.json as string[]);
};
const sql = (s: TestSim, query: string, extra: Record<string, unknown> = {}) =>
  s.post("/druid/v2/sql", { query, ...extra });

describe("rules API (RulesResource, bodies of a real Druid 33)", () => {
  it("starts with Druid's default rule, lists it under _default, and answers [] for a datasource without rules", async () => {
    const s = await startTestSim();
    expect((await s.get(`${C}/rules`)).json).toEqual({ _default: [DEFAULT_RULE] });
    expect((await s.get(`${C}/rules/wiki`)).json).toEqual([]);
    expect((await s.get(`${C}/rules/wiki?full`)).json).toEqual([DEFAULT_RULE]);
  });

  it("sets rules with 200 and no body, normalizes them as Druid serializes them, and audits author and comment", async () => {
    const s = await startTestSim();
    const res = await setRules(
      s,
      "wiki",
      [
        { type: "loadByPeriod", period: "p1m" },
        { type: "loadByInterval", interval: "2020-01-01T05:00:00+02:00/P1D", tieredReplicants: { hot: 1 } },
        { type: "dropByPeriod", period: "P2M" },
        { type: "dropBeforeByPeriod", period: "P3M" },
        { type: "dropByInterval", interval: "2010/2011" },
        { type: "broadcastByPeriod", period: "P1D", includeFuture: false },
        { type: "loadForever", useDefaultTierForNull: false },
        { type: "dropForever" },
      ],
      { "X-Druid-Author": "ops", "X-Druid-Comment": "keep a month" },
    );
    expect([res.status, res.text]).toEqual([200, ""]);
    const stored = [
      {
        period: "P1M",
        includeFuture: true,
        tieredReplicants: { _default_tier: 2 },
        useDefaultTierForNull: true,
        type: "loadByPeriod",
      },
      {
        interval: "2020-01-01T03:00:00.000Z/2020-01-02T03:00:00.000Z",
        tieredReplicants: { hot: 1 },
        useDefaultTierForNull: true,
        type: "loadByInterval",
      },
      { period: "P2M", includeFuture: true, type: "dropByPeriod" },
      { period: "P3M", type: "dropBeforeByPeriod" },
      { interval: "2010-01-01T00:00:00.000Z/2011-01-01T00:00:00.000Z", type: "dropByInterval" },
      { period: "P1D", includeFuture: false, type: "broadcastByPeriod" },
      { tieredReplicants: {}, useDefaultTierForNull: false, type: "loadForever" },
      { type: "dropForever" },
    ];
    expect((await s.get(`${C}/rules/wiki`)).json).toEqual(stored);
    expect((await s.get(`${C}/rules/wiki?full`)).json).toEqual([...stored, DEFAULT_RULE]);
    expect(Object.keys((await s.get(`${C}/rules`)).json)).toEqual(["_default", "wiki"]);
    const history = (await s.get(`${C}/rules/wiki/history`)).json;
    expect(history).toEqual([
      {
        key: "wiki",
        type: "rules",
        auditInfo: { author: "ops", identity: "allowAll", comment: "keep a month", ip: "127.0.0.1" },
        request: null,
        payload: JSON.stringify(stored),
        auditTime: "2026-03-01T00:00:00.000Z",
      },
    ]);
    // Setting [] leaves the datasource on the defaults; its entry stays, as in Druid.
    expect((await setRules(s, "wiki", [])).status).toBe(200);
    expect((await s.get(`${C}/rules`)).json).toEqual({ _default: [DEFAULT_RULE], wiki: [] });
    expect((await s.get(`${C}/rules/history?count=1`)).json[0].payload).toBe("[]");
  });

  it("refuses bad rule lists as Druid 33 does", async () => {
    // Pinned to 33: from 38 the rule store also knows the partial load rules (test/sim/druid-profiles.test.ts).
    const s = await startTestSim({ druidVersion: 33 });
    const pkg = "org.apache.druid.server.coordinator.rules";
    const cases: Array<[unknown, number, string]> = [
      [
        [{ type: "nope" }],
        400,
        `{"error":"Please make sure to load all the necessary extensions and jars with type 'nope' on 'druid/coordinator' service. Could not resolve type id 'nope' as a subtype of \`${pkg}.Rule\` known type ids = [broadcastByInterval, broadcastByPeriod, broadcastForever, dropBeforeByPeriod, dropByInterval, dropByPeriod, dropForever, loadByInterval, loadByPeriod, loadForever]"}`,
      ],
      [
        [{ type: "loadForever", tieredReplicants: { t: -1 } }],
        400,
        `{"error":"Cannot construct instance of \`${pkg}.ForeverLoadRule\`, problem: Invalid number of replicas for tier [t]. Value [-1] must be positive."}`,
      ],
      [
        { a: 1 },
        400,
        `{"error":"Cannot deserialize value of type \`java.util.ArrayList<${pkg}.Rule>\` from Object value (token \`JsonToken.START_OBJECT\`)"}`,
      ],
      [
        [{ interval: "2020/2021" }],
        400,
        `{"error":"Could not resolve subtype of [simple type, class ${pkg}.Rule]: missing type id property 'type'"}`,
      ],
      [
        [{ type: "dropByInterval", interval: "x" }],
        400,
        `{"error":"Invalid interval[x]: [Format requires a '/' separator: x] (through reference chain: java.util.ArrayList[0]->${pkg}.IntervalDropRule[\\"interval\\"])"}`,
      ],
      ["null", 500, ""],
    ];
    for (const [body, status, text] of cases) {
      const res = await setRules(s, "wiki", body);
      expect([res.status, res.text]).toEqual([status, text]);
    }
    expect((await setRules(s, "_default", [])).status).toBe(500);
    expect((await setRules(s, "wiki", "garbage")).status).toBe(500);
    const plain = await fetch(`${s.url}${C}/rules/wiki`, { method: "POST", body: "[]" });
    expect(plain.status).toBe(415);
    expect((await s.get(`${C}/rules`)).json).toEqual({ _default: [DEFAULT_RULE] });
  });

  it("matches segments as Druid's rule classes do", () => {
    const now = Date.UTC(2026, 2, 1);
    const day = (d: string) => parseInterval(`${d}/P1D`);
    const [loadMonth, loadMonthPast, dropFuture, dropWithin, dropBefore, dropInterval, loadInterval] =
      parseRules([
        { type: "loadByPeriod", period: "P1M" },
        { type: "loadByPeriod", period: "P1M", includeFuture: false },
        { type: "dropByPeriod", period: "P1M" },
        { type: "dropByPeriod", period: "P1M", includeFuture: false },
        { type: "dropBeforeByPeriod", period: "P1M" },
        { type: "dropByInterval", interval: "2026-01-01/2026-01-03" },
        { type: "loadByInterval", interval: "2026-01-01/2026-01-03" },
      ]);
    // Load by period: the window [now - P1M, now] overlaps; includeFuture also takes later data.
    expect(ruleApplies(loadMonth ?? null, day("2026-02-15"), now)).toBe(true);
    expect(ruleApplies(loadMonth ?? null, day("2026-06-01"), now)).toBe(true);
    expect(ruleApplies(loadMonthPast ?? null, day("2026-06-01"), now)).toBe(false);
    expect(ruleApplies(loadMonth ?? null, day("2026-01-15"), now)).toBe(false);
    // Drop by period: starts at or after now - P1M (includeFuture), or inside the window.
    expect(ruleApplies(dropFuture ?? null, day("2026-06-01"), now)).toBe(true);
    expect(ruleApplies(dropWithin ?? null, day("2026-06-01"), now)).toBe(false);
    expect(ruleApplies(dropWithin ?? null, day("2026-02-10"), now)).toBe(true);
    // Drop before by period: ends by now - P1M.
    expect(ruleApplies(dropBefore ?? null, day("2026-01-30"), now)).toBe(true);
    expect(ruleApplies(dropBefore ?? null, day("2026-02-01"), now)).toBe(false);
    // Drop by interval: contained; load by interval: overlapping.
    expect(ruleApplies(dropInterval ?? null, parseInterval("2026-01-02/2026-01-04"), now)).toBe(false);
    expect(ruleApplies(loadInterval ?? null, parseInterval("2026-01-02/2026-01-04"), now)).toBe(true);
  });

  it("keeps rules across a restart with dataDir", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segops-sim-rules-"));
    const clock = new ManualClock(T0);
    const first = await startSim({ clock, dataDir: dir });
    await fetch(`${first.url}${C}/rules/wiki`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify([{ type: "dropForever" }]),
    });
    await first.close();
    const second = await startSim({ clock, dataDir: dir });
    try {
      expect(await (await fetch(`${second.url}${C}/rules/wiki`)).json()).toEqual([{ type: "dropForever" }]);
    } finally {
      await second.close();
    }
  });
});

describe("RunRules: where segments go", () => {
  it("marks segments a drop rule matches unused and serves the rest (dropByInterval before ingestion)", async () => {
    const s = await startTestSim({ handoffDelayMs: 5000 });
    await setRules(s, "wiki", [
      { type: "dropByInterval", interval: "2026-01-01/2026-01-02" },
      { type: "loadForever" },
    ]);
    await run(s, ingest("r1"));
    // Published and used until the Coordinator first sees it (one handoff delay after publish).
    expect(await usedIds(s)).toEqual([DAY1, DAY2]);
    await s.advance(5000);
    expect(await usedIds(s)).toEqual([DAY2]);
    expect(await servedIds(s)).toEqual([DAY2]);
    const rows = (await sql(s, "SELECT segment_id FROM sys.segments WHERE datasource = 'wiki'")).json;
    expect(rows).toEqual([{ segment_id: DAY2 }]);
    expect((await sql(s, "SELECT COUNT(*) AS c FROM wiki")).json).toEqual([{ c: 1 }]);
    expect(
      (
        await s.get(
          `${C}/datasources/wiki/loadstatus?forceMetadataRefresh=true&interval=2026-01-01/2026-01-03`,
        )
      ).json,
    ).toEqual({ wiki: 100 });
  });

  it("drops served segments when a drop rule is set later, at once", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(s, ingest("r1"));
    expect(await servedIds(s)).toEqual([DAY1, DAY2]);
    await setRules(s, "wiki", [{ type: "dropForever" }]);
    expect(await usedIds(s)).toEqual([]);
    expect(await servedIds(s)).toEqual([]);
    expect((await s.get(`${C}/metadata/datasources`)).json).toEqual([]);
  });

  it("keeps zero-replica segments used but never loaded (replication_factor 0, on demand)", async () => {
    const s = await startTestSim({ handoffDelayMs: 1000 });
    await setRules(s, "wiki", [{ type: "loadForever", tieredReplicants: {} }]);
    await run(s, ingest("r1"));
    await s.advance(3_600_000);
    expect(await usedIds(s)).toEqual([DAY1, DAY2]);
    expect(await servedIds(s)).toEqual([]);
    const seg = (
      await sql(
        s,
        "SELECT is_published, is_available, num_replicas, num_rows, replication_factor FROM sys.segments WHERE datasource = 'wiki'",
      )
    ).json;
    expect(seg).toEqual([
      { is_published: 1, is_available: 0, num_replicas: 0, num_rows: 0, replication_factor: 0 },
      { is_published: 1, is_available: 0, num_replicas: 0, num_rows: 0, replication_factor: 0 },
    ]);
    // As a real Druid 33 answered: the cluster's "left to load" skips zero-replica segments, the datasource's does not.
    expect((await s.get(`${C}/loadstatus?simple`)).json).toEqual({ wiki: 0 });
    expect((await s.get(`${C}/loadstatus`)).json).toEqual({ wiki: 0 });
    const ds = `${C}/datasources/wiki/loadstatus?forceMetadataRefresh=true&interval=2026-01-01/2026-01-03`;
    expect((await s.get(`${ds}&simple`)).json).toEqual({ wiki: 2 });
    expect((await s.get(`${ds}&full`)).json).toEqual({ _default_tier: { wiki: 0 } });
    const flat = (await s.get(`${C}/metadata/segments?includeOvershadowedStatus&datasources=wiki`)).json;
    expect(flat.map((x: { replicationFactor: number }) => x.replicationFactor)).toEqual([0, 0]);
  });

  it("never loads segments whose rule names only absent tiers, and counts them as under-replicated there", async () => {
    const s = await startTestSim({ handoffDelayMs: 1000 });
    await setRules(s, "wiki", [{ type: "loadForever", tieredReplicants: { no_such_tier: 1 } }]);
    await run(s, ingest("r1"));
    await s.advance(60_000);
    expect(await servedIds(s)).toEqual([]);
    const seg = (
      await sql(
        s,
        "SELECT is_available, num_rows, replication_factor FROM sys.segments WHERE datasource = 'wiki'",
      )
    ).json;
    expect(seg).toEqual([
      { is_available: 0, num_rows: 0, replication_factor: 1 },
      { is_available: 0, num_rows: 0, replication_factor: 1 },
    ]);
    expect((await s.get(`${C}/loadstatus?full`)).json).toEqual({ no_such_tier: { wiki: 2 } });
    expect((await s.get(`${C}/loadstatus?full&computeUsingClusterView`)).json).toEqual({
      no_such_tier: { wiki: 0 },
    });
    expect((await s.get(`${C}/loadstatus?simple`)).json).toEqual({ wiki: 2 });
    expect(s.sim.stats().tasks.r1?.map((e) => e.event)).not.toContain("handedOff");
    // Back to the defaults: the next Coordinator run assigns them, they load one handoff delay later.
    await setRules(s, "wiki", []);
    expect(await servedIds(s)).toEqual([]);
    await s.advance(1000);
    expect(await servedIds(s)).toEqual([DAY1, DAY2]);
    expect(s.sim.stats().tasks.r1?.map((e) => e.event)).toContain("handedOff");
  });

  it("loads broadcast segments on the Historical with replication factor 1", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await setRules(s, "_default", [{ type: "broadcastForever" }]);
    await run(s, ingest("r1"));
    expect(await servedIds(s)).toEqual([DAY1, DAY2]);
    expect((await sql(s, "SELECT replication_factor FROM sys.segments")).json).toEqual([
      { replication_factor: 1 },
      { replication_factor: 1 },
    ]);
  });

  it("evaluates period rules against the emulator's clock: data ages out of loadByPeriod into dropForever", async () => {
    // The clock starts at 2026-03-01; the data is on Feb 28, inside a one-day window.
    const s = await startTestSim({ handoffDelayMs: 0 });
    await setRules(s, "wiki", [
      { type: "loadByPeriod", period: "P1D", includeFuture: false },
      { type: "dropForever" },
    ]);
    const day = '{"time":"2026-02-28T12:00:00Z","page":"a","added":1}';
    await run(
      s,
      ingest("r1", { intervals: ["2026-02-28/2026-03-01"], inputSource: { type: "inline", data: day } }),
    );
    const id = "wiki_2026-02-28T00:00:00.000Z_2026-03-01T00:00:00.000Z_2026-03-01T00:00:00.000Z";
    const used = async () =>
      (await s.post(`${C}/metadata/datasources/wiki/segments`, ["2026-02-28/2026-03-01"])).json as string[];
    expect(await servedIds(s)).toEqual([id]);
    // The window [now - 1 day, now] stops overlapping the segment at 2026-03-02T00:00:00Z exactly.
    await s.advance(24 * 3_600_000 - 1000 - 1);
    expect(await used()).toEqual([id]);
    await s.advance(1);
    expect(await used()).toEqual([]);
    expect(s.sim.engine.store.all("wiki")[0]?.unusedAt).toBe(Date.UTC(2026, 2, 2));
  });
});

describe("MarkOvershadowedSegmentsAsUnused: only after the overshadowing segments are served", () => {
  it("keeps the old version used while the new one loads, and marks it unused unusedDelayMs after", async () => {
    const s = await startTestSim({ handoffDelayMs: 5000, unusedDelayMs: 1000 });
    await run(s, ingest("v1"));
    await s.advance(5000);
    await run(s, ingest("v2"));
    // v2 published at T0 + 7 s, served at T0 + 12 s; v1 goes unused at T0 + 13 s.
    await s.advance(4999);
    expect(await usedIds(s)).toHaveLength(4);
    // The Broker still reads v1 (v2 is published, not served).
    expect((await sql(s, "SELECT COUNT(*) AS c FROM wiki")).json).toEqual([{ c: 3 }]);
    expect((await servedIds(s)).every((id) => id.endsWith("2026-03-01T00:00:00.000Z"))).toBe(true);
    await s.advance(1);
    expect(await servedIds(s)).toHaveLength(4);
    await s.advance(999);
    expect(await usedIds(s)).toHaveLength(4);
    await s.advance(1);
    const left = await usedIds(s);
    expect(left).toHaveLength(2);
    expect(left.every((id) => !id.endsWith("2026-03-01T00:00:00.000Z"))).toBe(true);
    expect(await servedIds(s)).toEqual(left);
  });

  it("never marks the old version unused while the new one is never served", async () => {
    const s = await startTestSim({ handoffDelayMs: 0, unusedDelayMs: 1000 });
    await run(s, ingest("v1"));
    await run(s, ingest("v2", { context: { simNeverHandoff: true } }));
    await s.advance(7 * 24 * 3_600_000);
    expect(await usedIds(s)).toHaveLength(4);
    // sys.segments: the old version overshadowed (replication factor 0) but still served.
    const rows = (
      await sql(
        s,
        "SELECT is_overshadowed, is_available, replication_factor FROM sys.segments ORDER BY version",
      )
    ).json;
    expect(rows).toEqual([
      { is_overshadowed: 1, is_available: 1, replication_factor: 0 },
      { is_overshadowed: 1, is_available: 1, replication_factor: 0 },
      { is_overshadowed: 0, is_available: 0, replication_factor: 2 },
      { is_overshadowed: 0, is_available: 0, replication_factor: 2 },
    ]);
    expect((await sql(s, "SELECT COUNT(*) AS c FROM wiki")).json).toEqual([{ c: 3 }]);
    s.sim.engine.loadNow("wiki");
    await s.advance(1000);
    expect(await usedIds(s)).toHaveLength(2);
  });

  it("marks the old version unused when the new one needs zero replicas", async () => {
    const s = await startTestSim({ handoffDelayMs: 0, unusedDelayMs: 1000 });
    await run(s, ingest("v1"));
    await setRules(s, "wiki", [
      { type: "loadByInterval", interval: "2026-01-01/2026-01-03", tieredReplicants: { _default_tier: 1 } },
    ]);
    await s.post(`${V1}/task`, ingest("v2"));
    await setRules(s, "wiki", [{ type: "loadForever", tieredReplicants: {} }]);
    await s.advance(2000);
    const left = await usedIds(s);
    expect(left).toHaveLength(2);
    expect(left.every((id) => id.endsWith("2026-03-01T00:00:01.000Z"))).toBe(true);
  });

  it("waits millisToWaitBeforeDeleting after start, which POST /config changes", async () => {
    const s = await startTestSim({
      handoffDelayMs: 0,
      unusedDelayMs: 1000,
      millisToWaitBeforeDeleting: 900_000,
    });
    expect((await s.get(`${C}/config`)).json).toMatchObject({
      millisToWaitBeforeDeleting: 900_000,
      maxSegmentsToMove: 100,
    });
    await run(s, ingest("v1"));
    await run(s, ingest("v2"));
    await s.advance(600_000);
    expect(await usedIds(s)).toHaveLength(4);
    const res = await s.post(`${C}/config`, { millisToWaitBeforeDeleting: 0, bogusField: 1 });
    expect([res.status, res.text]).toEqual([200, ""]);
    expect((await s.get(`${C}/config`)).json.millisToWaitBeforeDeleting).toBe(0);
    expect((await s.get(`${C}/config`)).json).not.toHaveProperty("bogusField");
    // The new segments were served long ago: the old ones go at once.
    expect(await usedIds(s)).toHaveLength(2);
  });

  it("never loads a segment overshadowed before it was loaded (RunRules skips it)", async () => {
    const s = await startTestSim({ handoffDelayMs: 5000, unusedDelayMs: 60_000, capacity: 2 });
    await run(s, ingest("v1"));
    await run(s, ingest("v2"));
    // v1 would have loaded at T0 + 6 s, but v2 overshadowed it at T0 + 2 s; v2 loads at T0 + 7 s.
    await s.advance(5_000);
    const served = await servedIds(s);
    expect(served).toHaveLength(2);
    expect(served.every((id) => id.endsWith("2026-03-01T00:00:01.000Z"))).toBe(true);
    expect((await sql(s, "SELECT COUNT(*) AS c FROM wiki")).json).toEqual([{ c: 3 }]);
    expect(s.sim.stats().tasks.v1?.map((e) => e.event)).not.toContain("handedOff");
  });
});

describe("a Broker that sees only served segments", () => {
  it("has no table before handoff, then counts what is served; sys.segments shows published but unavailable", async () => {
    const s = await startTestSim({ handoffDelayMs: 5000 });
    await run(s, ingest("r1"));
    expect((await s.get(`${V1}/task/r1/status`)).json.status.statusCode).toBe("SUCCESS");
    const before = await sql(s, "SELECT COUNT(*) AS c FROM wiki");
    expect(before.status).toBe(400);
    expect(before.json.errorMessage).toBe("Object 'wiki' not found (line [1], column [27])");
    const tables = (
      await sql(s, "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'druid'")
    ).json;
    expect(tables).toEqual([]);
    const seg = (
      await sql(
        s,
        "SELECT is_published, is_available, num_replicas, num_rows, replication_factor FROM sys.segments WHERE datasource = 'wiki'",
      )
    ).json;
    expect(seg).toEqual([
      { is_published: 1, is_available: 0, num_replicas: 0, num_rows: 0, replication_factor: 2 },
      { is_published: 1, is_available: 0, num_replicas: 0, num_rows: 0, replication_factor: 2 },
    ]);
    await s.advance(5000);
    expect((await sql(s, "SELECT COUNT(*) AS c FROM wiki")).json).toEqual([{ c: 3 }]);
    expect(
      (await sql(s, "SELECT num_rows FROM sys.segments WHERE datasource = 'wiki' ORDER BY \"start\"")).json,
    ).toEqual([{ num_rows: 2 }, { num_rows: 1 }]);
  });

  it("keeps answering from the old version while a replacement is published but not loaded", async () => {
    const s = await startTestSim({ handoffDelayMs: 5000 });
    await run(s, ingest("v1"));
    await s.advance(5000);
    const one = '{"time":"2026-01-01T05:00:00Z","page":"z","added":100}';
    await run(
      s,
      ingest("v2", { intervals: ["2026-01-01/2026-01-02"], inputSource: { type: "inline", data: one } }),
    );
    const sum = "SELECT COUNT(*) AS c, SUM(added) AS a FROM wiki";
    expect((await sql(s, sum)).json).toEqual([{ c: 3, a: 14 }]);
    await s.advance(5000);
    expect((await sql(s, sum)).json).toEqual([{ c: 2, a: 102 }]);
  });
});
