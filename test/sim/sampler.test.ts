import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startTestSim } from "../helpers/sim.js";

const SAMPLER = "/druid/indexer/v1/sampler";

function dataDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "segops-sim-sampler-"));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

const lines = (...rows: Array<object | string>) =>
  `${rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n")}\n`;

interface Options {
  inputSource?: Record<string, unknown>;
  inputFormat?: Record<string, unknown> | null;
  dataSchema?: Record<string, unknown>;
  samplerConfig?: Record<string, unknown>;
}

/** A sampler request as the web console sends it: type `index`, the one Druid registers. */
function samplerSpec(o: Options): Record<string, unknown> {
  return {
    type: "index",
    spec: {
      dataSchema: o.dataSchema ?? {
        dataSource: "wiki",
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: { dimensions: ["page", { type: "long", name: "added" }] },
        granularitySpec: { segmentGranularity: "day", queryGranularity: "none", rollup: false },
      },
      ioConfig: {
        type: "index",
        ...(o.inputSource ? { inputSource: o.inputSource } : {}),
        ...(o.inputFormat === null ? {} : { inputFormat: o.inputFormat ?? { type: "json" } }),
      },
      tuningConfig: { type: "index" },
    },
    ...(o.samplerConfig ? { samplerConfig: o.samplerConfig } : {}),
  };
}

const inline = (data: string) => ({ type: "inline", data });

