// Broker SQL beyond datasource counts (src/sim/routes/broker.ts, sql.ts, sql-catalog.ts, sql-time.ts): queries
// without FROM, INFORMATION_SCHEMA and the sys tables, the requests Airflow (pydruid DB-API) and SQLAlchemy send,
// query ids, sqlTimeZone, typesHeader/sqlTypesHeader and the errors for what the emulator does not run. Bodies
// are as a real Druid 33 answered them (docs/real-druid.md, "Broker SQL").
import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";
const DATA = [
  '{"time":"2026-01-01T01:00:00Z","page":"a","added":5}',
  '{"time":"2026-01-01T02:00:00Z","page":"b","added":7}',
  '{"time":"2026-01-02T03:00:00Z","page":"c","added":2}',
].join("\n");

async function withData(options: Parameters<typeof startTestSim>[0] = {}): Promise<TestSim> {
  const s = await startTestSim({ handoffDelayMs: 0, ...options });
  const task = parallelTask({
    id: "load",
    intervals: ["2026-01-01/2026-01-03"],
    inputSource: { type: "inline", data: DATA },
    dataSchema: {
      dimensionsSpec: { dimensions: ["page", { type: "long", name: "added" }] },
      metricsSpec: [],
    },
    context: { simDurationMs: 1000 },
  });
  expect((await s.post(`${V1}/task`, task)).status).toBe(200);
  await s.advance(1000);
  return s;
}

/** POST /druid/v2/sql with a raw body string, as an HTTP client library would send it. */
async function raw(s: TestSim, body: string, path = "/druid/v2/sql") {
  const res = await fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body,
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const sql = (s: TestSim, query: string, extra: Record<string, unknown> = {}) =>
  s.post("/druid/v2/sql", { query, ...extra });

/** What pydruid's DB-API cursor sends for every `execute` (pydruid/db/api.py `_stream_query`). */
const pydruid = (query: string) =>
  JSON.stringify({ query, context: {}, header: true, resultFormat: "arrayLines" });

describe("queries without a table", () => {
  it("answers SELECT 1 with Calcite's EXPR$n names, literals typed, booleans as true/false", async () => {
    const s = await startTestSim();
    expect((await sql(s, "SELECT 1")).json).toEqual([{ EXPR$0: 1 }]);
    expect((await sql(s, 'select 1 as "one"')).json).toEqual([{ one: 1 }]);
    expect(
      (await sql(s, "SELECT 1, 2 AS two, 'a', NULL, TRUE, 1.5, 'x' || 'y', 7 / 2, 7.0 / 2")).json,
    ).toEqual([
      {
        EXPR$0: 1,
        two: 2,
        EXPR$2: "a",
        EXPR$3: null,
        EXPR$4: true,
        EXPR$5: 1.5,
        EXPR$6: "xy",
        EXPR$7: 3,
        EXPR$8: 3.5,
      },
    ]);
    expect((await sql(s, "SELECT COUNT(*), 1 > 0 AS b")).json).toEqual([{ EXPR$0: 1, b: true }]);
    expect((await sql(s, "SELECT CURRENT_TIMESTAMP")).json).toEqual([
      { CURRENT_TIMESTAMP: "2026-03-01T00:00:00.000Z" },
    ]);
  });

  it("refuses WHERE without FROM, a trailing semicolon and division by zero as Druid does", async () => {
    const s = await startTestSim();
    const where = await sql(s, "SELECT 1 WHERE 1 = 0");
    expect([where.status, where.json.errorMessage]).toEqual([
      400,
      "Incorrect syntax near the keyword 'WHERE' at line 1, column 10.",
    ]);
    const semi = await sql(s, "SELECT 1;");
    expect([semi.status, semi.json.errorMessage]).toEqual([
      400,
      "Received an unexpected token [;] (line [1], column [9])",
    ]);
    const zero = await sql(s, "SELECT 1/0");
    expect([zero.status, zero.json]).toEqual([
      500,
      {
        error: "druidException",
        errorCode: "general",
        persona: "ADMIN",
        category: "UNCATEGORIZED",
        errorMessage: "/ by zero",
        context: {},
      },
    ]);
  });
});

describe("Airflow and SQLAlchemy over pydruid (plain HTTP, their exact requests)", () => {
  it("passes DruidDbApiHook.test_connection: `select 1` through pydruid's DB-API cursor", async () => {
    const s = await startTestSim();
    // pydruid's default path has a trailing slash.
    const res = await raw(s, pydruid("select 1"), "/druid/v2/sql/");
    expect(res.status).toBe(200);
    // Header line, rows, then the blank trailer line pydruid requires ("Truncated response" otherwise).
    expect(res.text).toBe('["EXPR$0"]\n[1]\n\n');
    expect(res.headers.get("x-druid-sql-header-included")).toBe("yes");
  });

  it("answers the SQLAlchemy dialect's schema, table, existence and column queries", async () => {
    const s = await withData();
    const lines = async (query: string) => {
      const res = await raw(s, pydruid(query));
      expect(res.status).toBe(200);
      return res.text
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as unknown[]);
    };
    // pydruid/db/sqlalchemy.py: get_schema_names, get_table_names, has_table, get_columns.
    expect(await lines("SELECT SCHEMA_NAME FROM INFORMATION_SCHEMA.SCHEMATA")).toEqual([
      ["SCHEMA_NAME"],
      ["druid"],
      ["INFORMATION_SCHEMA"],
      ["lookup"],
      ["sys"],
      ["view"],
    ]);
    expect(
      await lines("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'druid'"),
    ).toEqual([["TABLE_NAME"], ["wiki"]]);
    const all = await lines("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES");
    expect(all.map((r) => r[0])).toEqual([
      "TABLE_NAME",
      "wiki",
      "COLUMNS",
      "ROUTINES",
      "SCHEMATA",
      "TABLES",
      "segments",
      "server_segments",
      "servers",
      "supervisors",
      "tasks",
    ]);
    const has = (t: string) => `
            SELECT COUNT(*) > 0 AS exists_
              FROM INFORMATION_SCHEMA.TABLES
             WHERE TABLE_NAME = '${t}'
        `;
    expect(await lines(has("wiki"))).toEqual([["exists_"], [true]]);
    // A real Druid 33 answers no row at all here (an aggregate over an empty system table).
    expect(await lines(has("nope"))).toEqual([["exists_"]]);
    const columns = `
            SELECT COLUMN_NAME,
                   DATA_TYPE,
                   IS_NULLABLE,
                   COLUMN_DEFAULT
              FROM INFORMATION_SCHEMA.COLUMNS
             WHERE TABLE_NAME = 'wiki'
         AND TABLE_SCHEMA = 'druid'`;
    expect(await lines(columns)).toEqual([
      ["COLUMN_NAME", "DATA_TYPE", "IS_NULLABLE", "COLUMN_DEFAULT"],
      ["__time", "TIMESTAMP", "NO", ""],
      ["page", "VARCHAR", "YES", ""],
      ["added", "BIGINT", "YES", ""],
    ]);
  });
});

