// Broker SQL as tools write it: every query below was run on a real Druid 33.0.0 (broker-sql.conformance.ts) and
// the expectation is what it answered — names, SQL types and rows (resultFormat "array" with header and
// sqlTypesHeader), or the refusal's status and body. The same cases run against the emulator
// (test/sim/broker-sql-conformance.test.ts). One datasource, ingested once and waited for, serves every case.
import { beforeAll, describe, expect, it } from "vitest";
import { brokerSqlEngineConformanceSuite } from "./broker-sql-engine-cases.js";
import { brokerSqlFunctionSuite } from "./broker-sql-function-cases.js";
import { brokerSqlJsonSuite } from "./broker-sql-json-cases.js";
import { brokerSqlSketchSuite } from "./broker-sql-sketch-cases.js";
import { brokerSqlSyntaxSuite } from "./broker-sql-syntax-cases.js";
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

/** Eight rows over two days; `channel` and `deleted` are missing (null) on one row each. */
const ROWS = [
  { time: "2026-03-01T00:00:00Z", page: "Main", channel: "#en", added: 10, deleted: 1 },
  { time: "2026-03-01T01:00:00Z", page: "Talk", channel: "#en", added: 3, deleted: 0 },
  { time: "2026-03-01T02:00:00Z", page: "Main", channel: "#fr", added: 7 },
  { time: "2026-03-01T05:30:00Z", page: "Help", channel: "#de", added: 1, deleted: 2 },
  { time: "2026-03-02T00:00:00Z", page: "Main", channel: "#en", added: 20, deleted: 5 },
  { time: "2026-03-02T03:00:00Z", page: "Talk", added: 4, deleted: 1 },
  { time: "2026-03-02T12:00:00Z", page: "Help", channel: "#fr", added: 0, deleted: 0 },
  { time: "2026-03-02T23:59:00Z", page: "Main", channel: "#en", added: 6, deleted: 3 },
];
const INTERVAL = "2026-03-01T00:00:00.000Z/2026-03-03T00:00:00.000Z";

/** A 400 `invalidInput` refusal, with the position context when Druid gave one (1-based, end inclusive). */
function invalid(errorMessage: string, at?: [number, number]): unknown {
  return {
    error: "druidException",
    errorCode: "invalidInput",
    persona: "USER",
    category: "INVALID_INPUT",
    errorMessage: at ? `${errorMessage} (line [1], column [${at[0]}])` : errorMessage,
    context: at
      ? { sourceType: "sql", line: "1", column: String(at[0]), endLine: "1", endColumn: String(at[1]) }
      : { sourceType: "sql" },
  };
}

/** Druid's "Query could not be planned" refusal. */
function unplannable(reason: string, persona: "USER" | "ADMIN" = "USER"): unknown {
  return {
    error: "druidException",
    errorCode: "general",
    persona,
    category: "INVALID_INPUT",
    errorMessage: `Query could not be planned. A possible reason is [${reason}]`,
    context: {},
  };
}

type Answer = [string[], string[], ...unknown[][]];

