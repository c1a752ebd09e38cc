// Druid SQL's scalar functions one by one (src/sim/sql-functions.ts, docs/querying/sql-scalar.md): every case
// below ran on a real Druid 33.0.0 (broker-sql.conformance.ts) and its expectation is what that Druid answered —
// the SQL types and rows (resultFormat "array" with sqlTypesHeader), or the refusal's status, code, persona,
// category and message. The same cases run against the emulator (test/sim/broker-sql-conformance.test.ts).
// Constant expressions (SELECT f(…) without FROM) are folded by Calcite's planner; the same functions over the
// columns of a small datasource of four rows (a leap day, empty text, a row of nulls, blanks) run in Druid's
// native engine. Left out: forms a real Druid 33 answers with an internal fault (a constant folded to a null
// TIMESTAMP, NaN or infinity; REPEAT/LPAD folded to NULL; GREATEST with an untyped NULL).
import { beforeAll, describe, expect, it } from "vitest";
import {
  type ConformanceTarget,
  call,
  eventually,
  freshId,
  indexParallelSpec,
  json,
  writeInput,
} from "./support.js";

/** Four rows: `s` text (with an empty and a blank-padded value), `p` a time pattern, `n` long, `d` double. */
const ROWS = [
  { time: "2024-02-29T12:34:56.789Z", s: "Hello", p: "yyyy-MM-dd", n: 10, d: 2.5 },
  { time: "2026-03-01T00:00:00.000Z", s: "", p: "", n: -3, d: -2.5 },
  { time: "2026-03-01T23:30:00.000Z" },
  { time: "2027-01-01T06:00:00.000Z", s: "  pad  ", p: "HH:mm", n: 0, d: 0.125 },
];

/** A refusal as compared: Druid's error body without its `context`. */
interface Refusal {
  status: number;
  errorCode: string;
  persona: string;
  category: string;
  errorMessage: string;
}

/** The SQL types, then the rows; or the refusal. */
type Outcome = unknown[][] | Refusal;

/** A query (`$ds` is the datasource), what Druid 33 answered, and the query context when it has one. */
type Case = [string, Outcome] | [string, Outcome, Record<string, unknown>];

