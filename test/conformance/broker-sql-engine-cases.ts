// The value model the emulator's one SQL engine gives Broker queries and MSQ ingestion alike (src/sim/sql-eval.ts,
// msq-query.ts): every query below was run on a real Druid 33.0.0 and the expectation is what it answered — names,
// native and SQL types, rows (resultFormat "array" with both type headers), or the refusal. They run with the Broker
// SQL cases (broker-sql-cases.ts) on a live Druid and on the emulator.
// One datasource serves them: text that is and is not a number, a multi-value string dimension (two values, one,
// an empty list, none) and a long.
import { beforeAll, describe, expect, it } from "vitest";
import {
  type ConformanceTarget,
  call,
  eventually,
  freshId,
  indexParallelSpec,
  ingestServed,
  json,
  writeInput,
} from "./support.js";

const ROWS = [
  { time: "2026-03-01T00:00:00Z", name: "a", s: "7", tags: ["x", "y"], n: 2 },
  { time: "2026-03-01T01:00:00Z", name: "b", s: "abc", tags: "z", n: -1 },
  { time: "2026-03-01T02:00:00Z", name: "c", s: "", tags: [], n: 0 },
  { time: "2026-03-01T03:00:00Z", name: "d" },
];
const INTERVAL = "2026-03-01T00:00:00.000Z/2026-03-02T00:00:00.000Z";

