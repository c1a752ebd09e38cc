import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";
const C = "/druid/coordinator/v1";

/** Three rows on Jan 1 (two in the same hour, same dims) and one on Jan 2. */
const DATA = [
  '{"time":"2026-01-01T01:10:00Z","page":"a","user":"u1","added":5}',
  '{"time":"2026-01-01T01:40:00Z","page":"a","user":"u1","added":7}',
  '{"time":"2026-01-01T02:00:00Z","page":"b","user":"u2","added":1}',
  '{"time":"2026-01-02T03:00:00Z","page":"c","user":"u3","added":2}',
].join("\n");

function ingest(id: string, over: Parameters<typeof parallelTask>[0] = {}) {
  return parallelTask({
    id,
    intervals: ["2026-01-01/2026-01-03"],
    inputSource: { type: "inline", data: DATA },
    dataSchema: {
      metricsSpec: [
        { type: "count", name: "count" },
        { type: "longSum", name: "added", fieldName: "added" },
      ],
    },
    ...over,
    context: { simDurationMs: 1000, ...over.context },
  });
}

async function run(s: TestSim, task: Record<string, unknown>): Promise<void> {
  expect((await s.post(`${V1}/task`, task)).status).toBe(200);
  await s.advance(1000);
}

async function sql(s: TestSim, query: string, extra: Record<string, unknown> = {}) {
  return s.post("/druid/v2/sql", { query, ...extra });
}

