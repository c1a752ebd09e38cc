/**
 * `DruidClient#sample` (docs/druid-api.md §2.12): the answer read from the emulator's sampler, and every failure
 * a caller must tell apart — a refused sample (400, not retried), no sampler (404/405), no permission
 * (401/403), a failing Druid (5xx, retried) and one that never answers (the call's bound) — from a scripted Druid.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { DruidClient, SAMPLE_MARGIN_MS } from "../../src/druid/client.js";
import type { SamplerSpec } from "../../src/druid/types.js";
import { startTestSim } from "../helpers/sim.js";
import { FakeDruid } from "./helpers/fake-druid.js";

const PATH = "/druid/indexer/v1/sampler";

function spec(inputSource: SamplerSpec["spec"]["ioConfig"]["inputSource"], timeoutMs?: number): SamplerSpec {
  return {
    type: "index",
    spec: {
      dataSchema: {
        dataSource: "wiki",
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: { dimensions: ["page"] },
        granularitySpec: { rollup: false },
      },
      ioConfig: { type: "index", inputSource, inputFormat: { type: "json" } },
    },
    samplerConfig: { numRows: 100, ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
  };
}

const INLINE = spec({
  type: "inline",
  data: '{"time":"2026-03-01T01:00:00Z","page":"a"}\nnot json\n{"time":"2026-03-02T00:00:00Z","page":"b"}\n',
});

/** Lets I/O run until `done` holds: no sim or wall-clock time passes. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !done(); i++) await new Promise((r) => setImmediate(r));
  if (!done()) throw new Error("condition never held");
}

describe("sample() against the emulator", () => {
  let client: DruidClient;
  afterEach(async () => {
    await client.close();
  });

  it("reads the rows: counts, parsed __time in epoch ms, the unparseable row with its error", async () => {
    const s = await startTestSim({ druidVersion: 33 });
    client = new DruidClient({ url: s.url, clock: new ManualClock() });
    const answer = await client.sample(INLINE);
    expect(answer.numRowsRead).toBe(3);
    expect(answer.numRowsIndexed).toBe(2);
    expect(answer.data.map((r) => r.parsed?.__time ?? null)).toEqual([
      Date.UTC(2026, 2, 1, 1),
      null,
      Date.UTC(2026, 2, 2),
    ]);
    expect(answer.data[1]).toMatchObject({ unparseable: true, error: expect.stringContaining("not json") });
    expect(answer.logicalSegmentSchema?.[0]).toEqual({ name: "__time", type: "LONG" });
  });

  it("reads an empty sample when the filter matches no file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "segops-sample-"));
    writeFileSync(join(dir, "a.json"), '{"time":"2026-03-01T01:00:00Z","page":"a"}\n');
    const s = await startTestSim({ druidVersion: 33 });
    client = new DruidClient({ url: s.url, clock: new ManualClock() });
    const answer = await client.sample(spec({ type: "local", baseDir: dir, filter: "*.csv" }));
    expect(answer).toMatchObject({ numRowsRead: 0, numRowsIndexed: 0, data: [] });
  });
});

describe("sample() failures, from a scripted Druid", () => {
  let fake: FakeDruid;
  let clock: ManualClock;
  let client: DruidClient;

  beforeEach(async () => {
    fake = new FakeDruid();
    await fake.start();
    clock = new ManualClock();
    client = new DruidClient({ url: fake.url, clock, retry: { baseMs: 100, capMs: 1000, maxAttempts: 3 } });
  });

  afterEach(async () => {
    await client.close();
    await fake.close();
  });

  it("posts the spec as JSON to the Overlord's sampler path", async () => {
    fake.on("POST", PATH, { status: 200, body: { numRowsRead: 0, numRowsIndexed: 0, data: [] } });
    await client.sample(INLINE);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(fake.requests[0]?.body ?? "")).toEqual(INLINE);
    // The deadline's wait is released with the call.
    expect(clock.pendingSleeps).toBe(0);
  });

  it("a sample Druid could not take (SamplerExceptionMapper's 400) is BadRequest with Druid's message, not retried", async () => {
    const error = "Failed to sample data: java.io.FileNotFoundException: /data/x (Is a directory)";
    fake.on("POST", PATH, { status: 400, body: { error } });
    await expect(client.sample(INLINE)).rejects.toMatchObject({
      code: "BadRequest",
      retryable: false,
      status: 400,
      druidMessage: error,
    });
    expect(fake.count("POST", PATH)).toBe(1);
  });

  it("a spec Jackson refused is SpecRejected, not retried", async () => {
    const error =
      "Cannot construct instance of `org.apache.druid.indexing.overlord.sampler.SamplerConfig`, problem: numRows must be <= 5000";
    fake.on("POST", PATH, { status: 400, body: { error } });
    await expect(client.sample(INLINE)).rejects.toMatchObject({
      code: "SpecRejected",
      retryable: false,
      druidMessage: error,
    });
    expect(fake.count("POST", PATH)).toBe(1);
  });

  it.each([
    [404, "NotFound"],
    [405, "NotFound"],
    [401, "Unauthorized"],
    [403, "Forbidden"],
  ])(
    "HTTP %i (no sampler here, or not for us) is %s, kept apart from a refused sample",
    async (status, code) => {
      fake.on("POST", PATH, { status, headers: { "content-type": "text/html" }, body: "<html></html>" });
      await expect(client.sample(INLINE)).rejects.toMatchObject({ code, status, retryable: false });
      expect(fake.count("POST", PATH)).toBe(1);
    },
  );

  it("retries a failing Druid (503, 500) like any read, within the budget", async () => {
    fake.on(
      "POST",
      PATH,
      { status: 503 },
      { status: 500, body: { error: "boom" } },
      { status: 200, body: { numRowsRead: 1, numRowsIndexed: 1, data: [{ parsed: { __time: 0 } }] } },
    );
    const answer = client.sample(INLINE);
    for (const served of [1, 2]) {
      // The deadline and a retry wait.
      await until(() => fake.count() === served && clock.pendingSleeps === 2);
      await clock.advance(1000);
    }
    await expect(answer).resolves.toMatchObject({ numRowsRead: 1 });
    expect(fake.count("POST", PATH)).toBe(3);
  });

  it("is bounded: a Druid that never answers fails Transient at the spec's read budget plus the margin", async () => {
    fake.on("POST", PATH, { hang: true });
    let settled = false;
    const outcome = client.sample({ ...INLINE, samplerConfig: { timeoutMs: 2000 } }).then(
      () => "answered",
      (error: unknown) => error,
    );
    void outcome.finally(() => {
      settled = true;
    });
    await until(() => fake.count() === 1);
    await clock.advance(2000 + SAMPLE_MARGIN_MS - 1);
    expect(settled).toBe(false);
    await clock.advance(1);
    expect(await outcome).toMatchObject({
      code: "Transient",
      druidMessage: `the sampler did not answer within ${2000 + SAMPLE_MARGIN_MS} ms`,
    });
  });

  it("takes an explicit timeoutMs, and the caller's signal rejects with the caller's reason", async () => {
    fake.on("POST", PATH, { hang: true });
    const bounded = client.sample(INLINE, { timeoutMs: 500 }).catch((error: unknown) => error);
    await until(() => fake.count() === 1);
    await clock.advance(500);
    expect(await bounded).toMatchObject({ code: "Transient" });

    const controller = new AbortController();
    const stopped = client.sample(INLINE, { signal: controller.signal });
    await until(() => fake.count() === 2);
    controller.abort(new Error("step canceled"));
    await expect(stopped).rejects.toThrow("step canceled");
  });

  it("an answer that is not a sample is UnexpectedResponse", async () => {
    fake.on("POST", PATH, { status: 200, body: { task: "x" } });
    await expect(client.sample(INLINE)).rejects.toMatchObject({ code: "UnexpectedResponse" });
  });
});
