// SQL Druid's parser refuses, and SQL it reads that the emulator does not run. Every case was sent to a real
// Druid 33.0.0's Broker (broker-sql.conformance.ts; the suite is registered in broker-sql-cases.ts) and the
// expectation is what it answered; the same cases run against the emulator (test/sim/broker-sql-conformance.test.ts).
// No case needs a table: Druid parses before it looks any name up.
//
// Druid's parse errors go on with the token sequences Calcite's JavaCC grammar expected at that point
// (", acceptable options: [...]" and the context's `expected`, or "\nWas expecting one of: ..."): hundreds of
// entries that follow Calcite's grammar states. The emulator leaves that tail out (see SQL the emulator cannot
// read in docs/emulator.md, "Behaviours, by contract section"), so answers are compared without it; everything
// before it — status, error code, message up to the position, line/column context and the unexpected token(s) —
// must be equal.
import { describe, expect, it } from "vitest";
import { type ConformanceTarget, call, json } from "./support.js";

/** An answer reduced to what the emulator reproduces: Druid's expected-token tail removed. */
export function withoutExpectedTokens(body: unknown): unknown {
  if (
    !body ||
    typeof body !== "object" ||
    typeof (body as { errorMessage?: unknown }).errorMessage !== "string"
  )
    return body;
  const b = body as { errorMessage: string; context?: Record<string, unknown> };
  const errorMessage = b.errorMessage
    .replace(/\nWas expecting one of:[\s\S]*$/, "")
    .replace(/, acceptable options: \[[\s\S]*\]$/, "");
  const { expected: _expected, ...context } = b.context ?? {};
  return { ...b, errorMessage, ...(b.context ? { context } : {}) };
}

type Position = [line: number, column: number];

/** "Received an unexpected token [...]": the token(s) JavaCC looked at, where the first starts and ends. */
function token(text: string, [line, column]: Position, [endLine, endColumn]: Position): unknown {
  return {
    error: "druidException",
    errorCode: "invalidInput",
    persona: "USER",
    category: "INVALID_INPUT",
    errorMessage: `Received an unexpected token [${text}] (line [${line}], column [${column}])`,
    context: {
      sourceType: "sql",
      line: String(line),
      column: String(column),
      endLine: String(endLine),
      endColumn: String(endColumn),
      token: text,
    },
  };
}

/** Calcite's rewording for a keyword where an identifier could have stood (no position in the context). */
function keyword(word: string, [line, column]: Position): unknown {
  return plain(`Incorrect syntax near the keyword '${word}' at line ${line}, column ${column}.`);
}

/** A refusal with its message only (lexical errors, Calcite's and Druid's own wordings). */
function plain(errorMessage: string): unknown {
  return {
    error: "druidException",
    errorCode: "invalidInput",
    persona: "USER",
    category: "INVALID_INPUT",
    errorMessage,
    context: { sourceType: "sql" },
  };
}

