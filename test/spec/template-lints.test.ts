import { describe, expect, it } from "vitest";
import { flagsFor } from "../../src/druid/capabilities.js";
import { leadingSetStatements, setStatementsToContext } from "../../src/spec/sql-set.js";
import { parseTemplateText } from "../../src/spec/template.js";
import { templateLints } from "../../src/spec/template-lints.js";
import { validateTemplate } from "../../src/spec/validate-template.js";

const REPLACE =
  "REPLACE INTO wiki OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}'\nSELECT TIME_PARSE(ts) AS __time, page FROM src\nPARTITIONED BY DAY";
const sql = (text: string) => parseTemplateText(text, "t.sql");

describe("SET statements in SQL templates (apache/druid #17894: they take precedence over the request context)", () => {
  it("reads leading SETs with their line, column and Druid's value types", () => {
    const sets = leadingSetStatements(
      `-- header\nSET maxNumTasks = 3;\n  SET "arrayIngestMode" = 'array';\nSET finalizeAggregations = FALSE;\n${REPLACE}`,
    );
    expect(sets.map((s) => [s.key, s.value, s.line, s.column])).toEqual([
      ["maxNumTasks", 3, 2, 1],
      ["arrayIngestMode", "array", 3, 3],
      ["finalizeAggregations", false, 4, 1],
    ]);
    // A SET inside a comment or after the statement is not one.
    expect(leadingSetStatements(`/* SET sqlQueryId = 'x'; */\n${REPLACE}`)).toEqual([]);
  });

  it.each([
    ["sqlQueryId", "'mine'", "controller task query-<sqlQueryId>"],
    ["taskLockType", "'APPEND'", "exclusive time-chunk lock"],
    ["useConcurrentLocks", "TRUE", "exclusive time-chunk lock"],
  ])("refuses SET %s (segops pins it), naming the statement's position and what to do", (key, value, why) => {
    const lints = templateLints(sql(`SET maxNumTasks = 2;\nSET ${key} = ${value};\n${REPLACE}`));
    expect(lints.errors).toHaveLength(1);
    expect(lints.errors[0]?.path).toBe(`query.set.${key}`);
    expect(lints.errors[0]?.message).toContain(`line 2, column 1: SET ${key} = ${value};`);
    expect(lints.errors[0]?.message).toContain(why);
    expect(lints.errors[0]?.message).toMatch(/remove the statement$/);
  });

  it("warns about SET waitUntilSegmentsLoad (harmless to segops, costly in slots) and lets other keys be", () => {
    const lints = templateLints(sql(`SET waitUntilSegmentsLoad = TRUE;\nSET maxNumTasks = 4;\n${REPLACE}`));
    expect(lints.errors).toEqual([]);
    expect(lints.warnings).toHaveLength(1);
    expect(lints.warnings[0]?.message).toContain("holds its task slots");
  });

  it("on a Druid before 34 says the SETs go in the request context, and moves them there", () => {
    const text = `SET maxNumTasks = 3;\nSET sqlTimeZone = 'UTC';\n${REPLACE}`;
    const lints = templateLints(sql(text), flagsFor(33));
    expect(lints.errors).toEqual([]);
    expect(lints.warnings[0]?.message).toContain("maxNumTasks, sqlTimeZone in the request context");
    expect(templateLints(sql(text), flagsFor(34)).warnings).toEqual([]);
    const moved = setStatementsToContext(text, { sqlQueryId: "abc" });
    expect(moved.query).toBe(REPLACE);
    expect(moved.context).toEqual({ sqlQueryId: "abc", maxNumTasks: 3, sqlTimeZone: "UTC" });
  });

  it("is part of segops validate (segops' rules only)", () => {
    const t = sql(`SET sqlQueryId = 'x';\n${REPLACE}`);
    const interval = { start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 2) };
    expect(validateTemplate(t, { interval }).errors.map((e) => e.path)).toContain("query.set.sqlQueryId");
    expect(validateTemplate(t, { interval, rules: "druid" }).valid).toBe(true);
  });
});

describe("the clock in ingestion templates (apache/druid #19386 adds now() to native expressions)", () => {
  it("refuses CURRENT_TIMESTAMP in SQL with its position and what to use, unless marked volatile", () => {
    const text = REPLACE.replace("page FROM", "page, CURRENT_TIMESTAMP AS loaded_at FROM");
    const lints = templateLints(sql(text));
    expect(lints.errors).toHaveLength(1);
    expect(lints.errors[0]?.message).toMatch(/^line 2, column 40: CURRENT_TIMESTAMP reads the clock/);
    expect(lints.errors[0]?.message).toContain("TIMESTAMP '{{start}}'");
    expect(templateLints(sql(`-- segops:volatile (load time on purpose)\n${text}`)).errors).toEqual([]);
    // Inside a literal or a comment it is text, not a call.
    expect(templateLints(sql(`${REPLACE}\n-- CURRENT_TIMESTAMP`)).errors).toEqual([]);
    expect(templateLints(sql(REPLACE.replace("page FROM", "'now()' AS x FROM"))).errors).toEqual([]);
  });

  it("refuses now() in a native transform expression with its path, unless context.segopsVolatile", () => {
    const spec = {
      type: "index_parallel",
      spec: {
        dataSchema: {
          transformSpec: { transforms: [{ type: "expression", name: "lag", expression: "now() - __time" }] },
        },
      },
    };
    const lints = templateLints({ kind: "task", value: spec });
    expect(lints.errors.map((e) => e.path)).toEqual([
      "spec.dataSchema.transformSpec.transforms[0].expression",
    ]);
    expect(lints.errors[0]?.message).toContain("apache/druid #19386");
    expect(lints.errors[0]?.message).toContain("context.segopsVolatile: true");
    expect(
      templateLints({ kind: "task", value: { ...spec, context: { segopsVolatile: true } } }).errors,
    ).toEqual([]);
    // A name that merely contains "now" is no call.
    const named = { spec: { dataSchema: { transformSpec: { transforms: [{ expression: "known(x)" }] } } } };
    expect(templateLints({ kind: "task", value: named }).errors).toEqual([]);
  });
});
