import { MsqPlanError } from "./msq-text.js";
import { SqlError } from "./sql.js";
import { tokenize as lex, type Token } from "./sql-lex.js";

/**
 * The query part of an MSQ statement (`[WITH …] SELECT … FROM … [WHERE …] [GROUP BY …]`) read into a syntax
 * tree by a small recursive-descent parser, as Druid's Calcite parser reads it (`docs/querying/sql.md`: the
 * clauses; `docs/querying/sql-operators.md`: precedence). What the emulator cannot run (JOIN, UNION, window
 * functions, UNNEST) is refused as `unsupported`, never misread.
 */

export type Expr =
  /** `decimal`: a number written with a point or exponent (Calcite types it DECIMAL, Druid DOUBLE). */
  | { k: "lit"; v: string | number | boolean | null; decimal?: boolean }
  | { k: "ts"; v: number }
  | { k: "col"; name: string; table: string | null; at: number }
  | { k: "star" }
  | { k: "fn"; name: string; args: Expr[]; star: boolean; distinct: boolean; at?: number }
  /** `int`: set by the planner when both operands are BIGINT (Druid divides them as integers). */
  | { k: "bin"; op: string; l: Expr; r: Expr; int?: boolean }
  | { k: "not"; e: Expr }
  | { k: "neg"; e: Expr }
  | { k: "isnull"; e: Expr; not: boolean }
  | { k: "isbool"; e: Expr; v: boolean; not: boolean }
  | { k: "in"; e: Expr; list: Expr[]; not: boolean }
  | { k: "between"; e: Expr; lo: Expr; hi: Expr; not: boolean }
  | { k: "like"; e: Expr; pattern: Expr; not: boolean }
  | { k: "case"; operand: Expr | null; whens: Array<{ when: Expr; result: Expr }>; else: Expr | null }
  | { k: "cast"; e: Expr; type: string }
  | { k: "floor"; fn: "FLOOR" | "CEIL"; e: Expr; unit: string }
  | { k: "interval"; amount: number; unit: string };

export interface Item {
  expr: Expr;
  alias: string | null;
  /** The item's text as written (Calcite names unaliased expressions EXPR$n; messages quote the text). */
  text: string;
}

export type Source =
  | {
      k: "extern";
      inputSource: Record<string, unknown>;
      inputFormat: Record<string, unknown>;
      signature: Array<{ name: string; type: string }>;
    }
  | { k: "table"; name: string; at?: number }
  | { k: "query"; query: Query };

export interface Query {
  with: Array<{ name: string; query: Query }>;
  items: Item[];
  from: Source;
  alias: string | null;
  where: Expr | null;
  groupBy: Array<{ expr: Expr; text: string; at: number }> | null;
  having: Expr | null;
  orderBy: Expr[] | null;
  limit: number | null;
  offset: number | null;
}

export interface OutputMetric {
  name: string;
  /** The native aggregator (`count`, `longSum`, `doubleMax`…). */
  type: string;
  /** The projected input column it aggregates, null for COUNT(*). */
  field: string | null;
}

/** A planned ingestion query: JSON, so it persists with the task. */
export interface MsqProgram {
  query: Query;
  dimensions: Array<{ name: string; type: "string" | "long" | "double" | "float" }>;
  metrics: OutputMetric[];
  rollup: boolean;
  /** The output columns in SELECT order (for CLUSTERED BY ordinals and names). */
  columns: string[];
  /** No `__time` item: the rows are written at the epoch. */
  epochTime?: boolean;
  /** The columns the SELECT reads from (CLUSTERED BY may name them too). */
  inputColumns: string[];
  /** The EXTERN inputs read (the report's stage definition). */
  externs: Array<Extract<Source, { k: "extern" }>>;
}

/** The Broker's lexer, its errors raised as the planner's (a statement Druid refuses is `invalidInput`). */
function tokenize(sql: string, base: number): Token[] {
  try {
    return lex(sql, base);
  } catch (error) {
    if (error instanceof SqlError)
      throw new MsqPlanError(error.message, "invalidInput", error.span && error.span[0] + base);
    throw error;
  }
}