const GROUPS: Array<{ title: string; cases: Case[] }> = [
  {
    title:
      "changes case and measures text: LOWER, UPPER, CHAR_LENGTH and its aliases, REVERSE, CHAR typing of literals",
    cases: [
      [
        "SELECT LOWER('AbC'), UPPER('aBc'), LOWER(CAST('AbC' AS VARCHAR)), CHAR_LENGTH(''), LENGTH('héllo'), STRLEN('ab'), CHARACTER_LENGTH('abc')",
        [
          ["CHAR", "CHAR", "VARCHAR", "INTEGER", "INTEGER", "INTEGER", "INTEGER"],
          ["abc", "ABC", "abc", 0, 5, 2, 3],
        ],
      ],
      [
        "SELECT LOWER(NULL), UPPER(NULL)",
        [
          ["NULL", "NULL"],
          [null, null],
        ],
      ],
      [
        "SELECT REVERSE('abc'), REVERSE(''), REVERSE(CAST(NULL AS VARCHAR))",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR"],
          ["cba", "", null],
        ],
      ],
      [
        "SELECT s, LOWER(s), UPPER(s), CHAR_LENGTH(s), LENGTH(s), REVERSE(s) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "INTEGER", "VARCHAR"],
          ["Hello", "hello", "HELLO", 5, 5, "olleH"],
          ["", "", "", 0, 0, ""],
          [null, null, null, null, null, null],
          ["  pad  ", "  pad  ", "  PAD  ", 7, 7, "  dap  "],
        ],
      ],
    ],
  },
  {
    title: "joins text: CONCAT, TEXTCAT and ||, null in gives null out",
    cases: [
      [
        "SELECT CONCAT('a', NULL), CONCAT('a', 1, 2.5), CONCAT('x'), 'a' || 1, TEXTCAT('a', 'b'), TEXTCAT('a', CAST(NULL AS VARCHAR))",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          [null, "a12.5", "x", "a1", "ab", null],
        ],
      ],
      [
        "SELECT CONCAT(s, p), TEXTCAT(s, p), CONCAT(s, n), CONCAT(s, d), s || '!' FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["Helloyyyy-MM-dd", "Helloyyyy-MM-dd", "Hello10", "Hello2.5", "Hello!"],
          ["", "", "-3", "-2.5", "!"],
          [null, null, null, null, null],
          ["  pad  HH:mm", "  pad  HH:mm", "  pad  0", "  pad  0.125", "  pad  !"],
        ],
      ],
    ],
  },
  {
    title:
      "cuts text: LEFT, RIGHT, SUBSTRING/SUBSTR bounds (past the end, zero and negative lengths, CHAR padding) and their refusals",
    cases: [
      [
        "SELECT LEFT('hello', 2), LEFT('hello', 0), LEFT('hello', 10), LEFT(CAST(NULL AS VARCHAR), 2), LEFT('hello', CAST(NULL AS INTEGER))",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["he", "", "hello", null, null],
        ],
      ],
      [
        "SELECT RIGHT('hello', 2), RIGHT('hello', 0), RIGHT('hello', 10), RIGHT(CAST(NULL AS VARCHAR), 2), RIGHT('hello', CAST(NULL AS INTEGER))",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["lo", "", "hello", null, null],
        ],
      ],
      [
        "SELECT LEFT(s, 2), RIGHT(s, 2), LEFT(s, 0), RIGHT(s, 0), LEFT(s, 100) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["He", "lo", "", "", "Hello"],
          ["", "", "", "", ""],
          [null, null, null, null, null],
          ["  ", "  ", "", "", "  pad  "],
        ],
      ],
      [
        "SELECT SUBSTRING('hello', 2), SUBSTRING('hello', 2, 2), SUBSTRING('hello', 5), SUBSTRING('hello', 6), SUBSTRING('hello', 2, 0), SUBSTRING('hello', 2, 100), SUBSTR('hello', 3, 1)",
        [
          ["CHAR", "CHAR", "CHAR", "CHAR", "CHAR", "CHAR", "CHAR"],
          ["ello ", "el   ", "o    ", null, "     ", "ello ", "l    "],
        ],
      ],
      [
        "SELECT SUBSTRING(CAST('hello' AS VARCHAR), 2), SUBSTRING(CAST('hello' AS VARCHAR), 2, 0), SUBSTRING(CAST('hello' AS VARCHAR), 1, -1), SUBSTRING(CAST('hello' AS VARCHAR), 6), SUBSTRING(CAST(NULL AS VARCHAR), 2)",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["ello", "", "hello", null, null],
        ],
      ],
      [
        "SELECT SUBSTRING(s, 2), SUBSTRING(s, 2, 2), SUBSTRING(s, 10), SUBSTRING(s FROM 3 FOR 2) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["ello", "el", null, "ll"],
          [null, null, null, null],
          [null, null, null, null],
          [" pad  ", " p", null, "pa"],
        ],
      ],
      ["SELECT SUBSTRING(s, 1, n) FROM $ds WHERE n > 0", [["VARCHAR"], ["Hello"]]],
      [
        "SELECT SUBSTRING('hello', 2, CAST(NULL AS INTEGER))",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: 'Cannot invoke "java.lang.Number.intValue()" because "value" is null',
        },
      ],
      [
        "SELECT SUBSTRING(s, CAST(NULL AS INTEGER)) FROM $ds ORDER BY __time",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: 'Cannot invoke "java.lang.Number.intValue()" because "value" is null',
        },
      ],
      [
        "SELECT SUBSTRING(CAST('hello' AS VARCHAR), 0)",
        {
          status: 500,
          errorCode: "general",
          persona: "DEVELOPER",
          category: "DEFENSIVE",
          errorMessage: "Function[substring] encountered unknown exception.",
        },
      ],
    ],
  },
  {
    title:
      "trims and pads: BTRIM/LTRIM/RTRIM/TRIM with characters, LPAD/RPAD (zero, negative, empty pad), REPEAT",
    cases: [
      [
        "SELECT BTRIM('  ab  '), BTRIM('xxabxx', 'x'), LTRIM('  ab  '), LTRIM('xyab', 'yx'), RTRIM('  ab  '), RTRIM('abxy', 'xy'), BTRIM('ab', ''), BTRIM(CAST(NULL AS VARCHAR)), BTRIM('ab', CAST(NULL AS VARCHAR))",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["ab", "ab", "ab  ", "ab", "  ab", "ab", "ab", null, "ab"],
        ],
      ],
      [
        "SELECT TRIM('  ab  '), TRIM(BOTH 'x' FROM 'xxaxx'), TRIM(LEADING 'x' FROM 'xxaxx'), TRIM(TRAILING 'x' FROM 'xxaxx'), TRIM(BOTH 'xy' FROM 'yxaxy'), TRIM(BOTH FROM '  a  ')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["ab", "a", "axx", "xxa", "a", "a"],
        ],
      ],
      [
        "SELECT BTRIM(s), LTRIM(s), RTRIM(s), TRIM(s), BTRIM(s, 'Ho') FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["Hello", "Hello", "Hello", "Hello", "ell"],
          ["", "", "", "", ""],
          [null, null, null, null, null],
          ["pad", "pad  ", "  pad", "pad", "  pad  "],
        ],
      ],
      [
        "SELECT LPAD('abc', 5, 'x'), LPAD('abc', 2, 'x'), LPAD('abc', 6, 'xy'), LPAD('abc', 5), LPAD('abc', 5, ''), LPAD('abc', -1, 'x')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["xxabc", "ab", "xyxabc", "  abc", "abc", ""],
        ],
      ],
      [
        "SELECT RPAD('abc', 5, 'x'), RPAD('abc', 2, 'x'), RPAD('abc', 6, 'xy'), RPAD('abc', 5), RPAD('abc', 5, ''), RPAD('abc', -1, 'x')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["abcxx", "ab", "abcxyx", "abc  ", "abc", ""],
        ],
      ],
      [
        "SELECT LPAD(CAST(NULL AS VARCHAR), 5, 'x'), LPAD('a', CAST(NULL AS INTEGER), 'x'), LPAD('a', 5, CAST(NULL AS VARCHAR)), RPAD('a', 5, CAST(NULL AS VARCHAR))",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          [null, null, null, null],
        ],
      ],
      [
        "SELECT LPAD(s, 7, '*'), RPAD(s, 7, 'ab'), LPAD(s, 3, '*'), LPAD(s, 0, 'x'), RPAD(s, -2, 'x'), LPAD(s, 8, p) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["**Hello", "Helloab", "Hel", null, "", "yyyHello"],
          ["*******", "abababa", "***", null, "", ""],
          [null, null, null, null, null, null],
          ["  pad  ", "  pad  ", "  p", null, "", "H  pad  "],
        ],
      ],
      [
        "SELECT REPEAT('ab', 3), REPEAT(CAST(NULL AS VARCHAR), 2), REPEAT('ab', CAST(NULL AS INTEGER))",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR"],
          ["ababab", null, null],
        ],
      ],
      [
        "SELECT REPEAT(s, 2), REPEAT(s, 0), REPEAT(s, -1) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR"],
          ["HelloHello", null, null],
          ["", null, null],
          [null, null, null],
          ["  pad    pad  ", null, null],
        ],
      ],
    ],
  },
  {
    title:
      "finds and replaces text: REPLACE (empty and null targets), STRPOS, POSITION, CONTAINS_STRING, ICONTAINS_STRING",
    cases: [
      [
        "SELECT REPLACE('abcabc', 'b', 'X'), REPLACE('abc', '', 'X'), REPLACE('abc', 'b', ''), REPLACE('aaa', 'aa', 'b'), REPLACE(CAST(NULL AS VARCHAR), 'a', 'b')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["aXcaXc", "XaXbXcX", "ac", "ba", null],
        ],
      ],
      [
        "SELECT REPLACE(s, 'l', 'L'), REPLACE(s, '', '-'), REPLACE(s, p, 'x') FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR"],
          ["HeLLo", "-H-e-l-l-o-", "Hello"],
          ["", "-", "x"],
          [null, null, null],
          ["  pad  ", "- - -p-a-d- - -", "  pad  "],
        ],
      ],
      [
        "SELECT REPLACE('abc', 'a', CAST(NULL AS VARCHAR))",
        {
          status: 500,
          errorCode: "general",
          persona: "DEVELOPER",
          category: "DEFENSIVE",
          errorMessage: "Function[replace] encountered unknown exception.",
        },
      ],
      [
        "SELECT STRPOS('hello', 'l'), STRPOS('hello', 'z'), STRPOS('hello', ''), STRPOS(CAST(NULL AS VARCHAR), 'a'), STRPOS('a', CAST(NULL AS VARCHAR))",
        [
          ["INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER"],
          [3, 0, 1, null, null],
        ],
      ],
      [
        "SELECT POSITION('l' IN 'hello'), POSITION('l' IN 'hello' FROM 4), POSITION('z' IN 'hello'), POSITION('' IN 'hello'), POSITION(CAST(NULL AS VARCHAR) IN 'a'), POSITION('l' IN 'hello' FROM 0), POSITION('l' IN 'hello' FROM 10), POSITION('l' IN 'hello' FROM -2)",
        [
          ["INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER"],
          [3, 4, 0, 1, null, 3, 0, 3],
        ],
      ],
      [
        "SELECT CONTAINS_STRING('Hello', 'ell'), CONTAINS_STRING('Hello', 'ELL'), ICONTAINS_STRING('Hello', 'ELL'), CONTAINS_STRING(CAST(NULL AS VARCHAR), 'a'), CONTAINS_STRING('a', '')",
        [
          ["BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN"],
          [true, false, true, null, true],
        ],
      ],
      [
        "SELECT STRPOS(s, 'l'), POSITION('l' IN s), CONTAINS_STRING(s, 'ell'), ICONTAINS_STRING(s, 'ELL') FROM $ds ORDER BY __time",
        [
          ["INTEGER", "INTEGER", "BOOLEAN", "BOOLEAN"],
          [3, 3, true, true],
          [0, 0, false, false],
          [null, null, null, null],
          [0, 0, false, false],
        ],
      ],
    ],
  },
  {
    title:
      "matches regular expressions: REGEXP_EXTRACT groups, REGEXP_LIKE, REGEXP_REPLACE with Java's replacement syntax",
    cases: [
      [
        "SELECT REGEXP_EXTRACT('foo123bar', '[0-9]+'), REGEXP_EXTRACT('foo123bar', '([a-z]+)([0-9]+)', 2), REGEXP_EXTRACT('abc', '[0-9]+'), REGEXP_EXTRACT(CAST(NULL AS VARCHAR), 'a'), REGEXP_EXTRACT('abc', '(x)?b', 1), REGEXP_EXTRACT('', 'x*')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["123", "123", null, null, null, ""],
        ],
      ],
      [
        "SELECT REGEXP_LIKE('abc', 'b'), REGEXP_LIKE('abc', '^b'), REGEXP_LIKE(CAST(NULL AS VARCHAR), 'b'), REGEXP_LIKE('', '')",
        [
          ["BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN"],
          [true, false, null, true],
        ],
      ],
      [
        "SELECT REGEXP_REPLACE('a1b2', '[0-9]', '#'), REGEXP_REPLACE('abc', '(b)', '[$1]'), REGEXP_REPLACE(CAST(NULL AS VARCHAR), 'a', 'b'), REGEXP_REPLACE('abc', 'x', 'y'), REGEXP_REPLACE('abc', '', '-')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["a#b#", "a[b]c", null, "abc", "-a-b-c-"],
        ],
      ],
      [
        "SELECT REGEXP_EXTRACT(s, '[a-z]+'), REGEXP_LIKE(s, '^H'), REGEXP_REPLACE(s, '[aeiou]', '_'), REGEXP_EXTRACT(s, '(l+)', 1), REGEXP_REPLACE(s, 'l', '$0$0') FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "BOOLEAN", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["ello", true, "H_ll_", "ll", "Hellllo"],
          [null, false, "", null, ""],
          [null, null, null, null, null],
          ["pad", false, "  p_d  ", null, "  pad  "],
        ],
      ],
      [
        "SELECT REGEXP_EXTRACT('abc', '(b)', 3)",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "No group 3",
        },
      ],
      [
        "SELECT REGEXP_EXTRACT(s, '(l)', 2) FROM $ds WHERE s = 'Hello'",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "No group 2",
        },
      ],
    ],
  },
  {
    title:
      "computes numbers: ABS, POWER, SQRT, EXP, LN, LOG10 (NaN and infinities of a column as Druid prints them)",
    cases: [
      [
        "SELECT ABS(-3), ABS(-2.5), ABS(CAST(NULL AS INTEGER)), ABS(CAST(-4 AS DOUBLE)), ABS(CAST(-4 AS BIGINT))",
        [
          ["INTEGER", "DECIMAL", "INTEGER", "DOUBLE", "BIGINT"],
          [3, 2.5, null, 4, 4],
        ],
      ],
      [
        "SELECT POWER(2, 10), POWER(2, -1), POWER(2.5, 2), POWER(CAST(NULL AS DOUBLE), 2), SQRT(16), SQRT(2), SQRT(CAST(NULL AS DOUBLE)), EXP(0), EXP(1), LN(1), LOG10(1000)",
        [
          [
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
          ],
          // biome-ignore lint/suspicious/noApproximativeNumericConstant: the digits Druid printed for SQRT(2) and EXP(1)
          [1024, 0.5, 6.25, null, 4, 1.4142135623730951, null, 1, 2.718281828459045, 0, 3],
        ],
      ],
      [
        "SELECT ABS(n), ABS(d), POWER(d, 2), SQRT(d), EXP(n), LN(d), LOG10(d) FROM $ds ORDER BY __time",
        [
          ["BIGINT", "DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE"],
          [10, 2.5, 6.25, 1.5811388300841898, 22026.465794806718, 0.9162907318741551, 0.3979400086720376],
          [3, 2.5, 6.25, "NaN", 0.049787068367863944, "NaN", "NaN"],
          [null, null, null, null, null, null, null],
          [0, 0.125, 0.015625, 0.3535533905932738, 1, -2.0794415416798357, -0.9030899869919435],
        ],
      ],
      [
        "SELECT d / 0, MOD(d, 0) FROM $ds ORDER BY __time",
        [
          ["DOUBLE", "DECIMAL"],
          ["Infinity", "NaN"],
          ["-Infinity", "NaN"],
          [null, null],
          ["Infinity", "NaN"],
        ],
      ],
    ],
  },
  {
    title: "rounds numbers: CEIL, FLOOR, ROUND (halves away from zero, negative scales), TRUNCATE/TRUNC",
    cases: [
      [
        "SELECT CEIL(1.2), CEIL(-1.2), FLOOR(1.7), FLOOR(-1.7), CEIL(3), FLOOR(CAST(2.5 AS DOUBLE)), CEIL(CAST(NULL AS DOUBLE))",
        [
          ["DECIMAL", "DECIMAL", "DECIMAL", "DECIMAL", "INTEGER", "DOUBLE", "DOUBLE"],
          [2, -1, 1, -2, 3, 2, null],
        ],
      ],
      [
        "SELECT ROUND(2.5), ROUND(-2.5), ROUND(1.2345, 2), ROUND(1234.5, -2), ROUND(3), ROUND(CAST(2.5 AS DOUBLE)), ROUND(CAST(-2.5 AS DOUBLE)), ROUND(NULL)",
        [
          ["DECIMAL", "DECIMAL", "DECIMAL", "DECIMAL", "INTEGER", "DOUBLE", "DOUBLE", "NULL"],
          [3, -3, 1.23, 1200, 3, 3, -3, null],
        ],
      ],
      [
        "SELECT ROUND(0.125, 2), ROUND(CAST(0.125 AS DOUBLE), 2), ROUND(15, -1), ROUND(25, -1), ROUND(-15, -1), ROUND(-0.5), ROUND(CAST(1.005 AS DOUBLE), 2), ROUND(CAST(2.675 AS DOUBLE), 2)",
        [
          ["DECIMAL", "DOUBLE", "INTEGER", "INTEGER", "INTEGER", "DECIMAL", "DOUBLE", "DOUBLE"],
          [0.13, 0.13, 20, 30, -20, -1, 1.01, 2.68],
        ],
      ],
      [
        "SELECT TRUNCATE(1.789, 2), TRUNCATE(-1.789, 1), TRUNCATE(1234, -2), TRUNC(5.5), TRUNCATE(CAST(NULL AS DOUBLE), 1), TRUNCATE(CAST(1.789 AS DOUBLE), 2)",
        [
          ["DECIMAL", "DECIMAL", "INTEGER", "DECIMAL", "DOUBLE", "DOUBLE"],
          [1.78, -1.7, 1200, 5, null, 1.78],
        ],
      ],
      [
        "SELECT CEIL(d), FLOOR(d), ROUND(d), ROUND(d, 1), TRUNCATE(d, 1), ROUND(n, -1) FROM $ds ORDER BY __time",
        [
          ["DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE", "BIGINT"],
          [3, 2, 3, 2.5, 2.5, 10],
          [-2, -3, -3, -2.5, -2.5, 0],
          [null, null, null, null, null, null],
          [1, 0, 0, 0.1, 0.1, 0],
        ],
      ],
    ],
  },
  {
    title: "divides: MOD, DIV and SAFE_DIVIDE as long or double math, and their answers for a zero divisor",
    cases: [
      [
        "SELECT MOD(10, 3), MOD(-10, 3), MOD(10.5, 3), MOD(CAST(NULL AS INTEGER), 3), DIV(10, 3), DIV(-10, 3), DIV(10.5, 2), DIV(CAST(NULL AS INTEGER), 2)",
        [
          ["INTEGER", "INTEGER", "DECIMAL", "INTEGER", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [1, -1, 1.5, null, 3, -3, 5, null],
        ],
      ],
      [
        "SELECT SAFE_DIVIDE(10, 4), SAFE_DIVIDE(10, 0), SAFE_DIVIDE(10.0, 4), SAFE_DIVIDE(0, 0), SAFE_DIVIDE(CAST(10 AS DOUBLE), 4), SAFE_DIVIDE(CAST(NULL AS INTEGER), 1)",
        [
          ["INTEGER", "INTEGER", "DECIMAL", "INTEGER", "DOUBLE", "INTEGER"],
          [2, null, 2.5, null, 2.5, null],
        ],
      ],
      [
        "SELECT MOD(n, 3), DIV(n, 3), SAFE_DIVIDE(n, 4), SAFE_DIVIDE(d, 2), SAFE_DIVIDE(n, 0), MOD(d, 2) FROM $ds ORDER BY __time",
        [
          ["INTEGER", "BIGINT", "BIGINT", "DOUBLE", "BIGINT", "DECIMAL"],
          [1, 3, 2, 1.25, null, 0.5],
          [0, -1, 0, -1.25, null, -0.5],
          [null, null, null, null, null, null],
          [0, 0, 0, 0.0625, null, 0.125],
        ],
      ],
      // n > 0: MOD(-2.5, -2.5) is Java's -0.0, which Druid prints as such.
      [
        "SELECT MOD(n, n), MOD(3, n), MOD(d, d) FROM $ds WHERE n > 0",
        [
          ["BIGINT", "BIGINT", "DECIMAL"],
          [0, 3, 0],
        ],
      ],
      [
        "SELECT SAFE_DIVIDE(n, n), SAFE_DIVIDE(d, 0), SAFE_DIVIDE(d, n), SAFE_DIVIDE(n, 2.0) FROM $ds ORDER BY __time",
        [
          ["BIGINT", "DOUBLE", "DOUBLE", "DECIMAL"],
          [1, null, 0.25, 5],
          [1, null, 0.8333333333333334, -1.5],
          [null, null, null, null],
          [null, null, null, 0],
        ],
      ],
      [
        "SELECT MOD(10, 0)",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "/ by zero",
        },
      ],
      [
        "SELECT DIV(10, 0)",
        {
          status: 500,
          errorCode: "general",
          persona: "DEVELOPER",
          category: "DEFENSIVE",
          errorMessage: "Function[div] encountered unknown exception.",
        },
      ],
    ],
  },
  {
    title: "reads numbers from text: PARSE_LONG with radixes, signs and junk",
    cases: [
      [
        "SELECT PARSE_LONG('123'), PARSE_LONG('ff', 16), PARSE_LONG('12x'), PARSE_LONG(''), PARSE_LONG(CAST(NULL AS VARCHAR)), PARSE_LONG('-7'), PARSE_LONG('0x1A', 16), PARSE_LONG('0x1A'), PARSE_LONG('101', 2), PARSE_LONG('+5'), PARSE_LONG('z', 36)",
        [
          [
            "BIGINT",
            "BIGINT",
            "BIGINT",
            "BIGINT",
            "BIGINT",
            "BIGINT",
            "BIGINT",
            "BIGINT",
            "BIGINT",
            "BIGINT",
            "BIGINT",
          ],
          [123, 255, null, null, null, -7, 26, null, 5, 5, 35],
        ],
      ],
      [
        "SELECT PARSE_LONG(' 12'), PARSE_LONG('1.5'), PARSE_LONG('99999999999')",
        [
          ["BIGINT", "BIGINT", "BIGINT"],
          [null, null, 99999999999],
        ],
      ],
      [
        "SELECT PARSE_LONG(s), PARSE_LONG(CAST(n AS VARCHAR)), PARSE_LONG(CAST(n AS VARCHAR), 16), PARSE_LONG('0x' || CAST(n AS VARCHAR), 16) FROM $ds ORDER BY __time",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [null, 10, 16, 16],
          [null, -3, -3, -3],
          [null, null, null, null],
          [null, 0, 0, 0],
        ],
      ],
    ],
  },
  {
    title: "picks values: GREATEST and LEAST (types, text comparison, nulls), COALESCE, NVL, IFNULL, NULLIF",
    cases: [
      [
        "SELECT GREATEST(1, 5, 3), LEAST(1, 5, 3), GREATEST('a', 'b'), LEAST(CAST(NULL AS INTEGER), 2), GREATEST(1, 2.5), LEAST(1, '0'), GREATEST(CAST(1 AS BIGINT), 2), GREATEST(CAST(NULL AS INTEGER), CAST(NULL AS INTEGER))",
        [
          ["BIGINT", "BIGINT", "CHAR", "BIGINT", "DOUBLE", "CHAR", "BIGINT", "BIGINT"],
          [5, 1, "b", 2, 2.5, "0", 2, null],
        ],
      ],
      [
        "SELECT GREATEST(n, d), LEAST(n, d), GREATEST(s, p), LEAST(s, p), LEAST(n, 5), GREATEST(s, n), LEAST(n, CAST(n AS VARCHAR)) FROM $ds ORDER BY __time",
        [
          ["DOUBLE", "DOUBLE", "VARCHAR", "VARCHAR", "BIGINT", "VARCHAR", "VARCHAR"],
          [10, 2.5, "yyyy-MM-dd", "Hello", 5, "Hello", "10"],
          [-2.5, -3, "", "", -3, "-3", "-3"],
          [null, null, null, null, 5, null, null],
          [0.125, 0, "HH:mm", "  pad  ", 0, "0", "0"],
        ],
      ],
      [
        "SELECT GREATEST(n, 2), GREATEST(d, 2), GREATEST(n, 2.5) FROM $ds ORDER BY __time",
        [
          ["BIGINT", "DOUBLE", "DOUBLE"],
          [10, 2.5, 10],
          [2, 2, 2.5],
          [2, 2, 2.5],
          [2, 2, 2.5],
        ],
      ],
      [
        "SELECT COALESCE(NULL, 'a'), COALESCE(NULL, NULL), NVL(NULL, 2), IFNULL('x', 'y'), NULLIF(1, 1), NULLIF(1, 2), NULLIF(NULL, 1), NULLIF('a', NULL)",
        [
          ["CHAR", "NULL", "INTEGER", "CHAR", "INTEGER", "INTEGER", "NULL", "CHAR"],
          ["a", null, 2, "x", null, 1, null, "a"],
        ],
      ],
      [
        "SELECT COALESCE(s, p, 'z'), NVL(n, 7), IFNULL(d, 0.5), NULLIF(s, ''), NULLIF(n, 0) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "BIGINT", "DOUBLE", "VARCHAR", "BIGINT"],
          ["Hello", 10, 2.5, "Hello", 10],
          ["", -3, -2.5, null, -3],
          ["z", 7, 0.5, null, null],
          ["  pad  ", 0, 0.125, "  pad  ", null],
        ],
      ],
    ],
  },
  {
    title:
      "floors, ceils and truncates times: TIME_FLOOR (origins, zones, unknown zones), TIME_CEIL, FLOOR/CEIL … TO, DATE_TRUNC",
    cases: [
      [
        "SELECT TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'PT1H'), TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'P1D', NULL, 'America/Los_Angeles'), TIME_FLOOR(TIMESTAMP '2026-03-04 13:45:00', 'P1W'), TIME_FLOOR(TIMESTAMP '2026-05-04 13:45:00', 'P3M'), TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'PT15M'), TIME_FLOOR(TIMESTAMP '1969-12-31 23:30:00', 'PT1H')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2026-03-02T13:00:00.000Z",
            "2026-03-02T08:00:00.000Z",
            "2026-03-02T00:00:00.000Z",
            "2026-04-01T00:00:00.000Z",
            "2026-03-02T13:45:00.000Z",
            "1969-12-31T23:00:00.000Z",
          ],
        ],
      ],
      [
        "SELECT TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'PT1H', TIMESTAMP '2026-01-01 00:30:00'), TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'P1D', TIMESTAMP '2026-01-01 06:00:00', 'Asia/Kolkata'), TIME_FLOOR(TIMESTAMP '2026-03-08 12:00:00', 'P1D', NULL, 'America/New_York'), TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'PT1H', NULL, 'Mars/Olympus')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2026-03-02T13:30:00.000Z",
            "2026-03-02T06:00:00.000Z",
            "2026-03-08T05:00:00.000Z",
            "2026-03-02T13:00:00.000Z",
          ],
        ],
      ],
      [
        "SELECT TIME_CEIL(TIMESTAMP '2026-03-02 13:45:00', 'PT1H'), TIME_CEIL(TIMESTAMP '2026-03-02 13:00:00', 'PT1H'), TIME_CEIL(TIMESTAMP '2026-03-02 13:45:00', 'P1D', NULL, 'America/Los_Angeles'), TIME_CEIL(TIMESTAMP '2026-01-31 13:45:00', 'P1M')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2026-03-02T14:00:00.000Z",
            "2026-03-02T13:00:00.000Z",
            "2026-03-03T08:00:00.000Z",
            "2026-02-01T00:00:00.000Z",
          ],
        ],
      ],
      [
        "SELECT CEIL(TIMESTAMP '2026-03-02 13:45:00' TO DAY), FLOOR(TIMESTAMP '2026-03-02 13:45:00' TO MONTH), FLOOR(TIMESTAMP '2026-03-04 13:45:00' TO WEEK), FLOOR(TIMESTAMP '2026-03-04 13:45:00' TO QUARTER)",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2026-03-03T00:00:00.000Z",
            "2026-03-01T00:00:00.000Z",
            "2026-03-02T00:00:00.000Z",
            "2026-01-01T00:00:00.000Z",
          ],
        ],
      ],
      [
        "SELECT DATE_TRUNC('year', TIMESTAMP '2024-02-29 13:45:00'), DATE_TRUNC('millennium', TIMESTAMP '2024-02-29 13:45:00'), DATE_TRUNC('microseconds', TIMESTAMP '2024-02-29 13:45:00.123')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          ["2024-01-01T00:00:00.000Z", "1970-01-01T00:00:00.000Z", "2024-02-29T13:45:00.123Z"],
        ],
      ],
      [
        "SELECT TIME_FLOOR(__time, 'P1M'), TIME_CEIL(__time, 'P1M'), DATE_TRUNC('month', __time), TIME_FLOOR(__time, 'P1D', NULL, 'Mars/Olympus') FROM $ds ORDER BY __time",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2024-02-01T00:00:00.000Z",
            "2024-03-01T00:00:00.000Z",
            "2024-02-01T00:00:00.000Z",
            "2024-02-29T00:00:00.000Z",
          ],
          [
            "2026-03-01T00:00:00.000Z",
            "2026-03-01T00:00:00.000Z",
            "2026-03-01T00:00:00.000Z",
            "2026-03-01T00:00:00.000Z",
          ],
          [
            "2026-03-01T00:00:00.000Z",
            "2026-04-01T00:00:00.000Z",
            "2026-03-01T00:00:00.000Z",
            "2026-03-01T00:00:00.000Z",
          ],
          [
            "2027-01-01T00:00:00.000Z",
            "2027-02-01T00:00:00.000Z",
            "2027-01-01T00:00:00.000Z",
            "2027-01-01T00:00:00.000Z",
          ],
        ],
      ],
      [
        "SELECT TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'P1X')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Invalid period['P1X'] specified for expression[timestamp_floor(1772459100000, 'P1X', null, 'UTC')]: [Invalid format: \"P1X\"]",
        },
      ],
    ],
  },
  {
    title:
      "shifts times: TIME_SHIFT (month ends, leap days, zones, a null step), TIMESTAMPADD and TIMESTAMPDIFF units",
    cases: [
      [
        "SELECT TIME_SHIFT(TIMESTAMP '2026-01-31 00:00:00', 'P1M', 1), TIME_SHIFT(TIMESTAMP '2024-02-29 00:00:00', 'P1Y', 1), TIME_SHIFT(TIMESTAMP '2024-02-29 00:00:00', 'P1Y', -4), TIME_SHIFT(TIMESTAMP '2026-03-02 00:00:00', 'PT90M', 2), TIME_SHIFT(TIMESTAMP '2026-03-02 00:00:00', 'P1D', 0), TIME_SHIFT(TIMESTAMP '2026-03-02 00:00:00', 'P1W', 1)",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2026-02-28T00:00:00.000Z",
            "2025-02-28T00:00:00.000Z",
            "2020-02-29T00:00:00.000Z",
            "2026-03-02T03:00:00.000Z",
            "2026-03-02T00:00:00.000Z",
            "2026-03-09T00:00:00.000Z",
          ],
        ],
      ],
      [
        "SELECT TIME_SHIFT(TIMESTAMP '2026-03-07 12:00:00', 'P1D', 1, 'America/New_York'), TIME_SHIFT(TIMESTAMP '2026-03-07 12:00:00', 'PT24H', 1, 'America/New_York'), TIME_SHIFT(TIMESTAMP '2026-03-02 00:00:00', 'P1D', CAST(NULL AS INTEGER))",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          ["2026-03-08T11:00:00.000Z", "2026-03-08T12:00:00.000Z", "2026-03-02T00:00:00.000Z"],
        ],
      ],
      [
        "SELECT TIME_SHIFT(__time, 'P1Y', 1), TIME_SHIFT(__time, 'P1M', -1), TIME_SHIFT(__time, 'P1D', n), TIME_SHIFT(__time, 'P1D', 1, 'Mars/Olympus') FROM $ds ORDER BY __time",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2025-02-28T12:34:56.789Z",
            "2024-01-29T12:34:56.789Z",
            "2024-03-10T12:34:56.789Z",
            "2024-03-01T12:34:56.789Z",
          ],
          [
            "2027-03-01T00:00:00.000Z",
            "2026-02-01T00:00:00.000Z",
            "2026-02-26T00:00:00.000Z",
            "2026-03-02T00:00:00.000Z",
          ],
          [
            "2027-03-01T23:30:00.000Z",
            "2026-02-01T23:30:00.000Z",
            "2026-03-01T23:30:00.000Z",
            "2026-03-02T23:30:00.000Z",
          ],
          [
            "2028-01-01T06:00:00.000Z",
            "2026-12-01T06:00:00.000Z",
            "2027-01-01T06:00:00.000Z",
            "2027-01-02T06:00:00.000Z",
          ],
        ],
      ],
      [
        "SELECT TIME_SHIFT(TIMESTAMP '2026-03-02 00:00:00', 'P1X', 1)",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: 'Invalid format: "P1X"',
        },
      ],
      [
        "SELECT TIMESTAMPADD(YEAR, 1, TIMESTAMP '2024-02-29 00:00:00'), TIMESTAMPADD(QUARTER, 1, TIMESTAMP '2026-11-30 00:00:00'), TIMESTAMPADD(WEEK, -1, TIMESTAMP '2026-03-02 00:00:00'), TIMESTAMPADD(SECOND, 90, TIMESTAMP '2026-03-02 00:00:00'), TIMESTAMPADD(MICROSECOND, 1500, TIMESTAMP '2026-03-02 00:00:00')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2025-02-28T00:00:00.000Z",
            "2027-02-28T00:00:00.000Z",
            "2026-02-23T00:00:00.000Z",
            "2026-03-02T00:01:30.000Z",
            "2026-03-02T00:00:00.001Z",
          ],
        ],
      ],
      [
        "SELECT TIMESTAMPDIFF(SECOND, TIMESTAMP '2026-03-02 00:00:00', TIMESTAMP '2026-03-02 00:00:01.999'), TIMESTAMPDIFF(QUARTER, TIMESTAMP '2026-01-15 00:00:00', TIMESTAMP '2026-07-14 00:00:00'), TIMESTAMPDIFF(WEEK, TIMESTAMP '2026-01-01 00:00:00', TIMESTAMP '2026-03-02 00:00:00'), TIMESTAMPDIFF(MONTH, TIMESTAMP '2024-02-29 00:00:00', TIMESTAMP '2025-02-28 00:00:00'), TIMESTAMPDIFF(YEAR, TIMESTAMP '2024-02-29 00:00:00', TIMESTAMP '2025-02-28 00:00:00'), TIMESTAMPDIFF(MONTH, TIMESTAMP '2026-03-31 00:00:00', TIMESTAMP '2026-02-28 00:00:00')",
        [
          ["INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER"],
          [1, 1, 8, 12, 1, -1],
        ],
      ],
      [
        "SELECT TIMESTAMPDIFF(MILLISECOND, TIMESTAMP '2026-03-02 00:00:00', TIMESTAMP '2026-03-02 00:00:01.5'), TIMESTAMPDIFF(MICROSECOND, TIMESTAMP '2026-03-02 00:00:00', TIMESTAMP '2026-03-02 00:00:01.5')",
        [
          ["INTEGER", "INTEGER"],
          [1000, 1000000],
        ],
      ],
      [
        "SELECT TIMESTAMPADD(DAY, 1, TIMESTAMP '2026-03-07 12:00:00'), TIMESTAMPADD(HOUR, 24, TIMESTAMP '2026-03-07 12:00:00'), TIMESTAMPDIFF(DAY, TIMESTAMP '2026-03-07 12:00:00', TIMESTAMP '2026-03-08 12:00:00')",
        [
          ["TIMESTAMP", "TIMESTAMP", "INTEGER"],
          ["2026-03-08T13:00:00.000-04:00", "2026-03-08T13:00:00.000-04:00", 0],
        ],
        { sqlTimeZone: "America/New_York" },
      ],
      [
        "SELECT TIMESTAMPADD(YEAR, 1, __time), TIMESTAMPDIFF(MONTH, __time, TIMESTAMP '2027-02-28 00:00:00'), TIMESTAMPDIFF(MILLISECOND, __time, TIMESTAMP '2027-02-28 00:00:00.5'), TIMESTAMPADD(DAY, n, __time) FROM $ds ORDER BY __time",
        [
          ["TIMESTAMP", "INTEGER", "INTEGER", "TIMESTAMP"],
          ["2025-02-28T12:34:56.789Z", 35, 73422488, "2024-03-10T12:34:56.789Z"],
          ["2027-03-01T00:00:00.000Z", 11, 1384828928, "2026-02-26T00:00:00.000Z"],
          ["2027-03-01T23:30:00.000Z", 11, 1300228928, null],
          ["2028-01-01T06:00:00.000Z", 1, 694632704, "2027-01-01T06:00:00.000Z"],
        ],
      ],
      [
        "SELECT TIMESTAMPDIFF(SECOND, __time, TIMESTAMP '2027-02-28 00:00:00'), TIMESTAMPDIFF(WEEK, __time, TIMESTAMP '2027-02-28 00:00:00'), TIMESTAMPDIFF(QUARTER, __time, TIMESTAMP '2027-02-28 00:00:00'), TIMESTAMPDIFF(YEAR, TIMESTAMP '2027-02-28 00:00:00', __time) FROM $ds ORDER BY __time",
        [
          ["INTEGER", "INTEGER", "INTEGER", "INTEGER"],
          [94562703, 156, 11, -2],
          [31449600, 52, 3, 0],
          [31365000, 51, 3, 0],
          [4989600, 8, 0, 0],
        ],
      ],
    ],
  },
  {
    title:
      "extracts fields of times: TIME_EXTRACT and EXTRACT units (ISO weeks, EPOCH, DECADE to MILLENNIUM), zones, unknown units",
    cases: [
      [
        "SELECT TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'HOUR'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'HOUR', 'Asia/Tokyo'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'DOW'), TIME_EXTRACT(TIMESTAMP '2026-03-01 13:45:12.345', 'DOW'), TIME_EXTRACT(TIMESTAMP '2026-03-01 13:45:12.345', 'ISODOW'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'DOY'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'hour')",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [13, 22, 1, 7, 7, 61, 13],
        ],
      ],
      [
        "SELECT TIME_EXTRACT(TIMESTAMP '2027-01-01 13:45:12.345', 'WEEK'), TIME_EXTRACT(TIMESTAMP '2027-01-01 13:45:12.345', 'ISOYEAR'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'EPOCH'), TIME_EXTRACT(TIMESTAMP '1969-12-31 23:59:59.5', 'EPOCH'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'QUARTER'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'CENTURY'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'DECADE'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'MILLENNIUM')",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [53, 2027, 1772459112, 0, 1, 21, 202, 3],
        ],
      ],
      [
        "SELECT EXTRACT(HOUR FROM TIMESTAMP '2026-03-02 13:45:12.345'), EXTRACT(MILLISECOND FROM TIMESTAMP '2026-03-02 13:45:12.345'), EXTRACT(SECOND FROM TIMESTAMP '2026-03-02 13:45:12.345'), EXTRACT(DOW FROM TIMESTAMP '2026-03-01 13:45:12.345'), EXTRACT(ISODOW FROM TIMESTAMP '2026-03-01 13:45:12.345'), EXTRACT(DOY FROM TIMESTAMP '2024-12-31 13:45:12.345'), EXTRACT(WEEK FROM TIMESTAMP '2027-01-01 13:45:12.345'), EXTRACT(ISOYEAR FROM TIMESTAMP '2027-01-01 13:45:12.345')",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [13, 345, 12, 7, 7, 366, 53, 2027],
        ],
      ],
      [
        "SELECT EXTRACT(EPOCH FROM TIMESTAMP '2026-03-02 13:45:12.345'), EXTRACT(QUARTER FROM TIMESTAMP '2026-08-02 13:45:12.345'), EXTRACT(CENTURY FROM TIMESTAMP '2026-08-02 13:45:12.345'), EXTRACT(DECADE FROM TIMESTAMP '2026-08-02 13:45:12.345'), EXTRACT(MILLENNIUM FROM TIMESTAMP '2026-08-02 13:45:12.345'), EXTRACT(YEAR FROM TIMESTAMP '2026-08-02 13:45:12.345'), EXTRACT(MONTH FROM TIMESTAMP '2026-08-02 13:45:12.345'), EXTRACT(DAY FROM DATE '2026-08-02')",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [1772459112, 3, 21, 202, 3, 2026, 8, 2],
        ],
      ],
      [
        "SELECT EXTRACT(HOUR FROM TIMESTAMP '2026-03-02 13:45:12.345'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'HOUR'), TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'P1D'), DATE_TRUNC('day', TIMESTAMP '2026-03-02 13:45:00'), TIMESTAMP_TO_MILLIS(TIMESTAMP '2026-03-02 13:45:00'), MILLIS_TO_TIMESTAMP(0)",
        [
          ["BIGINT", "BIGINT", "TIMESTAMP", "TIMESTAMP", "BIGINT", "TIMESTAMP"],
          [
            13,
            13,
            "2026-03-02T00:00:00.000+09:00",
            "2026-03-02T00:00:00.000+09:00",
            1772426700000,
            "1970-01-01T09:00:00.000+09:00",
          ],
        ],
        { sqlTimeZone: "Asia/Tokyo" },
      ],
      [
        "SELECT TIME_EXTRACT(__time, 'ISOYEAR'), TIME_EXTRACT(__time, 'WEEK'), EXTRACT(ISOYEAR FROM __time), TIME_EXTRACT(__time, 'CENTURY'), TIME_EXTRACT(__time, 'DOW'), EXTRACT(DOW FROM __time), EXTRACT(DOY FROM __time) FROM $ds ORDER BY __time",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [2024, 9, 2024, 21, 4, 4, 60],
          [2026, 9, 2026, 21, 7, 7, 60],
          [2026, 9, 2026, 21, 7, 7, 60],
          [2027, 53, 2027, 21, 5, 5, 1],
        ],
      ],
      [
        "SELECT TIME_EXTRACT(__time, 'EPOCH'), EXTRACT(EPOCH FROM __time), EXTRACT(MILLISECOND FROM __time), EXTRACT(CENTURY FROM __time), EXTRACT(MILLENNIUM FROM __time), EXTRACT(DECADE FROM __time) FROM $ds ORDER BY __time",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [1709210096, 1709210096, 789, 21, 3, 202],
          [1772323200, 1772323200, 0, 21, 3, 202],
          [1772407800, 1772407800, 0, 21, 3, 202],
          [1798783200, 1798783200, 0, 21, 3, 202],
        ],
      ],
      [
        "SELECT TIME_EXTRACT(__time, 'HOUR', 'Asia/Kolkata'), TIME_EXTRACT(__time, 'ISODOW'), TIME_EXTRACT(__time, 'QUARTER'), TIME_EXTRACT(__time, 'DOY', 'Pacific/Kiritimati'), TIME_EXTRACT(__time, 'HOUR', 'Mars/Olympus') FROM $ds ORDER BY __time",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [18, 4, 1, 61, 12],
          [5, 7, 1, 60, 0],
          [5, 7, 1, 61, 23],
          [11, 5, 1, 1, 6],
        ],
      ],
      [
        "SELECT TIME_IN_INTERVAL(__time, '2026-03-01/P1D'), TIME_FLOOR(__time, 'P1D'), TIME_FORMAT(__time), DATE_TRUNC('day', __time), TIME_EXTRACT(__time, 'HOUR'), EXTRACT(HOUR FROM __time), TIME_SHIFT(__time, 'P1M', 1) FROM $ds ORDER BY __time",
        [
          ["BOOLEAN", "TIMESTAMP", "VARCHAR", "TIMESTAMP", "BIGINT", "BIGINT", "TIMESTAMP"],
          [
            false,
            "2024-02-29T00:00:00.000+05:30",
            "2024-02-29T18:04:56.789+05:30",
            "2024-02-29T00:00:00.000+05:30",
            18,
            18,
            "2024-03-29T18:04:56.789+05:30",
          ],
          [
            true,
            "2026-03-01T00:00:00.000+05:30",
            "2026-03-01T05:30:00.000+05:30",
            "2026-03-01T00:00:00.000+05:30",
            5,
            5,
            "2026-04-01T05:30:00.000+05:30",
          ],
          [
            false,
            "2026-03-02T00:00:00.000+05:30",
            "2026-03-02T05:00:00.000+05:30",
            "2026-03-02T00:00:00.000+05:30",
            5,
            5,
            "2026-04-02T05:00:00.000+05:30",
          ],
          [
            false,
            "2027-01-01T00:00:00.000+05:30",
            "2027-01-01T11:30:00.000+05:30",
            "2027-01-01T00:00:00.000+05:30",
            11,
            11,
            "2027-02-01T11:30:00.000+05:30",
          ],
        ],
        { sqlTimeZone: "Asia/Kolkata" },
      ],
      [
        "SELECT TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'FORTNIGHT')",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage:
            "No enum constant org.apache.druid.query.expression.TimestampExtractExprMacro.Unit.FORTNIGHT",
        },
      ],
    ],
  },
  {
    title:
      "formats and parses times: TIME_FORMAT and TIME_PARSE with Joda's pattern letters (month names, offsets, week years, eras), zones, leap days, text that does not match and letters Joda refuses",
    cases: [
      [
        "SELECT TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', 'yyyy-MM-dd'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', 'yyyy-MM-dd HH:mm:ss.SSS Z', 'America/Los_Angeles'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', 'EEE, dd MMM yyyy', 'Asia/Kolkata'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', 'EEEE MMMM d h a'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', '''T''HH'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', NULL, 'Asia/Tokyo')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          [
            "2026-03-02T13:45:12.345+00:00",
            "2026-03-02",
            "2026-03-02 05:45:12.345 -0800",
            "Mon, 02 Mar 2026",
            "Monday March 2 1 PM",
            "T13",
            "2026-03-02T22:45:12.345+09:00",
          ],
        ],
      ],
      [
        "SELECT TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:00'), TIME_PARSE('2026-03-02 13:45:00', 'yyyy-MM-dd HH:mm:ss')",
        [
          ["VARCHAR", "TIMESTAMP"],
          ["2026-03-02T13:45:00.000+09:00", "2026-03-02T13:45:00.000+09:00"],
        ],
        { sqlTimeZone: "Asia/Tokyo" },
      ],
      [
        "SELECT TIME_FORMAT(__time), TIME_FORMAT(__time, 'yyyy-MM-dd HH:mm', 'Asia/Kolkata') FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR"],
          ["2024-02-29T12:34:56.789+00:00", "2024-02-29 18:04"],
          ["2026-03-01T00:00:00.000+00:00", "2026-03-01 05:30"],
          ["2026-03-01T23:30:00.000+00:00", "2026-03-02 05:00"],
          ["2027-01-01T06:00:00.000+00:00", "2027-01-01 11:30"],
        ],
      ],
      [
        "SELECT TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', 'yyyy', 'Not/AZone')",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "The datetime zone id 'Not/AZone' is not recognised",
        },
      ],
      [
        "SELECT TIME_PARSE('2026-03-02'), TIME_PARSE('2026-03-02T13:45:12.345Z'), TIME_PARSE('2026-03-02T13:45:12+05:30'), TIME_PARSE('2026-03-02 13:45:12'), TIME_PARSE('2026-W10-1'), TIME_PARSE('2026-061'), TIME_PARSE('2026')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2026-03-02T00:00:00.000Z",
            "2026-03-02T13:45:12.345Z",
            "2026-03-02T08:15:12.000Z",
            "2026-03-02T13:45:12.000Z",
            "2026-03-02T00:00:00.000Z",
            "2026-03-02T00:00:00.000Z",
            "2026-01-01T00:00:00.000Z",
          ],
        ],
      ],
      [
        "SELECT TIME_PARSE('02/03/2026', 'dd/MM/yyyy'), TIME_PARSE('02/03/2026 13', 'dd/MM/yyyy HH', 'America/Los_Angeles'), TIME_PARSE('2024-02-29', 'yyyy-MM-dd'), TIME_PARSE('2026-03-02', NULL, 'Asia/Tokyo'), TIME_PARSE('2026-03-02T13:45:12', NULL, 'Asia/Tokyo')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2026-03-02T00:00:00.000Z",
            "2026-03-02T21:00:00.000Z",
            "2024-02-29T00:00:00.000Z",
            "2026-03-01T15:00:00.000Z",
            "2026-03-02T04:45:12.000Z",
          ],
        ],
      ],
      [
        "SELECT TIME_PARSE(TIME_FORMAT(__time, 'yyyy-MM-dd HH:mm:ss')), TIME_PARSE(TIME_FORMAT(__time, 'dd/MM/yyyy'), 'dd/MM/yyyy', 'Asia/Kolkata'), TIME_PARSE(s), TIME_PARSE(s, 'yyyy'), TIME_PARSE(TIME_FORMAT(__time, 'yyyy-MM-dd'), 'yyyy-MM-dd') FROM $ds ORDER BY __time",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          ["2024-02-29T12:34:56.000Z", "2024-02-28T18:30:00.000Z", null, null, "2024-02-29T00:00:00.000Z"],
          ["2026-03-01T00:00:00.000Z", "2026-02-28T18:30:00.000Z", null, null, "2026-03-01T00:00:00.000Z"],
          ["2026-03-01T23:30:00.000Z", "2026-02-28T18:30:00.000Z", null, null, "2026-03-01T00:00:00.000Z"],
          ["2027-01-01T06:00:00.000Z", "2026-12-31T18:30:00.000Z", null, null, "2027-01-01T00:00:00.000Z"],
        ],
      ],
      [
        "SELECT TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', 'xxxx ww e D'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', 'G C Y x k K S'), TIME_FORMAT(TIMESTAMP '2026-03-02 00:45:12.345', 'k K h H'), TIME_FORMAT(TIMESTAMP '2027-01-01 13:45:12.345', 'xxxx-ww-e'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', 'ZZ ZZZ', 'Europe/Paris')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["2026 10 1 61", "AD 20 2026 2026 13 1 3", "24 0 12 0", "2026-53-5", "+01:00 Europe/Paris"],
        ],
      ],
      [
        "SELECT TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:12.345', 'yyyy qq')",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "Illegal pattern component: qq",
        },
      ],
      [
        "SELECT TIME_PARSE('2026-03-02', 'nonsense pattern q')",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "Illegal pattern component: n",
        },
      ],
      [
        "SELECT TIME_PARSE('Mar 2, 2026', 'MMM d, yyyy'), TIME_PARSE('March 2, 2026', 'MMMM d, yyyy'), TIME_PARSE('20260302', 'yyyyMMdd'), TIME_PARSE('2026-3-2', 'yyyy-M-d'), TIME_PARSE('2026-03-02 1:05', 'yyyy-MM-dd H:mm')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            "2026-03-02T00:00:00.000Z",
            "2026-03-02T00:00:00.000Z",
            "2026-03-02T00:00:00.000Z",
            "2026-03-02T00:00:00.000Z",
            "2026-03-02T01:05:00.000Z",
          ],
        ],
      ],
      [
        "SELECT TIME_PARSE('2026-03-02 13:45:12 +0100', 'yyyy-MM-dd HH:mm:ss Z'), TIME_PARSE('2026-03-02 13:45:12 +01:00', 'yyyy-MM-dd HH:mm:ss ZZ'), TIME_PARSE('2026-03-02 13:45:12 -0530', 'yyyy-MM-dd HH:mm:ss Z', 'Asia/Tokyo')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          ["2026-03-02T12:45:12.000Z", "2026-03-02T12:45:12.000Z", "2026-03-02T19:15:12.000Z"],
        ],
      ],
      [
        "SELECT TIME_PARSE(TIME_FORMAT(__time, 'MMM d, yyyy HH:mm Z'), 'MMM d, yyyy HH:mm Z'), TIME_FORMAT(__time, 'xxxx-''W''ww-e G C k K') FROM $ds ORDER BY __time",
        [
          ["TIMESTAMP", "VARCHAR"],
          ["2024-02-29T12:34:00.000Z", "2024-W09-4 AD 20 12 0"],
          ["2026-03-01T00:00:00.000Z", "2026-W09-7 AD 20 24 0"],
          ["2026-03-01T23:30:00.000Z", "2026-W09-7 AD 20 23 11"],
          ["2027-01-01T06:00:00.000Z", "2026-W53-5 AD 20 6 6"],
        ],
      ],
    ],
  },
  {
    title:
      "converts times and tests intervals: MILLIS_TO_TIMESTAMP, TIMESTAMP_TO_MILLIS, TIME_IN_INTERVAL (periods at either end, sqlTimeZone)",
    cases: [
      [
        "SELECT MILLIS_TO_TIMESTAMP(1772459112345), MILLIS_TO_TIMESTAMP(-1), MILLIS_TO_TIMESTAMP(1.5), TIMESTAMP_TO_MILLIS(TIMESTAMP '2026-03-02 13:45:12.345')",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP", "BIGINT"],
          ["2026-03-02T13:45:12.345Z", "1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00.001Z", 1772459112345],
        ],
      ],
      [
        "SELECT MILLIS_TO_TIMESTAMP(n), MILLIS_TO_TIMESTAMP(n * 1000), TIMESTAMP_TO_MILLIS(__time), TIMESTAMP_TO_MILLIS(TIME_FLOOR(__time, 'P1D')) FROM $ds ORDER BY __time",
        [
          ["TIMESTAMP", "TIMESTAMP", "BIGINT", "BIGINT"],
          ["1970-01-01T00:00:00.010Z", "1970-01-01T00:00:10.000Z", 1709210096789, 1709164800000],
          ["1969-12-31T23:59:59.997Z", "1969-12-31T23:59:57.000Z", 1772323200000, 1772323200000],
          [null, null, 1772407800000, 1772323200000],
          ["1970-01-01T00:00:00.000Z", "1970-01-01T00:00:00.000Z", 1798783200000, 1798761600000],
        ],
      ],
      [
        "SELECT TIME_IN_INTERVAL(TIMESTAMP '2026-03-02 00:00:00', '2026-03-01/2026-03-03'), TIME_IN_INTERVAL(TIMESTAMP '2026-03-03 00:00:00', '2026-03-01/2026-03-03'), TIME_IN_INTERVAL(TIMESTAMP '2026-03-02 00:00:00', '2026-03-01/P1D'), TIME_IN_INTERVAL(TIMESTAMP '2026-03-01 12:00:00', '2026-03-01/P1D'), TIME_IN_INTERVAL(TIMESTAMP '2026-03-01 12:00:00', 'P1D/2026-03-02')",
        [
          ["BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN"],
          [true, false, false, true, true],
        ],
      ],
      [
        "SELECT TIME_IN_INTERVAL(TIMESTAMP '2026-03-01 03:00:00', '2026-03-01/P1D'), TIME_IN_INTERVAL(TIMESTAMP '2026-03-01 03:00:00', '2026-03-01T00:00:00+09:00/P1D')",
        [
          ["BOOLEAN", "BOOLEAN"],
          [true, true],
        ],
        { sqlTimeZone: "Asia/Tokyo" },
      ],
      [
        "SELECT TIME_IN_INTERVAL(__time, '2026-03-01/P1D'), TIME_IN_INTERVAL(__time, 'P1D/2026-03-02'), TIME_IN_INTERVAL(__time, '2024-01-01T00:00:00Z/2025-01-01T00:00:00Z') FROM $ds ORDER BY __time",
        [
          ["BOOLEAN", "BOOLEAN", "BOOLEAN"],
          [false, false, true],
          [true, true, false],
          [true, true, false],
          [false, false, false],
        ],
      ],
    ],
  },
  {
    title:
      "casts and operators: CAST between numbers, text, times and BOOLEAN (a DOUBLE as Java writes it), LIKE, BETWEEN, IN, IS NULL, arithmetic with nulls",
    cases: [
      [
        "SELECT CAST(d AS BIGINT), CAST(n AS VARCHAR), CAST(d AS VARCHAR), CAST(n AS DOUBLE), CAST(__time AS BIGINT) FROM $ds ORDER BY __time",
        [
          ["BIGINT", "VARCHAR", "VARCHAR", "DOUBLE", "BIGINT"],
          [2, "10", "2.5", 10, 1709210096789],
          [-2, "-3", "-2.5", -3, 1772323200000],
          [null, null, null, null, 1772407800000],
          [0, "0", "0.125", 0, 1798783200000],
        ],
      ],
      [
        "SELECT CAST(n AS BOOLEAN), CAST(d AS INTEGER), CAST(__time AS DATE), CAST(CAST(n AS VARCHAR) AS BIGINT), CAST(d AS FLOAT), CAST(p AS TIMESTAMP), CAST('2026-03-02' AS TIMESTAMP), CAST(n AS TIMESTAMP) FROM $ds ORDER BY __time",
        [
          ["BOOLEAN", "INTEGER", "DATE", "BIGINT", "FLOAT", "TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [
            true,
            2,
            "2024-02-29T00:00:00.000Z",
            10,
            2.5,
            null,
            "2026-03-02T00:00:00.000Z",
            "1970-01-01T00:00:00.010Z",
          ],
          [
            true,
            -2,
            "2026-03-01T00:00:00.000Z",
            -3,
            -2.5,
            null,
            "2026-03-02T00:00:00.000Z",
            "1969-12-31T23:59:59.997Z",
          ],
          [null, null, "2026-03-01T00:00:00.000Z", null, null, null, "2026-03-02T00:00:00.000Z", null],
          [
            false,
            0,
            "2027-01-01T00:00:00.000Z",
            0,
            0.125,
            null,
            "2026-03-02T00:00:00.000Z",
            "1970-01-01T00:00:00.000Z",
          ],
        ],
      ],
      [
        "SELECT s LIKE 'H%', s LIKE '%l_o', s NOT LIKE '%', s LIKE '', n BETWEEN -5 AND 5, n IN (0, 10), s IS NULL, s = '' FROM $ds ORDER BY __time",
        [
          ["BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN"],
          [true, true, false, false, false, true, false, false],
          [false, false, false, true, true, false, false, true],
          [null, null, null, null, null, null, true, null],
          [false, false, false, false, true, true, false, false],
        ],
      ],
      [
        "SELECT n + d, n - 1, n * 2, n / 2, d / 2, -n, n + NULL, n * 1.5 FROM $ds ORDER BY __time",
        [
          ["DOUBLE", "BIGINT", "BIGINT", "BIGINT", "DOUBLE", "BIGINT", "BIGINT", "DECIMAL"],
          [12.5, 9, 20, 5, 1.25, -10, null, 15],
          [-5.5, -4, -6, -1, -1.25, 3, null, -4.5],
          [null, null, null, null, null, null, null, null],
          [0.125, -1, 0, 0, 0.0625, 0, null, 0],
        ],
      ],
      [
        "SELECT n % 3 FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Percent remainder '%' is not allowed under the current SQL conformance level",
        },
      ],
      [
        "SELECT CAST(__time AS VARCHAR), CAST(CAST(__time AS DATE) AS VARCHAR), CAST(CAST(__time AS VARCHAR) AS TIMESTAMP) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "TIMESTAMP"],
          ["2024-02-29 12:34:56", "2024-02-29", "2024-02-29T12:34:56.000Z"],
          ["2026-03-01 00:00:00", "2026-03-01", "2026-03-01T00:00:00.000Z"],
          ["2026-03-01 23:30:00", "2026-03-01", "2026-03-01T23:30:00.000Z"],
          ["2027-01-01 06:00:00", "2027-01-01", "2027-01-01T06:00:00.000Z"],
        ],
      ],
      [
        "SELECT CAST(__time AS VARCHAR), CAST(CAST(__time AS DATE) AS VARCHAR) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR"],
          ["2024-02-29 18:04:56", "2024-02-29"],
          ["2026-03-01 05:30:00", "2026-03-01"],
          ["2026-03-02 05:00:00", "2026-03-02"],
          ["2027-01-01 11:30:00", "2027-01-01"],
        ],
        { sqlTimeZone: "Asia/Kolkata" },
      ],
      [
        "SELECT CAST(TIMESTAMP '2026-03-02 13:45:12.345' AS VARCHAR), CAST(DATE '2026-03-02' AS VARCHAR), CAST(1.0 AS VARCHAR), CAST(2.50 AS VARCHAR), CAST(CAST(10 AS DOUBLE) AS VARCHAR)",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["2026-03-02 13:45:12", "2026-03-02", "1.0", "2.5", "10.0"],
        ],
      ],
      [
        "SELECT CAST(s AS BIGINT), CAST(s AS DOUBLE), CAST(p AS BIGINT), CAST(CAST(d AS VARCHAR) AS DOUBLE), CAST(CAST(d AS VARCHAR) AS BIGINT) FROM $ds ORDER BY __time",
        [
          ["BIGINT", "DOUBLE", "BIGINT", "DOUBLE", "BIGINT"],
          [null, null, null, 2.5, 2],
          [null, null, null, -2.5, -2],
          [null, null, null, null, null],
          [null, null, null, 0.125, 0],
        ],
      ],
      [
        "SELECT CAST(s AS BOOLEAN), CAST(CAST(n AS VARCHAR) AS BOOLEAN), CAST(d AS BOOLEAN), CAST('true' AS BOOLEAN), CAST('1' AS BOOLEAN) FROM $ds ORDER BY __time",
        [
          ["BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN"],
          [null, true, true, true, true],
          [null, false, false, true, true],
          [null, null, null, true, true],
          [null, false, false, true, true],
        ],
      ],
      [
        "SELECT CAST(d * 4 AS VARCHAR), CAST(n AS DOUBLE) || '', CAST(n + 0.5 AS VARCHAR), d || '', CAST(1e20 AS VARCHAR), CAST(CAST(n AS FLOAT) AS VARCHAR), CONCAT(s, CAST(n AS DOUBLE)) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["10.0", "10.0", "10.5", "2.5", "1.0E20", "10.0", "Hello10.0"],
          ["-10.0", "-3.0", "-2.5", "-2.5", "1.0E20", "-3.0", "-3.0"],
          [null, null, null, null, "1.0E20", null, null],
          ["0.5", "0.0", "0.5", "0.125", "1.0E20", "0.0", "  pad  0.0"],
        ],
      ],
      [
        "SELECT CAST(s AS TIMESTAMP), CAST('2026-03-02 13:45' AS TIMESTAMP), CAST('2026-03-02T13:45:00Z' AS TIMESTAMP) FROM $ds ORDER BY __time",
        [
          ["TIMESTAMP", "TIMESTAMP", "TIMESTAMP"],
          [null, "2026-03-02T13:45:00.000Z", "2026-03-02T13:45:00.000Z"],
          [null, "2026-03-02T13:45:00.000Z", "2026-03-02T13:45:00.000Z"],
          [null, "2026-03-02T13:45:00.000Z", "2026-03-02T13:45:00.000Z"],
          [null, "2026-03-02T13:45:00.000Z", "2026-03-02T13:45:00.000Z"],
        ],
      ],
    ],
  },
  {
    title:
      "refuses an untyped NULL where Druid's operators do (\"Illegal use of 'NULL'\" at the literal), and takes it elsewhere",
    cases: [
      [
        "SELECT TEXTCAT(NULL, 'a')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [16])",
        },
      ],
      [
        "SELECT LEFT('a', NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [18])",
        },
      ],
      [
        "SELECT SUBSTRING(NULL, 1)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [18])",
        },
      ],
      [
        "SELECT BTRIM(NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [14])",
        },
      ],
      [
        "SELECT REPEAT('a', NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [20])",
        },
      ],
      [
        "SELECT LPAD(NULL, 2, 'x')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [13])",
        },
      ],
      [
        "SELECT STRPOS('a', NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [20])",
        },
      ],
      [
        "SELECT CONTAINS_STRING(NULL, 'a')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [24])",
        },
      ],
      [
        "SELECT REGEXP_REPLACE('a', 'b', NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [33])",
        },
      ],
      [
        "SELECT TRUNCATE(NULL, 1)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [17])",
        },
      ],
      [
        "SELECT SAFE_DIVIDE(1, NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [23])",
        },
      ],
      [
        "SELECT PARSE_LONG(NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [19])",
        },
      ],
      [
        "SELECT TIME_FLOOR(TIMESTAMP '2026-01-01 00:00:00', NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [52])",
        },
      ],
      [
        "SELECT TIME_SHIFT(TIMESTAMP '2026-01-01 00:00:00', 'P1D', NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [59])",
        },
      ],
      [
        "SELECT TIME_EXTRACT(NULL, 'HOUR')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [21])",
        },
      ],
      [
        "SELECT TIME_FORMAT(NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [20])",
        },
      ],
      [
        "SELECT MILLIS_TO_TIMESTAMP(NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [28])",
        },
      ],
      [
        "SELECT DATE_TRUNC('day', NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [26])",
        },
      ],
      [
        "SELECT TIME_IN_INTERVAL(TIMESTAMP '2026-01-01 00:00:00', NULL)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage: "Illegal use of 'NULL' (line [1], column [58])",
        },
      ],
      [
        "SELECT LOWER(NULL), CHAR_LENGTH(NULL), CONCAT(NULL, 'a'), REPLACE(NULL, 'a', 'b'), POSITION(NULL IN 'a'), LPAD('a', 2, NULL), BTRIM('a', NULL)",
        [
          ["NULL", "INTEGER", "VARCHAR", "VARCHAR", "INTEGER", "VARCHAR", "VARCHAR"],
          [null, null, null, null, null, null, "a"],
        ],
      ],
      [
        "SELECT ABS(NULL), POWER(NULL, 2), SQRT(NULL), CEIL(NULL), ROUND(NULL), MOD(NULL, 2), DIV(2, NULL), NULLIF(NULL, 1), NVL(NULL, 1), PARSE_LONG('1', NULL)",
        [
          ["NULL", "DOUBLE", "DOUBLE", "NULL", "NULL", "INTEGER", "BIGINT", "NULL", "INTEGER", "BIGINT"],
          [null, null, null, null, null, null, null, null, 1, null],
        ],
      ],
      [
        "SELECT TIME_FLOOR(TIMESTAMP '2026-01-01 00:00:00', 'P1D', NULL, NULL), TIME_SHIFT(TIMESTAMP '2026-01-01 00:00:00', 'P1D', 1, NULL), TIME_EXTRACT(TIMESTAMP '2026-01-01 00:00:00', 'HOUR', NULL), TIME_FORMAT(TIMESTAMP '2026-01-01 00:00:00', NULL), TIME_PARSE('2026', 'yyyy', NULL), TIMESTAMPDIFF(DAY, NULL, TIMESTAMP '2026-01-01 00:00:00')",
        [
          ["TIMESTAMP", "TIMESTAMP", "BIGINT", "VARCHAR", "TIMESTAMP", "INTEGER"],
          [
            "2026-01-01T00:00:00.000Z",
            "2026-01-02T00:00:00.000Z",
            0,
            "2026-01-01T00:00:00.000+00:00",
            "2026-01-01T00:00:00.000Z",
            null,
          ],
        ],
      ],
    ],
  },
  {
    title:
      'refuses arguments of another type or number as Calcite does ("Cannot apply …", "Was expecting n arguments")',
    cases: [
      [
        "SELECT LEFT(n, 2) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'LEFT' to arguments of type 'LEFT(<BIGINT>, <INTEGER>)'. Supported form(s): 'LEFT(<CHARACTER>, <INTEGER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT LEFT(s, '2') FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'LEFT' to arguments of type 'LEFT(<VARCHAR>, <CHAR(1)>)'. Supported form(s): 'LEFT(<CHARACTER>, <INTEGER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT LEFT(s, d) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'LEFT' to arguments of type 'LEFT(<VARCHAR>, <DOUBLE>)'. Supported form(s): 'LEFT(<CHARACTER>, <INTEGER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_FLOOR(s, 'P1D') FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_FLOOR' to arguments of type 'TIME_FLOOR(<VARCHAR>, <CHAR(3)>)'. Supported form(s): 'TIME_FLOOR(<TIMESTAMP>, <CHARACTER>, [<TIMESTAMP>, [<CHARACTER>]])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_FLOOR(CAST(__time AS DATE), 'P1D') FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_FLOOR' to arguments of type 'TIME_FLOOR(<DATE>, <CHAR(3)>)'. Supported form(s): 'TIME_FLOOR(<TIMESTAMP>, <CHARACTER>, [<TIMESTAMP>, [<CHARACTER>]])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_FLOOR(__time, 'P1D', s) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_FLOOR' to arguments of type 'TIME_FLOOR(<TIMESTAMP(3)>, <CHAR(3)>, <VARCHAR>)'. Supported form(s): 'TIME_FLOOR(<TIMESTAMP>, <CHARACTER>, [<TIMESTAMP>, [<CHARACTER>]])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_CEIL(s, 'P1D') FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_CEIL' to arguments of type 'TIME_CEIL(<VARCHAR>, <CHAR(3)>)'. Supported form(s): 'TIME_CEIL(<TIMESTAMP>, <CHARACTER>, [<TIMESTAMP>, [<CHARACTER>]])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_FORMAT(n) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_FORMAT' to arguments of type 'TIME_FORMAT(<BIGINT>)'. Supported form(s): 'TIME_FORMAT(<TIMESTAMP>, [<CHARACTER>, [<CHARACTER>]])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_FORMAT('2026-03-02 13:45:12')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_FORMAT' to arguments of type 'TIME_FORMAT(<CHAR(19)>)'. Supported form(s): 'TIME_FORMAT(<TIMESTAMP>, [<CHARACTER>, [<CHARACTER>]])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_SHIFT(__time, 'P1D', 'x') FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_SHIFT' to arguments of type 'TIME_SHIFT(<TIMESTAMP(3)>, <CHAR(3)>, <CHAR(1)>)'. Supported form(s): 'TIME_SHIFT(<TIMESTAMP>, <CHARACTER>, <INTEGER>, [<CHARACTER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_SHIFT(__time, 1, 1) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_SHIFT' to arguments of type 'TIME_SHIFT(<TIMESTAMP(3)>, <INTEGER>, <INTEGER>)'. Supported form(s): 'TIME_SHIFT(<TIMESTAMP>, <CHARACTER>, <INTEGER>, [<CHARACTER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_EXTRACT(__time, n) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_EXTRACT' to arguments of type 'TIME_EXTRACT(<TIMESTAMP(3)>, <BIGINT>)'. Supported form(s): 'TIME_EXTRACT(<TIMESTAMP>, <CHARACTER>, [<CHARACTER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_PARSE(n) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_PARSE' to arguments of type 'TIME_PARSE(<BIGINT>)'. Supported form(s): 'TIME_PARSE(<CHARACTER>, [<CHARACTER>, [<CHARACTER>]])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_IN_INTERVAL(s, '2026/P1D') FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIME_IN_INTERVAL' to arguments of type 'TIME_IN_INTERVAL(<VARCHAR>, <CHAR(8)>)'. Supported form(s): 'TIME_IN_INTERVAL(<timestamp>, <interval>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT DATE_TRUNC('day', s) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'DATE_TRUNC' to arguments of type 'DATE_TRUNC(<CHAR(3)>, <VARCHAR>)'. Supported form(s): 'DATE_TRUNC(<CHARACTER>, <TIMESTAMP>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT MILLIS_TO_TIMESTAMP(d) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'MILLIS_TO_TIMESTAMP' to arguments of type 'MILLIS_TO_TIMESTAMP(<DOUBLE>)'. Supported form(s): 'MILLIS_TO_TIMESTAMP(<EXACT_NUMERIC>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT MILLIS_TO_TIMESTAMP(__time) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'MILLIS_TO_TIMESTAMP' to arguments of type 'MILLIS_TO_TIMESTAMP(<TIMESTAMP(3)>)'. Supported form(s): 'MILLIS_TO_TIMESTAMP(<EXACT_NUMERIC>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT MILLIS_TO_TIMESTAMP('1000')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'MILLIS_TO_TIMESTAMP' to arguments of type 'MILLIS_TO_TIMESTAMP(<CHAR(4)>)'. Supported form(s): 'MILLIS_TO_TIMESTAMP(<EXACT_NUMERIC>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT TIMESTAMP_TO_MILLIS(n) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TIMESTAMP_TO_MILLIS' to arguments of type 'TIMESTAMP_TO_MILLIS(<BIGINT>)'. Supported form(s): 'TIMESTAMP_TO_MILLIS(<TIMESTAMP>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT REVERSE(d) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'REVERSE' to arguments of type 'REVERSE(<DOUBLE>)'. Supported form(s): 'REVERSE(<CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT REVERSE(__time) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'REVERSE' to arguments of type 'REVERSE(<TIMESTAMP(3)>)'. Supported form(s): 'REVERSE(<CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT REVERSE(TRUE) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'REVERSE' to arguments of type 'REVERSE(<BOOLEAN>)'. Supported form(s): 'REVERSE(<CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT BTRIM(n) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'BTRIM' to arguments of type 'BTRIM(<BIGINT>)'. Supported form(s): 'BTRIM(<CHARACTER>, [<CHARACTER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT REPEAT(n, 2) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'REPEAT' to arguments of type 'REPEAT(<BIGINT>, <INTEGER>)'. Supported form(s): 'REPEAT(<CHARACTER>, <INTEGER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT PARSE_LONG(n) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'PARSE_LONG' to arguments of type 'PARSE_LONG(<BIGINT>)'. Supported form(s): 'PARSE_LONG(<CHARACTER>, [<INTEGER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT REGEXP_EXTRACT(n, 'a') FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'REGEXP_EXTRACT' to arguments of type 'REGEXP_EXTRACT(<BIGINT>, <CHAR(1)>)'. Supported form(s): 'REGEXP_EXTRACT(<CHARACTER>, <CHARACTER>, [<INTEGER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT REGEXP_REPLACE(n, 'a', 'b') FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'REGEXP_REPLACE' to arguments of type 'REGEXP_REPLACE(<BIGINT>, <CHAR(1)>, <CHAR(1)>)'. Supported form(s): 'REGEXP_REPLACE(<CHARACTER>, <CHARACTER>, <CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT REGEXP_LIKE(12345, '3')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'REGEXP_LIKE' to arguments of type 'REGEXP_LIKE(<INTEGER>, <CHAR(1)>)'. Supported form(s): 'REGEXP_LIKE(<CHARACTER>, <CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT CONTAINS_STRING(12345, '3')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'CONTAINS_STRING' to arguments of type 'CONTAINS_STRING(<INTEGER>, <CHAR(1)>)'. Supported form(s): 'CONTAINS_STRING(<CHARACTER>, <CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT ICONTAINS_STRING(n, 'a') FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'ICONTAINS_STRING' to arguments of type 'ICONTAINS_STRING(<BIGINT>, <CHAR(1)>)'. Supported form(s): 'ICONTAINS_STRING(<CHARACTER>, <CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT RPAD(n, 2) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'RPAD' to arguments of type 'RPAD(<BIGINT>, <INTEGER>)'. Supported form(s): 'RPAD(<CHARACTER>, <INTEGER>, [<CHARACTER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT LPAD(5, 3, '0')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'LPAD' to arguments of type 'LPAD(<INTEGER>, <INTEGER>, <CHAR(1)>)'. Supported form(s): 'LPAD(<CHARACTER>, <INTEGER>, [<CHARACTER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT STRPOS(s, n) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'STRPOS' to arguments of type 'STRPOS(<VARCHAR>, <BIGINT>)'. Supported form(s): 'STRPOS(<CHARACTER>, <CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT TEXTCAT(s, n) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'textcat' to arguments of type 'textcat(<VARCHAR>, <BIGINT>)'. Supported form(s): 'textcat(<CHARACTER>, <CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT TEXTCAT('a', 1)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'textcat' to arguments of type 'textcat(<CHAR(1)>, <INTEGER>)'. Supported form(s): 'textcat(<CHARACTER>, <CHARACTER>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT SUBSTRING(12345, 2)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'SUBSTRING' to arguments of type 'SUBSTRING(<INTEGER>, <INTEGER>)'. Supported form(s): 'SUBSTRING(<CHARACTER>, <INTEGER>, [<INTEGER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT TRUNCATE(s, 1) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'TRUNCATE' to arguments of type 'TRUNCATE(<VARCHAR>, <INTEGER>)'. Supported form(s): 'TRUNCATE(<NUMERIC>, [<INTEGER>])' (line [1], column [8])",
        },
      ],
      [
        "SELECT SAFE_DIVIDE(s, 1) FROM $ds",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Cannot apply 'SAFE_DIVIDE' to arguments of type 'SAFE_DIVIDE(<VARCHAR>, <INTEGER>)'. Supported form(s): 'SAFE_DIVIDE(<NUMERIC>, <NUMERIC>)' (line [1], column [8])",
        },
      ],
      [
        "SELECT LOWER(n), UPPER(d), CHAR_LENGTH(n), CONCAT(n, d), ABS('5'), POWER('2', 3), SQRT('16'), ROUND('2.5'), LEFT(s, CAST(2 AS BIGINT)) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "INTEGER", "VARCHAR", "DECIMAL", "DOUBLE", "DOUBLE", "DECIMAL", "VARCHAR"],
          ["10", "2.5", 2, "102.5", 5, 8, 4, 3, "He"],
          ["-3", "-2.5", 2, "-3-2.5", 5, 8, 4, 3, ""],
          [null, null, null, null, 5, 8, 4, 3, null],
          ["0", "0.125", 1, "00.125", 5, 8, 4, 3, "  "],
        ],
      ],
      [
        "SELECT TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Invalid number of arguments to function 'TIME_EXTRACT'. Was expecting 2 arguments (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:12.345', 'HOUR', 'UTC', 'x')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Invalid number of arguments to function 'TIME_EXTRACT'. Was expecting 2 arguments (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:12.345')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Invalid number of arguments to function 'TIME_FLOOR'. Was expecting 2 arguments (line [1], column [8])",
        },
      ],
      [
        "SELECT TIME_FORMAT()",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Invalid number of arguments to function 'TIME_FORMAT'. Was expecting 1 arguments (line [1], column [8])",
        },
      ],
      [
        "SELECT LPAD('a')",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Invalid number of arguments to function 'LPAD'. Was expecting 2 arguments (line [1], column [8])",
        },
      ],
      [
        "SELECT ROUND(1, 2, 3)",
        {
          status: 400,
          errorCode: "invalidInput",
          persona: "USER",
          category: "INVALID_INPUT",
          errorMessage:
            "Invalid number of arguments to function 'ROUND'. Was expecting 1 arguments (line [1], column [8])",
        },
      ],
    ],
  },
  {
    title:
      "reads times as text and keeps CHAR in ||: a TIMESTAMP in LOWER, ||, LIKE as SQL's 'yyyy-MM-dd HH:mm:ss', in CONCAT as epoch milliseconds",
    cases: [
      [
        "SELECT LOWER(__time), CONCAT(__time, '!'), __time || '', CHAR_LENGTH(__time), UPPER(CAST(__time AS DATE)) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "INTEGER", "VARCHAR"],
          ["2024-02-29 12:34:56", "1709210096789!", "2024-02-29 12:34:56", 19, "2024-02-29"],
          ["2026-03-01 00:00:00", "1772323200000!", "2026-03-01 00:00:00", 19, "2026-03-01"],
          ["2026-03-01 23:30:00", "1772407800000!", "2026-03-01 23:30:00", 19, "2026-03-01"],
          ["2027-01-01 06:00:00", "1798783200000!", "2027-01-01 06:00:00", 19, "2027-01-01"],
        ],
      ],
      ["SELECT COUNT(*) FROM $ds WHERE __time LIKE '2026-03-01 %'", [["BIGINT"], [2]]],
      [
        "SELECT __time || '', CONCAT(__time, '') FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR"],
          ["2024-02-29 18:04:56", "1709210096789"],
          ["2026-03-01 05:30:00", "1772323200000"],
          ["2026-03-02 05:00:00", "1772407800000"],
          ["2027-01-01 11:30:00", "1798783200000"],
        ],
        { sqlTimeZone: "Asia/Kolkata" },
      ],
      [
        "SELECT 'a' || 'bc', 'a' || NULL, s || 'x', 'ab' || s, CONCAT('a', 'b'), 'a' || 1, 1 || 2 FROM $ds ORDER BY __time",
        [
          ["CHAR", "CHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["abc", null, "Hellox", "abHello", "ab", "a1", "12"],
          ["abc", null, "x", "ab", "ab", "a1", "12"],
          ["abc", null, null, null, "ab", "a1", "12"],
          ["abc", null, "  pad  x", "ab  pad  ", "ab", "a1", "12"],
        ],
      ],
      [
        "SELECT TIMESTAMP '2026-03-02 13:45:12' || '', LOWER(TIMESTAMP '2026-03-02 13:45:12')",
        [
          ["VARCHAR", "VARCHAR"],
          ["2026-03-02 13:45:12", "2026-03-02 13:45:12"],
        ],
      ],
    ],
  },
  {
    title:
      "writes doubles and rounds them as Java does: Double.toString's forms, ROUND at the edges of a double",
    cases: [
      [
        "SELECT CAST(CAST(12345678 AS DOUBLE) AS VARCHAR), CAST(CAST(1234567 AS DOUBLE) AS VARCHAR), CAST(CAST(0.0001 AS DOUBLE) AS VARCHAR), CAST(CAST(0.001 AS DOUBLE) AS VARCHAR), CAST(CAST(-0.5 AS DOUBLE) AS VARCHAR), CAST(CAST(123456789012 AS DOUBLE) AS VARCHAR), CAST(CAST(1.5e-10 AS DOUBLE) AS VARCHAR)",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["1.2345678E7", "1234567.0", "1.0E-4", "0.001", "-0.5", "1.23456789012E11", "1.5E-10"],
        ],
      ],
      [
        "SELECT ROUND(CAST(1e21 AS DOUBLE), 2), ROUND(CAST(123.456 AS DOUBLE), -1), ROUND(CAST(0.5 AS DOUBLE)), ROUND(CAST(1.45 AS DOUBLE), 1), ROUND(CAST(-1.45 AS DOUBLE), 1), ROUND(CAST(2.345e-5 AS DOUBLE), 7)",
        [
          ["DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE"],
          [1e21, 120, 1, 1.5, -1.5, 2.35e-5],
        ],
      ],
      [
        "SELECT TRIM(NULL), TRIM('  a  ')",
        [
          ["NULL", "VARCHAR"],
          [null, "a"],
        ],
      ],
    ],
  },
  {
    title:
      "computes trigonometry and bits: SIN … ATAN2, DEGREES, RADIANS (NaN and infinities of a column), the BITWISE functions on longs",
    cases: [
      [
        "SELECT SIN(1), COS(0), TAN(1), COT(1), ASIN(0.5), ACOS(0.5), ATAN(1), ATAN2(1, 2), DEGREES(1), RADIANS(90)",
        [
          [
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
            "DOUBLE",
          ],
          [
            0.8414709848078965, 1, 1.5574077246549023, 0.6420926159343308, 0.5235987755982989,
            1.0471975511965979, 0.7853981633974483, 0.4636476090008061, 57.29577951308232, 1.5707963267948966,
          ],
        ],
      ],
      [
        "SELECT SIN(CAST(NULL AS DOUBLE)), SIN(2), DEGREES(CAST(90 AS BIGINT)), ATAN2(CAST(NULL AS DOUBLE), 1), SIN('1')",
        [
          ["DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE"],
          [null, 0.9092974268256817, 5156.620156177409, null, 0.8414709848078965],
        ],
      ],
      [
        "SELECT BITWISE_AND(12, 10), BITWISE_OR(12, 10), BITWISE_XOR(12, 10), BITWISE_COMPLEMENT(12), BITWISE_SHIFT_LEFT(1, 4), BITWISE_SHIFT_RIGHT(-16, 2), BITWISE_AND(CAST(NULL AS BIGINT), 1), BITWISE_AND(12.7, 10), BITWISE_SHIFT_LEFT(1, 65)",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [8, 14, 6, -13, 16, -4, null, 8, 2],
        ],
      ],
      [
        "SELECT SIN(d), COS(n), ATAN2(n, d), DEGREES(d), BITWISE_AND(n, 6), BITWISE_OR(n, d), BITWISE_COMPLEMENT(n), BITWISE_SHIFT_RIGHT(n, 1) FROM $ds ORDER BY __time",
        [
          ["DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [0.5984721441039564, -0.8390715290764524, 1.3258176636680326, 143.2394487827058, 2, 10, -11, 5],
          [-0.5984721441039564, -0.9899924966004454, -2.2655346029916, -143.2394487827058, 4, -1, 2, -2],
          [null, null, null, null, null, null, null, null],
          [0.12467473338522769, 1, 0, 7.16197243913529, 0, 0, -1, 0],
        ],
      ],
      [
        "SELECT ASIN(d), ACOS(n), COT(n) FROM $ds ORDER BY __time",
        [
          ["DOUBLE", "DOUBLE", "DOUBLE"],
          ["NaN", "NaN", 1.54235104535692],
          ["NaN", "NaN", 7.015252551434534],
          [null, null, null],
          [0.1253278311680654, 1.5707963267948966, "Infinity"],
        ],
      ],
    ],
  },
  {
    title:
      "formats sizes for people: HUMAN_READABLE_BINARY_BYTE_FORMAT, HUMAN_READABLE_DECIMAL_BYTE_FORMAT, HUMAN_READABLE_DECIMAL_FORMAT (units, precision, negatives, Java's rounding)",
    cases: [
      [
        "SELECT HUMAN_READABLE_BINARY_BYTE_FORMAT(0), HUMAN_READABLE_BINARY_BYTE_FORMAT(512), HUMAN_READABLE_BINARY_BYTE_FORMAT(1023), HUMAN_READABLE_BINARY_BYTE_FORMAT(1024), HUMAN_READABLE_BINARY_BYTE_FORMAT(1536, 3), HUMAN_READABLE_BINARY_BYTE_FORMAT(-2048), HUMAN_READABLE_BINARY_BYTE_FORMAT(9223372036854775807)",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["0 B", "512 B", "1023 B", "1.00 KiB", "1.500 KiB", "-2.00 KiB", "8.00 EiB"],
        ],
      ],
      [
        "SELECT HUMAN_READABLE_DECIMAL_BYTE_FORMAT(0), HUMAN_READABLE_DECIMAL_BYTE_FORMAT(999), HUMAN_READABLE_DECIMAL_BYTE_FORMAT(1000), HUMAN_READABLE_DECIMAL_BYTE_FORMAT(1999, 1), HUMAN_READABLE_DECIMAL_BYTE_FORMAT(-1500), HUMAN_READABLE_DECIMAL_BYTE_FORMAT(1000000000000)",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["0 B", "999 B", "1.00 KB", "2.0 KB", "-1.50 KB", "1.00 TB"],
        ],
      ],
      [
        "SELECT HUMAN_READABLE_DECIMAL_FORMAT(0), HUMAN_READABLE_DECIMAL_FORMAT(999), HUMAN_READABLE_DECIMAL_FORMAT(1000), HUMAN_READABLE_DECIMAL_FORMAT(1234567, 3), HUMAN_READABLE_DECIMAL_FORMAT(-1500), HUMAN_READABLE_DECIMAL_FORMAT(1.5), HUMAN_READABLE_DECIMAL_FORMAT(1005, 2), HUMAN_READABLE_DECIMAL_FORMAT(1995, 2)",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["0", "999", "1.00 K", "1.234 M", "-1.50 K", "1", "1.01 K", "2.00 K"],
        ],
      ],
      ["SELECT HUMAN_READABLE_BINARY_BYTE_FORMAT(CAST(NULL AS BIGINT))", [["VARCHAR"], [null]]],
      [
        "SELECT HUMAN_READABLE_BINARY_BYTE_FORMAT(n), HUMAN_READABLE_DECIMAL_FORMAT(d), HUMAN_READABLE_DECIMAL_BYTE_FORMAT(n * 1000000) FROM $ds ORDER BY __time",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR"],
          ["10 B", "2", "10.00 MB"],
          ["-3 B", "-2", "-3.00 MB"],
          [null, null, null],
          ["0 B", "0", "0 B"],
        ],
      ],
    ],
  },
  {
    title:
      "reads IP addresses and base64: IPV4_PARSE, IPV4_STRINGIFY (typed CHAR), IPV4_MATCH, DECODE_BASE64_UTF8, BITWISE_CONVERT_DOUBLE_TO_LONG_BITS and back",
    cases: [
      [
        "SELECT IPV4_PARSE('192.168.0.1'), IPV4_PARSE('256.1.1.1'), IPV4_PARSE('1.2.3'), IPV4_PARSE(' 1.2.3.4'), IPV4_PARSE('0.0.0.0'), IPV4_PARSE(CAST(NULL AS VARCHAR)), IPV4_PARSE('3232235521')",
        [
          ["BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT", "BIGINT"],
          [3232235521, null, null, 16909060, 0, null, null],
        ],
      ],
      [
        "SELECT IPV4_STRINGIFY(3232235521), IPV4_STRINGIFY(0), IPV4_STRINGIFY(-1), IPV4_STRINGIFY(4294967296), IPV4_STRINGIFY('192.168.0.1'), IPV4_STRINGIFY('x'), IPV4_STRINGIFY(CAST(NULL AS BIGINT))",
        [
          ["CHAR", "CHAR", "CHAR", "CHAR", "CHAR", "CHAR", "CHAR"],
          ["192.168.0.1", "0.0.0.0", null, null, "192.168.0.1", null, null],
        ],
      ],
      [
        "SELECT IPV4_MATCH('192.168.0.1', '192.168.0.0/16'), IPV4_MATCH('10.0.0.1', '192.168.0.0/16'), IPV4_MATCH(3232235521, '192.168.0.0/24'), IPV4_MATCH('x', '192.168.0.0/16'), IPV4_MATCH(CAST(NULL AS VARCHAR), '10.0.0.0/8')",
        [
          ["BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN", "BOOLEAN"],
          [true, false, true, false, false],
        ],
      ],
      [
        "SELECT IPV4_MATCH('1.2.3.4', 'nope')",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "Function[ipv4_match] subnet arg has an invalid format: nope",
        },
      ],
      [
        "SELECT DECODE_BASE64_UTF8('aGVsbG8='), DECODE_BASE64_UTF8(''), DECODE_BASE64_UTF8(CAST(NULL AS VARCHAR))",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR"],
          ["hello", "", null],
        ],
      ],
      [
        "SELECT DECODE_BASE64_UTF8('!!!')",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "Illegal base64 character 21",
        },
      ],
      // BITWISE_CONVERT: Druid printed the long 4609434218613702656; JSON.parse reads it as 4609434218613702700.
      [
        "SELECT BITWISE_CONVERT_DOUBLE_TO_LONG_BITS(1.5), BITWISE_CONVERT_LONG_BITS_TO_DOUBLE(4609434218613702656)",
        [
          ["BIGINT", "DOUBLE"],
          [4609434218613702700, 1.5],
        ],
      ],
      [
        "SELECT IPV4_PARSE(s), IPV4_STRINGIFY(n), IPV4_MATCH(s, '10.0.0.0/8') FROM $ds ORDER BY __time",
        [
          ["BIGINT", "CHAR", "BOOLEAN"],
          [null, "0.0.0.10", false],
          [null, null, false],
          [null, null, false],
          [null, "0.0.0.0", false],
        ],
      ],
    ],
  },
  {
    title:
      "formats text: STRING_FORMAT as Druid's nonStrictFormat (Java's String.format, the pattern kept without arguments, '; arg' after a pattern Java refuses)",
    cases: [
      [
        "SELECT STRING_FORMAT('%s-%s', 'a', 1), STRING_FORMAT('%d items', 3), STRING_FORMAT('%.2f', 3.14159), STRING_FORMAT('%5s|', 'ab'), STRING_FORMAT('%-5s|', 'ab'), STRING_FORMAT('%x', 255), STRING_FORMAT('%05d', 42), STRING_FORMAT('100%%')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["a-1", "3 items", "3.14", "   ab|", "ab   |", "ff", "00042", "100%%"],
        ],
      ],
      [
        "SELECT STRING_FORMAT('%s', CAST(NULL AS VARCHAR)), STRING_FORMAT(CAST(NULL AS VARCHAR), 1), STRING_FORMAT('%s and %s', 'x')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR"],
          ["null", null, "%s and %s; x"],
        ],
      ],
      ["SELECT STRING_FORMAT('%d', 'x')", [["VARCHAR"], ["%d; x"]]],
      [
        "SELECT STRING_FORMAT('%s', 2.5), STRING_FORMAT('%s', CAST(2 AS DOUBLE)), STRING_FORMAT('%s', TIMESTAMP '2026-03-02 00:00:00'), STRING_FORMAT('%.1f', 2)",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR"],
          ["2.5", "2.0", "1772409600000", "%.1f; 2"],
        ],
      ],
      [
        "SELECT STRING_FORMAT('%s:%d', s, n) FROM $ds ORDER BY __time",
        [["VARCHAR"], ["Hello:10"], [":-3"], ["null:null"], ["  pad  :0"]],
      ],
    ],
  },
  {
    title:
      "reads zone arguments as Joda does: fixed offsets, GMT and Etc ids; TIME_FORMAT refuses an id Joda does not spell that way",
    cases: [
      [
        "SELECT TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'P1D', NULL, '+05:30'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:00', 'yyyy-MM-dd HH:mm ZZ', '+05:30'), TIME_SHIFT(TIMESTAMP '2026-03-02 13:45:00', 'P1D', 1, '-08:00'), TIME_EXTRACT(TIMESTAMP '2026-03-02 13:45:00', 'HOUR', '+05:30'), TIME_PARSE('2026-03-02 10', 'yyyy-MM-dd HH', '+05:30')",
        [
          ["TIMESTAMP", "VARCHAR", "TIMESTAMP", "BIGINT", "TIMESTAMP"],
          [
            "2026-03-01T18:30:00.000Z",
            "2026-03-02 19:15 +05:30",
            "2026-03-03T13:45:00.000Z",
            19,
            "2026-03-02T04:30:00.000Z",
          ],
        ],
      ],
      [
        "SELECT TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:00', 'HH', 'GMT'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:00', 'HH', 'Etc/GMT+5'), TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:00', 'HH', 'UTC')",
        [
          ["VARCHAR", "VARCHAR", "VARCHAR"],
          ["13", "08", "13"],
        ],
      ],
      [
        "SELECT TIME_FORMAT(TIMESTAMP '2026-03-02 13:45:00', 'HH', 'utc')",
        {
          status: 500,
          errorCode: "general",
          persona: "ADMIN",
          category: "UNCATEGORIZED",
          errorMessage: "The datetime zone id 'utc' is not recognised",
        },
      ],
      [
        "SELECT TIME_PARSE('2026-03-02 10', 'yyyy-MM-dd HH', 'Mars/Olympus'), TIME_FLOOR(TIMESTAMP '2026-03-02 13:45:00', 'P1D', NULL, 'utc')",
        [
          ["TIMESTAMP", "TIMESTAMP"],
          ["2026-03-02T10:00:00.000Z", "2026-03-02T00:00:00.000Z"],
        ],
      ],
    ],
  },
];

