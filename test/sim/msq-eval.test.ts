import { describe, expect, it } from "vitest";
import { planProgram, runProgram } from "../../src/sim/msq-query.js";
import { parseQuery } from "../../src/sim/msq-sql.js";
import type { MsqPlanError } from "../../src/sim/msq-text.js";

/** Rows of a JSON-lines inline input, read with this EXTEND. */
function source(rows: Array<Record<string, unknown>>, extend: string): string {
  const data = rows.map((r) => JSON.stringify(r)).join("\n");
  return `TABLE(EXTERN('${JSON.stringify({ type: "inline", data }).replace(/'/g, "''")}', '{"type":"json"}')) EXTEND (${extend})`;
}

const ROWS = [
  { t: "2024-01-01T01:02:00Z", s: "some_value", n: 7, d: 7.0 },
  { t: "2024-01-01T01:03:00Z", s: "", n: 2, d: 5.0 },
  { t: "2024-01-01T01:04:00Z", s: null, n: null, d: null },
];
const EXT = '"t" VARCHAR, "s" VARCHAR, "n" BIGINT, "d" DOUBLE';

/** Plans and runs `SELECT <items> FROM <ROWS> [rest]`, giving the projected rows. */
function run(items: string, rest = "", rows = ROWS): Array<Record<string, unknown>> {
  const q = parseQuery(`SELECT ${items} FROM ${source(rows, EXT)} ${rest}`);
  const out = runProgram(
    planProgram(q, () => null),
    { columns: () => null, rows: () => [] },
    Date.UTC(2026, 0, 1),
  );
  return out.records.map((r) => r.value as Record<string, unknown>);
}