/** Malformed statements and Druid 33's 400 answer to each. */
export const PARSE_ERRORS: ReadonlyArray<readonly [query: string, answer: unknown]> = [
  ["SELECT FROM t", keyword("FROM", [1, 8])],
  ["SELECT (1", token("<EOF>", [1, 9], [1, 9])],
  ["SELECT 1)", token(")", [1, 9], [1, 9])],
  ["SELECT 1,", token(", <EOF>", [1, 9], [1, 9])],
  ["SELECT 1,, 2", token(", ,", [1, 9], [1, 9])],
  ["SELECT * FROM", keyword("FROM", [1, 10])],
  ["SELECT * FROM sys.segments WHERE", keyword("WHERE", [1, 28])],
  ["SELECT 'abc", token("\\' abc", [1, 8], [1, 8])],
  ['SELECT "abc', token('\\" abc', [1, 8], [1, 8])],
  ["SELECT select FROM t", token("select FROM", [1, 8], [1, 13])],
  ["SELECT 1;", token(";", [1, 9], [1, 9])],
  ["SELECT 1; SELECT 2", token(";", [1, 9], [1, 9])],
  ["SELEC 1", plain("Non-query expression encountered in illegal context")],
  ["SELECT 1 +", token("+ <EOF>", [1, 10], [1, 10])],
  ["SELECT a b c FROM t", token("c", [1, 12], [1, 12])],
  ["SELECT # FROM t", plain('Lexical error at line 1, column 8.  Encountered: "#" (35), after : ""')],
  ["SELECT * FROM t GROUP a", keyword("GROUP", [1, 17])],
  ["SELECT * FROM t ORDER a", keyword("ORDER", [1, 17])],
  ["SELECT COUNT(*) FROM t GROUP BY", token("<EOF>", [1, 31], [1, 31])],
  [
    "INSERT INTO t SELECT 1",
    plain("INSERT operations are not supported by requested SQL engine [native], consider using MSQ."),
  ],
  [
    "INSERT INTO t SELECT 1 PARTITIONED BY DAY",
    plain("INSERT operations are not supported by requested SQL engine [native], consider using MSQ."),
  ],
  [
    "REPLACE INTO t SELECT 1 PARTITIONED BY DAY",
    plain("REPLACE operations are not supported by the requested SQL engine [native].  Consider using MSQ."),
  ],
  [
    "REPLACE INTO t OVERWRITE ALL SELECT 1 PARTITIONED BY DAY",
    plain("REPLACE operations are not supported by the requested SQL engine [native].  Consider using MSQ."),
  ],
  ["SELECT * FROM t LIMIT", keyword("LIMIT", [1, 17])],
  ["SELECT * FROM t LIMIT 'a'", keyword("LIMIT", [1, 17])],
  ["SELECT a FROM t WHERE a IN ()", token(")", [1, 29], [1, 29])],
  ["SELECT CAST(1 AS) FROM t", token(")", [1, 17], [1, 17])],
  ["SELECT CASE WHEN 1 THEN 2 FROM t", token("FROM", [1, 27], [1, 30])],
  ["  ", token("<EOF>", [1, 2], [1, 2])],
  ["DELETE FROM t", plain("Unsupported SQL statement [DELETE]")],
  ["UPDATE t SET a = 1", plain("Unsupported SQL statement [UPDATE]")],
  ["CREATE TABLE t (a INT)", keyword("CREATE", [1, 1])],
  ["select from t", token("from t", [1, 8], [1, 11])],
  ["SELECT a, FROM t", token(", FROM", [1, 9], [1, 9])],
  ["SELECT a FROM t WHERE", keyword("WHERE", [1, 17])],
  ["SELECT a FROM t WHERE a = 1 AND", keyword("AND", [1, 29])],
  ["SELECT a FROM t WHERE (a = 1", token("<EOF>", [1, 28], [1, 28])],
  ["SELECT a FROM t WHERE a = 1)", token(")", [1, 28], [1, 28])],
  ["SELECT COUNT(* FROM t", token("FROM", [1, 16], [1, 19])],
  ["SELECT COUNT(*)) FROM t", token(")", [1, 16], [1, 16])],
  ["SELECT a FROM t t2 t3", token("t3", [1, 20], [1, 21])],
  ["SELECT a FROM t,", token("<EOF>", [1, 16], [1, 16])],
  ["SELECT a FROM t JOIN", keyword("JOIN", [1, 17])],
  ["SELECT a FROM t ORDER BY", token("<EOF>", [1, 24], [1, 24])],
  ["SELECT a FROM t ORDER BY a,", token(", <EOF>", [1, 27], [1, 27])],
  ["SELECT a FROM t GROUP BY a,", token(", <EOF>", [1, 27], [1, 27])],
  ["SELECT a FROM t LIMIT 10 10", token("10", [1, 26], [1, 27])],
  ["SELECT 1 2", token("2", [1, 10], [1, 10])],
  ["SELECT a FROM t WHERE a == 1", token("= =", [1, 25], [1, 25])],
  ["SELECT a FROM t WHERE a = 'x' ORDER BY", token("<EOF>", [1, 38], [1, 38])],
  ["SELECT a AS FROM t", keyword("AS", [1, 10])],
  ["SELECT a AS select FROM t", keyword("AS", [1, 10])],
  ["SELECT value FROM t", token("value FROM", [1, 8], [1, 12])],
  ["SELECT a FROM t WHERE a IN (1,)", token(", )", [1, 30], [1, 30])],
  ["SELECT SUM(a FROM t", token("FROM", [1, 14], [1, 17])],
  ["SELECT a FROM\nt\nWHERE", keyword("WHERE", [3, 1])],
  ["SELECT a\nFROM t WHERE a = = 1", token("= =", [2, 16], [2, 16])],
  ["SELECT * FROM t WHERE a BETWEEN 1", plain("BETWEEN operator has no terminating AND")],
  ["SELECT * FROM t WHERE a LIKE", keyword("LIKE", [1, 25])],
  ["SELECT * FROM t WHERE a IS", token("IS <EOF>", [1, 25], [1, 26])],
  ["SELECT * FROM t WHERE a IS NOT", token("NOT <EOF>", [1, 28], [1, 30])],
  ["SELECT ,a FROM t", token(", a", [1, 8], [1, 8])],
  ["WITH x AS SELECT 1 SELECT * FROM x", token("SELECT", [1, 11], [1, 16])],
  ["WITH x AS (SELECT 1) ", token("<EOF>", [1, 21], [1, 21])],
  ["EXPLAIN SELECT 1", keyword("EXPLAIN", [1, 1])],
  ["EXPLAIN PLAN SELECT 1", token("SELECT", [1, 14], [1, 19])],
  ["SELECT a FROM t WHERE a = 'it''s", token("\\'", [1, 31], [1, 31])],
  ['SELECT a FROM t WHERE b = "x', token('= \\"', [1, 25], [1, 25])],
  ["SELECT @ FROM t", plain('Lexical error at line 1, column 8.  Encountered: "@" (64), after : ""')],
  [
    "SELECT a FROM t WHERE a ! 1",
    plain('Lexical error at line 1, column 26.  Encountered: " " (32), after : "!"'),
  ],
  ["SELECT a FROM t WHERE a = 1 OR OR b = 2", keyword("OR", [1, 29])],
  ["SELECT * FROM (SELECT 1", token("<EOF>", [1, 23], [1, 23])],
  ["SELECT * FROM (SELECT 1)) x", token(")", [1, 25], [1, 25])],
  ["SELECT CAST(a AS VARCHAR FROM t", token("FROM", [1, 26], [1, 29])],
  ["SELECT CAST(a VARCHAR) FROM t", token("VARCHAR", [1, 15], [1, 21])],
  ["SELECT a FROM t WHERE )", keyword("WHERE", [1, 17])],
  ["SELECT a FROM t HAVING", keyword("HAVING", [1, 17])],
  ["SELECT 1 AND", keyword("AND", [1, 10])],
  ["SELECT a FROM t WHERE a =", token("= <EOF>", [1, 25], [1, 25])],
  ["SELECT a FROM t WHERE a = 1 AND )", keyword("AND", [1, 29])],
  ["SELECT a FROM t WHERE NOT", token("<EOF>", [1, 25], [1, 25])],
  ["SELECT a + FROM t", token("+ FROM", [1, 10], [1, 10])],
  ["SELECT a FROM t WHERE a !", plain('Lexical error at line 1, column 26.  Encountered: <EOF> after : ""')],
  ["SELECT a FROM t WHERE a = 'abc", token("= \\'", [1, 25], [1, 25])],
  ["SELECT a, b FROM t WHERE", keyword("WHERE", [1, 20])],
  ["SELECT a FROM t LIMIT", keyword("LIMIT", [1, 17])],
  ["SELECT a FROM t OFFSET", keyword("OFFSET", [1, 17])],
  ["SELECT a FROM t WHERE a = 1 GROUP BY", token("<EOF>", [1, 36], [1, 36])],
  ["SELECT a FROM t ORDER BY a DESC,", token(", <EOF>", [1, 32], [1, 32])],
  ["SELECT 1 FROM t WHERE a IN (", token("<EOF>", [1, 28], [1, 28])],
  ["SELECT", token("<EOF>", [1, 6], [1, 6])],
  ["SELECT a FROM t where", token("where <EOF>", [1, 17], [1, 21])],
  ["SELECT a FROM t WHERE a = (1", token("<EOF>", [1, 28], [1, 28])],
  ["SELECT (1 + 2 FROM t", token("FROM", [1, 15], [1, 18])],
  ["SELECT a FROM t WHERE a = 1 ORDER a", token("ORDER a", [1, 29], [1, 33])],
  ["SELECT a FROM t WHERE a = 1 LIMIT", token("LIMIT <EOF>", [1, 29], [1, 33])],
  ["SELECT UPPER( FROM t", keyword("FROM", [1, 15])],
  ["SELECT UPPER(a,) FROM t", token(", )", [1, 15], [1, 15])],
  ["SELECT a FROM t AS", keyword("AS", [1, 17])],
  ["SELECT a FROM t WHERE a BETWEEN", keyword("BETWEEN", [1, 25])],
  ["SELECT a FROM t WHERE a IN", token("IN <EOF>", [1, 25], [1, 26])],
  ["SELECT a FROM (", token("( <EOF>", [1, 15], [1, 15])],
  ["SELECT 1 & 2", plain('Lexical error at line 1, column 10.  Encountered: "&" (38), after : ""')],
  ["SELECT ~1", plain('Lexical error at line 1, column 8.  Encountered: "~" (126), after : ""')],
  ["SELECT 2 ^ 3", token("^", [1, 10], [1, 10])],
  [
    "SELECT `a` FROM sys.segments",
    plain('Lexical error at line 1, column 8.  Encountered: "`" (96), after : ""'),
  ],
  ["SELECT 1::VARCHAR", token(":", [1, 9], [1, 9])],
  ["SELECT 1 MINUS SELECT 2", plain("MINUS is not allowed under the current SQL conformance level")],
  ["SELECT 1 /* open comment", plain('Lexical error at line 1, column 25.  Encountered: <EOF> after : ""')],
  [" ", token("<EOF>", [1, 1], [1, 1])],
  ["create table t (a int)", token("create", [1, 1], [1, 6])],
  [") SELECT 1", token(")", [1, 1], [1, 1])],
  ["SELECT 1 WHERE 1 = 0", keyword("WHERE", [1, 10])],
  ["select 1 where 1 = 0", token("where", [1, 10], [1, 14])],
  ["SELECT a FROM t WHERE a IS NOT NULL AND", keyword("AND", [1, 37])],
  ["INSERT INTO t SELEC 1", plain("Non-query expression encountered in illegal context")],
  ["INSERT t SELECT 1", token("t", [1, 8], [1, 8])],
  [
    "REPLACE INTO t OVERWRITE SELECT 1 PARTITIONED BY DAY",
    plain("REPLACE operations are not supported by the requested SQL engine [native].  Consider using MSQ."),
  ],
  ["INSERT INTO t SELECT 1 PARTITIONED BY", token("<EOF>", [1, 37], [1, 37])],
  ["DELETE FROM", token("<EOF>", [1, 11], [1, 11])],
  ["SELECT * FROM t WHERE a LIKE 'x' ESCAPE", keyword("ESCAPE", [1, 34])],
  ["SELECT a FROM t WHERE a NOT", token("NOT <EOF>", [1, 25], [1, 27])],
  ["SELECT DISTINCT FROM t", keyword("FROM", [1, 17])],
  ["SELECT (SELECT 1", token("<EOF>", [1, 16], [1, 16])],
  ["SELECT a\nFROM t\nWHERE a =", token("= <EOF>", [3, 9], [3, 9])],
  [
    "SELECT datasource FROM sys.segments LIMIT 1, 2",
    plain("'LIMIT start, count' is not allowed under the current SQL conformance level"),
  ],
  // Mistakes as people make them: tabs, comments, joins, CTEs, qualified names, aggregates' clauses.
  ["SELECT\ta FROM t WHERE", keyword("WHERE", [1, 17])],
  ["SELECT a FROM t\tWHERE\ta = = 1", token("= =", [1, 25], [1, 25])],
  ["SELECT a FROM t JOIN u ON", keyword("ON", [1, 24])],
  ["SELECT a FROM t LEFT u", keyword("LEFT", [1, 17])],
  ["SELECT a FROM t INNER JOIN u USING", keyword("USING", [1, 30])],
  ["SELECT a FROM t WHERE a IN (SELECT b FROM u", token("<EOF>", [1, 43], [1, 43])],
  ["SELECT a FROM t WHERE a IN (SELECT b FROM u))", token(")", [1, 45], [1, 45])],
  ["SELECT COUNT(*) AS FROM t", keyword("AS", [1, 17])],
  ["SELECT COUNT(DISTINCT) FROM t", token(")", [1, 22], [1, 22])],
  ["SELECT a FROM t WHERE __time >= CURRENT_TIMESTAMP - INTERVAL '1' DAY AND", keyword("AND", [1, 70])],
  [
    "SELECT TIME_FLOOR(__time, 'PT1H') AS h, COUNT(*) FROM t GROUP BY 1 ORDER BY 1 DESC LIMIT",
    token("LIMIT <EOF>", [1, 84], [1, 88]),
  ],
  ["SELECT CASE a WHEN 'x' THEN 1 ELSE 0 FROM t", token("FROM", [1, 38], [1, 41])],
  ["SELECT CASE END FROM t", keyword("END", [1, 13])],
  ["SELECT a FROM t WHERE a LIKE 'x%' AND b NOT LIKE", token("<EOF>", [1, 48], [1, 48])],
  ['SELECT "a FROM t', token('\\" a', [1, 8], [1, 8])],
  ['SELECT a FROM "t', keyword("FROM", [1, 10])],
  ["SELECT a FROM t WHERE b = 'x", token("= \\'", [1, 25], [1, 25])],
  ["WITH x AS (SELECT 1), SELECT * FROM x", token(", SELECT", [1, 21], [1, 21])],
  ["WITH AS (SELECT 1) SELECT 1", keyword("WITH", [1, 1])],
  ["SELECT * FROM t ORDER BY a LIMIT 10 OFFSET", token("OFFSET <EOF>", [1, 37], [1, 42])],
  ["SELECT * FROM t LIMIT 10,", token("<EOF>", [1, 25], [1, 25])],
  ["SELECT a.b. FROM t", token(". FROM", [1, 11], [1, 11])],
  ["SELECT t. FROM t", token(". FROM", [1, 9], [1, 9])],
  ["SELECT * FROM sys.", token(". <EOF>", [1, 18], [1, 18])],
  ["SELECT CAST(a AS) FROM t", token(")", [1, 17], [1, 17])],
  ["SELECT a FROM t GROUP BY a HAVING", keyword("HAVING", [1, 28])],
  ["SELECT a FROM t HAVING COUNT(*) >", token("> <EOF>", [1, 33], [1, 33])],
  ["SELECT 1 FROM t WHERE a BETWEEN 1 AND", plain("BETWEEN operator has no terminating AND")],
  ["SELECT 1 FROM t WHERE a = 1 GROUP BY a ORDER BY a, ORDER BY b", token(", ORDER", [1, 50], [1, 50])],
  ["SELECT MAX(a) FILTER WHERE a > 1 FROM t", keyword("FILTER", [1, 15])],
  ["SELECT MAX(a) FILTER (a > 1) FROM t", token("a", [1, 23], [1, 23])],
  ["SELECT DISTINCT", token("<EOF>", [1, 15], [1, 15])],
  ["SELECT a FROM t WHERE a IS NULL OR", keyword("OR", [1, 33])],
  ["SELECT * FROM t WHERE NOT IN (1)", keyword("IN", [1, 27])],
  ["SELECT a -- comment\nFROM t WHERE", keyword("WHERE", [2, 8])],
  ["/* c */ SELECT FROM t", keyword("FROM", [1, 16])],
  ["SELECT 1.2.3", token(".3", [1, 11], [1, 12])],
  ["SELECT 'a' || FROM t", token("|| FROM", [1, 12], [1, 13])],
  ["SELECT a FROM t WHERE a = 1 AND (b = 2 OR c = 3", token("<EOF>", [1, 47], [1, 47])],
  ["SELECT EXTRACT(FROM __time) FROM t", keyword("FROM", [1, 16])],
  ["SELECT TIMESTAMPDIFF(DAY, a) FROM t", token(")", [1, 28], [1, 28])],
  // Misspelt and misplaced clauses, operators, quotes; reserved words as aliases (names need quotes).
  ["SELECT a FORM t", token("t", [1, 15], [1, 15])],
  ["SELECT a FROM t WHER a = 1", token("a", [1, 22], [1, 22])],
  ["SELECT a FROM t GROUPBY a", token("a", [1, 25], [1, 25])],
  ["SELECT a FROM t ORDERBY a", token("a", [1, 25], [1, 25])],
  ["SELECT a FROM t LIMIT 10 WHERE a = 1", token("WHERE", [1, 26], [1, 30])],
  ["SELECT a FROM t ORDER BY a WHERE a = 1", token("WHERE", [1, 28], [1, 32])],
  ["SELECT a FROM t ORDER BY a GROUP BY a", token("GROUP", [1, 28], [1, 32])],
  ["SELECT a FROM t HAVING COUNT(*) > 1 GROUP BY a", token("GROUP", [1, 37], [1, 41])],
  ["SELECT a FROM t GROUP BY a,, b", token(", ,", [1, 27], [1, 27])],
  ["SELECT a FROM t WHERE UPPER(a = 'x'", token("<EOF>", [1, 35], [1, 35])],
  ["SELECT COUNT(*) AS count FROM t", keyword("AS", [1, 17])],
  ["SELECT a AS user FROM t", keyword("AS", [1, 10])],
  ["SELECT a AS from FROM t", keyword("AS", [1, 10])],
  ["SELECT a FROM t WHERE a = 1 AND AND b = 2", keyword("AND", [1, 29])],
  ["SELECT a FROM t WHERE a = 1 b = 2", token("b", [1, 29], [1, 29])],
  ["SELECT a FROM t WHERE a IN 1, 2", token("IN 1", [1, 25], [1, 26])],
  ["SELECT a FROM t WHERE a IN (1 2)", token("2", [1, 31], [1, 31])],
  [
    "SELECT COUNT(*) FROM t WHERE __time BETWEEN '2020-01-01' '2020-01-02'",
    plain("BETWEEN operator has no terminating AND"),
  ],
  ["SELECT a FROM t t2 WHERE t2.", token(". <EOF>", [1, 28], [1, 28])],
  ["SELECT SUM(a) b, FROM t", token(", FROM", [1, 16], [1, 16])],
  ["SELECT a FROM t WHERE a <> ", token("<> <EOF>", [1, 25], [1, 26])],
  [
    "SELECT a FROM t WHERE a != 1 AND b =! 2",
    plain('Lexical error at line 1, column 38.  Encountered: " " (32), after : "!"'),
  ],
  ["SELECT a FROM t WHERE a => 1", token("=>", [1, 25], [1, 26])],
  ["SELECT a FROM t WHERE a =< 1", token("= <", [1, 25], [1, 25])],
  ["SELECT 1 FROM t WHERE a IS NOT NUL", token("NOT NUL", [1, 28], [1, 30])],
  ["SELECT CAST(a AS VARCHAR(10) FROM t", token("FROM", [1, 30], [1, 33])],
  ["SELECT a FROM (SELECT a FROM t) AS", keyword("AS", [1, 33])],
  ["SELECT a FROM (SELECT a FROM t) AS x WHERE", keyword("WHERE", [1, 38])],
  ["SELECT DISTINCT a, FROM t", token(", FROM", [1, 18], [1, 18])],
  ["SELECT a FROM t UNION", token("<EOF>", [1, 21], [1, 21])],
  ["SELECT a FROM t WHERE a LIKE 'x' OR", keyword("OR", [1, 34])],
  ["SELECT * FROM t WHERE a = 1;;", token(";", [1, 28], [1, 28])],
  ['SELECT a."b FROM t', token('. \\"', [1, 9], [1, 9])],
  ["SELECT 'it's' FROM t", token("\\'", [1, 13], [1, 13])],
  ["SELECT TIME_FLOOR(__time, 'PT1H' FROM t", token("FROM", [1, 34], [1, 37])],
  ["SELECT APPROX_COUNT_DISTINCT(a)) FROM t", token(")", [1, 32], [1, 32])],
  ["SELECT a FROM t ORDER BY a ASC DESC", token("DESC", [1, 32], [1, 35])],
  ["SELECT a FROM t ORDER BY a NULLS", token("NULLS <EOF>", [1, 28], [1, 32])],
  ["EXPLAIN PLAN FOR", token("<EOF>", [1, 16], [1, 16])],
  ["SELECT a FROM t FETCH FIRST 10", token("<EOF>", [1, 30], [1, 30])],
  ["SELECT a FROM t OFFSET 5 ROWS FETCH NEXT", token("<EOF>", [1, 40], [1, 40])],
  ["SELECT 1 AS count FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS sum FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS min FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS max FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS avg FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS user FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS timestamp FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS date FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS time FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS day FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS hour FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS month FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS year FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS position FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS rank FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS row FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS result FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS language FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS system FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS floor FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS ceil FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS lower FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS upper FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS abs FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS left FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS right FROM sys.segments", keyword("AS", [1, 10])],
  ["SELECT 1 AS current_date FROM sys.segments", keyword("AS", [1, 10])],
  // Typed literals (INTERVAL, TIMESTAMP, DATE) without their literal: an operator's lookahead reads into them.
  ["SELECT a FROM t WHERE __time > DATE", token("> DATE <EOF>", [1, 30], [1, 30])],
  ["SELECT a FROM t WHERE __time > TIMESTAMP 5", token("> TIMESTAMP 5", [1, 30], [1, 30])],
  ["SELECT INTERVAL", keyword("INTERVAL", [1, 8])],
  ["SELECT a FROM t WHERE a = 1 AND TIMESTAMP", keyword("AND", [1, 29])],
  ["SELECT 1, INTERVAL", keyword("INTERVAL", [1, 11])],
  ["SELECT a FROM t WHERE __time BETWEEN TIMESTAMP AND 1", keyword("TIMESTAMP", [1, 38])],
  [
    "SELECT a FROM t WHERE __time >= CURRENT_TIMESTAMP - INTERVAL DAY",
    token("- INTERVAL DAY", [1, 51], [1, 51]),
  ],
  ["SELECT a FROM t WHERE __time >= TIMESTAMP", token(">= TIMESTAMP <EOF>", [1, 30], [1, 31])],
  // Druid's ingestion clauses, which the Broker parses and then refuses to run.
  [
    "INSERT INTO t SELECT 1 CLUSTERED BY 1",
    plain("INSERT operations are not supported by requested SQL engine [native], consider using MSQ."),
  ],
  ["INSERT INTO t SELECT 1 CLUSTERED BY 1 PARTITIONED BY DAY", token("PARTITIONED", [1, 39], [1, 49])],
  [
    "REPLACE INTO t OVERWRITE ALL SELECT 1 PARTITIONED BY DAY CLUSTERED BY 1",
    plain("REPLACE operations are not supported by the requested SQL engine [native].  Consider using MSQ."),
  ],
  ["INSERT INTO t SELECT 1 PARTITIONED BY DAY CLUSTERED BY", token("<EOF>", [1, 54], [1, 54])],
  // Reserved words as names: function names without their call, sys.segments' "start" unquoted.
  ["SELECT a FROM t, USER", keyword("USER", [1, 18])],
  ["SELECT a FROM t WHERE a IN (SELECT)", token(")", [1, 35], [1, 35])],
  ["SELECT a FROM t JOIN u ON COUNT", keyword("COUNT", [1, 27])],
  ["SELECT a FROM t, SUM", keyword("SUM", [1, 18])],
  ["SELECT 1 FROM t GROUP BY a HAVING SUM", keyword("SUM", [1, 35])],
  ["SELECT a FROM t AS t2 YEAR", token("YEAR", [1, 23], [1, 26])],
  ["SELECT start FROM sys.segments LIMIT 1", token("start FROM", [1, 8], [1, 12])],
  ["SELECT 1 AS value FROM sys.segments LIMIT 1", keyword("AS", [1, 10])],
  ["SELECT 1 AS position FROM sys.segments LIMIT 1", keyword("AS", [1, 10])],
  ["SELECT 1 FROM sys.segments WHERE year = 1", token("year =", [1, 34], [1, 37])],
  ["SELECT 1 AS start FROM sys.segments LIMIT 1", keyword("AS", [1, 10])],
  // A type's precision and an interval's unit (the emulator once read to the end of the text looking for ")").
  ["SELECT CAST(1 AS VARCHAR(", token("( <EOF>", [1, 25], [1, 25])],
  ["SELECT INTERVAL '1' DAY(", token("( <EOF>", [1, 24], [1, 24])],
  ["SELECT INTERVAL '1' FROM t", token("\\'1\\' FROM", [1, 17], [1, 19])],
  ["SELECT INTERVAL '1' MILLISECOND", token("\\'1\\' MILLISECOND", [1, 17], [1, 19])],
  ["SELECT CAST(1 AS VARCHAR(10)", token("<EOF>", [1, 28], [1, 28])],
  ["SELECT CAST(1 AS DECIMAL(10,) FROM t", token(", )", [1, 28], [1, 28])],
  // EXPLAIN of what the Broker does not run; an ingestion's query in parentheses.
  [
    "EXPLAIN PLAN FOR INSERT INTO t SELECT 1 PARTITIONED BY DAY",
    plain("INSERT operations are not supported by requested SQL engine [native], consider using MSQ."),
  ],
  [
    "INSERT INTO t (SELECT 1) PARTITIONED BY DAY",
    plain("INSERT operations are not supported by requested SQL engine [native], consider using MSQ."),
  ],
  ["EXPLAIN PLAN FOR DELETE FROM t", plain("Unsupported SQL statement [EXPLAIN]")],
  ["EXPLAIN PLAN FOR", token("<EOF>", [1, 16], [1, 16])],
  // Letters beyond ASCII, numbers and their ends.
  ["SELECT 'é", token("\\' \\u00e9", [1, 8], [1, 8])],
  ["SELECT a FROM t WHERE a = 'x' AND b = \"é", token('= \\"', [1, 37], [1, 37])],
  [
    "SELECT a FROM t WHERE a ≥ 1",
    plain('Lexical error at line 1, column 25.  Encountered: "\\u2265" (8805), after : ""'),
  ],
];

