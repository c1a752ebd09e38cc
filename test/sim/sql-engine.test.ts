// The Broker SQL engine on its own (src/sim/sql-exec.ts and the modules it runs: sql-parse, sql-eval,
// sql-functions), over in-memory tables: how a statement is bound, typed and evaluated, and which errors carry a
// position. The HTTP shape of each answer, and its agreement with a real Druid 33, is held by
// test/conformance/broker-sql-cases.ts.
import { describe, expect, it } from "vitest";
import {
  type Column,
  SqlError,
  SqlPlanningError,
  type SqlRow,
  SqlRuntimeError,
  Timestamp,
} from "../../src/sim/sql.js";
import type { Span } from "../../src/sim/sql-ast.js";
import { runSql, type TableSource } from "../../src/sim/sql-exec.js";

const T0 = Date.UTC(2026, 2, 1);
const H = 3_600_000;

const EDITS: TableSource = {
  columns: [
    { name: "__time", type: "TIMESTAMP" },
    { name: "page", type: "VARCHAR" },
    { name: "added", type: "BIGINT" },
  ],
  rows: () => [
    { __time: new Timestamp(T0), page: "a", added: 5 },
    { __time: new Timestamp(T0 + H), page: "b", added: null },
    { __time: new Timestamp(T0 + 25 * H), page: "a", added: 2 },
  ],
  system: false,
  dataSource: "edits",
};

const PAGES: TableSource = {
  columns: [
    { name: "page", type: "VARCHAR" },
    { name: "title", type: "VARCHAR" },
  ] satisfies Column[],
  rows: (): SqlRow[] => [
    { page: "a", title: "Alpha" },
    { page: "c", title: "Gamma" },
  ],
  system: false,
  dataSource: "pages",
};

function table(parts: string[], span: Span): TableSource {
  const name = parts.join(".");
  if (name === "edits" || name === "druid.edits") return EDITS;
  if (name === "pages") return PAGES;
  throw new SqlError(`Object '${name}' not found`, span);
}

const run = (sql: string, timeZone = "UTC") => runSql(sql, { timeZone, now: T0 + 48 * H, table });
const rows = (sql: string) => run(sql).rows;

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