export function brokerSqlConformanceSuite(target: ConformanceTarget): void {
  brokerSqlSyntaxSuite(target);
  const post = (path: string, body: unknown) => call(target, "POST", path, body);
  const ds = freshId("broker_sql");
  const q = (text: string) => text.replaceAll("$ds", `"${ds}"`);

  async function sql(query: string): Promise<{ status: number; body: unknown }> {
    const ex = await post("/druid/v2/sql", {
      query: q(query),
      resultFormat: "array",
      header: true,
      sqlTypesHeader: true,
    });
    return { status: ex.status, body: json(ex) };
  }

  /** The answer: column names, SQL types, then the rows. */
  async function answer(query: string): Promise<unknown> {
    const r = await sql(query);
    if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  }

  async function refusal(query: string): Promise<unknown> {
    const r = await sql(query);
    return [r.status, r.body];
  }

  const id = freshId("broker_sql_load");

  describe(`Broker SQL as tools write it: ${target.name}`, () => {
    beforeAll(async () => {
      const dir = writeInput(target.dataDir(), { "rows.json": ROWS });
      await ingestServed(
        target,
        indexParallelSpec({
          id,
          dataSource: ds,
          baseDir: dir,
          dimensions: ["page", "channel", { type: "long", name: "added" }, { type: "long", name: "deleted" }],
        }),
        ds,
        INTERVAL,
      );
      // The Broker's view of the datasource lags the Coordinator's load status.
      await eventually(target, `SQL to see ${ds}'s rows`, async () => {
        const r = await sql("SELECT COUNT(*) FROM $ds");
        return r.status === 200 && JSON.stringify(r.body) === JSON.stringify([["EXPR$0"], ["BIGINT"], [8]])
          ? true
          : undefined;
      });
    });

    it("filters time against CURRENT_TIMESTAMP and TIMESTAMP literals shifted by INTERVALs", async () => {
      const count = (where: string) => `SELECT COUNT(*) FROM $ds WHERE ${where}`;
      expect(await answer(count("__time >= CURRENT_TIMESTAMP - INTERVAL '1' DAY"))).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [0],
      ]);
      expect(await answer(count("__time < CURRENT_TIMESTAMP - INTERVAL '1' DAY"))).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [8],
      ]);
      expect(await answer(count("__time >= TIMESTAMP '2026-03-02 12:00:00' - INTERVAL '12' HOUR"))).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [4],
      ]);
      expect(
        await answer(
          "SELECT TIMESTAMP '2026-03-02 12:00:00' - INTERVAL '1' DAY, TIMESTAMP '2026-03-02 12:00:00' + INTERVAL '90' MINUTE, TIMESTAMP '2026-03-31 00:00:00' + INTERVAL '1' MONTH",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2"],
        ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
        ["2026-03-01T12:00:00.000Z", "2026-03-02T13:30:00.000Z", "2026-04-30T00:00:00.000Z"],
      ]);
      // CURRENT_DATE is today in sqlTimeZone, typed DATE; date arithmetic stays DATE.
      expect(
        await answer(
          "SELECT CURRENT_DATE = TIME_FLOOR(CURRENT_TIMESTAMP, 'P1D'), TIMESTAMPDIFF(DAY, CURRENT_DATE - INTERVAL '1' DAY, CURRENT_DATE), CURRENT_DATE - INTERVAL '1' DAY < CURRENT_TIMESTAMP",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2"],
        ["BOOLEAN", "INTEGER", "BOOLEAN"],
        [true, 1, true],
      ]);
      const [today] = (await answer("SELECT CURRENT_DATE, CURRENT_DATE - INTERVAL '1' DAY")) as Answer;
      expect(today).toEqual(["CURRENT_DATE", "EXPR$1"]);
      expect(((await answer("SELECT CURRENT_DATE - INTERVAL '1' DAY")) as Answer)[1]).toEqual(["DATE"]);
      const localToday = await post("/druid/v2/sql", {
        query: "SELECT CURRENT_DATE = TIME_FLOOR(CURRENT_TIMESTAMP, 'P1D', NULL, 'America/Los_Angeles')",
        resultFormat: "array",
        context: { sqlTimeZone: "America/Los_Angeles" },
      });
      expect(json(localToday)).toEqual([[true]]);
      expect(await answer(count("__time >= CURRENT_DATE - INTERVAL '400' DAY"))).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [8],
      ]);
      // Text compared with a TIMESTAMP is read as one, in sqlTimeZone.
      expect(await answer(count("__time >= '2026-03-02 12:00:00'"))).toEqual([["EXPR$0"], ["BIGINT"], [2]]);
      expect(await answer(count("__time BETWEEN '2026-03-01' AND '2026-03-01T05:30:00Z'"))).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [4],
      ]);
      expect(await answer(count("__time IN ('2026-03-01 00:00:00', '2026-03-02 03:00:00')"))).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [2],
      ]);
      const local = await post("/druid/v2/sql", {
        query: q(count("__time >= '2026-03-02 12:00:00'")),
        resultFormat: "array",
        context: { sqlTimeZone: "America/Los_Angeles" },
      });
      expect(json(local)).toEqual([[1]]);
      // A TIMESTAMP against a number is Calcite's operand type error, spanning the expression.
      const where = "SELECT COUNT(*) FROM $ds WHERE ";
      const at = q(where).length + 1;
      expect(await refusal(`${where}__time > 5`)).toEqual([
        400,
        invalid(
          "Cannot apply '>' to arguments of type '<TIMESTAMP(3)> > <INTEGER>'. Supported form(s): '<COMPARABLE_TYPE> > <COMPARABLE_TYPE>'",
          [at, at + 9],
        ),
      ]);
      expect(await refusal(`${where}__time BETWEEN 1 AND 2`)).toEqual([
        400,
        invalid(
          "Cannot apply 'BETWEEN ASYMMETRIC' to arguments of type '<TIMESTAMP(3)> BETWEEN ASYMMETRIC <INTEGER> AND <INTEGER>'. Supported form(s): '<COMPARABLE_TYPE> BETWEEN <COMPARABLE_TYPE> AND <COMPARABLE_TYPE>'",
          [at, at + 21],
        ),
      ]);
      expect(await refusal("SELECT __time - 1 FROM $ds LIMIT 1")).toEqual([
        400,
        invalid(
          "Cannot apply '-' to arguments of type '<TIMESTAMP(3)> - <INTEGER>'. Supported form(s): '<NUMERIC> - <NUMERIC>'\n'<DATETIME_INTERVAL> - <DATETIME_INTERVAL>'\n'<DATETIME> - <DATETIME_INTERVAL>'",
          [8, 17],
        ),
      ]);
      expect(await refusal(`${where}added`)).toEqual([
        400,
        invalid("WHERE clause must be a condition", [at, at + 4]),
      ]);
      expect(await answer("SELECT '10' + 1, 'x' + 1, page + 1 FROM $ds LIMIT 1")).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2"],
        ["INTEGER", "INTEGER", "INTEGER"],
        [11, null, null],
      ]);
      expect(await refusal("SELECT INTERVAL '1' DAY")).toEqual([
        400,
        invalid("Cannot handle literal [86400000:INTERVAL DAY] of unsupported type [INTERVAL_DAY]."),
      ]);
    });

    it("reads table-qualified columns as SQLAlchemy writes them, and refuses a qualifier FROM does not name", async () => {
      expect(await answer(`SELECT $ds."page", $ds.added FROM $ds WHERE $ds."channel" = '#fr'`)).toEqual([
        ["page", "added"],
        ["VARCHAR", "BIGINT"],
        ["Main", 7],
        ["Help", 0],
      ]);
      expect(
        await answer(`SELECT w.page, druid.$ds.added FROM druid.$ds WHERE w.added > 10`).catch((e) =>
          String(e),
        ),
      ).toContain("Table 'w' not found");
      expect(await answer("SELECT w.page FROM $ds AS w WHERE w.added > 10")).toEqual([
        ["page"],
        ["VARCHAR"],
        ["Main"],
      ]);
      const qualifier = `"${ds}"`;
      expect(await refusal("SELECT $ds.page FROM $ds w")).toEqual([
        400,
        invalid(`Table '${ds}' not found`, [8, 7 + qualifier.length]),
      ]);
    });

    it("answers what SQLAlchemy Core and ORM emit: qualified columns, lower-case functions, anon_1 subqueries", async () => {
      expect(
        await answer(
          "SELECT $ds.page, sum($ds.added) AS sum_1 FROM $ds WHERE $ds.channel IS NOT NULL GROUP BY $ds.page ORDER BY sum_1 DESC LIMIT 2",
        ),
      ).toEqual([
        ["page", "sum_1"],
        ["VARCHAR", "BIGINT"],
        ["Main", 43],
        ["Talk", 3],
      ]);
      expect(
        await answer(
          "SELECT count(*) AS count_1 FROM (SELECT $ds.page AS page FROM $ds WHERE $ds.added > 5) AS anon_1",
        ),
      ).toEqual([["count_1"], ["BIGINT"], [4]]);
      expect(
        await answer(
          "SELECT anon_1.page, anon_1.n FROM (SELECT $ds.page AS page, count(*) AS n FROM $ds GROUP BY $ds.page) AS anon_1 WHERE anon_1.n > 1 ORDER BY anon_1.n DESC, anon_1.page",
        ),
      ).toEqual([
        ["page", "n"],
        ["VARCHAR", "BIGINT"],
        ["Main", 4],
        ["Help", 2],
        ["Talk", 2],
      ]);
      expect(
        await answer(
          `SELECT $ds."__time", $ds.page FROM $ds WHERE $ds.page IN ('Help', 'Talk') ORDER BY $ds."__time" DESC LIMIT 3`,
        ),
      ).toEqual([
        ["__time", "page"],
        ["TIMESTAMP", "VARCHAR"],
        ["2026-03-02T12:00:00.000Z", "Help"],
        ["2026-03-02T03:00:00.000Z", "Talk"],
        ["2026-03-01T05:30:00.000Z", "Help"],
      ]);
      expect(await answer("SELECT AVG(added), AVG(deleted) FROM $ds")).toEqual([
        ["EXPR$0", "EXPR$1"],
        ["DOUBLE", "DOUBLE"],
        [6.375, 1.7142857142857142],
      ]);
    });

    it("truncates times with DATE_TRUNC, and refuses a unit it does not know", async () => {
      expect(
        await answer("SELECT DATE_TRUNC('day', __time) AS d, COUNT(*) FROM $ds GROUP BY 1 ORDER BY 1"),
      ).toEqual([
        ["d", "EXPR$1"],
        ["TIMESTAMP", "BIGINT"],
        ["2026-03-01T00:00:00.000Z", 4],
        ["2026-03-02T00:00:00.000Z", 4],
      ]);
      expect(
        await answer(
          "SELECT DATE_TRUNC('month', TIMESTAMP '2026-03-02 12:00:00'), DATE_TRUNC('hour', TIMESTAMP '2026-03-02 12:34:56'), DATE_TRUNC('week', TIMESTAMP '2026-03-04 12:00:00'), DATE_TRUNC('QUARTER', TIMESTAMP '2026-03-04 12:00:00')",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3"],
        ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
        [
          "2026-03-01T00:00:00.000Z",
          "2026-03-02T12:00:00.000Z",
          "2026-03-02T00:00:00.000Z",
          "2026-01-01T00:00:00.000Z",
        ],
      ]);
      const t = "TIMESTAMP '2026-03-02 12:34:56.789'";
      expect(
        await answer(
          `SELECT DATE_TRUNC('decade', ${t}), DATE_TRUNC('century', ${t}), DATE_TRUNC('milliseconds', ${t}), DATE_TRUNC('second', ${t}), DATE_TRUNC('minute', ${t})`,
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4"],
        ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
        // Periods of years count from 1970, as Druid's PeriodGranularity does: a century starts there.
        [
          "2020-01-01T00:00:00.000Z",
          "1970-01-01T00:00:00.000Z",
          "2026-03-02T12:34:56.789Z",
          "2026-03-02T12:34:56.000Z",
          "2026-03-02T12:34:00.000Z",
        ],
      ]);
      // In sqlTimeZone: days start at local midnight, TIME_SHIFT and month intervals keep the local time.
      const zoned = await post("/druid/v2/sql", {
        query:
          "SELECT DATE_TRUNC('day', TIMESTAMP '2026-03-02 01:00:00'), TIME_SHIFT(TIMESTAMP '2026-03-02 01:00:00', 'P1D', 1), TIMESTAMP '2026-03-02 01:00:00' + INTERVAL '1' MONTH",
        resultFormat: "array",
        context: { sqlTimeZone: "America/Los_Angeles" },
      });
      expect(json(zoned)).toEqual([
        ["2026-03-02T00:00:00.000-08:00", "2026-03-03T01:00:00.000-08:00", "2026-04-02T01:00:00.000-07:00"],
      ]);
      // TIME_FLOOR with an origin counts buckets from it (Druid's PeriodGranularity with that origin).
      expect(
        await answer(
          "SELECT TIME_FLOOR(__time, 'PT6H', TIMESTAMP '2026-03-01 01:00:00') AS t, COUNT(*) FROM $ds GROUP BY 1",
        ),
      ).toEqual([
        ["t", "EXPR$1"],
        ["TIMESTAMP", "BIGINT"],
        ["2026-02-28T19:00:00.000Z", 1],
        ["2026-03-01T01:00:00.000Z", 3],
        ["2026-03-01T19:00:00.000Z", 1],
        ["2026-03-02T01:00:00.000Z", 1],
        ["2026-03-02T07:00:00.000Z", 1],
        ["2026-03-02T19:00:00.000Z", 1],
      ]);
      expect(await refusal("SELECT DATE_TRUNC('fortnight', __time) FROM $ds")).toEqual([
        400,
        invalid("Operator[DATE_TRUNC] cannot truncate to[fortnight]"),
      ]);
    });

    it("answers DISTINCT, COUNT(DISTINCT) and APPROX_COUNT_DISTINCT (exact at this cardinality)", async () => {
      expect(await answer("SELECT DISTINCT page FROM $ds")).toEqual([
        ["page"],
        ["VARCHAR"],
        ["Help"],
        ["Main"],
        ["Talk"],
      ]);
      expect(await answer("SELECT DISTINCT page, channel FROM $ds ORDER BY page")).toEqual([
        ["page", "channel"],
        ["VARCHAR", "VARCHAR"],
        ["Help", "#de"],
        ["Help", "#fr"],
        ["Main", "#en"],
        ["Main", "#fr"],
        ["Talk", null],
        ["Talk", "#en"],
      ]);
      expect(
        await answer(
          "SELECT COUNT(DISTINCT page), COUNT(DISTINCT channel), APPROX_COUNT_DISTINCT(page), APPROX_COUNT_DISTINCT(channel) FROM $ds",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3"],
        ["BIGINT", "BIGINT", "BIGINT", "BIGINT"],
        [3, 3, 3, 3],
      ]);
      expect(await answer("SELECT page, COUNT(DISTINCT channel) FROM $ds GROUP BY page")).toEqual([
        ["page", "EXPR$1"],
        ["VARCHAR", "BIGINT"],
        ["Help", 2],
        ["Main", 2],
        ["Talk", 1],
      ]);
      const sel = "SELECT DISTINCT page FROM $ds ORDER BY ";
      expect(await refusal(`${sel}added`)).toEqual([
        400,
        invalid("Expression 'added' is not in the select clause", [q(sel).length + 1, q(sel).length + 5]),
      ]);
    });

    it("filters groups with HAVING (aggregates and select aliases), and refuses an ungrouped column", async () => {
      expect(
        await answer(
          "SELECT page, SUM(added) AS s FROM $ds GROUP BY page HAVING SUM(added) > 5 ORDER BY s DESC",
        ),
      ).toEqual([
        ["page", "s"],
        ["VARCHAR", "BIGINT"],
        ["Main", 43],
        ["Talk", 7],
      ]);
      expect(await answer("SELECT page, COUNT(*) AS n FROM $ds GROUP BY page HAVING n > 2")).toEqual([
        ["page", "n"],
        ["VARCHAR", "BIGINT"],
        ["Main", 4],
      ]);
      expect(
        await answer(
          "SELECT page, SUM(added) FROM $ds GROUP BY page HAVING SUM(added) > 5 AND COUNT(DISTINCT channel) > 1",
        ),
      ).toEqual([
        ["page", "EXPR$1"],
        ["VARCHAR", "BIGINT"],
        ["Main", 43],
      ]);
      // HAVING without GROUP BY filters the one group of the whole table.
      expect(await answer("SELECT COUNT(*) FROM $ds HAVING COUNT(*) > 100")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
      ]);
      expect(await answer("SELECT COUNT(*) FROM $ds HAVING COUNT(*) > 1")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [8],
      ]);
      const ordinal = "SELECT page FROM $ds ORDER BY 2";
      expect(await refusal(ordinal)).toEqual([
        400,
        invalid("Ordinal out of range", [q(ordinal).length, q(ordinal).length]),
      ]);
      const where = "SELECT page FROM $ds WHERE ";
      expect(await refusal(`${where}COUNT(*) > 1`)).toEqual([
        400,
        invalid("Aggregate expression is illegal in WHERE clause", [
          q(where).length + 1,
          q(where).length + 8,
        ]),
      ]);
      const order = "SELECT page, COUNT(*) FROM $ds GROUP BY page ORDER BY ";
      expect(await refusal(`${order}added`)).toEqual([
        400,
        invalid("Expression 'added' is not being grouped", [q(order).length + 1, q(order).length + 5]),
      ]);
      expect(await refusal("SELECT * FROM $ds GROUP BY page")).toEqual([
        400,
        invalid(`Expression '${ds}.__time' is not being grouped`, [8, 8]),
      ]);
      expect(await refusal("SELECT page FROM $ds HAVING COUNT(*) > 1")).toEqual([
        400,
        invalid("Expression 'page' is not being grouped", [8, 11]),
      ]);
    });

    it("evaluates searched and simple CASE with Calcite's result types", async () => {
      expect(
        await answer(
          "SELECT page, CASE WHEN added > 5 THEN 'big' WHEN added > 2 THEN 'mid' ELSE 'small' END AS size FROM $ds WHERE __time < TIMESTAMP '2026-03-02 00:00:00'",
        ),
      ).toEqual([
        ["page", "size"],
        ["VARCHAR", "VARCHAR"],
        ["Main", "big"],
        ["Talk", "mid"],
        ["Main", "big"],
        ["Help", "small"],
      ]);
      expect(
        await answer(
          "SELECT CASE page WHEN 'Main' THEN 1 WHEN 'Talk' THEN 2 END AS c, COUNT(*) FROM $ds GROUP BY 1 ORDER BY 1",
        ),
      ).toEqual([
        ["c", "EXPR$1"],
        ["INTEGER", "BIGINT"],
        [null, 2],
        [1, 4],
        [2, 2],
      ]);
      expect(
        await answer("SELECT SUM(CASE WHEN channel = '#en' THEN 1 ELSE 0 END), SUM(page) FROM $ds"),
      ).toEqual([
        ["EXPR$0", "EXPR$1"],
        ["BIGINT", "DOUBLE"],
        [4, null],
      ]);
      expect(await answer("SELECT CASE WHEN added > 5 THEN 'x' END FROM $ds LIMIT 2")).toEqual([
        ["EXPR$0"],
        ["CHAR"],
        ["x"],
        [null],
      ]);
      // MIN and MAX take numbers only in Druid 33: a text CASE (or column) is refused.
      expect(await refusal("SELECT MAX(CASE WHEN added > 5 THEN 'x' END) FROM $ds")).toEqual([
        400,
        invalid("Aggregation [MAX] does not support type [STRING], column [v0]"),
      ]);
    });

    it("answers the web console's task list and task counts (WITH, CASE, ORDER BY a CASE) over sys.tasks", async () => {
      // TasksView's TASK_SQL (web-console/src/views/tasks-view), narrowed to this suite's task.
      const list = await answer(`WITH tasks AS (SELECT
  "task_id", "group_id", "type", "datasource", "created_time", "location", "duration", "error_msg",
  CASE WHEN "error_msg" IN ('Shutdown request from user', 'Canceled: Query canceled by user or by task shutdown.') THEN 'CANCELED' WHEN "status" = 'RUNNING' THEN "runner_status" ELSE "status" END AS "status"
  FROM sys.tasks
)
SELECT "task_id", "group_id", "type", "datasource", "created_time", "location", "duration", "error_msg", "status"
FROM tasks
WHERE "datasource" = '${ds}'
ORDER BY
  (
    CASE "status"
    WHEN 'RUNNING' THEN 4
    WHEN 'PENDING' THEN 3
    WHEN 'WAITING' THEN 2
    ELSE 1
    END
  ) DESC,
  "created_time" DESC`);
      const [names, types, ...rows] = list as Answer;
      expect([names, types]).toEqual([
        [
          "task_id",
          "group_id",
          "type",
          "datasource",
          "created_time",
          "location",
          "duration",
          "error_msg",
          "status",
        ],
        ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "BIGINT", "VARCHAR", "VARCHAR"],
      ]);
      expect(rows.map((r) => [r[0], r[1], r[2], r[3], r[7], r[8]])).toEqual([
        [id, id, "index_parallel", ds, null, "SUCCESS"],
      ]);
      // The home view's task card.
      expect(
        await answer(`SELECT
  CASE WHEN "status" = 'RUNNING' THEN "runner_status" ELSE "status" END AS "status",
  COUNT (*) AS "count"
FROM sys.tasks
WHERE "datasource" = '${ds}'
GROUP BY 1`),
      ).toEqual([
        ["status", "count"],
        ["VARCHAR", "BIGINT"],
        ["SUCCESS", 1],
      ]);
    });

    it("runs subqueries in FROM, IN and as scalars, and refuses a scan ordered by a column through one", async () => {
      expect(
        await answer(
          "SELECT COUNT(*) FROM (SELECT page, SUM(added) AS s FROM $ds GROUP BY page) WHERE s > 5",
        ),
      ).toEqual([["EXPR$0"], ["BIGINT"], [2]]);
      expect(
        await answer(
          "SELECT t.page, t.s FROM (SELECT page, SUM(added) AS s FROM $ds GROUP BY page) AS t ORDER BY t.s DESC LIMIT 2",
        ),
      ).toEqual([
        ["page", "s"],
        ["VARCHAR", "BIGINT"],
        ["Main", 43],
        ["Talk", 7],
      ]);
      expect(
        await answer(
          "SELECT page, added FROM $ds WHERE page IN (SELECT page FROM $ds WHERE channel = '#de')",
        ),
      ).toEqual([
        ["page", "added"],
        ["VARCHAR", "BIGINT"],
        ["Help", 1],
        ["Help", 0],
      ]);
      expect(await answer("SELECT page FROM $ds WHERE added = (SELECT MAX(added) FROM $ds)")).toEqual([
        ["page"],
        ["VARCHAR"],
        ["Main"],
      ]);
      expect(await refusal("SELECT * FROM (SELECT page, added FROM $ds) ORDER BY page")).toEqual([
        400,
        unplannable(
          "SQL query requires ordering a table by non-time column [[page]], which is not supported.",
        ),
      ]);
      const [status, body] = (await refusal("SELECT (SELECT page FROM $ds) FROM $ds")) as [
        number,
        Record<string, unknown>,
      ];
      expect([status, body.errorCode, body.persona, body.category, body.errorMessage]).toEqual([
        500,
        "legacyQueryException",
        "OPERATOR",
        "UNCATEGORIZED",
        "Subquery expression returned more than one row",
      ]);
    });

    it("names queries with WITH, one building on another", async () => {
      expect(
        await answer(
          "WITH totals AS (SELECT page, SUM(added) AS s FROM $ds GROUP BY page) SELECT page, s FROM totals WHERE s < 10 ORDER BY s",
        ),
      ).toEqual([
        ["page", "s"],
        ["VARCHAR", "BIGINT"],
        ["Help", 1],
        ["Talk", 7],
      ]);
      expect(
        await answer(
          "WITH a AS (SELECT page FROM $ds WHERE added > 5), b AS (SELECT page, COUNT(*) AS n FROM a GROUP BY page) SELECT * FROM b",
        ),
      ).toEqual([
        ["page", "n"],
        ["VARCHAR", "BIGINT"],
        ["Main", 4],
      ]);
      // A WITH name hides a table of the same name.
      expect(await answer(`WITH "${ds}" AS (SELECT 1 AS x) SELECT * FROM $ds`)).toEqual([
        ["x"],
        ["INTEGER"],
        [1],
      ]);
      const query = "WITH t AS (SELECT page FROM $ds) SELECT added FROM t";
      const at = q(query).indexOf("added") + 1;
      expect(await refusal(query)).toEqual([
        400,
        invalid("Column 'added' not found in any table", [at, at + 4]),
      ]);
    });

    it("joins a datasource to a subquery and to itself (INNER, LEFT), and refuses an ambiguous column", async () => {
      expect(
        await answer(
          "SELECT a.page, a.added, b.n FROM $ds a JOIN (SELECT page, COUNT(*) AS n FROM $ds GROUP BY page) b ON a.page = b.page WHERE a.added > 5",
        ),
      ).toEqual([
        ["page", "added", "n"],
        ["VARCHAR", "BIGINT", "BIGINT"],
        ["Main", 10, 4],
        ["Main", 7, 4],
        ["Main", 20, 4],
        ["Main", 6, 4],
      ]);
      expect(
        await answer(
          "SELECT a.page, b.n FROM $ds a LEFT JOIN (SELECT channel, COUNT(*) AS n FROM $ds WHERE channel = '#de' GROUP BY channel) b ON a.channel = b.channel",
        ),
      ).toEqual([
        ["page", "n"],
        ["VARCHAR", "BIGINT"],
        ["Main", null],
        ["Talk", null],
        ["Main", null],
        ["Help", 1],
        ["Main", null],
        ["Talk", null],
        ["Help", null],
        ["Main", null],
      ]);
      expect(
        await answer(
          "SELECT a.channel, COUNT(*) FROM $ds a INNER JOIN $ds b ON a.channel = b.channel GROUP BY a.channel",
        ),
      ).toEqual([
        ["channel", "EXPR$1"],
        ["VARCHAR", "BIGINT"],
        ["#de", 1],
        ["#en", 16],
        ["#fr", 4],
      ]);
      expect(
        await answer(
          "SELECT a.page, a.__time, b.x FROM $ds a JOIN (SELECT page, MIN(added) AS x FROM $ds GROUP BY page) b ON a.page = b.page AND a.added = b.x",
        ),
      ).toEqual([
        ["page", "__time", "x"],
        ["VARCHAR", "TIMESTAMP", "BIGINT"],
        ["Talk", "2026-03-01T01:00:00.000Z", 3],
        ["Help", "2026-03-02T12:00:00.000Z", 0],
        ["Main", "2026-03-02T23:59:00.000Z", 6],
      ]);
      expect(
        await answer(
          "SELECT a.page, COUNT(*) FROM $ds a, (SELECT DISTINCT channel FROM $ds) b WHERE a.channel = b.channel GROUP BY a.page",
        ),
      ).toEqual([
        ["page", "EXPR$1"],
        ["VARCHAR", "BIGINT"],
        ["Help", 2],
        ["Main", 4],
        ["Talk", 1],
      ]);
      expect(
        await answer(
          "SELECT page, COUNT(*) FROM $ds a JOIN (SELECT page FROM $ds GROUP BY page) b USING (page) GROUP BY page",
        ),
      ).toEqual([
        ["page", "EXPR$1"],
        ["VARCHAR", "BIGINT"],
        ["Help", 2],
        ["Main", 4],
        ["Talk", 2],
      ]);
      expect(
        await refusal(
          `SELECT page FROM $ds JOIN (SELECT page FROM $ds GROUP BY page) b ON $ds.page = b.page`,
        ),
      ).toEqual([400, invalid("Column 'page' is ambiguous", [8, 11])]);
      // `*` over a join names a second `page` `page0`; over a subquery with two `page` columns it is ambiguous.
      expect(
        await answer(
          "SELECT * FROM $ds a JOIN (SELECT page, COUNT(*) AS n FROM $ds GROUP BY page) b ON a.page = b.page LIMIT 1",
        ),
      ).toEqual([
        ["__time", "page", "channel", "added", "deleted", "page0", "n"],
        ["TIMESTAMP", "VARCHAR", "VARCHAR", "BIGINT", "BIGINT", "VARCHAR", "BIGINT"],
        ["2026-03-01T00:00:00.000Z", "Main", "#en", 10, 1, "Main", 4],
      ]);
      expect(
        await refusal(
          "SELECT * FROM (SELECT a.page, b.page FROM $ds a JOIN (SELECT page FROM $ds GROUP BY page) b ON a.page = b.page) LIMIT 1",
        ),
      ).toEqual([400, invalid("Column 'page' is ambiguous", [8, 8])]);
      const noCondition = "SELECT COUNT(*) FROM $ds a JOIN (SELECT page FROM $ds GROUP BY page) b";
      const at = q(noCondition).indexOf(" JOIN ") + 2;
      expect(await refusal(noCondition)).toEqual([
        400,
        invalid(
          "INNER, LEFT, RIGHT or FULL join requires a condition (NATURAL keyword or ON or USING clause)",
          [at, at + 3],
        ),
      ]);
    });

    it("keeps SQL's three-valued logic: NOT and NOT IN of unknown are unknown, FALSE wins AND, TRUE wins OR", async () => {
      expect(await answer("SELECT NOT (NULL = 1), (NULL = 1) OR TRUE, (NULL = 1) AND FALSE")).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2"],
        ["BOOLEAN", "BOOLEAN", "BOOLEAN"],
        [null, true, false],
      ]);
      expect(await answer("SELECT COUNT(*) FROM $ds WHERE NOT (deleted > 0)")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [2],
      ]);
      expect(await answer("SELECT COUNT(*) FROM $ds WHERE deleted NOT IN (1, 2)")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [4],
      ]);
      expect(await answer("SELECT COUNT(*) FROM $ds WHERE channel <> '#en'")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [3],
      ]);
      // NOT IN a subquery that holds a null is never true; IN a list with NULL matches the other values.
      expect(await answer("SELECT COUNT(*) FROM $ds WHERE page NOT IN (SELECT channel FROM $ds)")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [0],
      ]);
      expect(
        await answer(
          "SELECT COUNT(*) FROM $ds WHERE channel NOT IN (SELECT channel FROM $ds WHERE page = 'Help')",
        ),
      ).toEqual([["EXPR$0"], ["BIGINT"], [4]]);
      expect(await answer("SELECT COUNT(*) FROM $ds WHERE channel IN ('#en', NULL)")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [4],
      ]);
      expect(await answer("SELECT (SELECT MAX(added) FROM $ds WHERE added > 100)")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [null],
      ]);
      expect(await refusal("SELECT added % 3 FROM $ds")).toEqual([
        400,
        invalid("Percent remainder '%' is not allowed under the current SQL conformance level"),
      ]);
    });

    it("replaces nulls with COALESCE, NVL and IFNULL, and makes them with NULLIF", async () => {
      expect(
        await answer(
          "SELECT COALESCE(channel, 'none'), COALESCE(deleted, -1), COALESCE(deleted, added) FROM $ds",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2"],
        ["VARCHAR", "BIGINT", "BIGINT"],
        ["#en", 1, 1],
        ["#en", 0, 0],
        ["#fr", -1, 7],
        ["#de", 2, 2],
        ["#en", 5, 5],
        ["none", 1, 1],
        ["#fr", 0, 0],
        ["#en", 3, 3],
      ]);
      expect(
        await answer("SELECT NULLIF(page, 'Main'), NVL(channel, '?'), IFNULL(deleted, 9) FROM $ds LIMIT 3"),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2"],
        ["VARCHAR", "VARCHAR", "BIGINT"],
        [null, "#en", 1],
        ["Talk", "#en", 0],
        [null, "#fr", 9],
      ]);
    });

    it("takes SUBSTRING by position and length, null past the end, and fails a start below one", async () => {
      expect(
        await answer(
          "SELECT SUBSTRING(page, 2), SUBSTRING(page, 1, 2), SUBSTRING(page FROM 2 FOR 2), SUBSTR(page, 3) FROM $ds LIMIT 2",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3"],
        ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
        ["ain", "Ma", "ai", "in"],
        ["alk", "Ta", "al", "lk"],
      ]);
      expect(await answer("SELECT SUBSTRING('abc', 5)")).toEqual([["EXPR$0"], ["CHAR"], [null]]);
      expect(await refusal("SELECT SUBSTRING('abc', 0, 2)")).toEqual([
        500,
        {
          error: "druidException",
          errorCode: "general",
          persona: "DEVELOPER",
          category: "DEFENSIVE",
          errorMessage: "Function[substring] encountered unknown exception.",
          context: {},
        },
      ]);
    });

    it("shifts times with TIME_SHIFT and counts units between them with TIMESTAMPDIFF", async () => {
      expect(
        await answer(
          "SELECT TIME_SHIFT(__time, 'P1D', 1), TIME_SHIFT(__time, 'PT1H', -2), TIME_SHIFT(__time, 'P1M', 1, 'America/Los_Angeles') FROM $ds LIMIT 2",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2"],
        ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
        ["2026-03-02T00:00:00.000Z", "2026-02-28T22:00:00.000Z", "2026-03-28T23:00:00.000Z"],
        ["2026-03-02T01:00:00.000Z", "2026-02-28T23:00:00.000Z", "2026-03-29T00:00:00.000Z"],
      ]);
      expect(
        await answer(
          "SELECT TIMESTAMPDIFF(DAY, TIMESTAMP '2026-03-01 00:00:00', TIMESTAMP '2026-03-03 12:00:00'), TIMESTAMPDIFF(HOUR, TIMESTAMP '2026-03-01 00:00:00', TIMESTAMP '2026-03-03 12:00:00'), TIMESTAMPDIFF(MONTH, TIMESTAMP '2026-01-31 00:00:00', TIMESTAMP '2026-03-01 00:00:00'), TIMESTAMPDIFF(MINUTE, TIMESTAMP '2026-03-03 00:00:00', TIMESTAMP '2026-03-01 00:00:00'), TIMESTAMPDIFF(YEAR, TIMESTAMP '2024-03-01 00:00:00', TIMESTAMP '2026-02-28 00:00:00'), TIMESTAMPDIFF(DAY, CURRENT_TIMESTAMP - INTERVAL '1' DAY, CURRENT_TIMESTAMP)",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4", "EXPR$5"],
        ["INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER"],
        [2, 60, 1, -2880, 1, 1],
      ]);
      expect(
        await answer("SELECT page, TIMESTAMPDIFF(HOUR, MIN(__time), MAX(__time)) FROM $ds GROUP BY page"),
      ).toEqual([
        ["page", "EXPR$1"],
        ["VARCHAR", "INTEGER"],
        ["Help", 30],
        ["Main", 47],
        ["Talk", 26],
      ]);
    });

    it("picks LATEST and EARLIEST by __time (nulls included), and refuses LATEST where there is no __time", async () => {
      expect(
        await answer("SELECT LATEST(added), EARLIEST(added), LATEST(page), LATEST(page, 10) FROM $ds"),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3"],
        ["BIGINT", "BIGINT", "VARCHAR", "VARCHAR"],
        [6, 10, "Main", "Main"],
      ]);
      expect(
        await answer("SELECT page, LATEST(added), LATEST_BY(added, __time) FROM $ds GROUP BY page"),
      ).toEqual([
        ["page", "EXPR$1", "EXPR$2"],
        ["VARCHAR", "BIGINT", "BIGINT"],
        ["Help", 0, 0],
        ["Main", 6, 6],
        ["Talk", 4, 4],
      ]);
      expect(
        await answer("SELECT EARLIEST(page), LATEST(channel), LATEST(deleted) FROM $ds WHERE page = 'Talk'"),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2"],
        ["VARCHAR", "VARCHAR", "BIGINT"],
        ["Talk", null, 1],
      ]);
      expect(
        await refusal("SELECT LATEST(s) FROM (SELECT page, SUM(added) AS s FROM $ds GROUP BY page)"),
      ).toEqual([
        400,
        unplannable(
          "LATEST and EARLIEST aggregators implicitly depend on the __time column, but the table queried doesn't contain a __time column.  Please use LATEST_BY or EARLIEST_BY and specify the column explicitly.",
          "ADMIN",
        ),
      ]);
    });

    it("skips rows with OFFSET, after LIMIT or FETCH, on scans and on groups", async () => {
      expect(await answer("SELECT __time, page FROM $ds ORDER BY __time LIMIT 3 OFFSET 2")).toEqual([
        ["__time", "page"],
        ["TIMESTAMP", "VARCHAR"],
        ["2026-03-01T02:00:00.000Z", "Main"],
        ["2026-03-01T05:30:00.000Z", "Help"],
        ["2026-03-02T00:00:00.000Z", "Main"],
      ]);
      expect(
        await answer("SELECT page, COUNT(*) FROM $ds GROUP BY page ORDER BY page LIMIT 2 OFFSET 1"),
      ).toEqual([
        ["page", "EXPR$1"],
        ["VARCHAR", "BIGINT"],
        ["Main", 4],
        ["Talk", 2],
      ]);
      expect(await answer("SELECT page FROM $ds OFFSET 6")).toEqual([
        ["page"],
        ["VARCHAR"],
        ["Help"],
        ["Main"],
      ]);
      expect(
        await answer("SELECT page FROM $ds ORDER BY __time OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY"),
      ).toEqual([["page"], ["VARCHAR"], ["Talk"], ["Main"]]);
      expect(await answer("SELECT COUNT(*) FROM $ds OFFSET 1")).toEqual([["EXPR$0"], ["BIGINT"]]);
    });

    it("runs the smaller forms tools send: TIMESTAMPADD, CHAR_LENGTH, CONCAT, ABS, ANY_VALUE, IS TRUE, WITH column names, RIGHT JOIN", async () => {
      expect(
        await answer(
          "SELECT TIMESTAMPADD(DAY, 2, TIMESTAMP '2026-03-01 00:00:00'), TIMESTAMPADD(MONTH, 1, TIMESTAMP '2026-01-31 00:00:00'), CHAR_LENGTH('abc'), CONCAT('a', 'b', 'c'), ABS(-3), ABS(-2.5)",
        ),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2", "EXPR$3", "EXPR$4", "EXPR$5"],
        ["TIMESTAMP", "TIMESTAMP", "INTEGER", "VARCHAR", "INTEGER", "DECIMAL"],
        ["2026-03-03T00:00:00.000Z", "2026-02-28T00:00:00.000Z", 3, "abc", 3, 2.5],
      ]);
      expect(
        await answer("SELECT CONCAT(page, NULL), LENGTH(page), CHAR_LENGTH(channel) FROM $ds LIMIT 1"),
      ).toEqual([
        ["EXPR$0", "EXPR$1", "EXPR$2"],
        ["VARCHAR", "INTEGER", "INTEGER"],
        [null, 4, 3],
      ]);
      expect(await answer("SELECT page, ANY_VALUE(page) FROM $ds GROUP BY page")).toEqual([
        ["page", "EXPR$1"],
        ["VARCHAR", "VARCHAR"],
        ["Help", "Help"],
        ["Main", "Main"],
        ["Talk", "Talk"],
      ]);
      expect(await answer("SELECT COUNT(*) FROM $ds WHERE (deleted > 0) IS TRUE")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [5],
      ]);
      expect(await answer("SELECT COUNT(*) FROM $ds WHERE (deleted > 0) IS NOT FALSE")).toEqual([
        ["EXPR$0"],
        ["BIGINT"],
        [6],
      ]);
      expect(
        await answer(
          "WITH t (p, n) AS (SELECT page, COUNT(*) FROM $ds GROUP BY page) SELECT p, n FROM t WHERE n = 2",
        ),
      ).toEqual([
        ["p", "n"],
        ["VARCHAR", "BIGINT"],
        ["Help", 2],
        ["Talk", 2],
      ]);
      expect(
        await answer(
          "SELECT a.page, b.page FROM $ds a RIGHT JOIN (SELECT page FROM $ds WHERE page <> 'Help' GROUP BY page) b ON a.page = b.page WHERE a.added > 5",
        ),
      ).toEqual([
        ["page", "page"],
        ["VARCHAR", "VARCHAR"],
        ["Main", "Main"],
        ["Main", "Main"],
        ["Main", "Main"],
        ["Main", "Main"],
      ]);
      // FULL JOIN: unmatched left rows in place with nulls, then the unmatched right rows in their order.
      expect(
        await answer(
          "SELECT a.channel, b.channel FROM (SELECT DISTINCT channel FROM $ds WHERE page = 'Help') a FULL JOIN (SELECT DISTINCT channel FROM $ds WHERE page = 'Talk') b ON a.channel = b.channel",
        ),
      ).toEqual([
        ["channel", "channel"],
        ["VARCHAR", "VARCHAR"],
        ["#de", null],
        ["#fr", null],
        [null, null],
        [null, "#en"],
      ]);
    });

    it("answers what Superset's Druid engine spec sends: time grains, TIME_PARSE bounds, CAST AS DATE", async () => {
      expect(
        await answer(`SELECT TIME_FLOOR(CAST(__time AS TIMESTAMP), 'P1D') AS __timestamp, page AS page, COUNT(*) AS "COUNT(*)"
FROM $ds WHERE __time >= TIME_PARSE('2026-03-01T00:00:00') AND __time < TIME_PARSE('2026-03-03T00:00:00')
GROUP BY TIME_FLOOR(CAST(__time AS TIMESTAMP), 'P1D'), page ORDER BY "COUNT(*)" DESC LIMIT 10000`),
      ).toEqual([
        ["__timestamp", "page", "COUNT(*)"],
        ["TIMESTAMP", "VARCHAR", "BIGINT"],
        ["2026-03-01T00:00:00.000Z", "Main", 2],
        ["2026-03-02T00:00:00.000Z", "Main", 2],
        ["2026-03-01T00:00:00.000Z", "Help", 1],
        ["2026-03-01T00:00:00.000Z", "Talk", 1],
        ["2026-03-02T00:00:00.000Z", "Help", 1],
        ["2026-03-02T00:00:00.000Z", "Talk", 1],
      ]);
      // The week starting on Sunday.
      expect(
        await answer(
          "SELECT TIME_SHIFT(TIME_FLOOR(TIME_SHIFT(CAST(__time AS TIMESTAMP), 'P1D', 1), 'P1W'), 'P1D', -1) AS w, SUM(added) FROM $ds GROUP BY 1",
        ),
      ).toEqual([
        ["w", "EXPR$1"],
        ["TIMESTAMP", "BIGINT"],
        ["2026-03-01T00:00:00.000Z", 51],
      ]);
      expect(await answer("SELECT CAST(__time AS DATE) AS d, COUNT(*) FROM $ds GROUP BY 1")).toEqual([
        ["d", "EXPR$1"],
        ["DATE", "BIGINT"],
        ["2026-03-01T00:00:00.000Z", 4],
        ["2026-03-02T00:00:00.000Z", 4],
      ]);
      expect(
        await answer("SELECT CAST(TIME_PARSE('2026-03-02') AS DATE), CAST('2026-03-02' AS DATE)"),
      ).toEqual([
        ["EXPR$0", "EXPR$1"],
        ["DATE", "DATE"],
        ["2026-03-02T00:00:00.000Z", "2026-03-02T00:00:00.000Z"],
      ]);
      expect(
        await answer("SELECT COUNT(*) FROM $ds WHERE __time >= CAST(TIME_PARSE('2026-03-02') AS DATE)"),
      ).toEqual([["EXPR$0"], ["BIGINT"], [4]]);
    });

    it("answers dashboard-style queries that combine the pieces", async () => {
      expect(
        await answer(
          "SELECT page FROM $ds WHERE page IN (SELECT page FROM $ds WHERE added > 5) AND channel = '#fr'",
        ),
      ).toEqual([["page"], ["VARCHAR"], ["Main"]]);
      expect(
        await answer(
          "SELECT x.page, y.total FROM (SELECT page FROM $ds GROUP BY page) x LEFT JOIN (SELECT page, SUM(added) AS total FROM $ds WHERE channel = '#en' GROUP BY page) y ON x.page = y.page ORDER BY x.page",
        ),
      ).toEqual([
        ["page", "total"],
        ["VARCHAR", "BIGINT"],
        ["Help", null],
        ["Main", 36],
        ["Talk", 3],
      ]);
      expect(
        await answer(
          "SELECT page, COUNT(*) FILTER (WHERE channel IS NULL), SUM(added) FILTER (WHERE deleted > 0) FROM $ds GROUP BY page",
        ),
      ).toEqual([
        ["page", "EXPR$1", "EXPR$2"],
        ["VARCHAR", "BIGINT", "BIGINT"],
        ["Help", 0, 1],
        ["Main", 0, 36],
        ["Talk", 1, 4],
      ]);
      expect(
        await answer(
          "SELECT TIME_FORMAT(DATE_TRUNC('day', __time), 'yyyy-MM-dd') AS d, COUNT(DISTINCT page) FROM $ds GROUP BY 1 ORDER BY 1 DESC",
        ),
      ).toEqual([
        ["d", "EXPR$1"],
        ["VARCHAR", "BIGINT"],
        ["2026-03-02", 3],
        ["2026-03-01", 3],
      ]);
      expect(await refusal("SELECT *")).toEqual([400, invalid("SELECT * requires a FROM clause", [8, 8])]);
    });

    it("answers EXPLAIN PLAN FOR with Druid's PLAN, RESOURCES and ATTRIBUTES row", async () => {
      const explained = async (query: string) => {
        const [names, types, row] = (await answer(`EXPLAIN PLAN FOR ${query}`)) as Answer;
        const [plan, resources, attributes] = row as [string, string, string];
        const native = JSON.parse(plan) as Array<{
          query: { queryType: string; dataSource: { type: string; name?: string } };
          columnMappings: Array<{ outputColumn: string }>;
        }>;
        return {
          names,
          types,
          plans: native.length,
          queryType: native[0]?.query.queryType,
          dataSource: native[0]?.query.dataSource.type,
          outputs: native[0]?.columnMappings.map((m) => m.outputColumn),
          resources: JSON.parse(resources),
          attributes: JSON.parse(attributes),
        };
      };
      const shape = {
        names: ["PLAN", "RESOURCES", "ATTRIBUTES"],
        types: ["VARCHAR", "VARCHAR", "VARCHAR"],
        plans: 1,
      };
      expect(await explained("SELECT COUNT(*) FROM $ds")).toEqual({
        ...shape,
        queryType: "timeseries",
        dataSource: "table",
        outputs: ["EXPR$0"],
        resources: [{ name: ds, type: "DATASOURCE" }],
        attributes: { statementType: "SELECT" },
      });
      expect(await explained("SELECT page, COUNT(*) FROM $ds GROUP BY page")).toMatchObject({
        queryType: "groupBy",
        outputs: ["page", "EXPR$1"],
        resources: [{ name: ds, type: "DATASOURCE" }],
      });
      expect(await explained("SELECT page FROM $ds WHERE added > 5 ORDER BY __time")).toMatchObject({
        queryType: "scan",
        outputs: ["page"],
      });
      expect(
        await explained(
          "SELECT a.page FROM $ds a JOIN (SELECT page FROM $ds GROUP BY page) b ON a.page = b.page",
        ),
      ).toMatchObject({
        queryType: "scan",
        dataSource: "join",
        outputs: ["page"],
        resources: [{ name: ds, type: "DATASOURCE" }],
      });
      expect(await explained("SELECT 1")).toMatchObject({
        queryType: "scan",
        dataSource: "inline",
        outputs: ["EXPR$0"],
        resources: [],
      });
      expect(await refusal("EXPLAIN PLAN FOR SELECT nope FROM $ds")).toEqual([
        400,
        invalid("Column 'nope' not found in any table", [25, 28]),
      ]);
    });
  });
  brokerSqlFunctionSuite(target);
  brokerSqlJsonSuite(target);
  brokerSqlSketchSuite(target);
  brokerSqlEngineConformanceSuite(target);
}