describe("segments, timeline and handoff (docs/druid-api.md §3, §4)", () => {
  it("publishes one segment per day chunk with the lock version, Druid's id format and DataSegment JSON", async () => {
    const s = await startTestSim({ handoffDelayMs: 5000 });
    await run(s, ingest("r1"));
    const meta = await s.get(`${C}/metadata/datasources/wiki/segments?full`);
    expect(meta.status).toBe(200);
    const v = "2026-03-01T00:00:00.000Z";
    expect(meta.json).toEqual([
      {
        dataSource: "wiki",
        interval: "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
        version: v,
        loadSpec: {
          type: "local",
          path: `/druid/segments/wiki/2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z/${v}/0/index.zip`,
        },
        dimensions: "page,user",
        metrics: "count,added",
        shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
        binaryVersion: 9,
        size: expect.any(Number),
        totalRows: 3,
        identifier: `wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_${v}`,
      },
      expect.objectContaining({
        interval: "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
        totalRows: 1,
      }),
    ]);
    expect(meta.json[0].size).toBeGreaterThan(meta.json[1].size);
  });

  it("serves segments only after the handoff delay (loadstatus, served endpoints, handoffComplete)", async () => {
    const s = await startTestSim({ handoffDelayMs: 5000 });
    await run(s, ingest("r1"));
    const q = `${C}/datasources/wiki/loadstatus?forceMetadataRefresh=true&interval=2026-01-01/2026-01-03`;
    expect((await s.get(q)).json).toEqual({ wiki: 0 });
    expect((await s.get(`${C}/datasources/wiki/segments`)).status).toBe(204);
    const hc = `${C}/datasources/wiki/handoffComplete?interval=2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z&partitionNumber=0&version=2026-03-01T00:00:00.000Z`;
    expect((await s.get(hc)).json).toBe(false);
    await s.advance(4999);
    expect((await s.get(q)).json).toEqual({ wiki: 0 });
    await s.advance(1);
    expect((await s.get(q)).json).toEqual({ wiki: 100 });
    expect((await s.get(`${q}&simple`)).json).toEqual({ wiki: 0 });
    // Druid's default rule wants two replicas; the one Historical holds one of each (as on a real Druid 33).
    expect((await s.get(`${q}&full`)).json).toEqual({ _default_tier: { wiki: 2 } });
    expect((await s.get(`${q}&full&computeUsingClusterView`)).json).toEqual({ _default_tier: { wiki: 0 } });
    expect((await s.get(hc)).json).toBe(true);
    expect(s.sim.stats().tasks.r1?.map((e) => e.event)).toEqual([
      "submitted",
      "pending",
      "running",
      "published",
      "success",
      "handedOff",
    ]);
    expect(s.sim.stats().tasks.r1?.at(-1)?.at).toBe("2026-03-01T00:00:06.000Z");
  });

  it("answers loadstatus 400 text without forceMetadataRefresh, 204 for unknown datasources and empty intervals", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    const missing = await s.get(`${C}/datasources/wiki/loadstatus`);
    // Plain text labelled JSON, as a real Druid 33 sends it.
    expect([missing.status, missing.contentType, missing.text]).toEqual([
      400,
      "application/json",
      "Invalid request. forceMetadataRefresh must be specified",
    ]);
    expect((await s.get(`${C}/datasources/nope/loadstatus?forceMetadataRefresh=false`)).status).toBe(204);
    await run(s, ingest("r1"));
    expect(
      (
        await s.get(
          `${C}/datasources/wiki/loadstatus?forceMetadataRefresh=true&interval=2025-01-01_2025-01-02`,
        )
      ).status,
    ).toBe(204);
    // Default interval: the last 14 days of sim time, which has none of this data.
    expect((await s.get(`${C}/datasources/wiki/loadstatus?forceMetadataRefresh=true`)).status).toBe(204);
  });

  it("overshadows the old version chunk by chunk on replace, keeps it visible as overshadowed, then marks it unused", async () => {
    const s = await startTestSim({ handoffDelayMs: 0, unusedDelayMs: 60_000 });
    await run(s, ingest("v1"));
    await run(s, ingest("v2", { intervals: ["2026-01-01/2026-01-02"] }));
    const rows = (
      await sql(
        s,
        "SELECT segment_id, version, is_overshadowed, is_active FROM sys.segments WHERE datasource = 'wiki' ORDER BY segment_id",
      )
    ).json;
    expect(rows).toEqual([
      {
        segment_id: "wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_2026-03-01T00:00:00.000Z",
        version: "2026-03-01T00:00:00.000Z",
        is_overshadowed: 1,
        is_active: 0,
      },
      {
        segment_id: "wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_2026-03-01T00:00:01.000Z",
        version: "2026-03-01T00:00:01.000Z",
        is_overshadowed: 0,
        is_active: 1,
      },
      {
        segment_id: "wiki_2026-01-02T00:00:00.000Z_2026-01-03T00:00:00.000Z_2026-03-01T00:00:00.000Z",
        version: "2026-03-01T00:00:00.000Z",
        is_overshadowed: 0,
        is_active: 1,
      },
    ]);
    const intervals = ["2026-01-01/2026-01-02"];
    expect((await s.post(`${C}/metadata/datasources/wiki/segments`, intervals)).json).toHaveLength(2);
    const flat = (await s.get(`${C}/metadata/segments?includeOvershadowedStatus&datasources=wiki`)).json;
    expect(flat.map((x: { overshadowed: boolean }) => x.overshadowed)).toEqual([true, false, false]);
    expect(Object.keys(flat[0]).sort()).toEqual(
      [
        "binaryVersion",
        "dataSource",
        "dimensions",
        "identifier",
        "interval",
        "loadSpec",
        "metrics",
        "numRows",
        "overshadowed",
        "realtime",
        "replicationFactor",
        "shardSpec",
        "size",
        "totalRows",
        "version",
      ].sort(),
    );
    await s.advance(60_000);
    expect((await s.post(`${C}/metadata/datasources/wiki/segments`, intervals)).json).toEqual([
      "wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_2026-03-01T00:00:01.000Z",
    ]);
  });

  it("splits a chunk into partitions above maxRowsPerSegment (_partitionNum omitted for 0)", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(
      s,
      ingest("split", {
        intervals: ["2026-01-01/2026-01-02"],
        tuningConfig: { partitionsSpec: { type: "dynamic", maxRowsPerSegment: 2 } },
      }),
    );
    const segs = (await s.get(`${C}/metadata/datasources/wiki/segments?full`)).json;
    const base = "wiki_2026-01-01T00:00:00.000Z_2026-01-02T00:00:00.000Z_2026-03-01T00:00:00.000Z";
    expect(
      segs.map((x: { identifier: string; shardSpec: unknown; totalRows: number }) => [
        x.identifier,
        x.shardSpec,
        x.totalRows,
      ]),
    ).toEqual([
      [base, { type: "numbered", partitionNum: 0, partitions: 2 }, 2],
      [`${base}_1`, { type: "numbered", partitionNum: 1, partitions: 2 }, 1],
    ]);
  });

  it("appends into the chunk's live version with new partition numbers, double-counting repeated data", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(s, ingest("base"));
    await run(s, ingest("app", { ioConfig: { appendToExisting: true } }));
    const segs = (await s.get(`${C}/metadata/datasources/wiki/segments?full`)).json as Array<{
      version: string;
      shardSpec: unknown;
    }>;
    expect(segs.map((x) => [x.version, x.shardSpec])).toEqual([
      ["2026-03-01T00:00:00.000Z", { type: "numbered", partitionNum: 0, partitions: 1 }],
      ["2026-03-01T00:00:00.000Z", { type: "numbered", partitionNum: 0, partitions: 1 }],
      ["2026-03-01T00:00:00.000Z", { type: "numbered", partitionNum: 1, partitions: 1 }],
      ["2026-03-01T00:00:00.000Z", { type: "numbered", partitionNum: 1, partitions: 1 }],
    ]);
    const daily = await sql(
      s,
      "SELECT TIME_FLOOR(__time, 'P1D') AS \"day\", SUM(\"count\") AS n, SUM(added) AS added FROM wiki GROUP BY 1 ORDER BY 1",
    );
    expect(daily.json).toEqual([
      { day: "2026-01-01T00:00:00.000Z", n: 6, added: 26 },
      { day: "2026-01-02T00:00:00.000Z", n: 2, added: 4 },
    ]);
  });

  it("publishes tombstones for empty buckets overlapping data with dropExisting; legacy replace leaves them", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(s, ingest("base"));
    const jan1Only = DATA.split("\n").slice(0, 3).join("\n");
    await run(s, ingest("legacy", { inputSource: { type: "inline", data: jan1Only } }));
    // REPLACE_LEGACY: Jan 1 gets the new version, Jan 2 (no new rows) keeps its old row.
    let live = (await sql(s, "SELECT COUNT(*) AS c FROM wiki")).json;
    expect(live).toEqual([{ c: 4 }]);
    await run(
      s,
      ingest("drop", { inputSource: { type: "inline", data: jan1Only }, ioConfig: { dropExisting: true } }),
    );
    const tomb = (
      await sql(
        s,
        "SELECT segment_id, shard_spec, num_rows, size FROM sys.segments WHERE datasource = 'wiki' AND is_overshadowed = 0 AND start = '2026-01-02T00:00:00.000Z'",
      )
    ).json;
    expect(tomb).toEqual([
      {
        segment_id: "wiki_2026-01-02T00:00:00.000Z_2026-01-03T00:00:00.000Z_2026-03-01T00:00:02.000Z",
        shard_spec: '{"type":"tombstone","partitionNum":0,"partitions":1}',
        num_rows: 0,
        size: 1,
      },
    ]);
    live = (await sql(s, "SELECT COUNT(*) AS c FROM wiki")).json;
    expect(live).toEqual([{ c: 3 }]);
  });

  it("rolls rows up on truncated time + dimensions; the count metric keeps the input row count", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(s, ingest("roll", { granularitySpec: { rollup: true, queryGranularity: "hour" } }));
    const segs = (await sql(s, "SELECT start, num_rows FROM sys.segments ORDER BY start")).json;
    expect(segs).toEqual([
      { start: "2026-01-01T00:00:00.000Z", num_rows: 2 },
      { start: "2026-01-02T00:00:00.000Z", num_rows: 1 },
    ]);
    const rows = (await sql(s, "SELECT __time, page, \"count\", added FROM wiki WHERE page = 'a'")).json;
    expect(rows).toEqual([{ __time: "2026-01-01T01:00:00.000Z", page: "a", count: 2, added: 12 }]);
  });

  it("uses hashed shard specs when configured with numShards", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(
      s,
      ingest("hash", {
        intervals: ["2026-01-01/2026-01-02"],
        tuningConfig: {
          forceGuaranteedRollup: true,
          partitionsSpec: { type: "hashed", numShards: 1, partitionDimensions: ["page"] },
        },
      }),
    );
    const segs = (await s.get(`${C}/metadata/datasources/wiki/segments?full`)).json;
    expect(segs[0].shardSpec).toEqual({
      type: "hashed",
      partitionNum: 0,
      partitions: 1,
      bucketId: 0,
      numBuckets: 1,
      partitionDimensions: ["page"],
      partitionFunction: "murmur3_32_abs",
    });
  });

  it("never loads a datasource's segments when told to, until the fault is lifted", async () => {
    const s = await startTestSim({ handoffDelayMs: 100, neverLoadDataSources: ["wiki"] });
    await run(s, ingest("stuck"));
    await s.post(`${V1}/task`, ingest("ctx", { dataSource: "other", context: { simNeverHandoff: true } }));
    await s.advance(3_600_000);
    const q = `${C}/datasources/wiki/loadstatus?forceMetadataRefresh=true&interval=2026-01-01/2026-01-03`;
    expect((await s.get(q)).json).toEqual({ wiki: 0 });
    expect((await s.get(`${C}/loadstatus`)).json).toEqual({ other: 0, wiki: 0 });
    const pending = (
      await sql(
        s,
        "SELECT COUNT(*) FILTER (WHERE is_available = 0 AND is_published = 1 AND replication_factor != 0) AS pendingSegments FROM sys.segments WHERE datasource = 'wiki'",
      )
    ).json;
    expect(pending).toEqual([{ pendingSegments: 2 }]);
    s.sim.setNeverLoad("wiki", false);
    s.sim.engine.loadNow("wiki");
    expect((await s.get(q)).json).toEqual({ wiki: 100 });
  });

  it("serves the Coordinator datasource endpoints with 204 for unknown datasources (docs/druid-api.md §3.2)", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    expect((await s.get(`${C}/datasources/wiki`)).status).toBe(204);
    expect((await s.get(`${C}/datasources/wiki/intervals`)).status).toBe(204);
    expect((await s.get(`${C}/metadata/datasources/wiki`)).status).toBe(404);
    expect((await s.get(`${C}/metadata/datasources/wiki/segments`)).status).toBe(404);
    expect((await s.post(`${C}/metadata/datasources/wiki/segments`, ["2026-01-01/2026-01-02"])).json).toEqual(
      [],
    );
    await run(s, ingest("r1"));
    expect((await s.get(`${C}/datasources`)).json).toEqual(["wiki"]);
    expect((await s.get(`${C}/metadata/datasources`)).json).toEqual(["wiki"]);
    const summary = (await s.get(`${C}/datasources/wiki`)).json;
    expect(summary.segments).toMatchObject({
      count: 2,
      minTime: "2026-01-01T00:00:00.000Z",
      maxTime: "2026-01-03T00:00:00.000Z",
    });
    expect(summary.tiers._default_tier.segmentCount).toBe(2);
    expect((await s.get(`${C}/datasources/wiki/intervals`)).json).toEqual([
      "2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
      "2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z",
    ]);
    const simple = (await s.get(`${C}/datasources/wiki/intervals?simple`)).json;
    expect(simple["2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z"]).toMatchObject({ count: 1 });
    const ids = (await s.get(`${C}/datasources/wiki/segments`)).json as string[];
    expect(ids).toHaveLength(2);
    const one = await s.get(`${C}/datasources/wiki/segments/${encodeURIComponent(ids[0] as string)}`);
    expect(one.json).toMatchObject({
      metadata: { identifier: ids[0], dimensions: "page,user" },
      servers: ["localhost:8083"],
    });
    expect((await s.get(`${C}/datasources/wiki/segments/wiki_nope`)).status).toBe(204);
    expect((await s.get(`${C}/metadata/datasources/wiki/segments/garbage`)).text).toBe(
      "Could not parse Segment ID[garbage] for DataSource[wiki]",
    );
    expect(
      (await s.get(`${C}/metadata/datasources/wiki/segments/${encodeURIComponent(ids[0] as string)}`)).json
        .identifier,
    ).toBe(ids[0]);
    expect((await s.get(`${C}/datasources?full`)).json[0]).toMatchObject({
      name: "wiki",
      segments: expect.any(Array),
    });
    expect((await s.get(`${C}/loadstatus?simple`)).json).toEqual({ wiki: 0 });
    expect((await s.get(`${C}/loadstatus?full`)).json).toEqual({ _default_tier: { wiki: 2 } });
  });
});