describe("INFORMATION_SCHEMA and sys tables", () => {
  it("lists tables and columns with Druid's columns", async () => {
    const s = await withData();
    const tables = (
      await sql(s, "SELECT * FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME IN ('wiki', 'segments')")
    ).json;
    expect(tables).toEqual([
      {
        TABLE_CATALOG: "druid",
        TABLE_SCHEMA: "druid",
        TABLE_NAME: "wiki",
        TABLE_TYPE: "TABLE",
        IS_JOINABLE: "NO",
        IS_BROADCAST: "NO",
      },
      {
        TABLE_CATALOG: "druid",
        TABLE_SCHEMA: "sys",
        TABLE_NAME: "segments",
        TABLE_TYPE: "SYSTEM_TABLE",
        IS_JOINABLE: "NO",
        IS_BROADCAST: "NO",
      },
    ]);
    const [time, page, added] = (
      await sql(s, "SELECT * FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'wiki'")
    ).json;
    expect(time).toEqual({
      TABLE_CATALOG: "druid",
      TABLE_SCHEMA: "druid",
      TABLE_NAME: "wiki",
      COLUMN_NAME: "__time",
      ORDINAL_POSITION: 1,
      COLUMN_DEFAULT: "",
      IS_NULLABLE: "NO",
      DATA_TYPE: "TIMESTAMP",
      CHARACTER_MAXIMUM_LENGTH: null,
      CHARACTER_OCTET_LENGTH: null,
      NUMERIC_PRECISION: null,
      NUMERIC_PRECISION_RADIX: null,
      NUMERIC_SCALE: null,
      DATETIME_PRECISION: 3,
      CHARACTER_SET_NAME: null,
      COLLATION_NAME: null,
      JDBC_TYPE: 93,
    });
    expect(page).toMatchObject({
      DATA_TYPE: "VARCHAR",
      CHARACTER_SET_NAME: "UTF-16LE",
      COLLATION_NAME: "UTF-16LE$en_US$primary",
      JDBC_TYPE: 12,
    });
    expect(added).toMatchObject({
      DATA_TYPE: "BIGINT",
      NUMERIC_PRECISION: 19,
      NUMERIC_PRECISION_RADIX: 10,
      NUMERIC_SCALE: 0,
      JDBC_TYPE: -5,
    });
    const sysCols = (
      await sql(
        s,
        "SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'sys' AND TABLE_NAME = 'servers'",
      )
    ).json;
    expect(sysCols.map((c: { COLUMN_NAME: string }) => c.COLUMN_NAME)).toEqual([
      "server",
      "host",
      "plaintext_port",
      "tls_port",
      "server_type",
      "tier",
      "curr_size",
      "max_size",
      "is_leader",
      "start_time",
    ]);
    expect(sysCols[0]).toEqual({ COLUMN_NAME: "server", DATA_TYPE: "VARCHAR", IS_NULLABLE: "YES" });
  });

  it("shows tasks and servers in sys.tasks and sys.servers", async () => {
    const s = await withData();
    const [task] = (await sql(s, "SELECT * FROM sys.tasks")).json;
    expect(task).toEqual({
      task_id: "load",
      group_id: "load",
      type: "index_parallel",
      datasource: "wiki",
      created_time: "2026-03-01T00:00:00.000Z",
      queue_insertion_time: "1970-01-01T00:00:00.000Z",
      status: "SUCCESS",
      runner_status: "NONE",
      duration: 1000,
      location: "localhost:8100",
      host: "localhost",
      plaintext_port: 8100,
      tls_port: -1,
      error_msg: null,
    });
    const servers = (
      await sql(s, "SELECT server_type, tier, is_leader, curr_size > 0 AS holds FROM sys.servers")
    ).json;
    expect(servers).toEqual([
      { server_type: "coordinator", tier: null, is_leader: 1, holds: false },
      { server_type: "historical", tier: "_default_tier", is_leader: null, holds: true },
      { server_type: "broker", tier: null, is_leader: null, holds: false },
      { server_type: "overlord", tier: null, is_leader: 1, holds: false },
      { server_type: "router", tier: null, is_leader: null, holds: false },
      { server_type: "middle_manager", tier: null, is_leader: null, holds: false },
    ]);
    expect(
      (await sql(s, "SELECT COUNT(*) AS n FROM sys.server_segments WHERE server = 'localhost:8083'")).json,
    ).toEqual([{ n: 2 }]);
    expect((await sql(s, "SELECT * FROM sys.supervisors")).json).toEqual([]);
  });

  it("answers an aggregate over no system-table rows with no row, over no datasource rows with one", async () => {
    const s = await withData();
    expect((await sql(s, "SELECT COUNT(*) AS c FROM sys.segments WHERE datasource = 'zzz'")).json).toEqual(
      [],
    );
    expect((await sql(s, "SELECT COUNT(*) AS c, SUM(added) AS a FROM wiki WHERE page = 'zzz'")).json).toEqual(
      [{ c: 0, a: null }],
    );
  });

  it("resolves names case-sensitively with Druid's did-you-mean errors", async () => {
    const s = await withData();
    const cases: Array<[string, string, string, string]> = [
      [
        "SELECT COUNT(*) FROM sys.SEGMENTS",
        "Object 'SEGMENTS' not found within 'sys'; did you mean 'segments'?",
        "22",
        "33",
      ],
      ["SELECT COUNT(*) FROM SYS.segments", "Object 'SYS' not found; did you mean 'sys'?", "22", "33"],
      [
        "SELECT COUNT(*) FROM Wiki",
        "Object 'Wiki' not found within 'druid'; did you mean 'wiki'?",
        "22",
        "25",
      ],
      [
        "SELECT * FROM information_schema.tables",
        "Object 'information_schema' not found; did you mean 'INFORMATION_SCHEMA'?",
        "15",
        "39",
      ],
      ["SELECT * FROM lookup.nope", "Object 'nope' not found within 'lookup'", "15", "25"],
    ];
    for (const [query, message, column, endColumn] of cases) {
      const res = await sql(s, query);
      expect(res.status).toBe(400);
      expect(res.json.errorMessage).toBe(`${message} (line [1], column [${column}])`);
      expect(res.json.context).toEqual({ sourceType: "sql", line: "1", column, endLine: "1", endColumn });
    }
  });

  it("says what the emulator does not run, never 'not found' for what Druid has", async () => {
    const s = await withData();
    for (const [query, message] of [
      [
        "SELECT * FROM INFORMATION_SCHEMA.ROUTINES",
        "Querying INFORMATION_SCHEMA.ROUTINES is not supported by the emulator",
      ],
      ["SELECT page FROM wiki w NATURAL JOIN wiki v", "NATURAL JOIN is not supported by the emulator"],
      ["SELECT page FROM wiki UNION ALL SELECT page FROM wiki", "UNION is not supported by the emulator"],
      ["SELECT COUNT(*) OVER () FROM wiki", "window functions is not supported by the emulator"],
      ["SELECT * FROM wiki WHERE EXISTS (SELECT page FROM wiki)", "EXISTS is not supported by the emulator"],
      [
        "SELECT APPROX_QUANTILE_DS(added, 0.5) FROM wiki",
        "The function APPROX_QUANTILE_DS is not supported by the emulator",
      ],
    ] as const) {
      // Druid reads all of these; the emulator does not run them: 501, never passed off as Druid's refusal.
      const res = await sql(s, query);
      expect(res.status).toBe(501);
      expect(res.json).toMatchObject({
        error: "druidException",
        errorCode: "general",
        category: "UNSUPPORTED",
        errorMessage: message,
      });
    }
  });
});

