// What the emulator answers for SQL it cannot read (docs/emulator.md, "Behaviours, by contract section"): Druid's
// parse error where Druid's parser refuses the text (test/conformance/broker-sql-syntax-cases.ts holds the cases
// against a real Druid 33), 501 only for syntax Druid reads and the emulator does not run, and the same parse
// errors for MSQ's POST /druid/v2/sql/task, placed in the whole statement.
import { describe, expect, it } from "vitest";
import { SqlSyntaxError } from "../../src/sim/sql-lex.js";
import { checkMsqSyntax, parseStatement } from "../../src/sim/sql-parse.js";
import {
  isParseError,
  KNOWN_NOT_RUN,
  PARSE_ERRORS,
  withoutExpectedTokens,
} from "../conformance/broker-sql-syntax-cases.js";
import { startTestSim, type TestSim } from "../helpers/sim.js";

const sql = (s: TestSim, query: string) => s.post("/druid/v2/sql", { query });

const EXTERN = `TABLE(EXTERN('{"type":"inline","data":"{\\"t\\":\\"2026-03-01\\",\\"a\\":\\"x\\"}"}', '{"type":"json"}')) EXTEND (t VARCHAR, a VARCHAR)`;

describe("Broker SQL the emulator cannot read", () => {
  it("answers each syntax Druid reads but the emulator does not run with 501, never a parse error", async () => {
    const s = await startTestSim({ druidVersion: 33 });
    for (const query of KNOWN_NOT_RUN) {
      const res = await sql(s, query);
      expect([query, res.status, res.json]).toEqual([
        query,
        501,
        {
          error: "druidException",
          errorCode: "general",
          persona: "USER",
          category: "UNSUPPORTED",
          errorMessage: expect.stringMatching(
            / is not supported by the emulator( \(line \[\d+\], column \[\d+\]\))?$/,
          ),
          context: { sourceType: "sql" },
        },
      ]);
      expect(isParseError(res.status, res.json)).toBe(false);
    }
  });

  it("leaves Druid's expected-token tail out, so the conformance comparison drops nothing the emulator said", async () => {
    const s = await startTestSim({ druidVersion: 33 });
    for (const [query] of PARSE_ERRORS) {
      const res = await sql(s, query);
      expect(res.status, query).toBe(400);
      expect(withoutExpectedTokens(res.json), query).toEqual(res.json);
    }
    // The reduction itself: Druid's tails as a real Druid 33 sent them.
    expect(
      withoutExpectedTokens({
        errorMessage:
          'Received an unexpected token [c] (line [1], column [12]), acceptable options: [<EOF>, "ORDER", ","]',
        context: { sourceType: "sql", token: "c", expected: '[<EOF>, "ORDER", ","]' },
      }),
    ).toEqual({
      errorMessage: "Received an unexpected token [c] (line [1], column [12])",
      context: { sourceType: "sql", token: "c" },
    });
    expect(
      withoutExpectedTokens({
        errorMessage:
          "Incorrect syntax near the keyword 'FROM' at line 1, column 8.\nWas expecting one of:\n    \"*\" ...",
      }),
    ).toEqual({ errorMessage: "Incorrect syntax near the keyword 'FROM' at line 1, column 8." });
  });

  it("classifies by Druid's parser: a keyword reads as Druid's keyword error only in upper case, as Calcite compares images", () => {
    const refusal = (text: string) => {
      try {
        parseStatement(text);
      } catch (error) {
        if (error instanceof SqlSyntaxError) return error.render(text).message;
        throw error;
      }
      throw new Error(`parsed: ${text}`);
    };
    expect(refusal("SELECT a FROM t WHERE")).toBe(
      "Incorrect syntax near the keyword 'WHERE' at line 1, column 17.",
    );
    expect(refusal("SELECT a FROM t where")).toBe(
      "Received an unexpected token [where <EOF>] (line [1], column [17])",
    );
    // A token the lexer cannot start is Calcite's lexical error, with the character's code.
    expect(refusal("SELECT a\n  FROM t WHERE a # 1")).toBe(
      'Lexical error at line 2, column 18.  Encountered: "#" (35), after : ""',
    );
    // Text that parses is no parse error, whatever the emulator then does with it.
    expect(() =>
      parseStatement("SELECT a FROM t WHERE a = 1 ORDER BY a DESC LIMIT 3 OFFSET 1"),
    ).not.toThrow();
  });
});

