import { describe, expect, it } from "vitest";
import { type CorpusEntry, readCorpus } from "../helpers/msq-corpus.js";
import { startTestSim, type TestSim } from "../helpers/sim.js";

/**
 * Real MSQ ingestion queries (test/fixtures/msq-corpus/SOURCES.md: Druid's docs and tests) submitted to the
 * emulator's `POST /druid/v2/sql/task`: each either runs to SUCCESS with the rows Druid's semantics give, is
 * refused with the planner's error, or fails with the MSQ fault Druid's test expects. The known gaps are
 * listed in their files and asserted to be refused as unsupported (501, "Emulator: …"), never misread.
 */

const corpus = readCorpus();
const byId = new Map(corpus.map((e) => [e.id, e]));

let n = 0;
async function submit(s: TestSim, e: CorpusEntry) {
  const sqlQueryId = `corpus-${++n}`;
  const res = await s.post("/druid/v2/sql/task", {
    query: e.sql,
    context: { sqlQueryId, simDurationMs: 1_000, ...e.context },
  });
  return { res, id: `query-${sqlQueryId}` };
}

async function status(s: TestSim, id: string) {
  return (await s.get(`/druid/indexer/v1/task/${id}/status`)).json.status as {
    statusCode: string;
    errorMsg: string | null;
  };
}

/** Runs an entry's prerequisites (and theirs), each to SUCCESS. */
async function prepare(s: TestSim, e: CorpusEntry, done = new Set<string>()): Promise<void> {
  for (const dep of e.after) {
    if (done.has(dep)) continue;
    const d = byId.get(dep);
    if (!d) throw new Error(`${e.id}: unknown prerequisite ${dep}`);
    await prepare(s, d, done);
    const { res, id } = await submit(s, d);
    expect(res.status, `${dep}: ${JSON.stringify(res.json)}`).toBe(202);
    await s.advance(2_000);
    expect((await status(s, id)).statusCode, dep).toBe("SUCCESS");
    done.add(dep);
  }
}

/** The rows a datasource serves now (a newer segment over part of an older one hides its rows there), `__time` as ISO text. */
function rowsOf(s: TestSim, dataSource: string): Array<Record<string, unknown>> {
  const engine = s.sim.engine;
  const visible = engine.store.visible(dataSource, engine.now);
  return visible
    .flatMap((seg) =>
      ((seg.rows ?? []) as Array<Record<string, unknown>>).filter((r) => {
        const t = r.__time as number;
        return !visible.some((o) => o.version > seg.version && t >= o.interval.start && t < o.interval.end);
      }),
    )
    .map((r) => ({ ...r, __time: new Date(r.__time as number).toISOString() }));
}

/** Druid's `(line [l], column [c])` for the first occurrence of `needle` in the query. */
function position(sql: string, needle: string): string {
  const at = sql.indexOf(needle);
  const before = sql.slice(0, at);
  return `(line [${before.split("\n").length}], column [${at - before.lastIndexOf("\n")}])`;
}

/** `code message`: the message is exact, `/regex/`, or `*` (only the code is known). */
function expectMessage(actual: string, spec: string, sql: string) {
  const text = spec.replace(/\{\{POSITION "([^"]+)"\}\}/, (_, needle) => position(sql, `"${needle}"`));
  if (text === "*") return;
  if (text.startsWith("/")) expect(actual).toMatch(new RegExp(text.slice(1, text.lastIndexOf("/"))));
  else expect(actual).toBe(text);
}

const split = (spec: string) => {
  const at = spec.indexOf(" ");
  return { code: spec.slice(0, at), message: spec.slice(at + 1) };
};

describe("MSQ corpus: real ingestion queries from Druid's docs and tests (test/fixtures/msq-corpus)", () => {
  for (const e of corpus.filter((x) => !x.setup)) {
    it(`${e.id} — ${e.gap ? "known gap" : e.druid.split(" ")[0]}`, async () => {
      const s = await startTestSim({ handoffDelayMs: 0 });
      await prepare(s, e);
      const { res, id } = await submit(s, e);
      if (e.gap) {
        // Refused as beyond the emulator, in words that say so.
        expect(res.status, JSON.stringify(res.json)).toBe(501);
        expect(res.json.error).toMatchObject({ category: "UNSUPPORTED" });
        expect(res.json.error.errorMessage).toMatch(/^Emulator: /);
        return;
      }
      if (e.error) {
        const { code, message } = split(e.error);
        expect(res.status, JSON.stringify(res.json)).toBe(400);
        expect(res.json).toMatchObject({
          state: "FAILED",
          error: { errorCode: code, category: "INVALID_INPUT" },
        });
        expectMessage(res.json.error.errorMessage, message, e.sql);
        expect(s.sim.engine.tasks.has(id)).toBe(false);
        return;
      }
      expect(res.status, JSON.stringify(res.json)).toBe(202);
      await s.advance(2_000);
      const st = await status(s, id);
      if (e.fault) {
        const { code, message } = split(e.fault);
        expect(st.statusCode).toBe("FAILED");
        const report = (await s.get(`/druid/indexer/v1/task/${id}/reports`)).json.multiStageQuery.payload
          .status;
        expect(report.errorReport.error.errorCode).toBe(code);
        expectMessage(report.errorReport.error.errorMessage, message, e.sql);
        expect(st.errorMsg).toBe(`${code}: ${report.errorReport.error.errorMessage}`);
        return;
      }
      expect(st, JSON.stringify(st)).toMatchObject({ statusCode: "SUCCESS" });
      if (e.rows) expect(rowsOf(s, e.rows.dataSource)).toHaveLength(e.rows.count);
      for (const x of e.expect)
        expect(rowsOf(s, x.dataSource)).toContainEqual(expect.objectContaining(x.row));
    });
  }

  it("holds at least 50 real queries the emulator runs or refuses as Druid does, each with its origin", () => {
    const real = corpus.filter((e) => !e.setup);
    for (const e of real)
      expect(e.origin, e.id).toMatch(/^(docs|multi-stage-query|sql|integration-tests)\/.+ @ /);
    const answered = real.filter((e) => !e.gap);
    expect(answered.length).toBeGreaterThanOrEqual(50);
    // Every run checks the rows it wrote, and every refusal or fault names Druid's error.
    for (const e of answered)
      expect(e.rows !== undefined || e.error !== undefined || e.fault !== undefined, e.id).toBe(true);
  });
});
