import { instantText } from "./instant-text.js";
import {
  floorInZone,
  formatTime,
  ISO_PATTERN,
  PatternError,
  parseTime,
  parseTimestampLiteral,
  timestampText,
  UTC,
  type Zone,
} from "./sql-time.js";

/**
 * A small SQL subset for the Broker endpoint (docs/druid-api.md §3.6): one SELECT over one table or over no table
 * at all (`SELECT 1`), with WHERE (AND/OR/NOT, comparisons, IN, IS NULL, LIKE, BETWEEN), aggregates
 * COUNT/SUM/MIN/MAX/AVG with `FILTER (WHERE…)`, CAST, TIME_FLOOR / FLOOR(__time TO unit) / TIME_FORMAT /
 * TIME_PARSE, CURRENT_TIMESTAMP, GROUP BY, ORDER BY and LIMIT. Enough for the canonical handoff query over
 * `sys.segments`, per-day COUNT/SUM checks over a datasource, and what JDBC/DB-API clients send to test a
 * connection or list tables. Anything else is an `SqlError` (→ 400); SQL the emulator cannot run says so.
 */
export class SqlError extends Error {
  constructor(
    message: string,
    /** 0-based offsets of the offending text (first and last character), for Druid's line/column context. */
    readonly span?: [number, number],
  ) {
    super(message);
  }
}

/**
 * A query Druid's planner cannot turn into a native query (`DruidPlanner`'s "Query could not be planned",
 * a 400 `general` error with the reason): the emulator would answer it, Druid does not.
 */
export class SqlPlanningError extends Error {}

/** An error raised inside execution that Druid answers with a 500 `general` error (e.g. `/ by zero`). */
export class SqlRuntimeError extends Error {}

/** SQL the emulator does not implement (Druid may well run it): the message says so. */
export function unsupported(what: string): SqlError {
  return new SqlError(`${what} is not supported by the emulator`);
}

/** Timestamps are their own type so they compare by time and print as ISO (Druid's object format). */
export class Timestamp {
  constructor(readonly ms: number) {}
  toJSON(): string {
    return instantText(this.ms);
  }
}

export type Value = string | number | null | Timestamp;
export type SqlRow = Record<string, Value>;
/** A result cell: booleans are typed BOOLEAN and print as true/false. */
export type OutValue = Value | boolean;

/** Calcite SQL types as Druid reports them in `sqlTypesHeader`. */
export type SqlType =
  | "BIGINT"
  | "INTEGER"
  | "DOUBLE"
  | "FLOAT"
  | "DECIMAL"
  | "VARCHAR"
  | "CHAR"
  | "TIMESTAMP"
  | "BOOLEAN"
  | "NULL"
  | "OTHER";

/** A table column with its SQL type. */
export interface Column {
  name: string;
  type: SqlType;
}

/** The Druid native type of an SQL type (`typesHeader`): a real Druid 33 answered these for each. */
export function nativeType(t: SqlType): string {
  switch (t) {
    case "BIGINT":
    case "INTEGER":
    case "TIMESTAMP":
    case "BOOLEAN":
      return "LONG";
    case "DOUBLE":
    case "DECIMAL":
      return "DOUBLE";
    case "FLOAT":
      return "FLOAT";
    case "OTHER":
      return "COMPLEX";
    default:
      return "STRING";
  }
}

type Expr =
  | { k: "lit"; v: Value; t: SqlType }
  | {
      k: "col";
      name: string;
      span: [number, number];
      /** The table a column is qualified with (`"wikipedia"."channel"`, `w.channel`, `druid.wikipedia.channel`). */
      qualifier?: { parts: string[]; span: [number, number] };
    }
  | { k: "now" }
  | { k: "un"; op: "NOT" | "-"; e: Expr }
  | { k: "bin"; op: string; l: Expr; r: Expr }
  | { k: "in"; e: Expr; list: Expr[]; not: boolean }
  | { k: "isnull"; e: Expr; not: boolean }
  | { k: "like"; e: Expr; pattern: Expr; not: boolean }
  | { k: "between"; e: Expr; lo: Expr; hi: Expr; not: boolean }
  | { k: "cast"; e: Expr; to: SqlType }
  | { k: "fn"; name: string; args: Expr[]; star: boolean; filter: Expr | null };

export interface SelectItem {
  expr: Expr | "*";
  alias: string | null;
}

export interface SqlQuery {
  items: SelectItem[];
  /** `schema.table` or `table` as written (quotes removed); null without FROM. */
  table: string | null;
  /** The table's alias (`FROM "wikipedia" AS w`): columns are then qualified by it alone. */
  alias: string | null;
  where: Expr | null;
  groupBy: Expr[];
  orderBy: Array<{ expr: Expr; desc: boolean }>;
  limit: number | null;
}

const AGGREGATES = new Set(["COUNT", "SUM", "MIN", "MAX", "AVG"]);
const SCALARS = new Set([
  "TIME_FLOOR",
  "TIME_FORMAT",
  "TIME_PARSE",
  "LOWER",
  "UPPER",
  "MILLIS_TO_TIMESTAMP",
  "TIMESTAMP_TO_MILLIS",
]);

