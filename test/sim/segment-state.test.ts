import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

/** The emulator's segment update APIs (docs/druid-api.md §3.7), driven over HTTP like Druid's. */

const V1 = "/druid/indexer/v1";
const C = "/druid/coordinator/v1";
const DS = `${V1}/datasources/wiki`;
const DAY1 = "2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z";
const OLD = "2026-03-01T00:00:00.000Z";
const NEW = "2026-03-01T00:00:01.000Z";
const DATA = [
  '{"time":"2026-01-01T01:00:00Z","page":"a"}',
  '{"time":"2026-01-02T01:00:00Z","page":"b"}',
].join("\n");

function ingest(id: string, intervals: string[]) {
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

/** A replace of day 1 over the original two days: OLD is overshadowed on day 1, then marked unused. */
async function replaced(): Promise<TestSim> {
  const s = await startTestSim({ handoffDelayMs: 0, unusedDelayMs: 10_000 });
  await run(s, ingest("v1", ["2026-01-01/2026-01-03"]));
  await run(s, ingest("v2", ["2026-01-01/2026-01-02"]));
  await s.advance(10_000);
  return s;
}

/** POST asking for JSON, as segops' client does (Druid's markUsed methods declare no response type). */
async function jsonPost(s: TestSim, path: string, body: unknown) {
  const res = await fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

const usedIds = async (s: TestSim) =>
  (
    (await s.post(`${C}/metadata/datasources/wiki/segments`, ["2026-01-01/2026-01-03"])).json as string[]
  ).sort();

describe("segment update APIs: markUsed / markUnused", () => {
  it("rolls a replaced day back: mark the new version unused, then the old one used; it loads and is the live one", async () => {
    const s = await replaced();
    expect(await usedIds(s)).toEqual([
      `wiki_${DAY1}_${NEW}`,
      `wiki_2026-01-02T00:00:00.000Z_2026-01-03T00:00:00.000Z_${OLD}`,
    ]);
    const unused = await s.get(
      `${C}/metadata/datasources/wiki/unusedSegments?interval=2026-01-01/2026-01-02`,
    );
    expect(unused.status).toBe(200);
    expect(unused.json).toEqual([
      expect.objectContaining({
        dataSegment: expect.objectContaining({ identifier: `wiki_${DAY1}_${OLD}` }),
        used: false,
      }),
    ]);
    // While the new version is used the old one stays overshadowed: markUsed leaves it unused.
    const early = await jsonPost(s, `${DS}/markUsed`, { interval: "2026-01-01/2026-01-02", versions: [OLD] });
    expect(early).toMatchObject({ status: 200, json: { numChangedSegments: 0, segmentStateChanged: false } });
    const down = await s.post(`${DS}/markUnused`, { interval: "2026-01-01/2026-01-02", versions: [NEW] });
    expect(down.json).toEqual({ numChangedSegments: 1, segmentStateChanged: true });
    const up = await jsonPost(s, `${DS}/markUsed`, { interval: "2026-01-01/2026-01-02", versions: [OLD] });
    expect(up.json).toEqual({ numChangedSegments: 1, segmentStateChanged: true });
    expect(await usedIds(s)).toEqual([
      `wiki_${DAY1}_${OLD}`,
      `wiki_2026-01-02T00:00:00.000Z_2026-01-03T00:00:00.000Z_${OLD}`,
    ]);
    const served = (await s.get(`${C}/datasources/wiki/segments`)).json as string[];
    expect(served).toContain(`wiki_${DAY1}_${OLD}`);
    expect(served).not.toContain(`wiki_${DAY1}_${NEW}`);
    // Marking again changes nothing.
    expect(
      (await jsonPost(s, `${DS}/markUsed`, { interval: "2026-01-01/2026-01-02", versions: [OLD] })).json,
    ).toEqual({
      numChangedSegments: 0,
      segmentStateChanged: false,
    });
  });

  it("selects only segments wholly inside the interval, and by ids; a whole datasource both ways", async () => {
    const s = await replaced();
    // Day 1 + half of day 2: only day 1's new segment is wholly inside.
    const partial = await s.post(`${DS}/markUnused`, { interval: "2026-01-01/2026-01-02T12:00:00Z" });
    expect(partial.json).toEqual({ numChangedSegments: 1, segmentStateChanged: true });
    const byId = await s.post(`${DS}/markUnused`, {
      segmentIds: [`wiki_2026-01-02T00:00:00.000Z_2026-01-03T00:00:00.000Z_${OLD}`, "other_2026_x"],
    });
    expect(byId.json).toEqual({ numChangedSegments: 1, segmentStateChanged: true });
    expect(await usedIds(s)).toEqual([]);
    // Everything unused back: the non-overshadowed ones only (NEW over OLD on day 1, OLD on day 2).
    expect((await jsonPost(s, `${DS}`, {})).json).toEqual({
      numChangedSegments: 2,
      segmentStateChanged: true,
    });
    expect(await usedIds(s)).toEqual([
      `wiki_${DAY1}_${NEW}`,
      `wiki_2026-01-02T00:00:00.000Z_2026-01-03T00:00:00.000Z_${OLD}`,
    ]);
    const all = await fetch(`${s.url}${DS}`, { method: "DELETE" });
    expect(await all.json()).toEqual({ numChangedSegments: 2, segmentStateChanged: true });
    // One segment by id is a plain update: even an overshadowed one is marked used.
    const one = await jsonPost(s, `${DS}/segments/wiki_${DAY1}_${OLD}`, {});
    expect(one.json).toEqual({ numChangedSegments: 1, segmentStateChanged: true });
    const del = await fetch(`${s.url}${DS}/segments/wiki_${DAY1}_${OLD}`, { method: "DELETE" });
    expect(await del.json()).toEqual({ numChangedSegments: 1, segmentStateChanged: true });
    const bad = await fetch(`${s.url}${DS}/segments/nope`, { method: "DELETE" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe("Could not parse Segment ID[nope] for DataSource[wiki]");
  });

  it("answers markUsed with 500 and no body unless the request accepts JSON, as Druid 33 does", async () => {
    const s = await replaced();
    const bare = await s.post(`${DS}/markUsed`, { interval: "2026-01-01/2026-01-02" });
    expect(bare.status).toBe(500);
    expect(bare.text).toBe("");
    expect((await jsonPost(s, `${DS}/markUsed`, { interval: "2026-01-01/2026-01-02" })).status).toBe(200);
  });

  it("refuses a filter with both or neither of interval and segmentIds, or versions with ids (400, text)", async () => {
    const s = await replaced();
    const message =
      "Invalid request payload. Specify either 'interval' or 'segmentIds', but not both. Optionally, include 'versions' only when 'interval' is provided.";
    for (const body of [
      {},
      { interval: "2026-01-01/2026-01-02", segmentIds: ["x"] },
      { segmentIds: ["x"], versions: [OLD] },
    ]) {
      for (const op of ["markUsed", "markUnused"]) {
        const res = await s.post(`${DS}/${op}`, body);
        expect(res.status).toBe(400);
        expect(res.text).toBe(message);
      }
    }
    expect((await s.post(`${DS}/markUnused`, { interval: "yesterday" })).status).toBe(400);
    const empty = await s.post(`${DS}/markUnused`, { segmentIds: [] });
    expect(empty.status).toBe(400);
    expect(empty.contentType).toMatch(/^application\/json/);
    expect(empty.text).toMatch(/^Invalid request payload/);
    const limit = await s.get(`${C}/metadata/datasources/wiki/unusedSegments?limit=-1`);
    expect(limit.status).toBe(400);
    expect(limit.json.errorMessage).toMatch(/Invalid limit/);
  });
});