describe("one grammar with MSQ", () => {
  it("reads TABLE(EXTERN(…)) but runs it only on MSQ: the Broker refuses it as the emulator's gap, at its span", () => {
    const sql = `SELECT a FROM TABLE(EXTERN('{"type":"inline","data":""}', '{"type":"json"}')) EXTEND (a VARCHAR)`;
    const error = thrown(() => run(sql)) as SqlError;
    expect(error.message).toBe("EXTERN in a Broker query is not supported by the emulator");
    expect(error.span).toEqual([14, sql.length - 1]);
  });

  it("evaluates the string and numeric functions MSQ ingestions use, by the same definitions", () => {
    expect(
      rows(
        `SELECT LEFT('abcdef', 2), RIGHT('abcdef', 2), TRIM(BOTH 'x' FROM 'xxaxx'), LTRIM('  a '), LPAD('7', 3, '0'),
         RPAD('abcd', 2), POSITION('c' IN 'abcabc' FROM 4), STRPOS('abc', 'z'), REPLACE('a-b-c', '-', ''),
         REVERSE('abc'), REPEAT('ab', 2), TEXTCAT('a', 'b'), POWER(2, 10), SQRT(16)`,
      ),
    ).toEqual([["ab", "ef", "a", "a ", "007", "ab", 6, 0, "abc", "cba", "abab", "ab", 1024, 4]]);
    // A typed NULL runs as null; an untyped one where LEFT wants text is "Illegal use of 'NULL'" (a real Druid 33).
    expect(rows("SELECT LEFT(CAST(NULL AS VARCHAR), 2), LPAD('a', 3, NULL)")).toEqual([[null, null]]);
    expect(thrown(() => rows("SELECT LEFT(NULL, 2)")).message).toBe("Illegal use of 'NULL'");
  });

  it("evaluates the regular-expression, containment and interval functions MSQ ingestions use", () => {
    expect(
      rows(
        `SELECT REGEXP_EXTRACT('ab12cd', '[0-9]+'), REGEXP_EXTRACT('ab12', '([a-z])([0-9])', 2), REGEXP_LIKE('abc', 'b'),
         REGEXP_REPLACE('a1b2', '[0-9]', '#'), CONTAINS_STRING('Abc', 'b'), ICONTAINS_STRING('Abc', 'a'),
         CONTAINS_STRING('Abc', 'a'), TIME_IN_INTERVAL(TIMESTAMP '2026-03-01 05:00:00', '2026-03-01/P1D'),
         TIME_IN_INTERVAL(TIMESTAMP '2026-03-02 00:00:00', '2026-03-01/2026-03-02')`,
      ),
    ).toEqual([["12", "1", true, "a#b#", true, true, false, true, false]]);
  });

  it("takes GREATEST and LEAST of the non-null arguments, null when all are null", () => {
    expect(rows("SELECT GREATEST(1, NULL, 3), LEAST('b', 'a'), GREATEST(NULL, NULL), LEAST(2.5, 1)")).toEqual(
      [[3, "a", null, 1]],
    );
  });

  it("evaluates the time and numeric functions MSQ ingestions use", () => {
    expect(
      rows(
        `SELECT EXTRACT(HOUR FROM TIMESTAMP '2026-03-01 05:06:07'), TIME_EXTRACT(TIMESTAMP '2026-03-01 05:06:07', 'MINUTE'),
         CEIL(TIMESTAMP '2026-03-01 05:06:07' TO HOUR), TIME_CEIL(TIMESTAMP '2026-03-01 05:00:00', 'PT1H'),
         FLOOR(2.5), CEIL(7), ROUND(1.26, 1), TRUNCATE(1.29, 1), MOD(7, 3), DIV(7, 2), SAFE_DIVIDE(1, 0),
         PARSE_LONG('ff', 16), PARSE_LONG('x')`,
      ),
    ).toEqual([
      [
        5,
        6,
        new Timestamp(Date.UTC(2026, 2, 1, 6)),
        new Timestamp(Date.UTC(2026, 2, 1, 5)),
        2,
        7,
        1.3,
        1.2,
        1,
        3,
        null,
        255,
        null,
      ],
    ]);
  });
});

describe("binding", () => {
  it("reads the table only through the resolver, and places an unknown table at its reference", () => {
    const error = thrown(() => run('SELECT 1 FROM "nope" AS n')) as SqlError;
    expect([error.message, error.span]).toEqual(["Object 'nope' not found", [14, 19]]);
  });

  it("qualifies columns by alias or table name, and refuses the table's name once it has an alias", () => {
    expect(rows("SELECT e.page FROM edits e WHERE e.added > 3")).toEqual([["a"]]);
    expect(rows("SELECT edits.page FROM druid.edits WHERE druid.edits.added = 2")).toEqual([["a"]]);
    const error = thrown(() => run("SELECT edits.page FROM edits e")) as SqlError;
    expect([error.message, error.span]).toEqual(["Table 'edits' not found", [7, 11]]);
  });

  it("tells ambiguous columns from USING columns in a join", () => {
    expect(thrown(() => run("SELECT page FROM edits JOIN pages ON edits.page = pages.page")).message).toBe(
      "Column 'page' is ambiguous",
    );
    expect(rows("SELECT page, title FROM edits JOIN pages USING (page)")).toEqual([
      ["a", "Alpha"],
      ["a", "Alpha"],
    ]);
  });
});