interface Token {
  t: "id" | "qid" | "str" | "num" | "op" | "eof";
  v: string;
  /** Offset of the token's first character in the query. */
  at: number;
  /** Offset one past its last character. */
  end: number;
}

function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const start = i;
    if (/\s/.test(c)) {
      i++;
    } else if (sql.startsWith("--", i)) {
      while (i < sql.length && sql[i] !== "\n") i++;
    } else if (c === "'") {
      let v = "";
      i++;
      for (;;) {
        if (i >= sql.length) throw new SqlError("Unterminated string literal", [start, start]);
        if (sql[i] === "'" && sql[i + 1] === "'") {
          v += "'";
          i += 2;
        } else if (sql[i] === "'") {
          i++;
          break;
        } else v += sql[i++];
      }
      out.push({ t: "str", v, at: start, end: i });
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      if (end < 0) throw new SqlError("Unterminated quoted identifier", [start, start]);
      out.push({ t: "qid", v: sql.slice(i + 1, end), at: start, end: end + 1 });
      i = end + 1;
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(sql[i + 1] ?? ""))) {
      const m = /^[0-9]*\.?[0-9]+(e[+-]?[0-9]+)?/i.exec(sql.slice(i)) as RegExpExecArray;
      i += m[0].length;
      out.push({ t: "num", v: m[0], at: start, end: i });
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i)) as RegExpExecArray;
      i += m[0].length;
      out.push({ t: "id", v: m[0], at: start, end: i });
    } else {
      const two = sql.slice(i, i + 2);
      if (["<=", ">=", "<>", "!=", "||"].includes(two)) {
        i += 2;
        out.push({ t: "op", v: two, at: start, end: i });
      } else if ("=<>(),.*+-/;".includes(c)) {
        i++;
        out.push({ t: "op", v: c, at: start, end: i });
      } else throw new SqlError(`Lexical error: unexpected character '${c}'`, [start, start]);
    }
  }
  out.push({ t: "eof", v: "", at: sql.length, end: sql.length });
  return out;
}

export interface ParseOptions {
  /** `sqlTimeZone`: `TIMESTAMP '…'` literals are local times there. */
  timeZone?: Zone;
}