/** Words that end an expression or an alias-less item (Calcite's reserved words that can follow one). */
const RESERVED = new Set(
  `SELECT FROM WHERE GROUP BY HAVING ORDER LIMIT OFFSET AS AND OR NOT IN IS NULL LIKE BETWEEN CASE WHEN THEN ELSE
  END ON JOIN LEFT RIGHT INNER FULL OUTER CROSS UNION EXCEPT INTERSECT WITH PARTITIONED CLUSTERED ASC DESC TRUE FALSE
  EXTEND DISTINCT ALL FETCH WINDOW OVER`.split(/\s+/),
);

const UNITS = new Set([
  "MILLISECOND",
  "SECOND",
  "MINUTE",
  "HOUR",
  "DAY",
  "WEEK",
  "MONTH",
  "QUARTER",
  "YEAR",
  "DECADE",
  "CENTURY",
  "DOW",
  "DOY",
  "EPOCH",
  "MICROSECOND",
  "ISODOW",
  "ISOYEAR",
]);

class Parser {
  #i = 0;
  constructor(
    readonly sql: string,
    readonly toks: Token[],
    /** Where `sql` starts in the statement (token positions are the statement's). */
    readonly base: number,
  ) {}

  peek(n = 0): Token {
    return this.toks[Math.min(this.#i + n, this.toks.length - 1)] as Token;
  }
  next(): Token {
    const t = this.peek();
    this.#i++;
    return t;
  }
  isWord(w: string, n = 0): boolean {
    const t = this.peek(n);
    return t.t === "id" && t.v.toUpperCase() === w;
  }
  isSym(s: string, n = 0): boolean {
    const t = this.peek(n);
    return t.t === "op" && t.v === s;
  }
  acceptWord(w: string): boolean {
    if (!this.isWord(w)) return false;
    this.#i++;
    return true;
  }
  acceptSym(s: string): boolean {
    if (!this.isSym(s)) return false;
    this.#i++;
    return true;
  }
  fail(expected: string): never {
    const t = this.peek();
    // Tokens Calcite reads (subscripts, JSON key/value pairs) that this grammar does not: the emulator's gap.
    if (t.t === "op" && (t.v === "[" || t.v === "]" || t.v === ":"))
      throw new MsqPlanError(`The emulator reads no [${t.v}] here`, "unsupported", t.at);
    const shown = t.t === "eof" ? "<EOF>" : t.t === "str" ? `'${t.v}'` : t.t === "qid" ? `"${t.v}"` : t.v;
    throw new MsqPlanError(`Incorrect syntax near [${shown}]: expected ${expected}`);
  }
  expectWord(w: string): void {
    if (!this.acceptWord(w)) this.fail(w);
  }
  expectSym(s: string): void {
    if (!this.acceptSym(s)) this.fail(`'${s}'`);
  }
  get at(): number {
    return this.peek().at;
  }
  get done(): boolean {
    return this.peek().t === "eof" || (this.isSym(";") && this.peek(1).t === "eof");
  }

  ident(): string {
    const t = this.peek();
    if (t.t === "qid" || (t.t === "id" && !RESERVED.has(t.v.toUpperCase()))) {
      this.#i++;
      return t.v;
    }
    return this.fail("an identifier");
  }

  // ------------------------------------------------------------------------------------------ queries

  query(): Query {
    const withs: Query["with"] = [];
    if (this.acceptWord("WITH")) {
      do {
        const name = this.ident();
        if (this.isSym("(")) this.fail("AS (a column list on a WITH item is not read)");
        this.expectWord("AS");
        this.expectSym("(");
        withs.push({ name, query: this.query() });
        this.expectSym(")");
      } while (this.acceptSym(","));
    }
    this.expectWord("SELECT");
    if (this.acceptWord("DISTINCT"))
      throw new MsqPlanError("The emulator reads no SELECT DISTINCT", "unsupported");
    this.acceptWord("ALL");
    const items: Item[] = [];
    do items.push(this.item());
    while (this.acceptSym(","));
    this.expectWord("FROM");
    const { from, alias } = this.source();
    if (
      this.isWord("JOIN") ||
      this.isWord("LEFT") ||
      this.isWord("INNER") ||
      this.isWord("CROSS") ||
      this.isSym(",")
    )
      throw new MsqPlanError("The emulator runs no JOIN in an ingestion query", "unsupported");
    const where = this.acceptWord("WHERE") ? this.expr() : null;
    let groupBy: Query["groupBy"] = null;
    if (this.isWord("GROUP")) {
      this.next();
      this.expectWord("BY");
      groupBy = [];
      do {
        const start = this.at;
        const expr = this.expr();
        groupBy.push({
          expr,
          text: this.sql.slice(start - this.base, this.at - this.base).trim(),
          at: start,
        });
      } while (this.acceptSym(","));
    }
    const having = this.acceptWord("HAVING") ? this.expr() : null;
    let orderBy: Expr[] | null = null;
    if (this.isWord("ORDER")) {
      this.next();
      this.expectWord("BY");
      orderBy = [];
      do {
        orderBy.push(this.expr());
        if (!this.acceptWord("ASC")) this.acceptWord("DESC");
      } while (this.acceptSym(","));
    }
    let limit: number | null = null;
    if (this.acceptWord("LIMIT")) {
      const t = this.next();
      if (t.t !== "num") this.fail("a number after LIMIT");
      limit = Number(t.v);
    }
    let offset: number | null = null;
    if (this.acceptWord("OFFSET")) {
      const t = this.next();
      if (t.t !== "num") this.fail("a number after OFFSET");
      offset = Number(t.v);
    }
    if (this.isWord("UNION") || this.isWord("EXCEPT") || this.isWord("INTERSECT"))
      throw new MsqPlanError(
        "The emulator runs no UNION, EXCEPT or INTERSECT in an ingestion query",
        "unsupported",
      );
    return { with: withs, items, from, alias, where, groupBy, having, orderBy, limit, offset };
  }

  item(): Item {
    const start = this.at;
    if (this.isSym("*")) {
      this.next();
      return { expr: { k: "star" }, alias: null, text: "*" };
    }
    const expr = this.expr();
    const text = this.sql.slice(start - this.base, this.at - this.base).trim();
    let alias: string | null = null;
    if (this.acceptWord("AS")) alias = this.ident();
    else if (
      this.peek().t === "qid" ||
      (this.peek().t === "id" && !RESERVED.has(this.peek().v.toUpperCase()))
    )
      alias = this.ident();
    return { expr, alias, text };
  }

  source(): { from: Source; alias: string | null } {
    let from: Source;
    if (this.isWord("TABLE") && this.isSym("(", 1)) {
      this.next();
      this.expectSym("(");
      from = this.extern();
      this.expectSym(")");
      if (this.acceptWord("EXTEND") || this.isSym("(")) {
        if (from.k !== "extern" || from.signature.length > 0)
          throw new MsqPlanError("EXTEND needs EXTERN without its signature argument");
        from.signature = this.extendList();
      } else if (from.k === "extern" && from.signature.length === 0) {
        throw new MsqPlanError("EXTERN needs a signature: a third argument or EXTEND (<columns>)");
      }
    } else if (this.isSym("(")) {
      this.next();
      if (this.isWord("VALUES"))
        throw new MsqPlanError("The emulator reads no VALUES as an input", "unsupported");
      from = { k: "query", query: this.query() };
      this.expectSym(")");
    } else if (this.isWord("UNNEST")) {
      throw new MsqPlanError("The emulator reads no UNNEST", "unsupported");
    } else {
      const at = this.at;
      let name = this.ident();
      if (this.acceptSym(".")) {
        if (name.toLowerCase() !== "druid")
          throw new MsqPlanError(
            `The emulator reads tables of the druid schema only, got [${name}]`,
            "unsupported",
          );
        name = this.ident();
      }
      from = { k: "table", name, at };
    }
    let alias: string | null = null;
    if (this.acceptWord("AS")) alias = this.ident();
    else if (
      this.peek().t === "qid" ||
      (this.peek().t === "id" && !RESERVED.has(this.peek().v.toUpperCase()))
    )
      alias = this.ident();
    return { from, alias };
  }

  /** `EXTERN('<inputSource>', '<inputFormat>'[, '<signature>'])`, positional or named (`inputSource => '…'`). */
  extern(): Source {
    if (!this.isWord("EXTERN"))
      throw new MsqPlanError(
        `The emulator reads TABLE(EXTERN(…)) only, got TABLE(${this.peek().v}(…))`,
        "unsupported",
      );
    this.next();
    this.expectSym("(");
    const args: Record<string, string> = {};
    const order = ["inputSource", "inputFormat", "signature"];
    let n = 0;
    do {
      let key = order[n] as string;
      if (this.peek().t === "id" && this.isSym("=>", 1)) {
        key = this.next().v;
        this.next();
      }
      const t = this.next();
      if (t.t !== "str") this.fail("a string literal argument of EXTERN");
      args[key] = t.v;
      n++;
    } while (this.acceptSym(","));
    this.expectSym(")");
    const parse = (what: string): unknown => {
      const text = args[what];
      if (text === undefined) return undefined;
      try {
        return JSON.parse(text);
      } catch (error) {
        throw new MsqPlanError(`Invalid ${what} in EXTERN: ${(error as Error).message}`);
      }
    };
    const inputSource = parse("inputSource");
    const inputFormat = parse("inputFormat");
    const signature = parse("signature") ?? [];
    const isObj = (v: unknown): v is Record<string, unknown> =>
      typeof v === "object" && v !== null && !Array.isArray(v);
    if (!isObj(inputSource) || !isObj(inputFormat) || !Array.isArray(signature))
      throw new MsqPlanError(
        "EXTERN takes an inputSource object, an inputFormat object and a signature array",
      );
    return {
      k: "extern",
      inputSource,
      inputFormat,
      signature: signature.map((c) => ({
        name: String((c as { name?: unknown }).name),
        type: String((c as { type?: unknown }).type ?? "string").toLowerCase(),
      })),
    };
  }

  /** `EXTEND (name TYPE, …)`: SQL types → the signature's native types (`Columns.sqlTypeToNative`). */
  extendList(): Array<{ name: string; type: string }> {
    this.expectSym("(");
    const out: Array<{ name: string; type: string }> = [];
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
    } while (this.acceptSym(","));
    this.expectSym(")");
    return out;
  }

  typeName(): string {
    let t = this.next();
    if (t.t !== "id") this.fail("a type name");
    let name = t.v.toUpperCase();
    if (name === "DOUBLE" && this.acceptWord("PRECISION")) name = "DOUBLE";
    if (this.acceptSym("(")) {
      while (!this.acceptSym(")")) {
        t = this.next();
        if (t.t === "eof") this.fail("')'");
      }
    }
    if (this.acceptWord("ARRAY")) name = `${name} ARRAY`;
    return name;
  }

  // ------------------------------------------------------------------------------------------ expressions

  expr(): Expr {
    return this.or();
  }
  or(): Expr {
    let l = this.and();
    while (this.acceptWord("OR")) l = { k: "bin", op: "OR", l, r: this.and() };
    return l;
  }
  and(): Expr {
    let l = this.not();
    while (this.acceptWord("AND")) l = { k: "bin", op: "AND", l, r: this.not() };
    return l;
  }
  not(): Expr {
    if (this.acceptWord("NOT")) return { k: "not", e: this.not() };
    return this.predicate();
  }
  predicate(): Expr {
    const l = this.additive();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && ["=", "<>", "!=", "<", "<=", ">", ">="].includes(t.v)) {
        this.next();
        return { k: "bin", op: t.v === "!=" ? "<>" : t.v, l, r: this.additive() };
      }
      if (this.isWord("IS")) {
        this.next();
        const not = this.acceptWord("NOT");
        if (this.acceptWord("NULL")) return { k: "isnull", e: l, not };
        if (this.acceptWord("TRUE")) return { k: "isbool", e: l, v: true, not };
        if (this.acceptWord("FALSE")) return { k: "isbool", e: l, v: false, not };
        if (this.acceptWord("DISTINCT"))
          throw new MsqPlanError("The emulator reads no IS DISTINCT FROM", "unsupported");
        this.fail("NULL, TRUE or FALSE after IS");
      }
      const not =
        this.isWord("NOT") && (this.isWord("IN", 1) || this.isWord("LIKE", 1) || this.isWord("BETWEEN", 1));
      if (not) this.next();
      if (this.acceptWord("IN")) {
        this.expectSym("(");
        if (this.isWord("SELECT"))
          throw new MsqPlanError("The emulator reads no IN (subquery)", "unsupported");
        const list: Expr[] = [];
        do list.push(this.expr());
        while (this.acceptSym(","));
        this.expectSym(")");
        return { k: "in", e: l, list, not };
      }
      if (this.acceptWord("LIKE")) return { k: "like", e: l, pattern: this.additive(), not };
      if (this.acceptWord("BETWEEN")) {
        this.acceptWord("SYMMETRIC");
        const lo = this.additive();
        this.expectWord("AND");
        return { k: "between", e: l, lo, hi: this.additive(), not };
      }
      return l;
    }
  }
  additive(): Expr {
    let l = this.multiplicative();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && (t.v === "+" || t.v === "-" || t.v === "||")) {
        this.next();
        l = { k: "bin", op: t.v, l, r: this.multiplicative() };
      } else return l;
    }
  }
  multiplicative(): Expr {
    let l = this.unary();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && (t.v === "*" || t.v === "/" || t.v === "%")) {
        this.next();
        l = { k: "bin", op: t.v, l, r: this.unary() };
      } else return l;
    }
  }
  unary(): Expr {
    if (this.acceptSym("-")) {
      const e = this.unary();
      return e.k === "lit" && typeof e.v === "number" ? { ...e, v: -e.v } : { k: "neg", e };
    }
    if (this.acceptSym("+")) return this.unary();
    return this.primary();
  }
  primary(): Expr {
    const t = this.peek();
    if (t.t === "num") {
      this.next();
      return /[.eE]/.test(t.v) ? { k: "lit", v: Number(t.v), decimal: true } : { k: "lit", v: Number(t.v) };
    }
    if (t.t === "str") {
      this.next();
      return { k: "lit", v: t.v };
    }
    if (this.acceptSym("(")) {
      if (this.isWord("SELECT"))
        throw new MsqPlanError("The emulator reads no scalar subquery", "unsupported");
      const e = this.expr();
      this.expectSym(")");
      return e;
    }
    if (t.t === "qid") return this.column();
    if (t.t !== "id") return this.fail("an expression");
    const word = t.v.toUpperCase();
    if (word === "NULL") {
      this.next();
      return { k: "lit", v: null };
    }
    if (word === "TRUE" || word === "FALSE") {
      this.next();
      return { k: "lit", v: word === "TRUE" };
    }
    if ((word === "TIMESTAMP" || word === "DATE") && this.peek(1).t === "str") {
      this.next();
      const text = this.next().v;
      const ms = sqlTimestamp(text);
      if (!Number.isFinite(ms)) throw new MsqPlanError(`Illegal ${word} literal '${text}'`);
      return { k: "ts", v: ms };
    }
    if (word === "INTERVAL") {
      this.next();
      const amount = this.next();
      if (amount.t !== "str" && amount.t !== "num") this.fail("an INTERVAL amount");
      const unit = this.next().v.toUpperCase();
      return { k: "interval", amount: Number(amount.v), unit };
    }
    if (word === "CASE") return this.caseExpr();
    if ((word === "CAST" || word === "TRY_CAST") && this.isSym("(", 1)) {
      this.next();
      this.next();
      const e = this.expr();
      this.expectWord("AS");
      const type = this.typeName();
      this.expectSym(")");
      return { k: "cast", e, type };
    }
    if ((word === "CURRENT_TIMESTAMP" || word === "CURRENT_DATE") && !this.isSym("(", 1)) {
      this.next();
      return { k: "fn", name: word, args: [], star: false, distinct: false };
    }
    if (this.isSym("(", 1)) return this.call();
    return this.column();
  }
  column(): Expr {
    const at = this.at;
    const first = this.ident();
    if (this.acceptSym(".")) return { k: "col", name: this.ident(), table: first, at };
    return { k: "col", name: first, table: null, at };
  }
  caseExpr(): Expr {
    this.next();
    const operand = this.isWord("WHEN") ? null : this.expr();
    const whens: Array<{ when: Expr; result: Expr }> = [];
    while (this.acceptWord("WHEN")) {
      const when = this.expr();
      this.expectWord("THEN");
      whens.push({ when, result: this.expr() });
    }
    const otherwise = this.acceptWord("ELSE") ? this.expr() : null;
    this.expectWord("END");
    return { k: "case", operand, whens, else: otherwise };
  }
  call(): Expr {
    const at = this.at;
    const name = this.next().v.toUpperCase();
    this.expectSym("(");
    if ((name === "FLOOR" || name === "CEIL") && !this.isSym(")")) {
      const e = this.expr();
      if (this.acceptWord("TO")) {
        const unit = this.next().v.toUpperCase();
        this.expectSym(")");
        return { k: "floor", fn: name, e, unit };
      }
      this.expectSym(")");
      return { k: "fn", name, args: [e], star: false, distinct: false };
    }
    if (name === "EXTRACT") {
      const unit = this.next().v.toUpperCase();
      this.expectWord("FROM");
      const e = this.expr();
      this.expectSym(")");
      return { k: "fn", name, args: [{ k: "lit", v: unit }, e], star: false, distinct: false };
    }
    if (name === "POSITION") {
      const needle = this.additive();
      this.expectWord("IN");
      const hay = this.expr();
      this.expectSym(")");
      return { k: "fn", name: "POSITION", args: [needle, hay], star: false, distinct: false };
    }
    if (name === "TRIM" && (this.isWord("BOTH") || this.isWord("LEADING") || this.isWord("TRAILING"))) {
      const side = this.next().v.toUpperCase();
      const chars = this.isWord("FROM") ? ({ k: "lit", v: " " } as Expr) : this.expr();
      this.expectWord("FROM");
      const e = this.expr();
      this.expectSym(")");
      const fn = side === "BOTH" ? "BTRIM" : side === "LEADING" ? "LTRIM" : "RTRIM";
      return { k: "fn", name: fn, args: [e, chars], star: false, distinct: false };
    }
    if ((name === "TIMESTAMPADD" || name === "TIMESTAMPDIFF") && this.peek().t === "id") {
      const unit = this.next().v.toUpperCase();
      if (!UNITS.has(unit)) this.fail("a time unit");
      const args: Expr[] = [{ k: "lit", v: unit }];
      while (this.acceptSym(",")) args.push(this.expr());
      this.expectSym(")");
      return { k: "fn", name, args, star: false, distinct: false };
    }
    if (this.acceptSym("*")) {
      this.expectSym(")");
      return { k: "fn", name, args: [], star: true, distinct: false, at };
    }
    const distinct = this.acceptWord("DISTINCT");
    const args: Expr[] = [];
    if (!this.isSym(")")) {
      do args.push(this.expr());
      while (this.acceptSym(","));
    }
    this.expectSym(")");
    if (this.isWord("OVER"))
      throw new MsqPlanError("The emulator runs no window functions (OVER)", "unsupported");
    if (this.isWord("FILTER"))
      throw new MsqPlanError("The emulator reads no aggregate FILTER clause", "unsupported");
    return { k: "fn", name, args, star: false, distinct, at };
  }
}

/** `2026-01-01 00:00:00[.fff]` (or ISO, or a date) in UTC → ms, NaN when unreadable. */
export function sqlTimestamp(text: string): number {
  const t = text.trim().replace(" ", "T");
  const withTime = /^\d{4}-\d\d-\d\d$/.test(t) ? `${t}T00:00:00` : t;
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(withTime) ? withTime : `${withTime}Z`);
}

/** Parses the query part of a statement; the whole text must be read. */
export function parseQuery(sql: string, base = 0): Query {
  const p = new Parser(sql, tokenize(sql, base), base);
  const q = p.query();
  if (!p.done) p.fail("the end of the query");
  return q;
}

/** Parses one expression (CLUSTERED BY items, OVERWRITE WHERE). */
export function parseExpr(sql: string, base = 0): Expr {
  const p = new Parser(sql, tokenize(sql, base), base);
  const e = p.expr();
  if (!p.done) p.fail("the end of the expression");
  return e;
}