describe("evaluation", () => {
  it("joins left rows in order, keeps unmatched ones on LEFT and adds unmatched right rows on FULL", () => {
    expect(rows("SELECT e.page, p.title FROM edits e LEFT JOIN pages p ON e.page = p.page")).toEqual([
      ["a", "Alpha"],
      ["b", null],
      ["a", "Alpha"],
    ]);
    expect(rows("SELECT e.page, p.page FROM edits e FULL JOIN pages p ON e.page = p.page")).toEqual([
      ["a", "a"],
      ["b", null],
      ["a", "a"],
      [null, "c"],
    ]);
  });

  it("groups in key order with nulls first, and filters groups with HAVING on an alias", () => {
    expect(rows("SELECT added, COUNT(*) FROM edits GROUP BY added")).toEqual([
      [null, 1],
      [2, 1],
      [5, 1],
    ]);
    expect(rows("SELECT page, SUM(added) AS s FROM edits GROUP BY page HAVING s > 0")).toEqual([["a", 7]]);
  });

  it("types CASE and COALESCE as Calcite's least restrictive type", () => {
    const r = run(
      "SELECT CASE WHEN added > 3 THEN 'x' END, COALESCE(added, 0.5), COALESCE(page, 1) FROM edits",
    );
    expect(r.columns.map((c) => c.type)).toEqual(["CHAR", "DECIMAL", "VARCHAR"]);
    expect(r.rows).toEqual([
      ["x", 5, "a"],
      [null, 0.5, "b"],
      [null, 2, "a"],
    ]);
  });

  it("shifts by day-time intervals in milliseconds and by months in the query's time zone", () => {
    const r = run(
      "SELECT CURRENT_TIMESTAMP - INTERVAL '2' DAY, TIMESTAMP '2026-01-31 00:00:00' + INTERVAL '1' MONTH",
      "America/New_York",
    );
    expect(r.rows[0]?.map((v) => (v as Timestamp).ms)).toEqual([T0, Date.UTC(2026, 1, 28, 5)]);
  });

  it("answers EXPLAIN with the datasources every input reads", () => {
    const r = run("EXPLAIN PLAN FOR SELECT e.page FROM edits e JOIN pages p ON e.page = p.page");
    expect(r.columns.map((c) => c.name)).toEqual(["PLAN", "RESOURCES", "ATTRIBUTES"]);
    expect(JSON.parse(r.rows[0]?.[1] as string)).toEqual([
      { name: "edits", type: "DATASOURCE" },
      { name: "pages", type: "DATASOURCE" },
    ]);
    expect(JSON.parse(r.rows[0]?.[0] as string)[0].query.dataSource.type).toBe("join");
  });
});

describe("refusals", () => {
  it("raises Druid's planning and runtime errors as their own kinds", () => {
    expect(thrown(() => run("SELECT page FROM edits ORDER BY page"))).toBeInstanceOf(SqlPlanningError);
    const latest = thrown(() => run("SELECT LATEST(page) FROM pages")) as SqlPlanningError;
    expect([latest.constructor, latest.persona]).toEqual([SqlPlanningError, "ADMIN"]);
    const many = thrown(() => run("SELECT (SELECT page FROM edits)")) as SqlRuntimeError;
    expect([many.constructor, many.shape]).toEqual([SqlRuntimeError, "legacy"]);
    const substring = thrown(() => run("SELECT SUBSTRING(page, 0) FROM edits")) as SqlRuntimeError;
    expect(substring.shape).toBe("defensive");
  });

  it("names a star-expanded column by its table when it is not grouped, at the star", () => {
    const error = thrown(() => run("SELECT * FROM edits GROUP BY page")) as SqlError;
    expect([error.message, error.span]).toEqual(["Expression 'edits.__time' is not being grouped", [7, 7]]);
  });

  it("says what the emulator does not run", () => {
    for (const [sql, what] of [
      ["SELECT page FROM edits UNION ALL SELECT page FROM pages", "UNION"],
      ["SELECT page FROM edits NATURAL JOIN pages", "NATURAL JOIN"],
      ["SELECT ROW_NUMBER() OVER () FROM edits", "window functions"],
      ["SELECT page FROM edits ORDER BY __time NULLS LAST", "NULLS FIRST/LAST"],
    ]) {
      expect(thrown(() => run(sql as string)).message).toBe(`${what} is not supported by the emulator`);
    }
  });
});