describe("query ids, time zones and type headers (SqlResource, SqlQuery)", () => {
  it("echoes the context's sqlQueryId in X-Druid-SQL-Query-Id and X-Druid-Query-Id, errors included", async () => {
    const s = await startTestSim();
    const named = await sql(s, "SELECT 1", { context: { sqlQueryId: "my-query-1" } });
    expect(named.headers.get("x-druid-sql-query-id")).toBe("my-query-1");
    expect(named.headers.get("x-druid-query-id")).toBe("my-query-1");
    expect(named.headers.get("x-druid-response-context")).toBe("{}");
    const failed = await sql(s, "SELECT x FROM nope", { context: { sqlQueryId: "err-q-1" } });
    expect([failed.status, failed.headers.get("x-druid-sql-query-id")]).toEqual([400, "err-q-1"]);
    const generated = (await sql(s, "SELECT 1")).headers.get("x-druid-sql-query-id");
    expect(generated).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it("honours sqlTimeZone for TIMESTAMP literals, rendering, TIME_FLOOR, TIME_FORMAT and time filters", async () => {
    const s = await withData();
    const q = {
      context: { sqlTimeZone: "America/Los_Angeles" },
    };
    expect(
      (
        await sql(
          s,
          "SELECT TIMESTAMP '2026-03-01 00:00:00' AS t, TIME_FORMAT(TIMESTAMP '2026-03-01 00:00:00') AS f, TIME_FLOOR(TIMESTAMP '2026-03-01 05:00:00', 'P1D') AS d",
          q,
        )
      ).json,
    ).toEqual([
      {
        t: "2026-03-01T00:00:00.000-08:00",
        f: "2026-03-01T00:00:00.000-08:00",
        d: "2026-03-01T00:00:00.000-08:00",
      },
    ]);
    // Jan 1 01:00 and 02:00 UTC are Dec 31 in Los Angeles; Jan 2 03:00 UTC is Jan 1 there.
    const days = await sql(
      s,
      "SELECT TIME_FLOOR(__time, 'P1D') AS d, COUNT(*) AS c FROM wiki GROUP BY 1 ORDER BY 1",
      q,
    );
    expect(days.json).toEqual([
      { d: "2025-12-31T00:00:00.000-08:00", c: 2 },
      { d: "2026-01-01T00:00:00.000-08:00", c: 1 },
    ]);
    const local = await sql(
      s,
      "SELECT COUNT(*) AS c, TIME_FORMAT(MIN(__time), 'yyyy-MM-dd HH:mm') AS f FROM wiki WHERE __time >= TIMESTAMP '2026-01-01 00:00:00' AND __time < TIMESTAMP '2026-01-02 00:00:00'",
      q,
    );
    expect(local.json).toEqual([{ c: 1, f: "2026-01-01 19:00" }]);
    const offset = await sql(s, "SELECT TIMESTAMP '2026-03-01 00:00:00' AS t", {
      context: { sqlTimeZone: "+05:30" },
    });
    expect(offset.json).toEqual([{ t: "2026-03-01T00:00:00.000+05:30" }]);
    // An unknown zone id is UTC, as on a real Druid 33.
    const bogus = await sql(s, "SELECT TIME_FORMAT(TIMESTAMP '2026-03-01 00:00:00') AS f", {
      context: { sqlTimeZone: "Nowhere/Bogus" },
    });
    expect(bogus.json).toEqual([{ f: "2026-03-01T00:00:00.000+00:00" }]);
    const csv = await sql(s, "SELECT MIN(__time) AS t FROM wiki", { resultFormat: "csv", ...q });
    expect(csv.text).toBe("2025-12-31T17:00:00.000-08:00\n\n");
  });

  it("adds typesHeader and sqlTypesHeader rows in every format, and refuses them without header", async () => {
    const s = await withData();
    const q = "SELECT COUNT(*) AS c, MIN(__time) AS t, 'x' AS s, AVG(added) AS a FROM wiki";
    const all = { header: true, typesHeader: true, sqlTypesHeader: true };
    expect((await sql(s, q, { resultFormat: "array", ...all })).json).toEqual([
      ["c", "t", "s", "a"],
      ["LONG", "LONG", "STRING", "DOUBLE"],
      ["BIGINT", "TIMESTAMP", "CHAR", "DOUBLE"],
      [3, "2026-01-01T01:00:00.000Z", "x", 14 / 3],
    ]);
    expect(
      (await sql(s, "SELECT 1", { resultFormat: "object", header: true, typesHeader: true })).json,
    ).toEqual([{ EXPR$0: { type: "LONG" } }, { EXPR$0: 1 }]);
    expect(
      (await sql(s, "SELECT 1", { resultFormat: "object", header: true, sqlTypesHeader: true })).json,
    ).toEqual([{ EXPR$0: { sqlType: "INTEGER" } }, { EXPR$0: 1 }]);
    expect((await sql(s, "SELECT 1", { resultFormat: "object", header: true })).json).toEqual([
      { EXPR$0: null },
      { EXPR$0: 1 },
    ]);
    expect((await sql(s, "SELECT 1 AS a, 2 AS b", { resultFormat: "csv", ...all })).text).toBe(
      "a,b\nLONG,LONG\nINTEGER,INTEGER\n1,2\n\n",
    );
    expect((await sql(s, "SELECT 1", { resultFormat: "objectLines", ...all })).text).toBe(
      '{"EXPR$0":{"type":"LONG","sqlType":"INTEGER"}}\n{"EXPR$0":1}\n\n',
    );
    const body = '{"query":"SELECT 1","resultFormat":"object","header":false,"typesHeader":true}';
    const refused = await raw(s, body);
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text)).toEqual({
      error: "Unknown exception",
      errorMessage: `Cannot construct instance of \`org.apache.druid.sql.http.SqlQuery\`, problem: Cannot include 'typesHeader' without 'header'\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: ${body.length + 1}]`,
      errorClass: "com.fasterxml.jackson.databind.exc.ValueInstantiationException",
      host: null,
    });
  });

  it("reads resultFormat case-insensitively and refuses an unknown one with Jackson's message", async () => {
    const s = await startTestSim();
    expect((await sql(s, "SELECT 1", { resultFormat: "OBJECT" })).json).toEqual([{ EXPR$0: 1 }]);
    const res = await raw(s, '{"query":"SELECT 1","resultFormat":"bogus"}');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).errorMessage).toBe(
      'Cannot construct instance of `org.apache.druid.sql.http.ResultFormat`, problem: No enum constant org.apache.druid.sql.http.ResultFormat.BOGUS\n at [Source: (org.eclipse.jetty.server.HttpInputOverHTTP); line: 1, column: 36] (through reference chain: org.apache.druid.sql.http.SqlQuery["resultFormat"])',
    );
  });

  it("labels every result format application/json for Druid 33, text/plain and text/csv for later releases", async () => {
    const s33 = await startTestSim({ druidVersion: 33 });
    const s38 = await startTestSim();
    for (const format of ["objectLines", "arrayLines", "csv"]) {
      expect((await sql(s33, "SELECT 1", { resultFormat: format })).contentType).toBe("application/json");
    }
    expect((await sql(s38, "SELECT 1", { resultFormat: "csv" })).contentType).toBe("text/csv");
    expect((await sql(s38, "SELECT 1", { resultFormat: "arrayLines" })).contentType).toBe("text/plain");
  });
});