describe("the data sampler (docs/druid-api.md §2.12, InputSourceSampler)", () => {
  it("reads a local baseDir: a row per record, __time in epoch ms, rows outside granularitySpec.intervals kept", async () => {
    const dir = dataDir({
      "a.json": lines(
        { time: "2026-03-01T01:00:00Z", page: "a", added: 1 },
        { time: "2026-03-02T02:00:00Z", page: "b", added: 2 },
      ),
      "b.csv": "ignored",
    });
    const s = await startTestSim();
    const schema = {
      dataSource: "wiki",
      timestampSpec: { column: "time", format: "iso" },
      dimensionsSpec: { dimensions: ["page", { type: "long", name: "added" }] },
      granularitySpec: { rollup: false, intervals: ["2026-03-01/2026-03-02"] },
    };
    const res = await s.post(
      SAMPLER,
      samplerSpec({ inputSource: { type: "local", baseDir: dir, filter: "*.json" }, dataSchema: schema }),
    );
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      numRowsRead: 2,
      numRowsIndexed: 2,
      logicalDimensions: [
        { type: "string", name: "page", multiValueHandling: "SORTED_ARRAY", createBitmapIndex: true },
        { type: "long", name: "added", multiValueHandling: "SORTED_ARRAY", createBitmapIndex: false },
      ],
      physicalDimensions: [
        { type: "string", name: "page", multiValueHandling: "SORTED_ARRAY", createBitmapIndex: true },
        { type: "long", name: "added", multiValueHandling: "SORTED_ARRAY", createBitmapIndex: false },
      ],
      logicalSegmentSchema: [
        { name: "__time", type: "LONG" },
        { name: "page", type: "STRING" },
        { name: "added", type: "LONG" },
      ],
      data: [
        {
          input: { time: "2026-03-01T01:00:00Z", page: "a", added: 1 },
          parsed: { __time: Date.UTC(2026, 2, 1, 1), page: "a", added: 1 },
        },
        {
          input: { time: "2026-03-02T02:00:00Z", page: "b", added: 2 },
          parsed: { __time: Date.UTC(2026, 2, 2, 2), page: "b", added: 2 },
        },
      ],
    });
    expect(s.sim.stats().requests[`POST ${SAMPLER}`]).toBe(1);
  });

  it("reports parse errors per row: a line that is not JSON has no input, a bad timestamp keeps its input", async () => {
    const s = await startTestSim();
    const res = await s.post(
      SAMPLER,
      samplerSpec({
        inputSource: inline(
          lines({ time: "2026-03-01T00:00:00Z", page: "a", added: 1 }, "not json", {
            time: "never",
            page: "c",
          }),
        ),
      }),
    );
    expect(res.status).toBe(200);
    expect(res.json.numRowsRead).toBe(3);
    expect(res.json.numRowsIndexed).toBe(1);
    expect(res.json.data).toEqual([
      {
        input: { time: "2026-03-01T00:00:00Z", page: "a", added: 1 },
        parsed: { __time: Date.UTC(2026, 2, 1), page: "a", added: 1 },
      },
      { unparseable: true, error: "Unable to parse row [not json] into JSON (Record: 2, Line: 2)" },
      {
        input: { time: "never", page: "c" },
        unparseable: true,
        error: "Timestamp[never] is unparseable! Event: {time=never, page=c}",
      },
    ]);
  });

  it("indexes a row whose column cannot be converted, but reports it unparseable with its parsed row", async () => {
    const s = await startTestSim();
    const res = await s.post(
      SAMPLER,
      samplerSpec({ inputSource: inline(lines({ time: "2026-03-01T00:00:00Z", page: "a", added: "many" })) }),
    );
    expect(res.json.numRowsRead).toBe(1);
    expect(res.json.numRowsIndexed).toBe(0);
    expect(res.json.data).toEqual([
      {
        input: { time: "2026-03-01T00:00:00Z", page: "a", added: "many" },
        parsed: { __time: Date.UTC(2026, 2, 1), page: "a", added: null },
        unparseable: true,
        error: expect.stringContaining("could not convert value [many] to long"),
      },
    ]);
  });

  it("stops at numRows (default 200) and refuses more than 5000", async () => {
    const many = Array.from({ length: 250 }, (_, i) => ({ time: "2026-03-01T00:00:00Z", page: `p${i}` }));
    const s = await startTestSim();
    const byDefault = await s.post(SAMPLER, samplerSpec({ inputSource: inline(lines(...many)) }));
    expect(byDefault.json.numRowsRead).toBe(200);
    expect(byDefault.json.data).toHaveLength(200);
    const ten = await s.post(
      SAMPLER,
      samplerSpec({ inputSource: inline(lines(...many)), samplerConfig: { numRows: 10 } }),
    );
    expect(ten.json.numRowsRead).toBe(10);
    expect(ten.json.data.at(-1).parsed.page).toBe("p9");
    const tooMany = await s.post(
      SAMPLER,
      samplerSpec({ inputSource: inline(lines(...many)), samplerConfig: { numRows: 5001 } }),
    );
    expect(tooMany.status).toBe(400);
    expect(tooMany.json).toEqual({
      error:
        "Cannot construct instance of `org.apache.druid.indexing.overlord.sampler.SamplerConfig`, problem: numRows must be <= 5000",
    });
  });

  it("rolls a group up into its first row: later rows count as read and indexed but leave data", async () => {
    const s = await startTestSim();
    const res = await s.post(
      SAMPLER,
      samplerSpec({
        inputSource: inline(
          lines(
            { time: "2026-03-01T01:10:00Z", page: "a", added: 1 },
            { time: "2026-03-01T02:00:00Z", page: "b", added: 5 },
            { time: "2026-03-01T01:50:00Z", page: "a", added: 2 },
          ),
        ),
        dataSchema: {
          dataSource: "wiki",
          timestampSpec: { column: "time", format: "iso" },
          dimensionsSpec: { dimensions: ["page"] },
          metricsSpec: [
            { type: "count", name: "count" },
            { type: "longSum", name: "added", fieldName: "added" },
          ],
          granularitySpec: { queryGranularity: "hour", rollup: true },
        },
      }),
    );
    expect(res.json.numRowsRead).toBe(3);
    expect(res.json.numRowsIndexed).toBe(3);
    expect(res.json.data.map((r: { parsed: unknown }) => r.parsed)).toEqual([
      { __time: Date.UTC(2026, 2, 1, 1), page: "a", count: 2, added: 3 },
      { __time: Date.UTC(2026, 2, 1, 2), page: "b", count: 1, added: 5 },
    ]);
    expect(res.json.logicalSegmentSchema).toEqual([
      { name: "__time", type: "LONG" },
      { name: "page", type: "STRING" },
      { name: "count", type: "LONG" },
      { name: "added", type: "LONG" },
    ]);
  });

  it("drops rows the transformSpec filter rejects before counting them", async () => {
    const s = await startTestSim();
    const res = await s.post(
      SAMPLER,
      samplerSpec({
        inputSource: inline(
          lines(
            { time: "2026-03-01T00:00:00Z", page: "keep" },
            { time: "2026-03-01T00:00:00Z", page: "drop" },
            { time: "bad", page: "drop" },
          ),
        ),
        dataSchema: {
          dataSource: "wiki",
          timestampSpec: { column: "time", format: "iso" },
          dimensionsSpec: { dimensions: ["page"] },
          granularitySpec: { rollup: false },
          transformSpec: {
            filter: { type: "not", field: { type: "selector", dimension: "page", value: "drop" } },
          },
        },
      }),
    );
    // The unparseable row is reported: a parse error comes before the filter.
    expect(res.json.numRowsRead).toBe(2);
    expect(res.json.data.map((r: { parsed?: { page: string } }) => r.parsed?.page ?? null)).toEqual([
      "keep",
      null,
    ]);
  });

  it("discovers string dimensions in order of appearance, without the timestamp, metric inputs or nested objects", async () => {
    const s = await startTestSim();
    const res = await s.post(
      SAMPLER,
      samplerSpec({
        inputSource: inline(
          lines(
            { time: "2026-03-01T00:00:00Z", page: "a", nested: { x: 1 }, added: 1 },
            { time: "2026-03-01T00:00:00Z", user: "u", tags: ["y", "x"], added: 2 },
          ),
        ),
        dataSchema: {
          dataSource: "wiki",
          timestampSpec: { column: "time", format: "iso" },
          dimensionsSpec: {},
          metricsSpec: [{ type: "longSum", name: "sum_added", fieldName: "added" }],
          granularitySpec: { rollup: false },
        },
      }),
    );
    expect(res.json.logicalDimensions.map((d: { name: string }) => d.name)).toEqual(["page", "user", "tags"]);
    expect(res.json.data.map((r: { parsed: unknown }) => r.parsed)).toEqual([
      { __time: Date.UTC(2026, 2, 1), page: "a", user: null, tags: null, sum_added: 1 },
      { __time: Date.UTC(2026, 2, 1), page: null, user: "u", tags: ["x", "y"], sum_added: 2 },
    ]);
  });

  it("lists nothing for a filter that matches no file, a baseDir that does not exist, or an empty file", async () => {
    const dir = dataDir({ "a.json": lines({ time: "2026-03-01T00:00:00Z", page: "a" }), "empty.json": "" });
    const s = await startTestSim();
    for (const inputSource of [
      { type: "local", baseDir: dir, filter: "*.csv" },
      { type: "local", baseDir: join(dir, "no-such-dir"), filter: "*.json" },
      { type: "local", files: [join(dir, "empty.json"), join(dir, "missing.json")] },
    ]) {
      const res = await s.post(SAMPLER, samplerSpec({ inputSource }));
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ numRowsRead: 0, numRowsIndexed: 0, data: [] });
    }
  });

  it("answers a file it cannot open with SamplerExceptionMapper's 400", async () => {
    const dir = dataDir({ "sub/a.json": lines({ time: "2026-03-01T00:00:00Z", page: "a" }) });
    const s = await startTestSim();
    const res = await s.post(
      SAMPLER,
      samplerSpec({ inputSource: { type: "local", files: [join(dir, "sub")] } }),
    );
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error: `Failed to sample data: java.io.FileNotFoundException: ${join(dir, "sub")} (Is a directory)`,
    });
  });

  it("refuses a spec without inputSource or inputFormat with the Jackson 400 of the class that checks it", async () => {
    const s = await startTestSim();
    const noSource = await s.post(SAMPLER, samplerSpec({}));
    expect(noSource.status).toBe(400);
    expect(noSource.json).toEqual({
      error:
        "Cannot construct instance of `org.apache.druid.indexing.overlord.sampler.IndexTaskSamplerSpec`, problem: [spec.ioConfig.inputSource] is required",
    });
    const noFormat = await s.post(SAMPLER, samplerSpec({ inputSource: inline("{}"), inputFormat: null }));
    expect(noFormat.status).toBe(400);
    expect(noFormat.json.error).toMatch(
      /^Cannot construct instance of `[^`]+IndexIngestionSpec`, problem: .*inputFormat/,
    );
    // The dataSchema is checked as a task's is (DataSchema's constructor comes first).
    const noTimestamp = await s.post(
      SAMPLER,
      samplerSpec({ inputSource: inline("{}"), dataSchema: { dataSource: "wiki" } }),
    );
    expect(noTimestamp.status).toBe(400);
    expect(noTimestamp.json.error).toMatch(/DataSchema`, problem: timestampSpec/);
  });

  it("answers what it does not model with a 501 that says so, never a guess", async () => {
    const s = await startTestSim();
    const res = await s.post(
      SAMPLER,
      samplerSpec({ inputSource: { type: "s3", uris: ["s3://bucket/a.json"] } }),
    );
    expect(res.status).toBe(501);
    expect(res.json.errorMessage).toMatch(/^Emulator: the sampler reads local and inline input sources/);
  });

  it("is faulted like any route", async () => {
    const s = await startTestSim({ faults: [{ path: SAMPLER, kind: "status", status: 503, count: 1 }] });
    const spec = samplerSpec({ inputSource: inline(lines({ time: "2026-03-01T00:00:00Z", page: "a" })) });
    expect((await s.post(SAMPLER, spec)).status).toBe(503);
    expect((await s.post(SAMPLER, spec)).status).toBe(200);
  });
});
