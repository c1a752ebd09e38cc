import { describe, expect, it } from "vitest";
import { lintTemplate, sqlSets, templateDataSource } from "../../src/doctor/lints.js";
import { verdictOf } from "../../src/doctor/permissions.js";
import { routerVerdict } from "../../src/doctor/router.js";

const sql = (text: string) => ({ kind: "sql" as const, text });
const codes = (f: ReturnType<typeof lintTemplate>) => f.map((x) => `${x.severity}:${x.code}`);

describe("doctor lints (pure)", () => {
  it("reads leading SET statements past comments, quoted names and values", () => {
    expect(
      sqlSets(
        `-- daily\nSET maxNumTasks = 3;\nSET "sqlQueryId" = 'x;y';\nREPLACE INTO t OVERWRITE ALL SELECT 1`,
      ),
    ).toEqual([
      { name: "maxNumTasks", value: "3" },
      { name: "sqlQueryId", value: "x;y" },
    ]);
    expect(sqlSets("REPLACE INTO t OVERWRITE ALL SELECT 'SET a = 1;'")).toEqual([]);
  });

  it("SET: a blocker on Druid 33 only; overriding segops' own context keys is a warning on any release", () => {
    const t = sql("SET maxParseExceptions = 10;\nREPLACE INTO t OVERWRITE ALL SELECT 1 PARTITIONED BY DAY");
    expect(codes(lintTemplate("q.sql", t, 33))).toEqual([
      "blocker:lint-sql-set",
      "warning:lint-sql-set-override",
    ]);
    expect(codes(lintTemplate("q.sql", t, 34))).toEqual(["warning:lint-sql-set-override"]);
    expect(codes(lintTemplate("q.sql", t, null))).toEqual(["warning:lint-sql-set-override"]);
  });

  it("the clock: now() outside literals and CURRENT_TIMESTAMP are flagged, a word ending in now is not", () => {
    const base = "REPLACE INTO t OVERWRITE ALL SELECT";
    expect(codes(lintTemplate("q.sql", sql(`${base} NOW() AS x FROM y`), 35))).toEqual(["warning:lint-now"]);
    expect(codes(lintTemplate("q.sql", sql(`${base} CURRENT_TIMESTAMP FROM y`), 35))).toEqual([
      "warning:lint-now",
    ]);
    // Inside a literal it is an expression Druid evaluates (EXTERN's JSON); a word ending in "now" is not it.
    const inLiteral = sql(`${base} '{"expression":"now()"}' FROM y`);
    expect(codes(lintTemplate("q.sql", inLiteral, 35))).toEqual(["warning:lint-now"]);
    expect(codes(lintTemplate("q.sql", sql(`${base} 'snow()fall', known FROM y`), 35))).toEqual([]);
  });

  it("an append of a fingerprinted input is a note; parser is a blocker from Druid 37 on", () => {
    const task = (io: object, schema: object = {}) => ({
      kind: "task" as const,
      value: { type: "index_parallel", spec: { dataSchema: { dataSource: "d", ...schema }, ioConfig: io } },
    });
    const local = task({
      appendToExisting: true,
      inputSource: { type: "local", baseDir: "/d", filter: "*" },
    });
    expect(codes(lintTemplate("t.json", local, 35))).toEqual(["note:lint-append"]);
    const parser = task({}, { parser: { type: "string", parseSpec: { format: "json" } } });
    expect(codes(lintTemplate("t.json", parser, 36))).toEqual(["warning:lint-parser"]);
    expect(codes(lintTemplate("t.json", parser, 37))).toEqual(["blocker:lint-parser"]);
  });

  it("names the datasource only when it has no placeholder", () => {
    expect(templateDataSource(sql('REPLACE INTO "wiki" OVERWRITE ALL SELECT 1'))).toBe("wiki");
    const v = (ds: string) => ({
      kind: "task" as const,
      value: { type: "index_parallel", spec: { dataSchema: { dataSource: ds } } },
    });
    expect(templateDataSource(v("events"))).toBe("events");
    expect(templateDataSource(v("events_{{var.env}}"))).toBeNull();
    expect(templateDataSource({ kind: "task", value: { type: "compact", dataSource: "c" } })).toBe("c");
  });
});

describe("doctor verdicts (pure)", () => {
  it("reads an answer as a permission", () => {
    expect([200, 204, 400, 401, 403, 404, 405, 500, null].map((s) => verdictOf(s))).toEqual([
      "can",
      "can",
      "can",
      "cannot",
      "cannot",
      "absent",
      "absent",
      "unknown",
      "unknown",
    ]);
    expect(verdictOf(404, true)).toBe("can");
  });

  it("tells the Router's answers apart", () => {
    const one = { throughOneUrl: true };
    expect(routerVerdict({ ...one, status: 200, coordinatorLeader: 200, overlordLeader: 200 }).verdict).toBe(
      "management-proxy",
    );
    expect(routerVerdict({ ...one, status: 200, coordinatorLeader: 405, overlordLeader: 200 }).verdict).toBe(
      "no-management-proxy",
    );
    expect(routerVerdict({ ...one, status: 404, coordinatorLeader: 404, overlordLeader: 404 }).verdict).toBe(
      "not-druid",
    );
    // A refused leader path says nothing about the proxy.
    expect(routerVerdict({ ...one, status: 200, coordinatorLeader: 403, overlordLeader: 403 }).verdict).toBe(
      "unknown",
    );
    expect(
      routerVerdict({ throughOneUrl: false, status: null, coordinatorLeader: null, overlordLeader: null })
        .verdict,
    ).toBe("direct");
  });
});