describe("MSQ statements the emulator cannot read (POST /druid/v2/sql/task)", () => {
  async function task(s: TestSim, query: string, sqlQueryId: string) {
    return s.post("/druid/v2/sql/task", { query, context: { sqlQueryId } });
  }
  const parseError = (sqlQueryId: string, errorMessage: string, context: Record<string, string>) => ({
    taskId: sqlQueryId,
    state: "FAILED",
    error: {
      error: "druidException",
      errorCode: "invalidInput",
      persona: "USER",
      category: "INVALID_INPUT",
      errorMessage,
      context: { sourceType: "sql", ...context },
    },
  });

  it("refuses a malformed statement with Druid's parse error at the statement's line and column", async () => {
    const s = await startTestSim({ druidVersion: 33 });
    const comma = await task(
      s,
      `INSERT INTO syntax_a\nSELECT t, a,\nFROM ${EXTERN}\nPARTITIONED BY DAY`,
      "q1",
    );
    expect([comma.status, comma.json]).toEqual([
      400,
      parseError("q1", "Received an unexpected token [, FROM] (line [2], column [12])", {
        line: "2",
        column: "12",
        endLine: "2",
        endColumn: "12",
        token: ", FROM",
      }),
    ]);
    const where = await task(
      s,
      `REPLACE INTO syntax_a OVERWRITE ALL SELECT t FROM ${EXTERN} WHERE PARTITIONED BY DAY`,
      "q2",
    );
    expect([where.status, where.json.error.errorMessage]).toEqual([
      400,
      expect.stringMatching(/^Incorrect syntax near the keyword 'WHERE' at line 1, column \d+\.$/),
    ]);
    const verb = await task(s, "INSERT syntax_a SELECT 1 PARTITIONED BY ALL", "q3");
    expect([verb.status, verb.json.error.errorMessage]).toEqual([
      400,
      "Received an unexpected token [syntax_a] (line [1], column [8])",
    ]);
    const lexical = await task(
      s,
      `INSERT INTO syntax_a SELECT t # a FROM ${EXTERN} PARTITIONED BY DAY`,
      "q4",
    );
    expect([lexical.status, lexical.json.error.errorMessage]).toEqual([
      400,
      'Lexical error at line 1, column 31.  Encountered: "#" (35), after : ""',
    ]);
    // Druid 33's parser takes CLUSTERED BY only after PARTITIONED BY (the Broker answered `[PARTITIONED]`).
    const order = await task(
      s,
      `INSERT INTO syntax_a SELECT t FROM ${EXTERN}\nCLUSTERED BY t PARTITIONED BY DAY`,
      "q5",
    );
    expect([order.status, order.json.error.errorMessage]).toEqual([
      400,
      "Received an unexpected token [PARTITIONED] (line [2], column [16])",
    ]);
    // Nothing is added for a refused statement.
    expect(s.sim.engine.tasks.has("query-q1")).toBe(false);
  });

  it("reads what it ran before: SET statements (Druid 34+), OVERWRITE WHERE, CLUSTERED BY, a closing semicolon", () => {
    for (const statement of [
      `SET maxNumTasks = 2;\nREPLACE INTO syntax_a OVERWRITE WHERE __time >= TIMESTAMP '2026-03-01' AND __time < TIMESTAMP '2026-03-02'\nSELECT TIME_PARSE(t) AS __time, a FROM ${EXTERN}\nPARTITIONED BY DAY CLUSTERED BY a, 2 DESC;`,
      `INSERT INTO "syntax_a" SELECT * FROM ${EXTERN} PARTITIONED BY ALL TIME`,
      `INSERT INTO druid.syntax_a SELECT t FROM ${EXTERN} PARTITIONED BY FLOOR(__time TO HOUR)`,
      `INSERT INTO syntax_a SELECT t FROM ${EXTERN} PARTITIONED BY 'P1D'`,
      // A query the emulator does not run is not the parser's to refuse.
      `INSERT INTO syntax_a SELECT t FROM ${EXTERN} UNION ALL SELECT t FROM ${EXTERN} PARTITIONED BY DAY`,
    ])
      expect(() => checkMsqSyntax(statement), statement).not.toThrow();
  });
});
