import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim } from "../helpers/sim.js";

/** Bad input gets Druid's error for it, never a crash (a 500 from a handler bug would show here). */
describe("robustness against bad input", () => {
  it("answers any JSON task body with 200 or a 4xx, never a 500", async () => {
    const s = await startTestSim();
    const base = parallelTask() as { spec: Record<string, Record<string, unknown>> };
    const junk = fc.oneof(
      fc.constant(null),
      fc.integer(),
      fc.string(),
      fc.boolean(),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.object({ maxDepth: 1 }),
    );
    const mutated = fc.record({
      where: fc.constantFrom("dataSchema", "ioConfig", "tuningConfig"),
      key: fc.constantFrom(
        "dataSource",
        "timestampSpec",
        "granularitySpec",
        "inputSource",
        "inputFormat",
        "partitionsSpec",
        "dimensionsSpec",
        "metricsSpec",
        "maxNumConcurrentSubTasks",
        "appendToExisting",
        "intervals",
      ),
      value: junk,
    });
    await fc.assert(
      fc.asyncProperty(fc.oneof(junk, mutated), async (input) => {
        let body: unknown = input;
        if (input && typeof input === "object" && "where" in input && "key" in input) {
          const m = input as { where: string; key: string; value: unknown };
          const copy = structuredClone(base);
          (copy.spec[m.where] as Record<string, unknown>)[m.key] = m.value;
          body = copy;
        }
        const res = await s.post("/druid/indexer/v1/task", JSON.stringify(body));
        expect(res.status === 200 || (res.status >= 400 && res.status < 500)).toBe(true);
      }),
      { numRuns: 150, seed: 42 },
    );
    await s.advance(3_600_000);
    expect((await s.get("/druid/indexer/v1/tasks")).status).toBe(200);
  });

  it("answers any SQL text with 200 or a 400 ErrorResponse, never a 500", async () => {
    const s = await startTestSim();
    const words = fc.constantFrom(
      "SELECT",
      "FROM",
      "WHERE",
      "sys.segments",
      "COUNT(*)",
      "(",
      ")",
      "'x'",
      "1",
      "=",
      "AND",
      "GROUP BY",
      "ORDER BY",
      "LIMIT",
      "datasource",
      "*",
      ",",
      "FILTER",
      "TIME_FLOOR(__time, 'P1D')",
      "wiki",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(words, { maxLength: 12 }), async (parts) => {
        const res = await s.post("/druid/v2/sql", { query: parts.join(" ") });
        expect([200, 400]).toContain(res.status);
      }),
      { numRuns: 150, seed: 7 },
    );
  });
});

describe("segment granularity ALL (docs/druid-api.md §5 granularity names)", () => {
  it("publishes one segment over Druid's eternity interval", async () => {
    const s = await startTestSim({ handoffDelayMs: 0 });
    const task = parallelTask({
      id: "all",
      granularitySpec: { segmentGranularity: "all" },
      inputSource: { type: "inline", data: '{"time":"2026-01-01T01:00:00Z","page":"a","user":"u"}' },
      context: { simDurationMs: 10 },
    });
    expect((await s.post("/druid/indexer/v1/task", task)).status).toBe(200);
    await s.advance(10);
    const seg = (await s.get("/druid/coordinator/v1/metadata/datasources/wiki/segments?full")).json[0];
    expect(seg.interval).toBe("-146136543-09-08T08:23:32.096Z/146140482-04-24T15:36:27.903Z");
    expect(seg.identifier).toBe(
      "wiki_-146136543-09-08T08:23:32.096Z_146140482-04-24T15:36:27.903Z_2026-03-01T00:00:00.000Z",
    );
    expect((await s.post("/druid/v2/sql", { query: "SELECT COUNT(*) AS c FROM wiki" })).json).toEqual([
      { c: 1 },
    ]);
  });
});

describe("engine faults", () => {
  it("fails a task whose step throws instead of wedging every later request", async () => {
    const s = await startTestSim();
    s.sim.engine.store.add = () => {
      throw new Error("store exploded");
    };
    await s.post("/druid/indexer/v1/task", parallelTask({ id: "boom", context: { simDurationMs: 10 } }));
    await s.advance(10);
    const status = await s.get("/druid/indexer/v1/task/boom/status");
    expect(status.status).toBe(200);
    expect(status.json.status).toMatchObject({
      statusCode: "FAILED",
      errorMsg: "Emulator error: store exploded",
    });
    expect((await s.get("/druid/indexer/v1/tasks")).status).toBe(200);
  });
});
