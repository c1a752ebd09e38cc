import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { type SimSegment, servedTimelineLookup } from "../../src/sim/timeline.js";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";
const C = "/druid/coordinator/v1";
const DAY1 = "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z";
const DAY2 = "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z";
const DATA = [
  '{"time":"2026-01-01T01:00:00Z","page":"a"}',
  '{"time":"2026-01-02T03:00:00Z","page":"c"}',
].join("\n");

function ingest(id: string, intervals = ["2026-01-01/2026-01-03"]) {
  return parallelTask({
    id,
    intervals,
    inputSource: { type: "inline", data: DATA },
    context: { simDurationMs: 1000 },
  });
}

async function run(s: TestSim, task: Record<string, unknown>): Promise<void> {
  expect((await s.post(`${V1}/task`, task)).status).toBe(200);
  await s.advance(1000);
}

const view = (s: TestSim, interval: string, ds = "wiki") =>
  s.get(`${C}/datasources/${ds}/intervals/${interval.replace("/", "_")}/serverview`);
const ids = (body: Array<{ segment: { identifier: string } }>) => body.map((i) => i.segment.identifier);

describe("GET /datasources/{ds}/intervals/{interval}/serverview (docs/druid-api.md §3.2a)", () => {
  it("is 200 [] until the segments are loaded, then lists each with the Historical serving it", async () => {
    const s = await startTestSim({ handoffDelayMs: 5000 });
    await run(s, ingest("v1"));
    const before = await view(s, `${DAY1.slice(0, 24)}/${DAY2.slice(25)}`);
    expect(before.status).toBe(200);
    expect(before.json).toEqual([]);
    await s.advance(5000);
    const after = await view(s, "2026-01-01T00:00:00.000Z/2026-01-03T00:00:00.000Z");
    expect(after.status).toBe(200);
    const meta = (await s.post(`${C}/metadata/datasources/wiki/segments?full`, [DAY1, DAY2])).json;
    expect(after.json.map((i: { segment: unknown }) => i.segment)).toEqual(meta);
    for (const item of after.json) {
      expect(item.servers).toEqual([
        expect.objectContaining({ type: "historical", tier: "_default_tier", host: expect.any(String) }),
      ]);
    }
  });

  it("answers a datasource nobody serves, and an interval with nothing served, with 200 [] (never 204)", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    const none = await view(s, DAY1, "no_such_ds");
    expect(none.status).toBe(200);
    expect(none.json).toEqual([]);
    await run(s, ingest("v1"));
    const empty = await view(s, "2000-01-01T00:00:00.000Z/2000-01-02T00:00:00.000Z");
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual([]);
  });

  it("returns segments overlapping the interval, also ones reaching past it", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(s, ingest("v1"));
    const hour = await view(s, "2026-01-01T05:00:00.000Z/2026-01-01T06:00:00.000Z");
    expect(ids(hour.json)).toEqual([expect.stringContaining(`wiki_${DAY1.replace("/", "_")}_`)]);
  });

  it("shows only the newer version where a replace is served, though the old one is still served", async () => {
    const s = await startTestSim({ handoffDelayMs: 0, unusedDelayMs: 60_000 });
    await run(s, ingest("v1"));
    await run(s, ingest("v2", ["2026-01-01/2026-01-02"]));
    const served = (await s.get(`${C}/datasources/wiki/segments`)).json as string[];
    expect(served).toHaveLength(3);
    const both = await view(s, `${DAY1.slice(0, 24)}/${DAY2.slice(25)}`);
    const [v1day1, v2day1, v1day2] = [...served].sort();
    expect(ids(both.json)).toEqual([v2day1, v1day2]);
    expect(ids(both.json)).not.toContain(v1day1);
    expect(ids((await view(s, DAY2)).json)).toEqual([v1day2]);
  });

  it("takes the interval with '/' encoded as well as with '_'", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(s, ingest("v1"));
    const underscore = await view(s, DAY1);
    const slash = await s.get(`${C}/datasources/wiki/intervals/${encodeURIComponent(DAY1)}/serverview`);
    expect(slash.status).toBe(200);
    expect(slash.json).toEqual(underscore.json);
    expect(underscore.json).toHaveLength(1);
  });
});

describe("servedTimelineLookup (lookupWithIncompletePartitions over served segments)", () => {
  const segment = (interval: string, version: string, partitionNum = 0, core = 1): SimSegment => ({
    id: `ds_${interval}_${version}_${partitionNum}`,
    dataSource: "ds",
    interval: parseInterval(interval),
    version,
    partitionNum,
    corePartitions: core,
    shardSpec: { type: "numbered", partitionNum, partitions: core },
    size: 1,
    numRows: 1,
    dimensions: [],
    metrics: [],
    loadSpec: {},
    tombstone: false,
    taskId: "t",
    publishedAt: 0,
    servedAt: 0,
    unusedAt: null,
    rows: null,
  });
  const month = segment("2026-01-01/2026-02-01", "v1");
  const window = parseInterval("2026-01-01/2026-02-01");

  it("returns a coarse segment split by a newer one once per run it holds", () => {
    const day = segment("2026-01-10/2026-01-11", "v2");
    expect(servedTimelineLookup([month, day], window).map((s) => s.id)).toEqual([month.id, day.id, month.id]);
  });

  it("lets an incomplete newer version hide the older one, partitions in order", () => {
    const p1 = segment("2026-01-01/2026-02-01", "v2", 1, 3);
    const p0 = segment("2026-01-01/2026-02-01", "v2", 0, 3);
    expect(servedTimelineLookup([month, p1, p0], window).map((s) => s.id)).toEqual([p0.id, p1.id]);
  });

  it("ignores segments outside the window and an older version under a newer one", () => {
    const feb = segment("2026-02-01/2026-03-01", "v9");
    const older = segment("2026-01-01/2026-02-01", "v0");
    expect(servedTimelineLookup([feb, older, month], window).map((s) => s.id)).toEqual([month.id]);
  });
});