/**
 * Whether an answer is Druid's refusal of the text as SQL (its parser's messages), as opposed to a
 * validation, planning or run-time answer to SQL it read.
 */
export function isParseError(status: number, body: unknown): boolean {
  const message = (body as { errorMessage?: unknown } | null)?.errorMessage;
  return (
    status === 400 &&
    typeof message === "string" &&
    /^(Received an unexpected token|Incorrect syntax near the keyword|Lexical error|Non-query expression)/.test(
      message,
    )
  );
}

/**
 * SQL Druid 33's parser reads that the emulator does not run (it answers 501 for these; the real Druid runs
 * them or refuses them past parsing: a validator or planner message, never a parse error). Over system tables,
 * which every Druid has.
 */
export const KNOWN_NOT_RUN: readonly string[] = [
  "SELECT 1 UNION ALL SELECT 2",
  "select 1 union all select 2",
  "SELECT datasource FROM sys.segments INTERSECT SELECT datasource FROM sys.segments",
  "SELECT datasource FROM sys.segments EXCEPT SELECT datasource FROM sys.segments",
  "SELECT COUNT(*) OVER () FROM sys.segments",
  "SELECT datasource FROM sys.segments WINDOW w AS (ORDER BY datasource)",
  "SELECT datasource FROM sys.segments QUALIFY ROW_NUMBER() OVER (ORDER BY datasource) = 1",
  "SELECT 1 FROM sys.segments WHERE EXISTS (SELECT 1 FROM sys.servers)",
  "SELECT * FROM UNNEST(ARRAY[1, 2]) AS u(x)",
  "SELECT ARRAY[1, 2]",
  "VALUES (1)",
  "(SELECT 1)",
  "SELECT {fn UCASE('a')}",
  "SELECT 1 FROM sys.segments NATURAL JOIN sys.servers",
  "SELECT 1 FROM sys.segments, LATERAL (SELECT 1)",
  "SELECT 1 FROM sys.segments TABLESAMPLE SYSTEM(10)",
  "SELECT datasource FROM sys.segments ORDER BY datasource NULLS FIRST",
  "SELECT 1 IS DISTINCT FROM 2",
  "SELECT 'a' LIKE 'b' ESCAPE 'c'",
  "SELECT 1 = ANY (SELECT 2)",
  "SELECT COUNT(*) FROM sys.segments GROUP BY ROLLUP(datasource)",
  "SELECT COUNT(*) FROM sys.segments GROUP BY CUBE(datasource)",
  "SELECT INTERVAL '1-2' YEAR TO MONTH",
  "SELECT ROW(1, 2)",
  "SELECT 'a' ILIKE 'b'",
  "SELECT 'a' SIMILAR TO 'b'",
  "SELECT TRUE IS UNKNOWN",
  "SELECT X'ab'",
  "EXPLAIN PLAN WITH TYPE FOR SELECT 1",
  "SELECT (1, 2)",
  "SELECT 1 FROM sys.segments WHERE (datasource, size) IN (('a', 1))",
  "SELECT JSON_VALUE('{}', '$.a' DEFAULT 'x' ON EMPTY)",
  "SELECT OVERLAY('abc' PLACING 'x' FROM 1)",
];

export function brokerSqlSyntaxSuite(target: ConformanceTarget): void {
  async function ask(query: string): Promise<[number, unknown]> {
    const ex = await call(target, "POST", "/druid/v2/sql", { query });
    return [ex.status, json(ex)];
  }

  describe(`SQL Druid's parser refuses, and SQL it reads: ${target.name}`, () => {
    it("refuses malformed statements with Druid's parse error, position and token", async () => {
      const answers: unknown[] = [];
      for (const [query] of PARSE_ERRORS) {
        const [status, body] = await ask(query);
        answers.push([query, status, withoutExpectedTokens(body)]);
      }
      expect(answers).toEqual(PARSE_ERRORS.map(([query, answer]) => [query, 400, answer]));
    });

    it("reads the syntax the emulator does not run: no case is a parse error", async () => {
      const parseErrors: unknown[] = [];
      for (const query of KNOWN_NOT_RUN) {
        const [status, body] = await ask(query);
        if (isParseError(status, body)) parseErrors.push([query, status, body]);
      }
      expect(parseErrors).toEqual([]);
    });
  });
}
