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

  it("checks the datasource name and warns on a PARTITIONED BY it cannot read", () => {
    const bad = validateSql(rendered().replace('"wiki"', '".wiki"'));
    expect(bad.errors.map((e) => e.path)).toEqual(["query.table"]);
    const unread = validateSql(rendered().replace("PARTITIONED BY DAY", "PARTITIONED BY something(odd)"));
    expect(unread.valid).toBe(true);
    expect(unread.warnings.map((w) => w.path)).toEqual(["query.partitionedBy"]);
  });

  it("ignores comments, including a commented-out OVERWRITE ALL", () => {
    const q = rendered().replace(
      "-- nightly wiki load",
      "-- OVERWRITE ALL was here\n/* INSERT INTO other */",
    );
    expect(validateSql(q, { partition: day }).errors).toEqual([]);
  });
});