describe("Broker SQL subset (docs/druid-api.md §3.6)", () => {
  it("answers the canonical handoff query over sys.segments", async () => {
    const s = await startTestSim({ handoffDelayMs: 5000 });
    await run(s, ingest("h"));
    const q = `SELECT COUNT(*) AS usedSegments,
      COUNT(*) FILTER (WHERE is_published = 1 AND replication_factor > 0) AS precachedSegments,
      COUNT(*) FILTER (WHERE is_published = 1 AND replication_factor = 0) AS onDemandSegments,
      COUNT(*) FILTER (WHERE is_available = 0 AND is_published = 1 AND replication_factor != 0) AS pendingSegments,
      COUNT(*) FILTER (WHERE replication_factor = -1) AS unknownSegments
      FROM sys.segments
      WHERE datasource = 'wiki' AND is_overshadowed = 0 AND (version = '2026-03-01T00:00:00.000Z' OR version = 'x')`;
    const before = await sql(s, q);
    expect(before.status).toBe(200);
    expect(before.headers.get("x-druid-sql-query-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(before.json).toEqual([
      { usedSegments: 2, precachedSegments: 2, onDemandSegments: 0, pendingSegments: 2, unknownSegments: 0 },
    ]);
    await s.advance(5000);
    expect((await sql(s, q)).json[0].pendingSegments).toBe(0);
  });

  it("supports array and csv result formats with headers", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(s, ingest("f"));
    const q =
      "SELECT partition_num, num_rows FROM sys.segments WHERE datasource = 'wiki' ORDER BY num_rows DESC LIMIT 1";
    expect((await sql(s, q, { resultFormat: "array", header: true })).json).toEqual([
      ["partition_num", "num_rows"],
      [0, 3],
    ]);
    expect((await sql(s, q, { resultFormat: "csv", header: true })).text).toBe(
      "partition_num,num_rows\n0,3\n\n",
    );
    expect((await sql(s, q, { resultFormat: "objectLines" })).text).toBe(
      '{"partition_num":0,"num_rows":3}\n\n',
    );
  });

  it("answers statements Druid does not run, unknown tables and unknown columns with a 400 invalidInput ErrorResponse", async () => {
    const s = await startTestSim();
    for (const [query, message] of [
      // Druid's parser reads DELETE; its planner runs no such statement (a real Druid 33 answered this).
      ["DELETE FROM wiki", "Unsupported SQL statement [DELETE]"],
      ["SELECT * FROM nowhere", "Object 'nowhere' not found (line [1], column [15])"],
      ["SELECT nope FROM sys.segments", "Column 'nope' not found in any table (line [1], column [8])"],
      [
        "SELECT datasource FROM sys.segments ORDER BY bogus",
        "Column 'bogus' not found in any table (line [1], column [46])",
      ],
    ] as const) {
      const res = await sql(s, query);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({
        error: "druidException",
        errorCode: "invalidInput",
        persona: "USER",
        category: "INVALID_INPUT",
        context: { sourceType: "sql" },
      });
      if (message) expect(res.json.errorMessage).toBe(message);
    }
  });

  it.each([
    // Each observed on a real Druid 33.0.0.
    ["SELECT COUNT(*) FROM segops_no_such_table", "Object 'segops_no_such_table' not found", [1, 22, 1, 41]],
    [
      'SELECT COUNT(*) FROM "segops_no_such_table"',
      "Object 'segops_no_such_table' not found",
      [1, 22, 1, 43],
    ],
    [
      'SELECT COUNT(*)\n  FROM "segops_no_such_table" WHERE 1=1',
      "Object 'segops_no_such_table' not found",
      [2, 8, 2, 29],
    ],
    [
      "SELECT COUNT(*) FROM druid.segops_no_such_table",
      "Object 'segops_no_such_table' not found within 'druid'",
      [1, 22, 1, 47],
    ],
  ] as const)("places an unknown table of %j at Calcite's line and column", async (query, message, pos) => {
    const s = await startTestSim();
    const res = await sql(s, query);
    expect(res.status).toBe(400);
    const [line, column, endLine, endColumn] = pos.map(String);
    expect(res.json.errorMessage).toBe(`${message} (line [${line}], column [${column}])`);
    expect(res.json.context).toEqual({ sourceType: "sql", line, column, endLine, endColumn });
  });

  it("filters sys.segments rows with IN, LIKE and comparisons", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(s, ingest("w"));
    await run(s, ingest("o", { dataSource: "other" }));
    const q =
      "SELECT datasource, start FROM sys.segments WHERE datasource IN ('wiki', 'x') AND start >= '2026-01-02' AND segment_id LIKE 'wiki%'";
    expect((await sql(s, q)).json).toEqual([{ datasource: "wiki", start: "2026-01-02T00:00:00.000Z" }]);
    const all = (await sql(s, "SELECT * FROM sys.segments WHERE datasource = 'other' LIMIT 1")).json[0];
    expect(Object.keys(all)).toEqual([
      "segment_id",
      "datasource",
      "start",
      "end",
      "size",
      "version",
      "partition_num",
      "num_replicas",
      "num_rows",
      "is_active",
      "is_published",
      "is_available",
      "is_realtime",
      "is_overshadowed",
      "shard_spec",
      "dimensions",
      "metrics",
      "projections",
      "last_compaction_state",
      "replication_factor",
    ]);
    expect(all).toMatchObject({
      is_published: 1,
      is_available: 1,
      is_realtime: 0,
      num_replicas: 1,
      // Druid's default rule: two replicas wanted (a real Druid 33 shows 2 with one Historical).
      replication_factor: 2,
      dimensions: '["page","user"]',
    });
  });

  it("counts a datasource's rows per day over a time range", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    await run(s, ingest("d"));
    const res = await sql(
      s,
      "SELECT FLOOR(__time TO DAY) AS d, COUNT(*) AS c FROM \"wiki\" WHERE __time >= TIMESTAMP '2026-01-01 00:00:00' AND __time < TIMESTAMP '2026-01-02 00:00:00' GROUP BY FLOOR(__time TO DAY)",
    );
    expect(res.json).toEqual([{ d: "2026-01-01T00:00:00.000Z", c: 3 }]);
  });
});
