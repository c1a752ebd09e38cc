import { describe, expect, it } from "vitest";
import { parseInterval } from "../../src/core/interval.js";
import { renderSql, sqlTarget, validateSql } from "../../src/spec/msq.js";

const day = parseInterval("2026-01-01/P1D");
const TEMPLATE = `-- nightly wiki load
REPLACE INTO "wiki" OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}'
SELECT TIME_PARSE("ts") AS __time, page
FROM TABLE(EXTERN('{"type":"http","uris":["https://h/{{start:yyyyMMdd}}.json"]}', '{"type":"json"}')) EXTEND ("ts" VARCHAR, page VARCHAR)
PARTITIONED BY DAY
CLUSTERED BY page`;

function rendered(interval = day, text = TEMPLATE) {
  return renderSql(text, { interval }).body.query;
}

describe("SQL (MSQ) templates", () => {
  it("renders {{start}}/{{end}} as SQL timestamp literals and date parts in UTC", () => {
    const q = rendered();
    expect(q).toContain(
      "__time >= TIMESTAMP '2026-01-01 00:00:00' AND __time < TIMESTAMP '2026-01-02 00:00:00'",
    );
    expect(q).toContain("https://h/20260101.json");
    const ms = renderSql("{{start}}", { interval: parseInterval("2026-01-01T00:00:00.250Z/PT1S") }).body
      .query;
    expect(ms).toBe("2026-01-01 00:00:00.250");
  });

  it("pins sqlQueryId and reports unused variables", () => {
    const { body, warnings } = renderSql("REPLACE INTO x", {
      interval: day,
      vars: { a: "1" },
      queryId: "q1",
    });
    expect(body.context).toEqual({ sqlQueryId: "q1" });
    expect(warnings).toEqual([{ path: "var.a", message: "--var a is not used by the template" }]);
  });

  it("finds the target datasource", () => {
    expect(sqlTarget(TEMPLATE)).toBe("wiki");
    expect(sqlTarget("/* c */ replace into wiki_2 overwrite all select 1")).toBe("wiki_2");
    expect(sqlTarget("SELECT 1")).toBeUndefined();
  });

  it("accepts a REPLACE whose window equals the partition and is aligned", () => {
    expect(validateSql(rendered(), { partition: day })).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it("refuses a window different from the partition", () => {
    const r = validateSql(rendered(), { partition: parseInterval("2026-01-02/P1D") });
    expect(r.errors).toEqual([
      {
        path: "query.overwrite",
        message:
          "the OVERWRITE window 2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z must equal the partition interval 2026-01-02T00:00:00.000Z/2026-01-03T00:00:00.000Z",
      },
    ]);
  });

  it("refuses a window not aligned with PARTITIONED BY (Druid's message)", () => {
    const hour = parseInterval("2026-01-01T05:00Z/PT1H");
    const r = validateSql(rendered(hour), { partition: hour });
    expect(r.errors.map((e) => e.path)).toEqual(["query.overwrite"]);
    expect(r.errors[0]?.message).toBe(
      "OVERWRITE WHERE clause identified interval [2026-01-01T05:00:00.000Z/2026-01-01T06:00:00.000Z] which is not aligned with PARTITIONED BY granularity [DAY]",
    );
    const hourly = rendered(
      hour,
      TEMPLATE.replace("PARTITIONED BY DAY", "PARTITIONED BY TIME_FLOOR(__time, 'PT1H')"),
    );
    expect(validateSql(hourly, { partition: hour }).errors).toEqual([]);
  });

  it("refuses INSERT, OVERWRITE ALL, a missing OVERWRITE and a missing PARTITIONED BY", () => {
    const insert = validateSql("INSERT INTO wiki SELECT * FROM x PARTITIONED BY DAY");
    expect(insert.errors.map((e) => e.path)).toEqual(["query"]);
    expect(insert.errors[0]?.message).toMatch(/^INSERT appends/);
    const all = validateSql("REPLACE INTO wiki OVERWRITE ALL SELECT * FROM x PARTITIONED BY DAY");
    expect(all.errors[0]).toMatchObject({
      path: "query.overwrite",
      message: expect.stringMatching(/^OVERWRITE ALL replaces the whole datasource/),
    });
    const none = validateSql("REPLACE INTO wiki SELECT * FROM x PARTITIONED BY DAY");
    expect(none.errors[0]?.message).toMatch(
      /^Missing time chunk information in OVERWRITE clause for REPLACE/,
    );
    const unpartitioned = validateSql(rendered().replace(/PARTITIONED BY DAY\nCLUSTERED BY page/, ""));
    expect(unpartitioned.errors).toEqual([
      {
        path: "query.partitionedBy",
        message: "Operation [REPLACE] requires a PARTITIONED BY to be explicitly defined",
      },
    ]);
  });

  it("explains a window it cannot read, and an empty window", () => {
    const odd = validateSql(
      "REPLACE INTO wiki OVERWRITE WHERE __time > TIMESTAMP '2026-01-01' SELECT 1 PARTITIONED BY DAY",
    );
    expect(odd.errors[0]?.message).toMatch(
      /^expected OVERWRITE WHERE __time >= TIMESTAMP '<start>' AND __time < TIMESTAMP '<end>'/,
    );
    const empty = validateSql(
      "REPLACE INTO wiki OVERWRITE WHERE __time >= TIMESTAMP '2026-01-02' AND __time < TIMESTAMP '2026-01-01' SELECT 1 PARTITIONED BY DAY",
    );
    expect(empty.errors[0]?.message).toBe(
      "The OVERWRITE WHERE clause produced no time intervals, are the bounds overly restrictive?",
    );
  });

  it("checks the datasource name and refuses a PARTITIONED BY function Druid does not take", () => {
    const bad = validateSql(rendered().replace('"wiki"', '".wiki"'));
    expect(bad.errors.map((e) => e.path)).toEqual(["query.table"]);
    // DruidSqlParserUtils.convertSqlNodeToGranularity: only FLOOR(__time TO unit) and TIME_FLOOR(__time, period).
    const odd = validateSql(rendered().replace("PARTITIONED BY DAY", "PARTITIONED BY something(odd)"));
    expect(odd.errors).toEqual([
      {
        path: "query.partitionedBy",
        message:
          "Invalid operator[SOMETHING] specified. PARTITIONED BY clause only supports FLOOR(__time TO <unit>) and TIME_FLOOR(__time, period) functions.",
      },
    ]);
  });

  it("ignores comments, including a commented-out OVERWRITE ALL", () => {
    const q = rendered().replace(
      "-- nightly wiki load",
      "-- OVERWRITE ALL was here\n/* INSERT INTO other */",
    );
    expect(validateSql(q, { partition: day }).errors).toEqual([]);
  });
});

describe("Druid's SQL ingestion rules (DruidSqlParserUtils, DruidSqlValidator)", () => {
  const q = (partitionedBy: string, extra = "") =>
    `REPLACE INTO wiki OVERWRITE WHERE __time >= TIMESTAMP '2026-01-01' AND __time < TIMESTAMP '2026-01-02'\nSELECT * FROM src\n${partitionedBy}${extra}`;

  it("skips leading SET statements (query context), also for the target datasource", () => {
    const text = `-- from the web console\nSET maxNumTasks = 5;\nSET arrayIngestMode = 'array';\n${q("PARTITIONED BY DAY")}`;
    expect(validateSql(text, { partition: day })).toEqual({ valid: true, errors: [], warnings: [] });
    expect(sqlTarget(text)).toBe("wiki");
  });

  it("PARTITIONED BY takes standard granularities only: names, ISO periods, FLOOR and TIME_FLOOR", () => {
    for (const ok of [
      "DAY",
      "'P1D'",
      "'day'",
      "P1D",
      "ALL TIME",
      "TIME_FLOOR(__time, 'P1D')",
      "FLOOR(__time TO DAY)",
    ]) {
      const r = validateSql(q(`PARTITIONED BY ${ok}`), { rules: "druid" });
      // ALL cannot align a window: Druid's AllGranularity bucket starts at the beginning of time.
      expect(
        r.errors.map((e) => e.path),
        ok,
      ).toEqual(ok === "ALL TIME" ? ["query.overwrite"] : []);
    }
    const hourly = validateSql(q("PARTITIONED BY HOURLY"));
    expect(hourly.errors).toEqual([
      {
        path: "query.partitionedBy",
        message:
          "Invalid granularity[HOURLY] specified after PARTITIONED BY clause. Expected 'SECOND', 'MINUTE', 'FIVE_MINUTE', 'TEN_MINUTE', 'FIFTEEN_MINUTE', 'THIRTY_MINUTE', 'HOUR', 'SIX_HOUR', 'EIGHT_HOUR', 'DAY', 'MONTH', 'QUARTER', 'YEAR', 'ALL', ALL TIME, FLOOR() or TIME_FLOOR()",
      },
    ]);
    // GranularityType.isStandard: P2D is a period, but no standard granularity.
    expect(validateSql(q("PARTITIONED BY 'P2D'")).errors.map((e) => e.path)).toEqual(["query.partitionedBy"]);
    expect(validateSql(q("PARTITIONED BY TIME_FLOOR(__time, 'PT2H')")).errors[0]?.message).toMatch(
      /^Invalid granularity\[TIME_FLOOR/,
    );
    expect(validateSql(q("PARTITIONED BY TIME_FLOOR(__time, 'daily')")).errors[0]?.message).toBe(
      "granularity['daily'] is an invalid period literal.",
    );
    expect(validateSql(q("PARTITIONED BY FLOOR(__time TO MILLISECOND)")).errors[0]?.message).toBe(
      "MILLISECOND is not a valid period granularity for ingestion.",
    );
  });

  it("CLUSTERED BY must come after PARTITIONED BY", () => {
    const r = validateSql(
      "REPLACE INTO wiki OVERWRITE WHERE __time >= TIMESTAMP '2026-01-01' AND __time < TIMESTAMP '2026-01-02' SELECT * FROM src CLUSTERED BY page PARTITIONED BY DAY",
    );
    expect(r.errors).toEqual([
      {
        path: "query.clusteredBy",
        message:
          "CLUSTERED BY found before PARTITIONED BY, CLUSTERED BY must come after the PARTITIONED BY clause",
      },
    ]);
    // Keywords inside literals and quoted identifiers are not clauses.
    const quoted = validateSql(
      `REPLACE INTO wiki OVERWRITE WHERE __time >= TIMESTAMP '2026-01-01' AND __time < TIMESTAMP '2026-01-02' SELECT __time, 'CLUSTERED BY x' AS "PARTITIONED BY" FROM src PARTITIONED BY DAY CLUSTERED BY page`,
    );
    expect(quoted.errors).toEqual([]);
  });

  it("with rules: 'druid', INSERT, OVERWRITE ALL and windows segops cannot read are Druid-valid", () => {
    expect(
      validateSql("INSERT INTO wiki SELECT * FROM src PARTITIONED BY DAY", { rules: "druid" }).errors,
    ).toEqual([]);
    expect(
      validateSql("REPLACE INTO wiki OVERWRITE ALL SELECT * FROM src PARTITIONED BY DAY", { rules: "druid" })
        .errors,
    ).toEqual([]);
    const between = validateSql(
      "REPLACE INTO wiki OVERWRITE WHERE __time BETWEEN TIMESTAMP '2026-01-01' AND TIMESTAMP '2026-01-02' SELECT TIMESTAMP '2026-01-01' AS __time PARTITIONED BY DAY",
      { rules: "druid" },
    );
    expect(between.errors).toEqual([]);
    expect(between.warnings.map((w) => w.path)).toEqual(["query.overwrite"]);
    // Druid's own rules still apply.
    expect(
      validateSql("INSERT INTO wiki SELECT * FROM src", { rules: "druid" }).errors.map((e) => e.path),
    ).toEqual(["query.partitionedBy"]);
    expect(
      validateSql("REPLACE INTO wiki SELECT * FROM src PARTITIONED BY DAY", { rules: "druid" }).errors.map(
        (e) => e.path,
      ),
    ).toEqual(["query.overwrite"]);
  });
});

describe("SQL statement shape (pinned to Druid's source: DruidSqlValidator, MSQTaskSqlEngine, EXTERN)", () => {
  const W = "OVERWRITE WHERE __time >= TIMESTAMP '2026-01-01' AND __time < TIMESTAMP '2026-01-02'";
  const EXT = `TABLE(EXTERN('{"type":"local","baseDir":"/d","filter":"*.json"}', '{"type":"json"}', '[{"name":"ts","type":"string"}]'))`;
  const druid = (q: string) => validateSql(q, { rules: "druid" });
  const only = (q: string) => druid(q).errors.map((e) => e.message);

  it("needs a __time column unless PARTITIONED BY ALL (MSQTaskSqlEngine.validateInsert)", () => {
    expect(only(`REPLACE INTO wiki ${W} SELECT page, added FROM src PARTITIONED BY DAY`)).toEqual([
      expect.stringMatching(
        /^The granularity specified in the PARTITIONED BY clause is different from ALL, so the query must specify a time column \(named __time\)/,
      ),
    ]);
    expect(
      only(`REPLACE INTO wiki ${W} SELECT TIME_PARSE(ts) AS "__time", page FROM src PARTITIONED BY DAY`),
    ).toEqual([]);
    expect(only("REPLACE INTO wiki OVERWRITE ALL SELECT page FROM src PARTITIONED BY ALL TIME")).toEqual([]);
    // SELECT * may carry __time: not judged.
    expect(only(`REPLACE INTO wiki ${W} SELECT * FROM src PARTITIONED BY DAY`)).toEqual([]);
    // A __time inside a subquery is not the outer list's.
    expect(
      only(`INSERT INTO wiki SELECT page FROM (SELECT __time, page FROM src) PARTITIONED BY DAY`),
    ).toHaveLength(1);
  });

  it("refuses an outer LIMIT unless PARTITIONED BY ALL, and any OFFSET (MSQTaskSqlEngine.validateLimitAndOffset)", () => {
    expect(only(`INSERT INTO wiki SELECT __time, page FROM src LIMIT 10 PARTITIONED BY DAY`)).toEqual([
      expect.stringMatching(/^INSERT and REPLACE queries cannot have a LIMIT unless PARTITIONED BY is "ALL"/),
    ]);
    expect(only(`INSERT INTO wiki SELECT __time, page FROM src LIMIT 10 PARTITIONED BY ALL`)).toEqual([]);
    expect(
      only(`INSERT INTO wiki SELECT __time, page FROM src LIMIT 10 OFFSET 5 PARTITIONED BY ALL`),
    ).toEqual([expect.stringMatching(/^INSERT and REPLACE queries cannot have an OFFSET/)]);
    // A LIMIT inside a subquery is the subquery's.
    expect(
      only(`INSERT INTO wiki SELECT __time, page FROM (SELECT * FROM src LIMIT 5) PARTITIONED BY DAY`),
    ).toEqual([]);
    // A LIMIT in a literal or quoted identifier is text.
    expect(only(`INSERT INTO wiki SELECT __time, 'LIMIT 1' AS "OFFSET" FROM src PARTITIONED BY DAY`)).toEqual(
      [],
    );
  });

  it("refuses a target column list and a table outside the druid schema (DruidSqlValidator)", () => {
    expect(
      druid(`INSERT INTO dst (foo, bar) SELECT __time, page FROM src PARTITIONED BY DAY`).errors,
    ).toEqual([
      {
        path: "query.table",
        message: expect.stringMatching(
          /^Operation \[INSERT\] cannot be run with a target column list, given \[dst \(foo, bar\)\]/,
        ),
      },
    ]);
    expect(
      druid(`INSERT INTO a.b.c SELECT __time FROM src PARTITIONED BY DAY`).errors.map((e) => e.message),
    ).toEqual([expect.stringMatching(/^Table \[a\.b\.c\] has 3 name parts/)]);
    expect(only(`INSERT INTO sys.segments SELECT __time FROM src PARTITIONED BY DAY`)).toEqual([
      expect.stringMatching(/^Cannot INSERT into \[sys\.segments\] because it is not a Druid datasource/),
    ]);
    expect(only(`INSERT INTO druid.wiki SELECT __time FROM src PARTITIONED BY DAY`)).toEqual([]);
    expect(only(`INSERT INTO "druid"."wiki" SELECT __time FROM src PARTITIONED BY DAY`)).toEqual([]);
    expect(only(`INSERT INTO wiki(SELECT __time FROM src) PARTITIONED BY DAY`)).toEqual([]);
  });

  it("reads EXTERN's arguments as Druid does: JSON objects, a JSON array signature, 2 or 3 of them", () => {
    expect(only(`INSERT INTO wiki SELECT TIME_PARSE(ts) AS __time FROM ${EXT} PARTITIONED BY DAY`)).toEqual(
      [],
    );
    const bad = EXT.replace(`'{"type":"json"}'`, `'{type:json}'`);
    expect(only(`INSERT INTO wiki SELECT TIME_PARSE(ts) AS __time FROM ${bad} PARTITIONED BY DAY`)).toEqual([
      expect.stringMatching(/^EXTERN #1: the inputFormat argument is not JSON/),
    ]);
    const four = `TABLE(EXTERN('{"type":"inline","data":"a"}', '{"type":"json"}', '[]', '[]'))`;
    expect(only(`INSERT INTO wiki SELECT TIME_PARSE(ts) AS __time FROM ${four} PARTITIONED BY DAY`)).toEqual([
      expect.stringMatching(
        /^EXTERN #1 takes 2 or 3 arguments \(inputSource, inputFormat\[, signature\]\), found 4/,
      ),
    ]);
    const signature = EXT.replace(`'[{"name":"ts","type":"string"}]'`, `'{"name":"ts"}'`);
    expect(
      only(`INSERT INTO wiki SELECT TIME_PARSE(ts) AS __time FROM ${signature} PARTITIONED BY DAY`),
    ).toEqual([expect.stringMatching(/^EXTERN #1: the signature argument must be a JSON array/)]);
    // Query parameters are not literals: nothing to read.
    expect(
      only(`INSERT INTO wiki SELECT TIME_PARSE(ts) AS __time FROM TABLE(EXTERN(?, ?, ?)) PARTITIONED BY DAY`),
    ).toEqual([]);
  });
});
