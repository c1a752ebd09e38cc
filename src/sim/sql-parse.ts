import { sqlTimeUnitPeriod } from "../core/sql-time-units.js";
import { SqlError, type SqlType, Timestamp, UnsupportedSqlError, unsupported } from "./sql.js";
import type {
  ColumnRef,
  Expr,
  ExternColumn,
  From,
  JoinType,
  OrderKey,
  Query,
  SelectItem,
  Span,
  Statement,
} from "./sql-ast.js";
import { readJsonObjectArgs } from "./sql-json.js";
import { type FaultToken, SQL_RESERVED, SqlSyntaxError, type Token, tokenize } from "./sql-lex.js";
import { parseTimestampLiteral, UTC, type Zone } from "./sql-time.js";

/**
 * Druid SQL text → a query tree (sql-ast.ts), following Calcite's grammar for what Druid accepts
 * (docs/querying/sql.md): `[EXPLAIN PLAN FOR] [WITH …] SELECT [DISTINCT] … [FROM table | (subquery) | joins]
 * [WHERE] [GROUP BY] [HAVING] [ORDER BY] [LIMIT] [OFFSET] [FETCH]`.
 */
export interface ParseOptions {
  /** `sqlTimeZone`: `TIMESTAMP '…'` literals are local times there. */
  timeZone?: Zone;
}

const RESERVED = new Set([
  "SELECT",
  "FROM",
  "WHERE",
  "GROUP",
  "ORDER",
  "LIMIT",
  "OFFSET",
  "FETCH",
  "HAVING",
  "UNION",
  "INTERSECT",
  "EXCEPT",
  "AND",
  "OR",
  "NOT",
  "AS",
  "FILTER",
  "ASC",
  "DESC",
  "IN",
  "IS",
  "LIKE",
  "BETWEEN",
  "JOIN",
  "INNER",
  "LEFT",
  "RIGHT",
  "FULL",
  "CROSS",
  "NATURAL",
  "ON",
  "USING",
  "OVER",
  "CASE",
  "WHEN",
  "THEN",
  "ELSE",
  "END",
  "WINDOW",
  "MINUS",
  "QUALIFY",
  "VALUE",
  "WITH",
  "BY",
  // Druid's ingestion clauses (`DruidSqlInsert`, `DruidSqlReplace`): never an alias.
  "PARTITIONED",
  "CLUSTERED",
  "OVERWRITE",
]);
const isReserved = (word: string) => RESERVED.has(word.toUpperCase());

/**
 * What a name or an alias may not be unquoted — `SELECT COUNT(*) AS count` is refused at `AS`, as a real Druid 33
 * answered — though many of these words start an expression (functions, literals).
 */
const NAME_RESERVED = new Set([...RESERVED, ...SQL_RESERVED]);
/** Whether a token may be a name unquoted. */
const isName = (t: Token) => t.t === "qid" || (t.t === "id" && !NAME_RESERVED.has(t.v.toUpperCase()));

/** Reserved words that are expressions on their own (or start one without a parenthesis). */
const BARE_WORDS = new Set(
  (
    "CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP LOCALTIME LOCALTIMESTAMP CURRENT_USER USER SESSION_USER " +
    "SYSTEM_USER CURRENT_CATALOG CURRENT_PATH CURRENT_ROLE CURRENT_SCHEMA NULL TRUE FALSE UNKNOWN CAST INTERVAL " +
    "TIMESTAMP DATE TIME EXISTS ARRAY MULTISET ROW CURRENT NEW"
  ).split(" "),
);

/** Words of Calcite's call forms besides plain arguments (see `otherCallSyntax`). */
const CALL_WORDS = new Set(
  "RETURNING ON PLACING USING WITH WITHOUT ERROR DEFAULT NULL ABSENT EMPTY ORDER SEPARATOR FORMAT KEY VALUE ENCODING SIMILAR".split(
    " ",
  ),
);

/** Calcite statements Druid's parser does not take (`CREATE TABLE …`): it stops on their first word. */
const STATEMENT_KEYWORDS = new Set([
  "CREATE",
  "DROP",
  "ALTER",
  "GRANT",
  "REVOKE",
  "MERGE",
  "TRUNCATE",
  "UPSERT",
]);

/**
 * Reserved words no expression starts with: where one stands after an operator, a comma or a clause keyword,
 * JavaCC's lookahead for that continuation fails and Druid's parser stops on the token before.
 */
const NOT_OPERANDS = new Set(
  [...RESERVED].filter((w) => !["NOT", "CASE", "LEFT", "RIGHT"].includes(w)).concat(["ESCAPE"]),
);

/** Calcite's interval qualifiers: day-time ones in milliseconds, year-month ones in months. */
const INTERVAL_UNITS: Record<string, { ms?: number; months?: number }> = {
  SECOND: { ms: 1000 },
  MINUTE: { ms: 60_000 },
  HOUR: { ms: 3_600_000 },
  DAY: { ms: 86_400_000 },
  WEEK: { ms: 7 * 86_400_000 },
  MONTH: { months: 1 },
  QUARTER: { months: 3 },
  YEAR: { months: 12 },
};

const CAST_TYPES: Record<string, SqlType> = {
  BIGINT: "BIGINT",
  INTEGER: "INTEGER",
  INT: "INTEGER",
  SMALLINT: "INTEGER",
  TINYINT: "INTEGER",
  DOUBLE: "DOUBLE",
  FLOAT: "FLOAT",
  REAL: "FLOAT",
  DECIMAL: "DECIMAL",
  VARCHAR: "VARCHAR",
  CHAR: "VARCHAR",
  TIMESTAMP: "TIMESTAMP",
  DATE: "DATE",
  BOOLEAN: "BOOLEAN",
};

class Parser {
  #i = 0;
  /** A validator's refusal found while parsing, raised once the whole text parsed (parse errors come first). */
  #invalid: SqlError | null = null;
  /** Whether an INSERT/REPLACE's query is in parentheses (Druid reads it; the MSQ planner does not). */
  #parenthesized = false;
  /** SELECTs read so far. */
  #selects = 0;
  /** Whether the last construct read (a select item, a FROM item) could still take an alias: an identifier. */
  #aliasOk = false;
  readonly toks: Token[];
  constructor(
    readonly sql: string,
    readonly options: ParseOptions,
    /** Where `sql` starts in a longer statement (an MSQ statement's query part): tokens carry its offsets. */
    readonly base = 0,
  ) {
    this.toks = tokenize(sql, base);
  }