class Parser {
  #i = 0;
  readonly toks: Token[];
  constructor(
    readonly sql: string,
    readonly options: ParseOptions,
  ) {
    this.toks = tokenize(sql);
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
  acceptKw(kw: string): boolean {
    if (!this.isKw(kw)) return false;
    this.#i++;
    return true;
  }
  expectKw(kw: string): void {
    if (!this.acceptKw(kw)) throw this.unexpected(`${kw} expected`);
  }
  acceptOp(op: string): boolean {
    const t = this.peek();
    if (t.t !== "op" || t.v !== op) return false;
    this.#i++;
    return true;
  }
  expectOp(op: string): void {
    if (!this.acceptOp(op)) throw this.unexpected(`'${op}' expected`);
  }
  /** The emulator's parser stops here: either Druid rejects it too or it is SQL the emulator lacks. */
  unexpected(detail: string): SqlError {
    const t = this.peek();
    const near = t.t === "eof" ? "the end of the query" : `'${t.v}'`;
    return new SqlError(`SQL near ${near} (${detail}) is not supported by the emulator`, [t.at, t.at]);
  }

  query(): SqlQuery {
    this.expectKw("SELECT");
    if (this.isKw("DISTINCT") || this.isKw("ALL")) throw unsupported("SELECT DISTINCT");
    const items: SelectItem[] = [];
    const starQualifiers: Array<Extract<Expr, { k: "col" }>> = [];
    do {
      if (this.acceptOp("*")) items.push({ expr: "*", alias: null });
      else if (
        (this.peek().t === "id" || this.peek().t === "qid") &&
        this.peek(1).v === "." &&
        this.peek(2).t === "op" &&
        this.peek(2).v === "*"
      ) {
        // `t.*`: every column of the one table (its qualifier is checked once FROM is known).
        const t = this.next();
        this.next();
        this.next();
        starQualifiers.push({
          k: "col",
          name: "*",
          span: [t.at, t.end - 1],
          qualifier: { parts: [t.v], span: [t.at, t.end - 1] },
        });
        items.push({ expr: "*", alias: null });
      } else {
        const expr = this.expr();
        let alias: string | null = null;
        if (this.acceptKw("AS")) alias = this.ident();
        else if (this.peek().t === "qid" || (this.peek().t === "id" && !isReserved(this.peek().v)))
          alias = this.ident();
        items.push({ expr, alias });
      }
    } while (this.acceptOp(","));
    let table: string | null = null;
    let alias: string | null = null;
    if (this.acceptKw("FROM")) {
      table = this.ident();
      if (this.acceptOp(".")) table = `${table}.${this.ident()}`;
      if (this.acceptKw("AS") || (this.peek().t === "id" && !isReserved(this.peek().v))) alias = this.ident();
      for (const kw of ["JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL"]) {
        if (this.isKw(kw)) throw unsupported("JOIN");
      }
      if (this.isKw("TABLESAMPLE") || this.peek().v === ",") throw unsupported("a second table");
    } else if (this.isKw("WHERE") || this.isKw("GROUP") || this.isKw("HAVING")) {
      // Calcite: a SELECT without FROM takes no WHERE or GROUP BY.
      const t = this.peek();
      const { line, column } = position(this.sql, t.at);
      throw new SqlError(
        `Incorrect syntax near the keyword '${t.v.toUpperCase()}' at line ${line}, column ${column}.`,
      );
    }
    const where = table !== null && this.acceptKw("WHERE") ? this.expr() : null;
    const groupBy: Expr[] = [];
    if (table !== null && this.acceptKw("GROUP")) {
      this.expectKw("BY");
      do groupBy.push(this.expr());
      while (this.acceptOp(","));
    }
    if (this.isKw("HAVING")) throw unsupported("HAVING");
    if (this.isKw("UNION") || this.isKw("INTERSECT") || this.isKw("EXCEPT")) throw unsupported("UNION");
    const orderBy: SqlQuery["orderBy"] = [];
    if (this.acceptKw("ORDER")) {
      this.expectKw("BY");
      do {
        const expr = this.expr();
        const desc = this.acceptKw("DESC");
        if (!desc) this.acceptKw("ASC");
        orderBy.push({ expr, desc });
      } while (this.acceptOp(","));
    }
    let limit: number | null = null;
    if (this.acceptKw("LIMIT")) {
      const t = this.next();
      if (t.t !== "num") throw new SqlError("LIMIT expects a number", [t.at, t.at]);
      limit = Number(t.v);
    }
    if (this.isKw("OFFSET")) throw unsupported("OFFSET");
    const t = this.peek();
    if (t.t === "op" && t.v === ";") {
      // Druid's parser takes one statement without a trailing semicolon (a real Druid 33 refused `SELECT 1;`).
      const { line, column } = position(this.sql, t.at);
      throw new SqlError(`Received an unexpected token [;] (line [${line}], column [${column}])`, [
        t.at,
        t.at,
      ]);
    }
    if (t.t !== "eof") throw this.unexpected("end of query expected");
    const q = { items, table, alias, where, groupBy, orderBy, limit };
    for (const star of starQualifiers) checkQualifier(star, q);
    return q;
  }

  ident(): string {
    const t = this.next();
    if (t.t === "qid") return t.v;
    if (t.t === "id") return t.v;
    this.#i--;
    throw this.unexpected("identifier expected");
  }

  expr(): Expr {
    let l = this.and();
    while (this.acceptKw("OR")) l = { k: "bin", op: "OR", l, r: this.and() };
    return l;
  }
  and(): Expr {
    let l = this.not();
    while (this.acceptKw("AND")) l = { k: "bin", op: "AND", l, r: this.not() };
    return l;
  }
  not(): Expr {
    if (this.acceptKw("NOT")) return { k: "un", op: "NOT", e: this.not() };
    return this.cmp();
  }
  cmp(): Expr {
    const l = this.add();
    const t = this.peek();
    if (t.t === "op" && ["=", "!=", "<>", "<", "<=", ">", ">="].includes(t.v)) {
      this.next();
      return { k: "bin", op: t.v === "<>" ? "!=" : t.v, l, r: this.add() };
    }
    if (this.acceptKw("IS")) {
      const not = this.acceptKw("NOT");
      if (this.isKw("TRUE") || this.isKw("FALSE") || this.isKw("DISTINCT"))
        throw unsupported("IS TRUE/FALSE/DISTINCT");
      this.expectKw("NULL");
      return { k: "isnull", e: l, not };
    }
    const not = this.isKw("NOT") && (this.isKw("IN", 1) || this.isKw("LIKE", 1) || this.isKw("BETWEEN", 1));
    if (not) this.next();
    if (this.acceptKw("IN")) {
      this.expectOp("(");
      if (this.isKw("SELECT")) throw unsupported("a subquery");
      const list: Expr[] = [];
      do list.push(this.add());
      while (this.acceptOp(","));
      this.expectOp(")");
      return { k: "in", e: l, list, not };
    }
    if (this.acceptKw("LIKE")) return { k: "like", e: l, pattern: this.add(), not };
    if (this.acceptKw("BETWEEN")) {
      const lo = this.add();
      this.expectKw("AND");
      return { k: "between", e: l, lo, hi: this.add(), not };
    }
    return l;
  }
  add(): Expr {
    let l = this.mul();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && (t.v === "+" || t.v === "-" || t.v === "||")) {
        this.next();
        l = { k: "bin", op: t.v, l, r: this.mul() };
      } else return l;
    }
  }
  mul(): Expr {
    let l = this.primary();
    for (;;) {
      const t = this.peek();
      if (t.t === "op" && (t.v === "*" || t.v === "/")) {
        this.next();
        l = { k: "bin", op: t.v, l, r: this.primary() };
      } else return l;
    }
  }
  primary(): Expr {
    const t = this.next();
    if (t.t === "num") {
      const integer = /^[0-9]+$/.test(t.v);
      return { k: "lit", v: Number(t.v), t: integer ? "INTEGER" : /e/i.test(t.v) ? "DOUBLE" : "DECIMAL" };
    }
    if (t.t === "str") return { k: "lit", v: t.v, t: "CHAR" };
    if (t.t === "op" && t.v === "(") {
      if (this.isKw("SELECT")) throw unsupported("a subquery");
      const e = this.expr();
      this.expectOp(")");
      return e;
    }
    if (t.t === "op" && t.v === "-") return { k: "un", op: "-", e: this.primary() };
    if ((t.t === "qid" || t.t === "id") && this.peek().v === "." && this.peek().t === "op") {
      if (t.t === "qid" || !isReserved(t.v)) return this.qualified(t);
    }
    if (t.t === "qid") return { k: "col", name: t.v, span: [t.at, t.end - 1] };
    if (t.t === "id") {
      const upper = t.v.toUpperCase();
      if (upper === "NULL") return { k: "lit", v: null, t: "NULL" };
      if (upper === "TRUE") return { k: "lit", v: 1, t: "BOOLEAN" };
      if (upper === "FALSE") return { k: "lit", v: 0, t: "BOOLEAN" };
      if (upper === "CURRENT_TIMESTAMP" && !(this.peek().t === "op" && this.peek().v === "("))
        return { k: "now" };
      if (upper === "TIMESTAMP" && this.peek().t === "str") {
        const lit = this.next();
        const ms = parseTimestampLiteral(lit.v, this.options.timeZone ?? UTC);
        if (Number.isNaN(ms)) throw new SqlError(`Illegal TIMESTAMP literal '${lit.v}'`, [t.at, lit.end - 1]);
        return { k: "lit", v: new Timestamp(ms), t: "TIMESTAMP" };
      }
      if (upper === "CASE") throw unsupported("CASE");
      if (upper === "CAST" && this.acceptOp("(")) return this.cast();
      if (this.acceptOp("(")) return this.call(upper);
      return { k: "col", name: t.v, span: [t.at, t.end - 1] };
    }
    this.#i--;
    throw this.unexpected("expression expected");
  }
  /** `a.b` or `a.b.c`: a column qualified with its table (and schema), as SQLAlchemy writes every column. */
  qualified(first: Token): Expr {
    const parts: Token[] = [first];
    while (this.peek().t === "op" && this.peek().v === ".") {
      const after = this.peek(1);
      if (after.t !== "id" && after.t !== "qid") break;
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
  cast(): Expr {
    const e = this.expr();
    this.expectKw("AS");
    const type = this.ident().toUpperCase();
    const to: Record<string, SqlType> = {
      BIGINT: "BIGINT",
      INTEGER: "INTEGER",
      INT: "INTEGER",
      DOUBLE: "DOUBLE",
      FLOAT: "FLOAT",
      REAL: "FLOAT",
      VARCHAR: "VARCHAR",
      CHAR: "VARCHAR",
      TIMESTAMP: "TIMESTAMP",
      BOOLEAN: "BOOLEAN",
    };
    const target = to[type];
    if (!target) throw unsupported(`CAST to ${type}`);
    if (this.acceptOp("(")) {
      while (!this.acceptOp(")")) this.next();
    }
    this.expectOp(")");
    return { k: "cast", e, to: target };
  }
  call(name: string): Expr {
    let star = false;
    const args: Expr[] = [];
    if (name === "FLOOR" || name === "CEIL") {
      const e = this.expr();
      if (this.acceptKw("TO")) {
        const unit = this.ident().toUpperCase();
        this.expectOp(")");
        if (name === "CEIL") throw unsupported("CEIL(… TO unit)");
        return {
          k: "fn",
          name: "TIME_FLOOR",
          args: [e, { k: "lit", v: unitPeriod(unit), t: "CHAR" }],
          star,
          filter: null,
        };
      }
      args.push(e);
    } else if (this.acceptOp("*")) star = true;
    else if (!this.acceptOp(")")) {
      if (this.acceptKw("DISTINCT")) throw unsupported(`${name}(DISTINCT …)`);
      args.push(this.expr());
      while (this.acceptOp(",")) args.push(this.expr());
    } else return this.afterCall(name, args, star);
    this.expectOp(")");
    return this.afterCall(name, args, star);
  }
  afterCall(name: string, args: Expr[], star: boolean): Expr {
    let filter: Expr | null = null;
    if (this.acceptKw("FILTER")) {
      this.expectOp("(");
      this.expectKw("WHERE");
      filter = this.expr();
      this.expectOp(")");
    }
    if (this.isKw("OVER")) throw unsupported("window functions");
    if (name === "FLOOR" || name === "CEIL") throw unsupported(`${name}(number)`);
    if (!AGGREGATES.has(name) && !SCALARS.has(name)) throw unsupported(`The function ${name}`);
    return { k: "fn", name, args, star, filter };
  }
}

/** 1-based line and column of a query offset (Druid's error context). */
export function position(sql: string, offset: number): { line: number; column: number } {
  const before = sql.slice(0, offset).split("\n");
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

const RESERVED = new Set([
  "FROM",
  "WHERE",
  "GROUP",
  "ORDER",
  "LIMIT",
  "OFFSET",
  "HAVING",
  "UNION",
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
  "OVER",
]);
function isReserved(word: string): boolean {
  return RESERVED.has(word.toUpperCase());
}

function unitPeriod(unit: string): string {
  const map: Record<string, string> = {
    SECOND: "PT1S",
    MINUTE: "PT1M",
    HOUR: "PT1H",
    DAY: "P1D",
    WEEK: "P1W",
    MONTH: "P1M",
    QUARTER: "P3M",
    YEAR: "P1Y",
  };
  const p = map[unit];
  if (!p) throw unsupported(`FLOOR(… TO ${unit})`);
  return p;
}

export function parseSql(sql: string, options: ParseOptions = {}): SqlQuery {
  return new Parser(sql, options).query();
}

function cmp(a: Value, b: Value): number | null {
  if (a === null || b === null) return null;
  if (a instanceof Timestamp || b instanceof Timestamp) {
    const x = a instanceof Timestamp ? a.ms : typeof a === "number" ? a : Date.parse(a);
    const y = b instanceof Timestamp ? b.ms : typeof b === "number" ? b : Date.parse(b);
    return x - y;
  }
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "number" || typeof b === "number") {
    const x = Number(a);
    const y = Number(b);
    if (!Number.isNaN(x) && !Number.isNaN(y)) return x - y;
  }
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const truthy = (v: Value) => v !== null && v !== 0 && v !== "" && v !== "false";
const INTEGERS = new Set<SqlType>(["BIGINT", "INTEGER", "BOOLEAN", "TIMESTAMP"]);

/** What evaluation needs besides the row: column types, the time zone and the query's now. */
export interface ExecOptions {
  columns: Column[];
  timeZone: Zone;
  /** `CURRENT_TIMESTAMP` (sim time). */
  now: number;
  /**
   * A system table (`sys.*`, `INFORMATION_SCHEMA.*`): an aggregate without GROUP BY over no rows gives no row
   * at all (a real Druid 33 answered `[]` to `SELECT COUNT(*) FROM sys.segments WHERE datasource = 'x'`).
   */
  systemTable: boolean;
}

class Evaluator {
  readonly types: Map<string, SqlType>;
  /** Every column null: what non-aggregated output expressions read in an aggregate over no rows. */
  readonly nullRow: SqlRow;
  constructor(readonly o: ExecOptions) {
    this.types = new Map(o.columns.map((c) => [c.name, c.type]));
    this.nullRow = Object.fromEntries(o.columns.map((c) => [c.name, null]));
  }

  typeOf(e: Expr): SqlType {
    switch (e.k) {
      case "lit":
        return e.t;
      case "col":
        return this.types.get(e.name) ?? "VARCHAR";
      case "now":
        return "TIMESTAMP";
      case "un":
        return e.op === "NOT" ? "BOOLEAN" : this.typeOf(e.e);
      case "bin": {
        if (["AND", "OR", "=", "!=", "<", "<=", ">", ">="].includes(e.op)) return "BOOLEAN";
        if (e.op === "||") return "VARCHAR";
        const a = this.typeOf(e.l);
        const b = this.typeOf(e.r);
        if ([a, b].some((t) => t === "DOUBLE" || t === "FLOAT")) return "DOUBLE";
        if ([a, b].includes("DECIMAL")) return "DECIMAL";
        if ([a, b].includes("BIGINT") || [a, b].includes("TIMESTAMP")) return "BIGINT";
        return "INTEGER";
      }
      case "in":
      case "isnull":
      case "like":
      case "between":
        return "BOOLEAN";
      case "cast":
        return e.to;
      case "fn": {
        const arg = e.args[0] ? this.typeOf(e.args[0]) : "BIGINT";
        switch (e.name) {
          case "COUNT":
          case "TIMESTAMP_TO_MILLIS":
            return "BIGINT";
          case "SUM":
            return INTEGERS.has(arg) ? "BIGINT" : "DOUBLE";
          case "AVG":
            return "DOUBLE";
          case "MIN":
          case "MAX":
            return arg === "INTEGER" ? "BIGINT" : arg;
          case "TIME_FLOOR":
          case "TIME_PARSE":
          case "MILLIS_TO_TIMESTAMP":
            return "TIMESTAMP";
          default:
            return "VARCHAR";
        }
      }
    }
  }

  row(e: Expr, row: SqlRow): Value {
    switch (e.k) {
      case "lit":
        return e.v;
      case "col": {
        if (!(e.name in row)) throw columnNotFound(e);
        return row[e.name] as Value;
      }
      case "now":
        return new Timestamp(this.o.now);
      case "un": {
        const v = this.row(e.e, row);
        if (e.op === "NOT") return v === null ? null : truthy(v) ? 0 : 1;
        return v === null ? null : -Number(v);
      }
      case "bin": {
        if (e.op === "AND") return truthy(this.row(e.l, row)) && truthy(this.row(e.r, row)) ? 1 : 0;
        if (e.op === "OR") return truthy(this.row(e.l, row)) || truthy(this.row(e.r, row)) ? 1 : 0;
        const l = this.row(e.l, row);
        const r = this.row(e.r, row);
        if (e.op === "||") return l === null || r === null ? null : `${this.text(l)}${this.text(r)}`;
        if (["+", "-", "*", "/"].includes(e.op)) {
          if (l === null || r === null) return null;
          const x = l instanceof Timestamp ? l.ms : Number(l);
          const y = r instanceof Timestamp ? r.ms : Number(r);
          if (e.op === "/") {
            const integral = INTEGERS.has(this.typeOf(e.l)) && INTEGERS.has(this.typeOf(e.r));
            if (!integral) return x / y;
            if (y === 0) throw new SqlRuntimeError("/ by zero");
            return Math.trunc(x / y);
          }
          return e.op === "+" ? x + y : e.op === "-" ? x - y : x * y;
        }
        const c = cmp(l, r);
        if (c === null) return null;
        const ok =
          e.op === "="
            ? c === 0
            : e.op === "!="
              ? c !== 0
              : e.op === "<"
                ? c < 0
                : e.op === "<="
                  ? c <= 0
                  : e.op === ">"
                    ? c > 0
                    : c >= 0;
        return ok ? 1 : 0;
      }
      case "in": {
        const v = this.row(e.e, row);
        const hit = e.list.some((x) => cmp(v, this.row(x, row)) === 0);
        return (e.not ? !hit : hit) ? 1 : 0;
      }
      case "isnull": {
        const isNull = this.row(e.e, row) === null;
        return (e.not ? !isNull : isNull) ? 1 : 0;
      }
      case "like": {
        const v = this.row(e.e, row);
        const p = String(this.row(e.pattern, row));
        const re = new RegExp(
          `^${p
            .replace(/[.+^${}()|[\]\\*?]/g, "\\$&")
            .replace(/%/g, ".*")
            .replace(/_/g, ".")}$`,
          "s",
        );
        const hit = v !== null && re.test(this.text(v));
        return (e.not ? !hit : hit) ? 1 : 0;
      }
      case "between": {
        const v = this.row(e.e, row);
        const lo = cmp(v, this.row(e.lo, row));
        const hi = cmp(v, this.row(e.hi, row));
        const hit = lo !== null && hi !== null && lo >= 0 && hi <= 0;
        return (e.not ? !hit : hit) ? 1 : 0;
      }
      case "cast":
        return this.cast(this.row(e.e, row), e.to);
      case "fn":
        return this.scalar(e, row);
    }
  }

  /** Text of a value inside an expression (`||`, LIKE, LOWER): timestamps in the query's zone. */
  text(v: Exclude<Value, null>): string {
    return v instanceof Timestamp ? timestampText(v.ms, this.o.timeZone) : String(v);
  }

  cast(v: Value, to: SqlType): Value {
    if (v === null) return null;
    switch (to) {
      case "BIGINT":
      case "INTEGER": {
        const n = v instanceof Timestamp ? v.ms : Number(v);
        return Number.isFinite(n) ? Math.trunc(n) : null;
      }
      case "DOUBLE":
      case "FLOAT": {
        const n = v instanceof Timestamp ? v.ms : Number(v);
        return Number.isFinite(n) ? n : null;
      }
      case "TIMESTAMP": {
        if (v instanceof Timestamp) return v;
        if (typeof v === "number") return new Timestamp(v);
        const ms = parseTimestampLiteral(v, this.o.timeZone);
        return Number.isNaN(ms) ? null : new Timestamp(ms);
      }
      case "BOOLEAN":
        return truthy(v) ? 1 : 0;
      default:
        return this.text(v);
    }
  }

  scalar(e: Extract<Expr, { k: "fn" }>, row: SqlRow): Value {
    if (AGGREGATES.has(e.name)) throw new SqlError(`Aggregate ${e.name} is not allowed here`);
    const args = e.args.map((a) => this.row(a, row));
    const a0 = args[0] ?? null;
    const zoneArg = (i: number) => {
      const z = args[i];
      return z === undefined || z === null ? this.o.timeZone : String(z);
    };
    try {
      switch (e.name) {
        case "TIME_FLOOR": {
          if (a0 === null) return null;
          if (args.length > 2 && args[2] !== null) throw unsupported("TIME_FLOOR with an origin");
          const ms = a0 instanceof Timestamp ? a0.ms : Number(a0);
          return new Timestamp(floorInZone(ms, String(args[1]), zoneArg(3)));
        }
        case "TIME_FORMAT": {
          if (a0 === null) return null;
          const ms = a0 instanceof Timestamp ? a0.ms : Number(a0);
          const pattern = args[1] === undefined || args[1] === null ? ISO_PATTERN : String(args[1]);
          return formatTime(ms, pattern, zoneArg(2));
        }
        case "TIME_PARSE": {
          if (a0 === null) return null;
          const pattern = args[1] === undefined || args[1] === null ? null : String(args[1]);
          const ms = parseTime(this.text(a0), pattern, zoneArg(2));
          return ms === null ? null : new Timestamp(ms);
        }
        case "LOWER":
          return a0 === null ? null : this.text(a0).toLowerCase();
        case "UPPER":
          return a0 === null ? null : this.text(a0).toUpperCase();
        case "MILLIS_TO_TIMESTAMP":
          return a0 === null ? null : new Timestamp(Number(a0));
        case "TIMESTAMP_TO_MILLIS":
          return a0 instanceof Timestamp ? a0.ms : null;
        default:
          throw unsupported(`The function ${e.name}`);
      }
    } catch (error) {
      if (error instanceof PatternError) throw unsupported(`The time format ${error.message}`);
      if (error instanceof SqlError || error instanceof SqlRuntimeError) throw error;
      throw new SqlError((error as Error).message);
    }
  }

  /** An output expression over a group: aggregates fold the rows, the rest reads the first row. */
  group(e: Expr, rows: SqlRow[]): Value {
    if (e.k === "fn" && AGGREGATES.has(e.name)) {
      const scoped = e.filter ? rows.filter((r) => truthy(this.row(e.filter as Expr, r))) : rows;
      if (e.name === "COUNT") {
        if (e.star || e.args.length === 0) return scoped.length;
        return scoped.filter((r) => this.row(e.args[0] as Expr, r) !== null).length;
      }
      const values = scoped
        .map((r) => this.row(e.args[0] as Expr, r))
        .filter((v): v is Exclude<Value, null> => v !== null);
      if (values.length === 0) return null;
      const nums = values.map((v) => (v instanceof Timestamp ? v.ms : Number(v)));
      if (e.name === "SUM") return nums.reduce((a, b) => a + b, 0);
      if (e.name === "AVG") return nums.reduce((a, b) => a + b, 0) / nums.length;
      const pick = e.name === "MIN" ? Math.min(...nums) : Math.max(...nums);
      return values[0] instanceof Timestamp ? new Timestamp(pick) : pick;
    }
    if (hasAggregate(e)) {
      const swap = (x: Expr): Expr => ({ k: "lit", v: this.group(x, rows), t: this.typeOf(x) });
      const sub: SqlRow = {};
      switch (e.k) {
        case "un":
          return this.row({ ...e, e: swap(e.e) }, sub);
        case "bin":
          return this.row({ ...e, l: swap(e.l), r: swap(e.r) }, sub);
        case "cast":
          return this.row({ ...e, e: swap(e.e) }, sub);
        case "fn":
          return this.row({ ...e, args: e.args.map(swap) }, sub);
        default:
          throw unsupported("This use of an aggregate");
      }
    }
    return this.row(e, rows[0] ?? this.nullRow);
  }
}

function columnNotFound(e: Extract<Expr, { k: "col" }>): SqlError {
  const where = e.qualifier ? `table '${e.qualifier.parts.at(-1)}'` : "any table";
  return new SqlError(`Column '${e.name}' not found in ${where}`, e.span);
}

/**
 * Calcite's scope check of a qualified column: the qualifier names the FROM table by its alias when it has one,
 * else by its name or `schema.name` (a real Druid 33 refused the table's name beside an alias: "Table '…' not
 * found", spanning the qualifier).
 */
function checkQualifier(e: Extract<Expr, { k: "col" }>, q: SqlQuery): void {
  if (!e.qualifier) return;
  const written = e.qualifier.parts.join(".");
  const dot = q.table?.indexOf(".") ?? -1;
  const bare = q.table === null ? null : dot < 0 ? q.table : q.table.slice(dot + 1);
  const full = q.table === null ? null : dot < 0 ? `druid.${q.table}` : q.table;
  const names = q.alias !== null ? [q.alias] : [bare, full];
  if (!names.includes(written)) throw new SqlError(`Table '${written}' not found`, e.qualifier.span);
}

function hasAggregate(e: Expr): boolean {
  switch (e.k) {
    case "fn":
      return AGGREGATES.has(e.name) || e.args.some(hasAggregate);
    case "un":
    case "cast":
      return hasAggregate(e.e);
    case "bin":
      return hasAggregate(e.l) || hasAggregate(e.r);
    default:
      return false;
  }
}

function itemName(item: SelectItem, index: number): string {
  if (item.alias) return item.alias;
  if (item.expr !== "*" && item.expr.k === "col") return item.expr.name;
  // Calcite derives a name for a bare niladic function.
  if (item.expr !== "*" && item.expr.k === "now") return "CURRENT_TIMESTAMP";
  return `EXPR$${index}`;
}

function columnRefs(e: Expr, out: Array<Extract<Expr, { k: "col" }>>): typeof out {
  switch (e.k) {
    case "col":
      out.push(e);
      break;
    case "un":
    case "cast":
      columnRefs(e.e, out);
      break;
    case "bin":
      columnRefs(e.l, out);
      columnRefs(e.r, out);
      break;
    case "in":
      columnRefs(e.e, out);
      for (const x of e.list) columnRefs(x, out);
      break;
    case "isnull":
      columnRefs(e.e, out);
      break;
    case "like":
      columnRefs(e.e, out);
      columnRefs(e.pattern, out);
      break;
    case "between":
      columnRefs(e.e, out);
      columnRefs(e.lo, out);
      columnRefs(e.hi, out);
      break;
    case "fn":
      for (const x of e.args) columnRefs(x, out);
      if (e.filter) columnRefs(e.filter, out);
      break;
  }
  return out;
}

/** Validation before execution, so an unknown column fails even when no row would be read. */
function validate(q: SqlQuery, columns: Column[]): void {
  const known = new Set(columns.map((c) => c.name));
  const aliases = new Set(q.items.flatMap((i) => (i.alias ? [i.alias] : [])));
  const check = (e: Expr, allowAliases: boolean) => {
    for (const ref of columnRefs(e, [])) {
      checkQualifier(ref, q);
      if (ref.qualifier && !known.has(ref.name)) throw columnNotFound(ref);
      if (!known.has(ref.name) && !(allowAliases && aliases.has(ref.name))) throw columnNotFound(ref);
    }
  };
  for (const i of q.items) if (i.expr !== "*") check(i.expr, false);
  if (q.where) check(q.where, false);
  for (const g of q.groupBy) check(g, true);
  for (const o of q.orderBy) check(o.expr, true);
}

export interface SqlResult {
  columns: Column[];
  rows: OutValue[][];
}

/**
 * A scan of a datasource (no aggregation) can be ordered by `__time` only: Druid's scan query sorts by time
 * alone, so the planner refuses any other sort (`DruidQuery#toScanQuery`; observed on Druid 33, conformance).
 */
function refuseUnorderableScan(
  keys: ReadonlyArray<{ index: number }>,
  items: ReadonlyArray<{ name: string; expr: Expr }>,
): void {
  const other = keys
    .map((k) => items[k.index] as { name: string; expr: Expr })
    .filter((x) => !(x.expr.k === "col" && x.expr.name === "__time"))
    .map((x) => (x.expr.k === "col" ? x.expr.name : x.name));
  if (other.length > 0)
    throw new SqlPlanningError(
      `SQL query requires ordering a table by non-time column [[${other.join(", ")}]], which is not supported.`,
    );
}

/** Runs a parsed query over rows (one empty row when the query has no FROM). */
export function execute(q: SqlQuery, rows: SqlRow[], options: ExecOptions): SqlResult {
  const columns = options.columns;
  validate(q, columns);
  const ev = new Evaluator(options);
  const source = q.table === null ? [{}] : rows;
  const filtered = q.where ? source.filter((r) => truthy(ev.row(q.where as Expr, r))) : source;
  const exprItems: Array<{ name: string; expr: Expr }> = [];
  q.items.forEach((item, i) => {
    if (item.expr === "*") {
      if (q.table === null) throw new SqlError("SELECT * requires a FROM clause");
      for (const c of columns)
        exprItems.push({ name: c.name, expr: { k: "col", name: c.name, span: [0, 0] } });
    } else exprItems.push({ name: itemName(item, i), expr: item.expr });
  });
  const visible = exprItems.length;
  const names = exprItems.map((x) => x.name);
  // ORDER BY keys: an output column (by ordinal, name or the same expression), else a hidden extra column.
  const keys = q.orderBy.map((o) => {
    let index = -1;
    if (o.expr.k === "lit" && typeof o.expr.v === "number") {
      index = o.expr.v - 1;
      if (index < 0 || index >= visible) throw new SqlError(`Ordinal out of range: ${o.expr.v}`);
    } else if (o.expr.k === "col") index = names.indexOf(o.expr.name);
    else index = exprItems.findIndex((x) => JSON.stringify(x.expr) === JSON.stringify(o.expr));
    if (index < 0) {
      exprItems.push({ name: `$order${exprItems.length}`, expr: o.expr });
      index = exprItems.length - 1;
    }
    return { index, desc: o.desc };
  });
  const grouped = q.groupBy.length > 0 || exprItems.some((x) => hasAggregate(x.expr));
  if (!grouped && q.table !== null && !options.systemTable) refuseUnorderableScan(keys, exprItems);
  let out: Value[][];
  if (grouped) {
    const groupExprs = q.groupBy.map((g) => {
      if (g.k === "lit" && typeof g.v === "number") {
        const ref = exprItems[g.v - 1];
        if (!ref || g.v > visible) throw new SqlError(`Ordinal out of range: ${g.v}`);
        return ref.expr;
      }
      return g;
    });
    const groups = new Map<string, SqlRow[]>();
    for (const r of filtered) {
      const key = JSON.stringify(groupExprs.map((g) => ev.row(g, r)));
      const list = groups.get(key) ?? [];
      list.push(r);
      groups.set(key, list);
    }
    if (groups.size === 0 && q.groupBy.length === 0 && !options.systemTable) groups.set("[]", []);
    out = [...groups.values()].map((g) => exprItems.map((x) => ev.group(x.expr, g)));
  } else {
    out = filtered.map((r) => exprItems.map((x) => ev.row(x.expr, r)));
  }
  if (keys.length > 0) {
    out.sort((a, b) => {
      for (const k of keys) {
        const c = cmp(a[k.index] ?? null, b[k.index] ?? null) ?? ((a[k.index] ?? null) === null ? -1 : 1);
        if (c !== 0) return k.desc ? -c : c;
      }
      return 0;
    });
  }
  if (q.limit !== null) out = out.slice(0, q.limit);
  exprItems.length = visible;
  const types = exprItems.map((x) => ev.typeOf(x.expr));
  const rowsOut: OutValue[][] = out.map((r) =>
    r.slice(0, visible).map((v, i) => (types[i] === "BOOLEAN" && typeof v === "number" ? v !== 0 : v)),
  );
  return { columns: exprItems.map((x, i) => ({ name: x.name, type: types[i] as SqlType })), rows: rowsOut };
}