export function brokerSqlEngineConformanceSuite(target: ConformanceTarget): void {
  const post = (path: string, body: unknown) => call(target, "POST", path, body);
  const ds = freshId("engine_values");
  const q = (text: string) => text.replaceAll("$ds", `"${ds}"`);

  async function sql(query: string): Promise<{ status: number; body: unknown }> {
    const ex = await post("/druid/v2/sql", {
      query: q(query),
      resultFormat: "array",
      header: true,
      typesHeader: true,
      sqlTypesHeader: true,
    });
    return { status: ex.status, body: json(ex) };
  }

  /** The answer: column names, native types, SQL types, then the rows. */
  async function answer(query: string): Promise<unknown> {
    const r = await sql(query);
    if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  }

  /** The refusal: status and Druid's error body without its context. */
  async function refusal(query: string): Promise<unknown> {
    const r = await sql(query);
    const { context: _context, ...error } = r.body as Record<string, unknown>;
    return { status: r.status, ...error };
  }

  const typed = (...pairs: string[][]) => [pairs.map((p) => p[0]), pairs.map((p) => p[1])];
  const V = ["STRING", "VARCHAR"];
  const A = ["ARRAY<STRING>", "ARRAY"];

  const id = freshId("engine_values_load");

  describe(`Broker SQL's value model (the engine MSQ shares): ${target.name}`, () => {
    beforeAll(async () => {
      const dir = writeInput(target.dataDir(), { "rows.json": ROWS });
      await ingestServed(
        target,
        indexParallelSpec({
          id,
          dataSource: ds,
          baseDir: dir,
          dimensions: ["name", "s", "tags", { type: "long", name: "n" }],
        }),
        ds,
        INTERVAL,
      );
      await eventually(target, `SQL to see ${ds}'s rows`, async () => {
        const r = await sql("SELECT COUNT(*) FROM $ds");
        return r.status === 200 && JSON.stringify((r.body as unknown[])[3]) === "[4]" ? true : undefined;
      });
    });

    it("a function Druid does not have is Calcite's 'No match found', its operands' type families named", async () => {
      const noMatch = (message: string) => ({
        status: 400,
        error: "druidException",
        errorCode: "invalidInput",
        persona: "USER",
        category: "INVALID_INPUT",
        errorMessage: message,
      });
      expect(await refusal("SELECT NO_SUCH_FN('a')")).toEqual(
        noMatch("No match found for function signature NO_SUCH_FN(<CHARACTER>) (line [1], column [8])"),
      );
      expect(await refusal("SELECT NO_SUCH_FN(n, s, __time) FROM $ds")).toEqual(
        noMatch(
          "No match found for function signature NO_SUCH_FN(<NUMERIC>, <CHARACTER>, <TIMESTAMP>) (line [1], column [8])",
        ),
      );
    });

    it("reads text as a number in arithmetic and SUM (null when it is none); a comparison is a BOOLEAN", async () => {
      expect(await answer("SELECT name, s + 1, n + 1, n > 0 AS pos FROM $ds")).toEqual([
        ["name", "EXPR$1", "EXPR$2", "pos"],
        ...typed(V, ["LONG", "INTEGER"], ["LONG", "BIGINT"], ["LONG", "BOOLEAN"]),
        ["a", 8, 3, true],
        ["b", null, 0, false],
        ["c", null, 1, false],
        ["d", null, null, null],
      ]);
      expect(await answer("SELECT SUM(s), SUM(n) FROM $ds")).toEqual([
        ["EXPR$0", "EXPR$1"],
        ...typed(["DOUBLE", "DOUBLE"], ["LONG", "BIGINT"]),
        [7.0, 1],
      ]);
    });

    it("ARRAY_TO_MV and MV_TO_ARRAY: a multi-value string as an ARRAY and back; an ARRAY grouped whole, a multi-value string unnested", async () => {
      expect(await answer("SELECT ARRAY_TO_MV(1) AS a, ARRAY_TO_MV('abc') AS b")).toEqual([
        ["a", "b"],
        ...typed(V, V),
        ["1", "abc"],
      ]);
      // A multi-value row prints as its JSON text, one value as itself; an empty list is stored as null.
      expect(
        await answer(
          "SELECT name, tags, MV_TO_ARRAY(tags), ARRAY_TO_MV(MV_TO_ARRAY(tags)), MV_TO_ARRAY(s) FROM $ds",
        ),
      ).toEqual([
        ["name", "tags", "EXPR$2", "EXPR$3", "EXPR$4"],
        ...typed(V, V, A, V, A),
        ["a", '["x","y"]', '["x","y"]', '["x","y"]', '["7"]'],
        ["b", "z", '["z"]', "z", '["abc"]'],
        ["c", null, null, null, '[""]'],
        ["d", null, null, null, null],
      ]);
      expect(await answer("SELECT MV_TO_ARRAY(tags), COUNT(*) FROM $ds GROUP BY 1")).toEqual([
        ["EXPR$0", "EXPR$1"],
        ...typed(A, ["LONG", "BIGINT"]),
        [null, 2],
        ['["x","y"]', 1],
        ['["z"]', 1],
      ]);
      // Grouping by the multi-value string itself unnests it: a row counts in the group of each of its values.
      expect(await answer("SELECT name, tags, COUNT(*) FROM $ds GROUP BY 1, 2")).toEqual([
        ["name", "tags", "EXPR$2"],
        ...typed(V, V, ["LONG", "BIGINT"]),
        ["a", "x", 1],
        ["a", "y", 1],
        ["b", "z", 1],
        ["c", null, 1],
        ["d", null, 1],
      ]);
      expect(await answer("SELECT tags, COUNT(*), SUM(n) FROM $ds GROUP BY 1")).toEqual([
        ["tags", "EXPR$1", "EXPR$2"],
        ...typed(V, ["LONG", "BIGINT"], ["LONG", "BIGINT"]),
        [null, 2, 0],
        ["x", 1, 2],
        ["y", 1, 2],
        ["z", 1, -1],
      ]);
      // MV_TO_ARRAY reads a column only: Druid's native mv_to_array refuses anything else while planning.
      expect(await refusal("SELECT MV_TO_ARRAY(1)")).toEqual({
        status: 500,
        error: "druidException",
        errorCode: "general",
        persona: "ADMIN",
        category: "UNCATEGORIZED",
        errorMessage:
          "Function[mv_to_array] argument 1 should be an identifier expression. Use array() instead",
      });
    });
  });
}