  peek(offset = 0): Token {
    return this.toks[Math.min(this.#i + offset, this.toks.length - 1)] as Token;
  }
  next(): Token {
    return this.toks[this.#i++] as Token;
  }
  isKw(kw: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.t === "id" && t.v.toUpperCase() === kw;
  }
  isOp(op: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.t === "op" && t.v === op;
  }
  acceptKw(kw: string): boolean {
    if (!this.isKw(kw)) return false;
    this.#i++;
    return true;
  }
  expectKw(kw: string): void {
    if (!this.acceptKw(kw)) throw this.fail();
  }
  acceptOp(op: string): boolean {
    if (!this.isOp(op)) return false;
    this.#i++;
    return true;
  }
  expectOp(op: string): Token {
    const t = this.peek();
    if (!this.acceptOp(op)) throw this.fail();
    return t;
  }
  /**
   * Druid's parse error at the token `offset` ahead: `width` tokens as JavaCC looked ahead (2 where a
   * connector — an operator, a comma, a clause keyword — is not followed by what it joins: Druid stops on the
   * connector), `identOk` where an identifier could have stood (a keyword there gets "Incorrect syntax near the
   * keyword"). Anything the grammar below does not read is refused this way; SQL Druid reads that the emulator
   * does not run is refused by name (`unsupported`) before it gets here.
   */
  fail(width = 1, identOk = false, offset = 0): SqlSyntaxError {
    const tokens: FaultToken[] = [];
    for (let n = 0; n < width; n++) {
      const t = this.peek(offset + n);
      tokens.push({
        at: t.at,
        end: t.end,
        image: t.t === "eof" ? null : this.sql.slice(t.at - this.base, t.end - this.base),
      });
      if (t.t === "eof") break;
    }
    return new SqlSyntaxError({ k: "token", tokens, identOk }, this.text());
  }
  /** A refusal of Druid's parser that names no position. */
  plain(message: string): SqlSyntaxError {
    return new SqlSyntaxError({ k: "plain", message }, this.text());
  }
  /** The text the tokens' offsets point into (a part is padded to its offset in the statement). */
  text(): string {
    return " ".repeat(this.base) + this.sql;
  }

  /** Whether the token `offset` ahead can start an expression. */
  startsExpr(offset = 0): boolean {
    const t = this.peek(offset);
    if (t.t === "num" || t.t === "str" || t.t === "qid") return true;
    if (t.t === "op") return ["(", "-", "+", "?", "{"].includes(t.v);
    if (t.t !== "id") return false;
    const upper = t.v.toUpperCase();
    if (upper === "LEFT" || upper === "RIGHT") return this.isOp("(", offset + 1);
    return !NOT_OPERANDS.has(upper);
  }
  /**
   * A reserved word that is an expression only as a call (`COUNT`, `SUM`, `YEAR` … without `(`): Calcite's
   * parser stops on it, looking one token further (a real Druid 33 answered "Incorrect syntax near the keyword
   * 'COUNT'", and `[year =]` for `WHERE year = 1`: sys.segments' `start` needs its quotes).
   */
  bareFunctionWord(): boolean {
    const t = this.peek();
    if (t.t !== "id" || this.isOp("(", 1)) return false;
    const upper = t.v.toUpperCase();
    return SQL_RESERVED.includes(upper) && !BARE_WORDS.has(upper);
  }
  /**
   * `INTERVAL`, `TIMESTAMP` or `DATE` without the literal that completes it: Calcite's lookahead reads one token
   * further into a typed literal, so Druid reports three tokens (`[- INTERVAL DAY]`, `[>= TIMESTAMP <EOF>]`).
   */
  literalGap(offset: number): boolean {
    if (this.isKw("INTERVAL", offset)) {
      const next = this.peek(offset + 1);
      return !(
        next.t === "str" ||
        next.t === "num" ||
        this.isOp("-", offset + 1) ||
        this.isOp("+", offset + 1)
      );
    }
    return (this.isKw("TIMESTAMP", offset) || this.isKw("DATE", offset)) && this.peek(offset + 1).t !== "str";
  }
  /** Whether the token `offset` ahead can start a FROM item. */
  startsTable(offset = 0): boolean {
    const t = this.peek(offset);
    if (t.t === "qid") return true;
    if (t.t === "op") return t.v === "(";
    // UNNEST(…), LATERAL (…), TABLE(…): Druid's FROM items the emulator names as not run.
    return t.t === "id" && (isName(t) || ["UNNEST", "LATERAL", "TABLE"].includes(t.v.toUpperCase()));
  }
  /** Whether the token `offset` ahead is an identifier (an alias, a name). */
  isIdent(offset = 0): boolean {
    const t = this.peek(offset);
    return isName(t);
  }
  /**
   * A connector (`AND`, `=`, `,`, `WHERE` …) at the current token: JavaCC takes it only with what follows it, so
   * when `follows` does not hold Druid's parser stops on the connector, reporting it and the token after.
   */
  connector(follows: boolean, identOk: boolean): void {
    if (!follows) throw this.fail(2, identOk);
  }
  /**
   * A binary operator (`=`, `+`, `AND` …) at the current token, taken only before an operand; its lookahead reads
   * into a typed literal, which must be complete.
   */
  operator(identOk: boolean): void {
    if (this.literalGap(1)) throw this.fail(3, identOk);
    this.connector(this.startsExpr(1), identOk);
  }

  /** A set operation after a query: Druid runs UNION ALL and more; the conformance level refuses MINUS. */
  setOperation(): void {
    if (this.isKw("UNION") || this.isKw("INTERSECT") || this.isKw("EXCEPT")) {
      const n = this.isKw("ALL", 1) || this.isKw("DISTINCT", 1) ? 2 : 1;
      if (!["SELECT", "WITH", "VALUES", "TABLE"].some((kw) => this.isKw(kw, n)) && !this.isOp("(", n))
        throw this.fail(1, false, n);
      throw unsupported("UNION");
    }
    if (this.isKw("MINUS")) throw this.plain("MINUS is not allowed under the current SQL conformance level");
  }

  /** The end of a part: nothing after it but a statement's closing semicolon. */
  end(): void {
    this.acceptOp(";");
    this.setOperation();
    if (this.peek().t !== "eof") throw this.fail(1, this.#aliasOk);
    if (this.#invalid) throw this.#invalid;
  }

  statement(): Statement {
    let explain = false;
    if (this.isKw("EXPLAIN")) {
      this.connector(this.isKw("PLAN", 1), true);
      this.next();
      this.next();
      if (["WITH", "WITHOUT", "INCLUDING", "EXCLUDING", "AS"].some((kw) => this.isKw(kw)))
        throw unsupported("EXPLAIN PLAN options");
      this.expectKw("FOR");
      explain = true;
    }
    if (this.isKw("INSERT") || this.isKw("REPLACE")) {
      const verb = this.ingest();
      this.finish();
      // Druid parses it, then its native engine refuses it, explained or not (`NativeSqlEngine`, as a real
      // Druid 33 answered).
      throw this.plain(
        verb === "INSERT"
          ? "INSERT operations are not supported by requested SQL engine [native], consider using MSQ."
          : "REPLACE operations are not supported by the requested SQL engine [native].  Consider using MSQ.",
      );
    }
    if (this.isKw("DELETE") || this.isKw("UPDATE")) throw this.dml(explain);
    if (this.isKw("VALUES")) throw unsupported("VALUES");
    if (this.isOp("(") && (this.isKw("SELECT", 1) || this.isKw("WITH", 1)))
      throw unsupported("A parenthesized query");
    if (!this.isKw("SELECT") && !this.isKw("WITH")) this.nonQuery();
    const query = this.query();
    this.finish();
    return { explain, query };
  }

  /** The statement's end: Druid's parser takes one statement, without a closing `;` (Druid 33 refused `SELECT 1;`). */
  finish(): void {
    this.setOperation();
    if (this.peek().t !== "eof") throw this.fail(1, this.#aliasOk);
    if (this.#invalid) throw this.#invalid;
  }

  /**
   * A statement that is no query: Calcite reads an expression there and refuses it as one (`SELEC 1`), or stops
   * on its first token (a keyword, `CREATE`, gets "Incorrect syntax near the keyword").
   */
  nonQuery(): never {
    if (!this.startsExpr() || STATEMENT_KEYWORDS.has(this.peek().v.toUpperCase())) throw this.fail(1, true);
    this.expr();
    throw this.plain("Non-query expression encountered in illegal context");
  }

  /**
   * `INSERT INTO t [(…)] … | REPLACE INTO t [OVERWRITE ALL | OVERWRITE WHERE …] …` with `PARTITIONED BY` and
   * `CLUSTERED BY` (Druid's `DruidSqlInsert`/`DruidSqlReplace` grammar, docs/multi-stage-query/reference.md):
   * read up to the statement's end, its verb returned.
   */
  ingest(): "INSERT" | "REPLACE" {
    const verb = this.next().v.toUpperCase() as "INSERT" | "REPLACE";
    this.expectKw("INTO");
    this.ident();
    while (this.acceptOp(".")) this.ident();
    if (this.isOp("(") && !this.isKw("SELECT", 1) && !this.isKw("WITH", 1)) {
      this.next();
      do this.ident();
      while (this.acceptOp(","));
      this.expectOp(")");
    }
    if (verb === "REPLACE" && this.acceptKw("OVERWRITE")) {
      if (this.acceptKw("WHERE")) this.expr();
      else this.acceptKw("ALL");
    }
    if (this.isOp("(") && (this.isKw("SELECT", 1) || this.isKw("WITH", 1))) {
      this.next();
      this.query();
      this.expectOp(")");
      this.#parenthesized = true;
    } else {
      if (!this.isKw("SELECT") && !this.isKw("WITH")) this.nonQuery();
      this.query();
    }
    if (this.acceptKw("PARTITIONED")) {
      this.expectKw("BY");
      // `PartitionGranularity()`: a granularity keyword, ALL [TIME], or an expression (a string, FLOOR, TIME_FLOOR).
      if (this.acceptKw("ALL")) this.acceptKw("TIME");
      else if (["HOUR", "DAY", "MONTH", "YEAR"].some((kw) => this.isKw(kw)) && !this.isOp("(", 1))
        this.next();
      else this.expr();
    }
    if (this.acceptKw("CLUSTERED")) {
      this.expectKw("BY");
      do {
        this.expr();
        if (!this.acceptKw("ASC")) this.acceptKw("DESC");
      } while (this.acceptOp(","));
    }
    // CLUSTERED BY without PARTITIONED BY parses (Druid 33's validator refuses it, msq-plan.ts answers that); a
    // PARTITIONED BY after it is no name (a real Druid 33 answered `[PARTITIONED]`).
    this.#aliasOk = false;
    return verb;
  }

  /**
   * An MSQ statement (`POST /druid/v2/sql/task`): leading `SET key = value;` statements (Druid 34+; the planner
   * refuses them before 34), then INSERT/REPLACE or a query. A closing `;` is let through: whether Druid 33's
   * task endpoint refuses it as the Broker does was not observable (the cluster here runs without MSQ).
   */
  msqStatement(): void {
    while (this.isKw("SET") && this.isIdent(1) && this.isOp("=", 2)) {
      while (!this.isOp(";") && this.peek().t !== "eof") this.next();
      this.acceptOp(";");
    }
    if (!this.isKw("INSERT") && !this.isKw("REPLACE")) {
      this.statement();
      return;
    }
    this.ingest();
    this.acceptOp(";");
    this.finish();
    if (this.#parenthesized) throw unsupported("A parenthesized query in INSERT/REPLACE");
  }

  /** `DELETE FROM t [WHERE …]`, `UPDATE t SET c = v, … [WHERE …]`: Druid parses them and runs neither. */
  dml(explain = false): SqlError {
    const verb = this.next().v.toUpperCase();
    if (verb === "DELETE") this.expectKw("FROM");
    this.ident();
    while (this.acceptOp(".")) this.ident();
    if (verb === "UPDATE") {
      this.expectKw("SET");
      do {
        this.ident();
        this.expectOp("=");
        this.expr();
      } while (this.acceptOp(","));
    }
    if (this.acceptKw("WHERE")) this.expr();
    this.finish();
    return this.plain(`Unsupported SQL statement [${explain ? "EXPLAIN" : verb}]`);
  }

  query(): Query {
    const withs: Query["with"] = [];
    if (this.isKw("WITH")) {
      this.connector(this.isIdent(1), true);
      this.next();
      do {
        const name = this.ident();
        let columns: string[] | null = null;
        if (this.acceptOp("(")) {
          columns = [];
          do columns.push(this.ident());
          while (this.acceptOp(","));
          this.expectOp(")");
        }
        this.expectKw("AS");
        this.expectOp("(");
        const q = this.query();
        this.expectOp(")");
        withs.push({ name, columns, q });
      } while (this.cteComma());
    }
    const q = this.select();
    q.with = withs;
    this.setOperation();
    if (this.isKw("ORDER")) {
      this.connector(this.isKw("BY", 1), this.#aliasOk);
      this.next();
      this.next();
      do q.orderBy.push(this.orderKey());
      while (this.listComma());
    }
    if (this.isKw("LIMIT")) {
      this.connector(this.peek(1).t === "num", this.#aliasOk);
      this.next();
      q.limit = this.count();
      if (this.isOp(",")) {
        this.next();
        if (this.peek().t !== "num") throw this.fail();
        // Druid's conformance level (as a real Druid 33 answered).
        throw this.plain("'LIMIT start, count' is not allowed under the current SQL conformance level");
      }
    }
    if (this.isKw("OFFSET")) {
      this.connector(this.peek(1).t === "num", this.#aliasOk);
      this.next();
      q.offset = this.count();
      if (!this.acceptKw("ROWS")) this.acceptKw("ROW");
    }
    if (this.acceptKw("FETCH")) {
      if (!this.acceptKw("FIRST")) this.expectKw("NEXT");
      q.limit = this.count();
      if (!this.acceptKw("ROWS")) this.expectKw("ROW");
      this.expectKw("ONLY");
    }
    return q;
  }

  /** The comma between WITH's queries: taken only before a name. */
  cteComma(): boolean {
    if (!this.isOp(",")) return false;
    this.connector(this.isIdent(1), false);
    this.next();
    return true;
  }

  /** A row count after LIMIT, OFFSET or FETCH: Calcite takes an unsigned number (a decimal is truncated). */
  count(): number {
    if (this.peek().t !== "num") throw this.fail();
    this.#aliasOk = false;
    return Math.trunc(Number(this.next().v));
  }

  orderKey(): OrderKey {
    const expr = this.expr();
    const desc = this.acceptKw("DESC");
    if (!desc) this.acceptKw("ASC");
    if (this.isKw("NULLS")) {
      this.connector(this.isKw("FIRST", 1) || this.isKw("LAST", 1), false);
      throw unsupported("NULLS FIRST/LAST");
    }
    this.#aliasOk = false;
    return { expr, desc };
  }

  /** The comma of an expression list (GROUP BY, ORDER BY, arguments, IN): taken only before an expression. */
  listComma(): boolean {
    if (!this.isOp(",")) return false;
    this.connector(this.startsExpr(1), false);
    this.next();
    return true;
  }

  select(): Query {
    this.expectKw("SELECT");
    this.#selects++;
    const distinct = this.acceptKw("DISTINCT");
    if (!distinct) this.acceptKw("ALL");
    // After the statement's first SELECT, Calcite's grammar looks two tokens ahead (optimizer hints): Druid
    // reports both there, one in a subquery (as a real Druid 33 answered).
    if (!this.startsExpr() && !this.isOp("*")) throw this.fail(this.#selects === 1 ? 2 : 1, true);
    const items: SelectItem[] = [];
    do items.push(this.selectItem());
    while (this.itemComma());
    let from: From | null = null;
    if (this.isKw("FROM")) {
      this.connector(this.startsTable(1), true);
      this.next();
      from = this.fromClause();
    } else if (this.isKw("WHERE") || this.isKw("GROUP") || this.isKw("HAVING")) {
      // Calcite: a SELECT without FROM takes no WHERE, GROUP BY or HAVING.
      throw this.fail(1, this.#aliasOk);
    }
    const where = this.clause("WHERE");
    const groupBy: Expr[] = [];
    const groupBySpans: Span[] = [];
    const grouped = this.isKw("GROUP");
    if (grouped) {
      this.connector(this.isKw("BY", 1), this.#aliasOk);
      this.next();
      this.next();
      if (["ROLLUP", "CUBE", "GROUPING"].some((kw) => this.isKw(kw)) && this.isOp("(", 1))
        throw unsupported(`GROUP BY ${this.peek().v.toUpperCase()}`);
      do {
        const start = this.peek();
        groupBy.push(this.expr());
        groupBySpans.push(this.spanFrom(start));
      } while (this.listComma());
      this.#aliasOk = false;
    }
    const having = this.clause("HAVING");
    if (this.isKw("WINDOW")) throw unsupported("WINDOW");
    if (this.isKw("QUALIFY")) throw unsupported("QUALIFY");
    return {
      with: [],
      distinct,
      items,
      from,
      where,
      groupBy,
      groupBySpans,
      grouped,
      having,
      orderBy: [],
      limit: null,
      offset: 0,
    };
  }

  /** The comma between select items: taken only before an item. */
  itemComma(): boolean {
    if (!this.isOp(",")) return false;
    this.connector(this.startsExpr(1) || this.isOp("*", 1), false);
    this.next();
    return true;
  }

  /** `WHERE`/`HAVING` and its condition, taken only before an expression. */
  clause(kw: string): Expr | null {
    if (!this.isKw(kw)) return null;
    this.connector(this.startsExpr(1), true);
    this.next();
    const e = this.expr();
    this.#aliasOk = false;
    return e;
  }

  selectItem(): SelectItem {
    this.#aliasOk = false;
    const star = this.peek();
    if (this.acceptOp("*"))
      return {
        expr: { k: "star", qualifier: null, span: [star.at, star.at] },
        alias: null,
        span: [star.at, star.at],
      };
    // `t.*` or `schema.t.*`: every column of one table.
    const parts: Token[] = [];
    let n = 0;
    while ((this.peek(n).t === "id" || this.peek(n).t === "qid") && this.isOp(".", n + 1)) {
      parts.push(this.peek(n));
      n += 2;
      if (this.isOp("*", n)) {
        for (let i = 0; i <= n; i++) this.next();
        const first = parts[0] as Token;
        const last = parts.at(-1) as Token;
        const at = (this.toks[this.#i - 1] as Token).at;
        return {
          expr: {
            k: "star",
            qualifier: { parts: parts.map((p) => p.v), span: [first.at, last.end - 1] },
            span: [first.at, at],
          },
          alias: null,
          span: [first.at, at],
        };
      }
    }
    const start = this.peek();
    const expr = this.expr();
    const span = this.spanFrom(start);
    const alias = this.alias();
    return { expr, alias, span };
  }

  fromClause(): From {
    let l = this.tableRef();
    for (;;) {
      if (this.acceptOp(",")) {
        l = { k: "join", type: "CROSS", l, r: this.tableRef(), on: null, using: null };
        continue;
      }
      if (this.isKw("NATURAL")) throw unsupported("NATURAL JOIN");
      let type: JoinType | null = null;
      const joinStart = this.peek();
      if (this.isKw("JOIN")) this.connector(this.startsTable(1), true);
      else if (["INNER", "LEFT", "RIGHT", "FULL", "CROSS"].some((kw) => this.isKw(kw)))
        this.connector(this.isKw("JOIN", 1) || this.isKw("OUTER", 1), this.#aliasOk);
      if (this.acceptKw("JOIN")) type = "INNER";
      else if (this.acceptKw("INNER")) type = "INNER";
      else if (this.acceptKw("LEFT")) type = "LEFT";
      else if (this.acceptKw("RIGHT")) type = "RIGHT";
      else if (this.acceptKw("FULL")) type = "FULL";
      else if (this.acceptKw("CROSS")) type = "CROSS";
      if (type === null) return l;
      if (joinStart.v.toUpperCase() !== "JOIN") {
        if (type !== "INNER" && type !== "CROSS") this.acceptKw("OUTER");
        this.expectKw("JOIN");
      }
      const joinEnd = this.toks[this.#i - 1] as Token;
      const r = this.tableRef();
      let on: Expr | null = null;
      let using: string[] | null = null;
      if (type !== "CROSS") {
        if (this.isKw("ON")) {
          this.connector(this.startsExpr(1), true);
          this.next();
          on = this.expr();
          this.#aliasOk = false;
        } else if (this.isKw("USING")) {
          this.connector(this.isOp("(", 1), true);
          this.next();
          this.expectOp("(");
          using = [];
          do using.push(this.ident());
          while (this.acceptOp(","));
          this.expectOp(")");
        } else {
          // Calcite's validator (SqlValidatorImpl#validateJoin), spanning the join keyword(s).
          throw new SqlError(
            "INNER, LEFT, RIGHT or FULL join requires a condition (NATURAL keyword or ON or USING clause)",
            [joinStart.at, joinEnd.end - 1],
          );
        }
      }
      l = { k: "join", type, l, r, on, using };
    }
  }

  tableRef(): From {
    const open = this.peek();
    if (this.isOp("("))
      this.connector(this.startsTable(1) || this.isKw("SELECT", 1) || this.isKw("WITH", 1), false);
    if (this.acceptOp("(")) {
      if (this.isKw("SELECT") || this.isKw("WITH")) {
        const q = this.query();
        const close = this.expectOp(")");
        return { k: "sub", q, alias: this.alias(), span: [open.at, close.at] };
      }
      const inner = this.fromClause();
      this.expectOp(")");
      return inner;
    }
    if (this.isKw("TABLE") && this.isOp("(", 1) && this.isKw("EXTERN", 2)) return this.extern();
    if (this.isKw("LATERAL") || this.isKw("UNNEST") || this.isKw("TABLE"))
      throw unsupported(this.peek().v.toUpperCase());
    if (!this.isIdent()) throw this.fail(1, true);
    const first = this.peek();
    const parts = [this.ident()];
    while (this.isOp(".")) {
      this.connector(this.isIdent(1), false);
      this.next();
      parts.push(this.ident());
    }
    const last = this.toks[this.#i - 1] as Token;
    if (this.isKw("TABLESAMPLE")) throw unsupported("TABLESAMPLE");
    return { k: "table", parts, alias: this.alias(), span: [first.at, last.end - 1] };
  }

  /**
   * `TABLE(EXTERN('<inputSource>', '<inputFormat>'[, '<signature>'])) [EXTEND] (<columns>)`, arguments
   * positional or named (`inputSource => '…'`): docs/multi-stage-query/reference.md (EXTERN function).
   */
  extern(): From {
    const first = this.next();
    this.expectOp("(");
    this.next();
    this.expectOp("(");
    const order = ["inputSource", "inputFormat", "signature"];
    const args: Record<string, string> = {};
    let n = 0;
    do {
      let key = order[n] as string;
      if (this.peek().t === "id" && this.isOp("=>", 1)) {
        key = this.next().v;
        this.next();
      }
      const t = this.next();
      if (t.t !== "str") {
        this.#i--;
        throw new SqlError("EXTERN takes string literal arguments", [t.at, t.at]);
      }
      args[key] = t.v;
      n++;
    } while (this.acceptOp(","));
    this.expectOp(")");
    const close = this.expectOp(")");
    const json = (what: string): unknown => {
      const text = args[what];
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text);
      } catch (error) {
        throw new SqlError(`Invalid ${what} in EXTERN: ${(error as Error).message}`, [first.at, close.at]);
      }
    };
    const inputSource = json("inputSource");
    const inputFormat = json("inputFormat");
    const signature = json("signature") ?? [];
    const isObj = (v: unknown): v is Record<string, unknown> =>
      typeof v === "object" && v !== null && !Array.isArray(v);
    if (!isObj(inputSource) || !isObj(inputFormat) || !Array.isArray(signature))
      throw new SqlError("EXTERN takes an inputSource object, an inputFormat object and a signature array", [
        first.at,
        close.at,
      ]);
    let columns: ExternColumn[] = signature.map((c) => ({
      name: String((c as { name?: unknown }).name),
      type: String((c as { type?: unknown }).type ?? "string").toLowerCase(),
    }));
    if (this.acceptKw("EXTEND") || this.isOp("(")) {
      if (columns.length > 0)
        throw new SqlError("EXTEND needs EXTERN without its signature argument", [first.at, close.at]);
      columns = this.extendList();
    } else if (columns.length === 0)
      throw new SqlError("EXTERN needs a signature: a third argument or EXTEND (<columns>)", [
        first.at,
        close.at,
      ]);
    const last = this.toks[this.#i - 1] as Token;
    return {
      k: "extern",
      inputSource,
      inputFormat,
      signature: columns,
      alias: this.alias(),
      span: [first.at, last.end - 1],
    };
  }

  /** `EXTEND (name TYPE, …)`: SQL types → the signature's native types (Druid's `Columns.sqlTypeToNative`). */
  extendList(): ExternColumn[] {
    this.expectOp("(");
    const out: ExternColumn[] = [];
    do {
      const name = this.ident();
      const sqlType = this.typeName();
      const type = /^(BIGINT|INTEGER|INT|SMALLINT|TINYINT)$/.test(sqlType)
        ? "long"
        : sqlType === "DOUBLE" || sqlType === "DECIMAL"
          ? "double"
          : sqlType === "FLOAT" || sqlType === "REAL"
            ? "float"
            : sqlType.endsWith(" ARRAY")
              ? `array<${sqlType === "VARCHAR ARRAY" ? "string" : sqlType === "BIGINT ARRAY" ? "long" : "double"}>`
              : "string";
      out.push({ name, type });
    } while (this.acceptOp(","));
    this.expectOp(")");
    return out;
  }

  /** A type name as written: `DOUBLE PRECISION`, `VARCHAR(10)` (the length is not kept), `VARCHAR ARRAY`. */
  typeName(): string {
    const t = this.next();
    if (t.t !== "id") {
      this.#i--;
      throw this.fail();
    }
    const name = t.v.toUpperCase();
    if (name === "DOUBLE") this.acceptKw("PRECISION");
    if (this.acceptOp("(")) {
      while (!this.acceptOp(")"))
        if (this.peek().t === "eof") throw this.fail();
        else this.next();
    }
    return this.acceptKw("ARRAY") ? `${name} ARRAY` : name;
  }

  /** `[AS] alias`; without one the item could still take it (an identifier may follow). */
  alias(): string | null {
    let alias: string | null = null;
    if (this.isKw("AS")) {
      this.connector(this.isIdent(1), true);
      this.next();
      alias = this.ident();
    } else if (this.isIdent()) alias = this.ident();
    this.#aliasOk = alias === null;
    return alias;
  }

  /** A keyword argument (a type name, a time unit): any word. */
  word(): string {
    const t = this.peek();
    if (t.t !== "id" || isReserved(t.v)) throw this.fail(1, true);
    this.next();
    return t.v;
  }

  ident(): string {
    const t = this.peek();
    if (!isName(t)) throw this.fail(1, true);
    this.next();
    return t.v;
  }

  expr(): Expr {
    let l = this.and();
    while (this.logical("OR")) l = { k: "bin", op: "OR", l, r: this.and() };
    return l;
  }
  and(): Expr {
    let l = this.not();
    while (this.logical("AND")) l = { k: "bin", op: "AND", l, r: this.not() };
    return l;
  }
  /** `AND`/`OR`, taken only before an operand. */
  logical(kw: string): boolean {
    if (!this.isKw(kw)) return false;
    this.operator(true);
    this.next();
    return true;
  }
  not(): Expr {
    if (this.acceptKw("NOT")) return { k: "un", op: "NOT", e: this.not() };
    return this.cmp();
  }
  cmp(): Expr {
    const start = this.peek();
    const l = this.add();
    const t = this.peek();
    if (t.t === "op" && ["=", "!=", "<>", "<", "<=", ">", ">="].includes(t.v)) {
      if (["ANY", "SOME", "ALL"].some((kw) => this.isKw(kw, 1)) && this.isOp("(", 2))
        throw unsupported(`Quantified comparison ${t.v} ${this.peek(1).v.toUpperCase()}`);
      this.operator(false);
      this.next();
      const r = this.add();
      return { k: "bin", op: t.v === "<>" ? "!=" : t.v, l, r, span: this.spanFrom(start) };
    }
    if (this.isKw("IS")) {
      const after = ["NULL", "TRUE", "FALSE", "UNKNOWN", "DISTINCT"];
      this.connector(after.some((kw) => this.isKw(kw, 1)) || this.isKw("NOT", 1), false);
      this.next();
      const not = this.isKw("NOT");
      if (not) {
        this.connector(
          after.some((kw) => this.isKw(kw, 1)),
          false,
        );
        this.next();
      }
      if (this.acceptKw("TRUE")) return { k: "istrue", e: l, value: true, not };
      if (this.acceptKw("FALSE")) return { k: "istrue", e: l, value: false, not };
      if (this.isKw("DISTINCT")) throw unsupported("IS DISTINCT FROM");
      if (this.isKw("UNKNOWN")) throw unsupported("IS UNKNOWN");
      this.expectKw("NULL");
      return { k: "isnull", e: l, not };
    }
    if (this.isKw("ILIKE") || this.isKw("RLIKE") || this.isKw("SIMILAR"))
      throw unsupported(this.peek().v.toUpperCase());
    const not = this.isKw("NOT");
    if (not) {
      this.connector(
        ["IN", "LIKE", "BETWEEN", "ILIKE", "SIMILAR"].some((kw) => this.isKw(kw, 1)),
        false,
      );
      this.next();
      if (!this.isKw("IN") && !this.isKw("LIKE") && !this.isKw("BETWEEN"))
        throw unsupported(`NOT ${this.peek().v.toUpperCase()}`);
    }
    if (this.isKw("IN")) {
      this.connector(this.isOp("(", 1), false);
      this.next();
      this.expectOp("(");
      if (this.isKw("SELECT") || this.isKw("WITH")) {
        const q = this.query();
        const close = this.expectOp(")");
        return { k: "insub", e: l, q, not, span: [start.at, close.at] };
      }
      const list: Expr[] = [];
      do list.push(this.add());
      while (this.listComma());
      this.expectOp(")");
      return { k: "in", e: l, list, not };
    }
    if (this.isKw("LIKE")) {
      if (!not) this.connector(this.startsExpr(1), true);
      this.next();
      const pattern = this.add();
      if (this.isKw("ESCAPE")) {
        this.connector(this.startsExpr(1), true);
        throw unsupported("LIKE … ESCAPE");
      }
      return { k: "like", e: l, pattern, not };
    }
    if (this.isKw("BETWEEN")) {
      const symmetric = this.isKw("SYMMETRIC", 1) || this.isKw("ASYMMETRIC", 1) ? 1 : 0;
      if (!not) this.connector(this.startsExpr(1 + symmetric), true);
      this.next();
      if (symmetric) this.next();
      const lo = this.add();
      // Calcite's own wording for a BETWEEN without its AND (a real Druid 33 answered it).
      if (!this.isKw("AND") || !this.startsExpr(1))
        throw this.plain("BETWEEN operator has no terminating AND");
      this.next();
      const hi = this.add();
      return { k: "between", e: l, lo, hi, not, span: this.spanFrom(start) };
    }
    return l;
  }
  /** From a token to the last one consumed: an expression's span for Calcite's validator errors. */
  spanFrom(start: Token): Span {
    return [start.at, (this.toks[this.#i - 1] as Token).end - 1];
  }
  add(): Expr {
    const start = this.peek();
    let l = this.mul();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && (t.v === "+" || t.v === "-" || t.v === "||")) {
        this.operator(false);
        this.next();
        const r = this.mul();
        l = { k: "bin", op: t.v, l, r, span: this.spanFrom(start) };
      } else return l;
    }
  }
  mul(): Expr {
    const start = this.peek();
    let l = this.unary();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && t.v === "%")
        // Druid runs Calcite at a conformance level without `%` (MOD is its remainder), as Druid 33 answered.
        throw new SqlError("Percent remainder '%' is not allowed under the current SQL conformance level");
      if (t.t === "op" && (t.v === "*" || t.v === "/")) {
        this.operator(false);
        this.next();
        const r = this.unary();
        l = { k: "bin", op: t.v, l, r, span: this.spanFrom(start) };
      } else return l;
    }
  }
  unary(): Expr {
    if (this.acceptOp("-")) {
      const e = this.unary();
      if (e.k === "lit" && typeof e.v === "number") return { ...e, v: -e.v };
      return { k: "un", op: "-", e };
    }
    if (this.acceptOp("+")) return this.unary();
    const e = this.primary();
    if (this.isOp("[")) throw unsupported("Array subscripts");
    return e;
  }
  primary(): Expr {
    if (this.bareFunctionWord()) throw this.fail(2, true);
    if (!this.startsExpr() || this.literalGap(0)) throw this.fail(1, true);
    const t = this.next();
    if (t.t === "num") {
      const integer = /^[0-9]+$/.test(t.v);
      return {
        k: "lit",
        v: Number(t.v),
        t: integer ? "INTEGER" : /e/i.test(t.v) ? "DOUBLE" : "DECIMAL",
        span: [t.at, t.end - 1],
      };
    }
    if (t.t === "str") {
      if (this.peek().t === "str") {
        // Adjacent literals are one string to Calcite's parser; its validator has no function for the chain.
        let last = t;
        while (this.peek().t === "str") last = this.next();
        this.#invalid ??= new SqlError("No match found for function signature $LiteralChain", [
          t.at,
          last.end - 1,
        ]);
      }
      return { k: "lit", v: t.v, t: "CHAR", span: [t.at, t.end - 1] };
    }
    if (t.t === "op" && t.v === "?") throw unsupported("A dynamic parameter without a value");
    if (t.t === "op" && t.v === "{") throw unsupported("JDBC escapes ({fn …}, {d …}, {ts …})");
    if (t.t === "op" && t.v === "(") {
      if (this.isKw("SELECT") || this.isKw("WITH")) {
        const q = this.query();
        const close = this.expectOp(")");
        return { k: "sub", q, span: [t.at, close.at] };
      }
      const e = this.expr();
      if (this.isOp(",")) throw unsupported("Row expressions (a, b, …)");
      this.expectOp(")");
      return e;
    }
    if ((t.t === "qid" || t.t === "id") && this.isOp(".") && (t.t === "qid" || !isReserved(t.v)))
      return this.qualified(t);
    if (t.t === "qid") return { k: "col", name: t.v, span: [t.at, t.end - 1] };
    if (t.t === "id") {
      const upper = t.v.toUpperCase();
      if (upper === "NULL") return { k: "lit", v: null, t: "NULL", span: [t.at, t.end - 1] };
      if (upper === "TRUE") return { k: "lit", v: 1, t: "BOOLEAN" };
      if (upper === "FALSE") return { k: "lit", v: 0, t: "BOOLEAN" };
      if (upper === "CURRENT_TIMESTAMP" && !this.isOp("(")) return { k: "now" };
      if (upper === "CURRENT_DATE" && !this.isOp("(")) return { k: "now", date: true };
      if (upper === "TIMESTAMP" && this.peek().t === "str") {
        const lit = this.next();
        const ms = parseTimestampLiteral(lit.v, this.options.timeZone ?? UTC);
        if (Number.isNaN(ms)) throw new SqlError(`Illegal TIMESTAMP literal '${lit.v}'`, [t.at, lit.end - 1]);
        return { k: "lit", v: new Timestamp(ms), t: "TIMESTAMP" };
      }
      if (upper === "DATE" && this.peek().t === "str") {
        // Calcite's DATE literal: midnight of that day in the query's time zone.
        const lit = this.next();
        const ms = /^\s*\d{4}-\d\d-\d\d\s*$/.test(lit.v)
          ? parseTimestampLiteral(lit.v.trim(), this.options.timeZone ?? UTC)
          : Number.NaN;
        if (Number.isNaN(ms)) throw new SqlError(`Illegal DATE literal '${lit.v}'`, [t.at, lit.end - 1]);
        return { k: "lit", v: new Timestamp(ms), t: "DATE" };
      }
      if (upper === "INTERVAL") return this.interval(t);
      if (upper === "CASE") return this.caseExpr();
      if (upper === "X" && this.peek().t === "str" && this.peek().at === t.end)
        throw unsupported("Binary string literals (X'…')");
      if (upper === "EXISTS") throw unsupported("EXISTS");
      if ((upper === "ARRAY" || upper === "MAP") && this.isOp("["))
        throw unsupported(`${upper}[…] constructors`);
      if (upper === "ROW" && this.isOp("(")) throw unsupported("ROW constructors");
      if (upper === "CAST" && this.acceptOp("(")) return this.cast();
      if (this.acceptOp("(")) return this.call(upper, t);
      return { k: "col", name: t.v, span: [t.at, t.end - 1] };
    }
    this.#i--;
    throw this.fail(1, true);
  }

  /** `a.b` or `a.b.c`: a column qualified with its table (and schema), as SQLAlchemy writes every column. */
  qualified(first: Token): ColumnRef {
    const parts: Token[] = [first];
    while (this.isOp(".")) {
      this.connector(this.isIdent(1), false);
      this.next();
      parts.push(this.next());
    }
    const column = parts.pop() as Token;
    const last = parts.at(-1) as Token;
    return {
      k: "col",
      name: column.v,
      span: [column.at, column.end - 1],
      qualifier: { parts: parts.map((p) => p.v), span: [first.at, last.end - 1] },
    };
  }

  /** `INTERVAL '1' DAY`: Calcite's single-unit interval literals. */
  interval(start: Token): Expr {
    const sign = this.acceptOp("-") ? -1 : 1;
    const lit = this.next();
    if (lit.t !== "str" && lit.t !== "num") {
      this.#i--;
      throw this.fail();
    }
    const unitTok = this.peek();
    const unit = unitTok.t === "id" ? unitTok.v.toUpperCase() : "";
    const def = INTERVAL_UNITS[unit];
    // Druid 33's parser takes these units only: it stops on the literal, reporting it and the word after
    // (`[\'1\' MILLISECOND]`, as a real Druid 33 answered).
    if (!def) throw this.fail(2, false, -1);
    this.next();
    this.skipPrecision();
    if (this.isKw("TO")) throw unsupported("INTERVAL … TO …");
    const amount = Number(lit.v.trim()) * sign;
    if (!Number.isFinite(amount))
      throw new SqlError(`Illegal interval literal '${lit.v}'`, [lit.at, lit.end - 1]);
    const span: Span = [start.at, unitTok.end - 1];
    return def.ms !== undefined
      ? { k: "interval", amount: amount * def.ms, unit: "ms", label: unit, span }
      : { k: "interval", amount: amount * (def.months as number), unit: "months", label: unit, span };
  }

  /** A type's or unit's `(precision[, scale])`, which the emulator does not keep; the text may end inside it. */
  skipPrecision(): void {
    if (!this.isOp("(")) return;
    this.connector(this.peek(1).t === "num", false);
    this.next();
    this.next();
    if (this.isOp(",")) {
      this.connector(this.peek(1).t === "num", false);
      this.next();
      this.next();
    }
    this.expectOp(")");
  }

  caseExpr(): Expr {
    const operand = this.isKw("WHEN") ? null : this.expr();
    const whens: Array<[Expr, Expr]> = [];
    while (this.acceptKw("WHEN")) {
      const when = this.expr();
      this.expectKw("THEN");
      whens.push([when, this.expr()]);
    }
    if (whens.length === 0) throw this.fail();
    const otherwise = this.acceptKw("ELSE") ? this.expr() : null;
    this.expectKw("END");
    return { k: "case", operand, whens, otherwise };
  }

  cast(): Expr {
    const e = this.expr();
    this.expectKw("AS");
    const type = this.word().toUpperCase();
    const target = CAST_TYPES[type];
    if (!target) throw unsupported(`CAST to ${type}`);
    this.skipPrecision();
    this.expectOp(")");
    return { k: "cast", e, to: target };
  }

  call(name: string, nameTok: Token): Expr {
    let star = false;
    let distinct = false;
    const args: Expr[] = [];
    const fn = (n: string, a: Expr[]): Expr => this.afterCall(n, a, false, false, nameTok);
    if (name === "FLOOR" || name === "CEIL") {
      const e = this.expr();
      if (this.acceptKw("TO")) {
        const unit = this.word().toUpperCase();
        this.expectOp(")");
        // `FLOOR/CEIL(ts TO unit)` is TIME_FLOOR/TIME_CEIL with the unit's period (docs/querying/sql-scalar.md).
        const call = fn(name === "CEIL" ? "TIME_CEIL" : "TIME_FLOOR", [
          e,
          { k: "lit", v: unitPeriod(unit), t: "CHAR" },
        ]);
        return { ...call, unit } as Expr;
      }
      args.push(e);
    } else if (name === "TIMESTAMPDIFF" || name === "TIMESTAMPADD") {
      // The first argument is a time unit keyword, not an expression.
      const unit = this.word().toUpperCase();
      args.push({ k: "lit", v: unit, t: "CHAR" });
      this.expectOp(",");
      args.push(this.expr());
      this.expectOp(",");
      args.push(this.expr());
    } else if (name === "SUBSTRING" && !this.isOp(")")) {
      // `SUBSTRING(s FROM start [FOR length])` or `SUBSTRING(s, start[, length])`.
      args.push(this.expr());
      if (this.acceptKw("FROM")) {
        args.push(this.expr());
        if (this.acceptKw("FOR")) args.push(this.expr());
      } else while (this.acceptOp(",")) args.push(this.expr());
    } else if (name === "EXTRACT") {
      // `EXTRACT(unit FROM expr)`: the unit is a keyword (docs/querying/sql-scalar.md, date and time functions).
      args.push({ k: "lit", v: this.word().toUpperCase(), t: "CHAR" });
      this.expectKw("FROM");
      args.push(this.expr());
    } else if (name === "POSITION") {
      // `POSITION(needle IN haystack [FROM start])` (docs/querying/sql-scalar.md, string functions).
      args.push(this.add());
      this.expectKw("IN");
      args.push(this.expr());
      if (this.acceptKw("FROM")) args.push(this.expr());
    } else if (name === "TRIM" && (this.isKw("BOTH") || this.isKw("LEADING") || this.isKw("TRAILING"))) {
      // `TRIM([BOTH|LEADING|TRAILING] [chars] FROM expr)` is BTRIM/LTRIM/RTRIM(expr, chars)
      // (docs/querying/sql-scalar.md, string functions).
      const side = this.next().v.toUpperCase();
      const chars: Expr = this.isKw("FROM") ? { k: "lit", v: " ", t: "CHAR" } : this.expr();
      this.expectKw("FROM");
      const e = this.expr();
      this.expectOp(")");
      return fn(side === "BOTH" ? "BTRIM" : side === "LEADING" ? "LTRIM" : "RTRIM", [e, chars]);
    } else if (name === "JSON_OBJECT") args.push(...readJsonObjectArgs(this));
    else if (this.acceptOp("*")) star = true;
    else if (!this.isOp(")")) {
      distinct = this.acceptKw("DISTINCT");
      if (!distinct) this.acceptKw("ALL");
      args.push(this.expr());
      while (this.listComma()) args.push(this.expr());
    }
    // `JSON_VALUE(x, p RETURNING type)` is a CAST of its VARCHAR result (sql-json.ts).
    const returning = name === "JSON_VALUE" && this.acceptKw("RETURNING") ? this.word().toUpperCase() : null;
    if (returning !== null && (this.isKw("ARRAY") || !CAST_TYPES[returning]))
      throw unsupported(`JSON_VALUE … RETURNING ${returning}${this.isKw("ARRAY") ? " ARRAY" : ""}`);
    this.otherCallSyntax(name);
    this.expectOp(")");
    const call = this.afterCall(name, args, star, distinct, nameTok);
    return returning === null ? call : { k: "cast", e: call, to: CAST_TYPES[returning] as SqlType };
  }

  /**
   * Calcite's other forms inside a call's parentheses (`JSON_VALUE(… DEFAULT … ON EMPTY)`, `OVERLAY(… PLACING …)`,
   * `JSON_OBJECT('k': v)`, `STRING_AGG(… ORDER BY …)`): Druid reads them, the emulator does not run them.
   */
  otherCallSyntax(name: string): void {
    const t = this.peek();
    if ((t.t === "op" && t.v === ":") || (t.t === "id" && CALL_WORDS.has(t.v.toUpperCase())))
      throw unsupported(`${name}(… ${t.v.toUpperCase()} …)`);
  }

  afterCall(name: string, args: Expr[], star: boolean, distinct: boolean, nameTok: Token): Expr {
    let filter: Expr | null = null;
    if (this.isKw("FILTER")) {
      this.connector(this.isOp("(", 1), true);
      this.next();
      this.expectOp("(");
      this.expectKw("WHERE");
      filter = this.expr();
      this.expectOp(")");
    }
    if (this.isKw("OVER")) throw unsupported("window functions");
    if (this.isKw("WITHIN")) throw unsupported("WITHIN GROUP");
    const end = this.toks[this.#i - 1] as Token;
    return { k: "fn", name, args, star, distinct, filter, span: [nameTok.at, end.end - 1] };
  }
}

function unitPeriod(unit: string): string {
  const p = sqlTimeUnitPeriod(unit);
  if (!p) throw unsupported(`FLOOR(… TO ${unit})`);
  return p;
}

export function parseStatement(sql: string, options: ParseOptions = {}): Statement {
  return new Parser(sql, options).statement();
}

/**
 * Reads a `POST /druid/v2/sql/task` statement as Druid's parser does, for its refusal only: throws the
 * `SqlSyntaxError` Druid answers for text it cannot parse; returns what the emulator does not run (a message) or
 * null. What it reads is planned by msq-plan.ts.
 */
export function checkMsqSyntax(sql: string): string | null {
  try {
    new Parser(sql, {}).msqStatement();
  } catch (error) {
    if (error instanceof UnsupportedSqlError) return error.message;
    // Druid's validation is the planner's to answer.
    if (error instanceof SqlSyntaxError || !(error instanceof SqlError)) throw error;
  }
  return null;
}

/**
 * The query of an MSQ statement (between `INSERT INTO …`/`REPLACE INTO … OVERWRITE …` and `PARTITIONED BY`),
 * `base` its offset in the statement: offsets in the tree are the statement's.
 */
export function parseQueryPart(sql: string, base: number): Query {
  const p = new Parser(sql, {}, base);
  const q = p.query();
  p.end();
  return q;
}

/** One expression of an MSQ statement (a CLUSTERED BY item, the OVERWRITE WHERE condition). */
export function parseExpressionPart(sql: string, base: number): Expr {
  const p = new Parser(sql, {}, base);
  const e = p.expr();
  p.end();
  return e;
}
