import { describe, expect, it } from "vitest";
import type { JsonValue } from "../../src/core/canonical-json.js";
import { lintTemplate, templateDataSource } from "../../src/doctor/lints.js";
import { verdictOf } from "../../src/doctor/permissions.js";
import { routerVerdict } from "../../src/doctor/router.js";
import type { LoadedTemplate } from "../../src/spec/template.js";

type JsonObject = { [key: string]: JsonValue };

const sql = (text: string) => ({ kind: "sql" as const, text });
const codes = (f: ReturnType<typeof lintTemplate>) => f.map((x) => `${x.severity}:${x.code}`);

describe("doctor lints (pure)", () => {
  it("SET statements, by the shared rules for this release: moved into the context before 34, a pinned key refused", () => {
    const t = sql("SET maxNumTasks = 3;\nREPLACE INTO t OVERWRITE ALL SELECT 1 PARTITIONED BY DAY");
    expect(codes(lintTemplate("q.sql", t, 33))).toEqual(["warning:lint-sql-set"]);
    expect(codes(lintTemplate("q.sql", t, 34))).toEqual([]);
    const pinned = sql("SET sqlQueryId = 'x';\nREPLACE INTO t OVERWRITE ALL SELECT 1 PARTITIONED BY DAY");
    expect(codes(lintTemplate("q.sql", pinned, 35))).toEqual(["blocker:lint-sql-set"]);
    const unbounded = sql("-- daily\nSET maxParseExceptions = -1;\nREPLACE INTO t OVERWRITE ALL SELECT 1");
    expect(codes(lintTemplate("q.sql", unbounded, 35))).toEqual(["warning:lint-unlimited-parse-exceptions"]);
  });

  it("the clock is refused unless the template is marked volatile; an INSERT is an append", () => {
    const base = "REPLACE INTO t OVERWRITE ALL SELECT";
    expect(codes(lintTemplate("q.sql", sql(`${base} CURRENT_TIMESTAMP FROM y`), 35))).toEqual([
      "blocker:lint-now",
    ]);
    expect(codes(lintTemplate("q.sql", sql(`-- segops:volatile\n${base} NOW() FROM y`), 35))).toEqual([]);
    expect(codes(lintTemplate("q.sql", sql(`${base} 'snow()fall', known FROM y`), 35))).toEqual([]);
    expect(
      codes(lintTemplate("q.sql", sql("SET a = 1;\nINSERT INTO t SELECT 1 PARTITIONED BY DAY"), 35)),
    ).toEqual(["warning:lint-append-without-source-version"]);
  });

  it("an append of a fingerprinted input is a note; parser is a blocker from Druid 37 on", () => {
    const task = (io: JsonObject, schema: JsonObject = {}): LoadedTemplate => ({
      kind: "task",
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