describe("MSQ expressions: Druid SQL's semantics (docs/querying/sql-operators.md, sql-scalar.md, sql-data-types.md)", () => {
  it("divides two BIGINTs as integers and anything with a DOUBLE as doubles", () => {
    const rows = run('TIME_PARSE("t") AS __time, n / 2 AS a, d / 2 AS b, n * 1.0 / 2 AS c');
    expect(rows[0]).toMatchObject({ a: 3, b: 3.5, c: 3.5 });
    // A DOUBLE holding a whole number still divides as a double.
    expect(rows[1]).toMatchObject({ a: 1, b: 2.5 });
  });

  it("compares with SQL's three-valued logic: NULL is neither < 2 nor not (tutorial-sql-null)", () => {
    expect(run('TIME_PARSE("t") AS __time, s', "WHERE n < 3").map((r) => r.s)).toEqual([""]);
    expect(run('TIME_PARSE("t") AS __time, s', "WHERE s <> 'some_value'").map((r) => r.s)).toEqual([""]);
    expect(run('TIME_PARSE("t") AS __time, s', "WHERE s IS NULL")).toHaveLength(1);
  });

  it("evaluates CASE, COALESCE, string and time functions, null in gives null out", () => {
    const rows = run(
      `TIME_PARSE("t") AS __time,
       CASE WHEN n > 5 THEN 'big' WHEN n IS NULL THEN 'none' ELSE 'small' END AS size,
       COALESCE(s, 'missing') AS s2, UPPER(s) AS up, LENGTH(s) AS len, s || '!' AS bang,
       TIME_FORMAT(TIME_FLOOR(TIME_PARSE("t"), 'PT1H'), 'yyyy-MM-dd HH:mm') AS "hour",
       TIME_PARSE("t", 'yyyy') AS bad`,
    );
    expect(rows.map((r) => r.size)).toEqual(["big", "small", "none"]);
    expect(rows.map((r) => r.s2)).toEqual(["some_value", "", "missing"]);
    expect(rows[0]).toMatchObject({
      up: "SOME_VALUE",
      len: 10,
      bang: "some_value!",
      hour: "2024-01-01 01:00",
    });
    expect(rows[2]).toMatchObject({ up: null, len: null, bang: null });
    // TIME_PARSE answers null for text its pattern does not match (it does not fail).
    expect(rows.every((r) => r.bad === null)).toBe(true);
  });

  it("counts rows whose __time comes out null (InsertTimeNull) instead of writing them", () => {
    const q = parseQuery(`SELECT TIME_PARSE(s) AS __time, n FROM ${source(ROWS, EXT)}`);
    const out = runProgram(
      planProgram(q, () => null),
      { columns: () => null, rows: () => [] },
      0,
    );
    expect(out.nullTimes).toBe(3);
    expect(out.records).toHaveLength(0);
  });

  it("refuses what Druid's validator refuses, pointing at the offending text", () => {
    const plan = (sql: string) => () => planProgram(parseQuery(sql), () => null);
    expect(plan(`SELECT TIME_PARSE("t") AS __time, nope FROM ${source(ROWS, EXT)}`)).toThrow(
      /^Column 'nope' not found in any table$/,
    );
    // A timestamp plus a number (a real Druid 33 refused it so on the Broker; one planner plans both).
    expect(plan(`SELECT TIME_PARSE("t") + 1 AS __time FROM ${source(ROWS, EXT)}`)).toThrow(
      /^Cannot apply '\+' to arguments of type '<TIMESTAMP\(3\)> \+ <INTEGER>'/,
    );
    expect(plan(`SELECT TIME_PARSE("t") AS __time, NO_SUCH_FN(s) AS x FROM ${source(ROWS, EXT)}`)).toThrow(
      "No match found for function signature NO_SUCH_FN(<CHARACTER>)",
    );
  });

  it("lexes with the Broker's lexer: its errors are the planner's, at the statement's offset", () => {
    const err = (sql: string, base = 0) => {
      try {
        parseQuery(sql, base);
      } catch (error) {
        return error as MsqPlanError;
      }
      throw new Error(`parsed: ${sql}`);
    };
    // Druid's parse errors, placed in the statement (the part starts at offset 100 of one line).
    expect(err("SELECT 'abc FROM t", 100)).toMatchObject({
      message: "Received an unexpected token [\\' abc] (line [1], column [108])",
      errorCode: "invalidInput",
    });
    expect(err("SELECT a # b FROM t")).toMatchObject({
      message: 'Lexical error at line 1, column 10.  Encountered: "#" (35), after : ""',
      errorCode: "invalidInput",
    });
    // Calcite reads `[` (a subscript), which the emulator's grammar does not; `:` pairs JSON_OBJECT's keys and values.
    expect(err("SELECT a[1] FROM t")).toMatchObject({ errorCode: "unsupported" });
    expect(parseQuery("SELECT JSON_OBJECT('k': a) AS o FROM t").items[0]).toMatchObject({
      expr: {
        k: "fn",
        name: "JSON_OBJECT",
        args: [
          { k: "lit", v: "k" },
          { k: "col", name: "a" },
        ],
      },
    });
    // `=>` is one token: EXTERN's named arguments.
    const q = parseQuery(
      `SELECT a FROM TABLE(EXTERN(inputSource => '{"type":"inline","data":""}', inputFormat => '{"type":"json"}')) EXTEND (a VARCHAR)`,
    );
    expect(q.from).toMatchObject({ k: "extern", signature: [{ name: "a", type: "string" }] });
  });

  it("reads Calcite's keyword forms with the Broker's grammar: EXTRACT, POSITION, TRIM, FLOOR/CEIL … TO, DATE", () => {
    const rows = run(
      `TIME_PARSE("t") AS __time, EXTRACT(MINUTE FROM TIME_PARSE("t")) AS m, POSITION('_' IN s) AS p,
       TRIM(BOTH 's' FROM s) AS tr, TRIM(LEADING FROM '  x ') AS lt,
       TIME_FORMAT(CEIL(TIME_PARSE("t") TO HOUR), 'HH:mm') AS up, TIME_FORMAT(FLOOR(TIME_PARSE("t") TO DAY), 'dd HH') AS down,
       TIME_PARSE("t") >= DATE '2024-01-01' AS after`,
    );
    expect(rows[0]).toMatchObject({
      m: 2,
      p: 5,
      tr: "ome_value",
      lt: "x ",
      up: "02:00",
      down: "01 00",
      // BOOLEAN is a LONG 1/0 at runtime (docs/querying/sql-data-types.md), as the segment stores it.
      after: 1,
    });
  });

  it("refuses what the ingestion planner does not run as the emulator's gap, never misread", () => {
    const err = (items: string, rest = "") => {
      try {
        parseQuery(`SELECT ${items} FROM ${source(ROWS, EXT)} ${rest}`);
      } catch (error) {
        return error as MsqPlanError;
      }
      throw new Error(`parsed: ${items}`);
    };
    expect(err("COUNT(*) FILTER (WHERE n > 1) AS c")).toMatchObject({ errorCode: "unsupported" });
    expect(err("DISTINCT s")).toMatchObject({ errorCode: "unsupported" });
    // A refusal Druid's own parser makes stays invalidInput (MOD, not %, under Druid's conformance level).
    expect(err("n % 2 AS r")).toMatchObject({
      errorCode: "invalidInput",
      message: "Percent remainder '%' is not allowed under the current SQL conformance level",
    });
  });

  it("runs with the Broker engine's semantics: text read as numbers in math, subqueries in WHERE", () => {
    // Calcite casts a VARCHAR operand of + to a number (a real Druid 33 planned `x + 1` over text as CAST(x)+1);
    // text that is no number gives null.
    const rows = run('TIME_PARSE("t") AS __time, s + 1 AS x, n + 1 AS y');
    expect(rows.map((r) => [r.x, r.y])).toEqual([
      [null, 8],
      [null, 3],
      [null, null],
    ]);
    // An uncorrelated IN subquery runs first, as on the Broker.
    expect(run('TIME_PARSE("t") AS __time, s', "WHERE n IN (SELECT 7)").map((r) => r.s)).toEqual([
      "some_value",
    ]);
  });

  it("joins through the Broker's executor: LEFT JOIN of two EXTERNs, one in a WITH (docs/multi-stage-query/examples.md)", () => {
    const products = source(
      [
        { id: 7, name: "seven" },
        { id: 2, name: "two" },
      ],
      '"id" BIGINT, "name" VARCHAR',
    );
    const q = parseQuery(
      `WITH p AS (SELECT * FROM ${products})
       SELECT TIME_PARSE(o."t") AS __time, o.s, p.name AS product
       FROM ${source(ROWS, EXT)} AS o LEFT JOIN p ON o.n = p.id`,
    );
    const program = planProgram(q, () => null);
    expect(program.dimensions).toEqual([
      { name: "s", type: "string" },
      { name: "product", type: "string" },
    ]);
    expect(program.externs).toHaveLength(2);
    const rows = runProgram(program, { columns: () => null, rows: () => [] }, 0).records.map((r) => r.value);
    // Every left row kept in order, the unmatched one (n null) with a null product.
    expect(rows).toEqual([
      { __time: Date.parse("2024-01-01T01:02:00Z"), s: "some_value", product: "seven" },
      { __time: Date.parse("2024-01-01T01:03:00Z"), s: "", product: "two" },
      { __time: Date.parse("2024-01-01T01:04:00Z"), s: null, product: null },
    ]);
    // The ON condition is compiled as the Broker compiles it: an unknown column is Calcite's error.
    expect(() =>
      planProgram(
        parseQuery(
          `SELECT TIME_PARSE(o."t") AS __time FROM ${source(ROWS, EXT)} AS o JOIN ${products} AS p ON o.nope = p.id`,
        ),
        () => null,
      ),
    ).toThrow("Column 'nope' not found in table 'o'");
  });

  it("converts between multi-value strings and arrays: ARRAY_TO_MV, MV_TO_ARRAY (docs/querying/multi-value-dimensions.md)", () => {
    const tags = [
      { t: "2011-01-12T00:00:00Z", tags: ["t1", "t2", "t3"] },
      { t: "2011-01-13T00:00:00Z", tags: "t4" },
      { t: "2011-01-14T00:00:00Z", tags: null },
    ];
    const plan = (items: string, extend: string, rest = "") =>
      planProgram(parseQuery(`SELECT ${items} FROM ${source(tags, extend)} ${rest}`), () => null);
    const rows = (p: ReturnType<typeof plan>) =>
      runProgram(p, { columns: () => null, rows: () => [] }, 0).records.map((r) => r.value?.tags);
    // An ARRAY<STRING> input as a multi-value string dimension (stored as a string dimension of lists).
    const fromArray = plan(
      'TIME_PARSE("t") AS __time, ARRAY_TO_MV("tags") AS tags',
      '"t" VARCHAR, "tags" VARCHAR ARRAY',
    );
    expect(fromArray.dimensions).toEqual([{ name: "tags", type: "string" }]);
    expect(rows(fromArray)).toEqual([["t1", "t2", "t3"], ["t4"], null]);
    // A multi-value VARCHAR as an array and back, grouped by the whole array (not unnested).
    const grouped = plan(
      'TIME_PARSE("t") AS __time, ARRAY_TO_MV(MV_TO_ARRAY("tags")) AS tags, COUNT(*) AS n',
      '"t" VARCHAR, "tags" VARCHAR',
      'GROUP BY 1, MV_TO_ARRAY("tags")',
    );
    expect(grouped.rollup).toBe(true);
    expect(rows(grouped)).toEqual([["t1", "t2", "t3"], ["t4"], null]);
    // Grouping by the multi-value string itself unnests it (Druid's groupBy), one record per value.
    const byValue = plan(
      'TIME_PARSE("t") AS __time, tags, COUNT(*) AS n',
      '"t" VARCHAR, "tags" VARCHAR',
      "GROUP BY 1, 2",
    );
    expect(rows(byValue)).toEqual(["t1", "t2", "t3", "t4", null]);
    // GROUP BY "tags" names the ARRAY input column, not the alias of ARRAY_TO_MV("tags"): the lists stay whole.
    const byArray = plan(
      'TIME_PARSE("t") AS __time, ARRAY_TO_MV("tags") AS tags, COUNT(*) AS n',
      '"t" VARCHAR, "tags" VARCHAR ARRAY',
      'GROUP BY 1, "tags"',
    );
    expect(rows(byArray)).toEqual([["t1", "t2", "t3"], ["t4"], null]);
    // Reingesting a datasource reads a multi-value row as the Broker does: its list, one value itself, [] null.
    const src = parseQuery('SELECT __time, tags, MV_TO_ARRAY(tags) AS a FROM "src"');
    const catalog = {
      columns: (name: string) =>
        name === "src"
          ? [
              { name: "__time", type: "TIMESTAMP" as const },
              { name: "tags", type: "VARCHAR" as const },
            ]
          : null,
      rows: () => [
        { __time: 0, tags: ["x", "y"] },
        { __time: 1, tags: [] },
        { __time: 2, tags: ["z"] },
      ],
    };
    const reread = runProgram(planProgram(src, catalog.columns), catalog, 0).records.map((r) => r.value);
    expect(reread).toEqual([
      { __time: 0, tags: ["x", "y"], a: ["x", "y"] },
      { __time: 1, tags: null, a: null },
      { __time: 2, tags: "z", a: ["z"] },
    ]);
    // MV_TO_ARRAY reads a column only (a real Druid 33 refused MV_TO_ARRAY('a') so while planning).
    expect(() => plan(`TIME_PARSE("t") AS __time, MV_TO_ARRAY('a') AS tags`, '"t" VARCHAR')).toThrow(
      "Function[mv_to_array] argument a should be an identifier expression. Use array() instead",
    );
  });

  it("runs the functions the Broker engine defines by that one definition (sql-functions.ts)", () => {
    // TIME_FLOOR's origin (docs/querying/sql-scalar.md: TIME_FLOOR(expr, period, [origin, [timezone]])).
    const rows = run(
      `TIME_PARSE("t") AS __time,
       TIME_FORMAT(TIME_FLOOR(TIME_PARSE("t"), 'PT1H', TIMESTAMP '2024-01-01 00:30:00'), 'HH:mm') AS half,
       TIME_FORMAT(TIME_SHIFT(TIME_PARSE("t"), 'PT1H', 2, 'America/New_York'), 'HH:mm') AS shifted,
       TIMESTAMPDIFF(MINUTE, TIMESTAMP '2024-01-01 00:00:00', TIME_PARSE("t")) AS mins`,
    );
    expect(rows[0]).toMatchObject({ half: "00:30", shifted: "03:02", mins: 62 });
    // DATE_TRUNC's units are DateTruncOperatorConversion's; another is Druid's own refusal, not the emulator's gap.
    expect(() => run(`TIME_PARSE("t") AS __time, DATE_TRUNC('fortnight', TIME_PARSE("t")) AS d`)).toThrow(
      expect.objectContaining({
        message: "Operator[DATE_TRUNC] cannot truncate to[fortnight]",
        errorCode: "invalidInput",
      }),
    );
  });

  it("types a shared function by its one definition: arity as Calcite refuses it, result types as the planner's", () => {
    const plan = (items: string) =>
      planProgram(parseQuery(`SELECT ${items} FROM ${source(ROWS, EXT)}`), () => null);
    expect(() => plan('TIME_PARSE("t") AS __time, LEFT(s) AS l')).toThrow(
      "Invalid number of arguments to function 'LEFT'. Was expecting 2 arguments",
    );
    const program = plan(
      'TIME_PARSE("t") AS __time, LENGTH(s) AS len, COALESCE(d, NULL) AS d2, LEFT(s, 2) AS l',
    );
    expect(program.dimensions).toEqual([
      { name: "len", type: "long" },
      { name: "d2", type: "double" },
      { name: "l", type: "string" },
    ]);
  });
});