export function brokerSqlFunctionSuite(target: ConformanceTarget): void {
  const ds = freshId("fn_sql");
  const id = freshId("fn_sql_load");

  async function outcome(query: string, context: Record<string, unknown> = {}): Promise<Outcome> {
    const ex = await call(target, "POST", "/druid/v2/sql", {
      query: query.replaceAll("$ds", `"${ds}"`),
      context,
      resultFormat: "array",
      header: true,
      sqlTypesHeader: true,
    });
    const body = json(ex) as unknown[][] & Refusal;
    if (ex.status === 200) return body.slice(1);
    const { errorCode, persona, category, errorMessage } = body;
    return { status: ex.status, errorCode, persona, category, errorMessage };
  }

  describe(`Broker SQL scalar functions: ${target.name}`, () => {
    beforeAll(async () => {
      const dir = writeInput(target.dataDir(), { "rows.json": ROWS });
      const submit = await call(
        target,
        "POST",
        "/druid/indexer/v1/task",
        indexParallelSpec({
          id,
          dataSource: ds,
          baseDir: dir,
          dimensions: ["s", "p", { type: "long", name: "n" }, { type: "double", name: "d" }],
          segmentGranularity: "year",
        }),
      );
      if (submit.status !== 200) throw new Error(`submit: ${submit.status} ${submit.text}`);
      await eventually(target, `SQL to see ${ds}'s rows`, async () => {
        const status = json(await call(target, "GET", `/druid/indexer/v1/task/${id}/status`)) as {
          status?: { statusCode: string };
        };
        if (status.status?.statusCode === "FAILED") throw new Error(`task ${id} failed`);
        const count = await outcome("SELECT COUNT(*) FROM $ds");
        return JSON.stringify(count) === JSON.stringify([["BIGINT"], [ROWS.length]]) ? true : undefined;
      });
    });

    for (const group of GROUPS) {
      it(group.title, async () => {
        // Every case of the group is asked before comparing, so a failure lists all the queries that differ.
        const seen: Array<{ query: string; answer: Outcome }> = [];
        for (const [query, , context] of group.cases)
          seen.push({ query, answer: await outcome(query, context) });
        expect(seen).toEqual(group.cases.map(([query, answer]) => ({ query, answer })));
      });
    }
  });
}
