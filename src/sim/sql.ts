import { bucketStart, parseGranularity } from "../core/granularity.js";
import { instantText } from "./time.js";

/**
 * A small SQL subset for the Broker endpoint (api-contract §3.6): one SELECT over one table, with WHERE
 * (AND/OR/NOT, comparisons, IN, IS NULL, LIKE, BETWEEN), aggregates COUNT/SUM/MIN/MAX/AVG with `FILTER (WHERE…)`,
 * TIME_FLOOR / FLOOR(__time TO unit), GROUP BY, ORDER BY and LIMIT. Enough for the canonical handoff query over
 * `sys.segments` and per-day COUNT/SUM checks over a datasource. Anything else is a `SqlError` (→ 400).
 */
export class SqlError extends Error {}

/** Timestamps are their own type so they compare by time and print as ISO (Druid's object format). */
export class Timestamp {
  constructor(readonly ms: number) {}
  toJSON(): string {
    return instantText(this.ms);
  }
}

export type Value = string | number | null | Timestamp;
export type SqlRow = Record<string, Value>;

type Expr =
  | { k: "lit"; v: Value }
  | { k: "col"; name: string }
  | { k: "un"; op: "NOT" | "-"; e: Expr }
  | { k: "bin"; op: string; l: Expr; r: Expr }
  | { k: "in"; e: Expr; list: Expr[]; not: boolean }
  | { k: "isnull"; e: Expr; not: boolean }
  | { k: "like"; e: Expr; pattern: Expr; not: boolean }
  | { k: "between"; e: Expr; lo: Expr; hi: Expr; not: boolean }
  | { k: "fn"; name: string; args: Expr[]; star: boolean; filter: Expr | null };

export interface SelectItem {
  expr: Expr | "*";
  alias: string | null;
}

export interface SqlQuery {
  items: SelectItem[];
  table: string;
  where: Expr | null;
  groupBy: Expr[];
  orderBy: Array<{ expr: Expr; desc: boolean }>;
  limit: number | null;
}

const AGGREGATES = new Set(["COUNT", "SUM", "MIN", "MAX", "AVG"]);

interface Token {
  t: "id" | "qid" | "str" | "num" | "op" | "eof";
  v: string;
}

function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (sql.startsWith("--", i)) {
      while (i < sql.length && sql[i] !== "\n") i++;
    } else if (c === "'") {
      let v = "";
      i++;
      for (;;) {
        if (i >= sql.length) throw new SqlError("Unterminated string literal");
        if (sql[i] === "'" && sql[i + 1] === "'") {
          v += "'";
          i += 2;
        } else if (sql[i] === "'") {
          i++;
          break;
        } else v += sql[i++];
      }
      out.push({ t: "str", v });
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      if (end < 0) throw new SqlError("Unterminated quoted identifier");
      out.push({ t: "qid", v: sql.slice(i + 1, end) });
      i = end + 1;
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(sql[i + 1] ?? ""))) {
      const m = /^[0-9]*\.?[0-9]+(e[+-]?[0-9]+)?/i.exec(sql.slice(i)) as RegExpExecArray;
      out.push({ t: "num", v: m[0] });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i)) as RegExpExecArray;
      out.push({ t: "id", v: m[0] });
      i += m[0].length;
    } else {
      const two = sql.slice(i, i + 2);
      if (["<=", ">=", "<>", "!=", "||"].includes(two)) {
        out.push({ t: "op", v: two });
        i += 2;
      } else if ("=<>(),.*+-/;".includes(c)) {
        out.push({ t: "op", v: c });
        i++;
      } else throw new SqlError(`Unexpected character '${c}' at position ${i}`);
    }
  }
  out.push({ t: "eof", v: "" });
  return out;
}

class Parser {
  #i = 0;
  constructor(readonly toks: Token[]) {}

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
    if (!this.acceptKw(kw))
      throw new SqlError(`Expected ${kw} but found '${this.peek().v || "end of query"}'`);
  }
  acceptOp(op: string): boolean {
    const t = this.peek();
    if (t.t !== "op" || t.v !== op) return false;
    this.#i++;
    return true;
  }
  expectOp(op: string): void {
    if (!this.acceptOp(op))
      throw new SqlError(`Expected '${op}' but found '${this.peek().v || "end of query"}'`);
  }

  query(): SqlQuery {
    this.expectKw("SELECT");
    const items: SelectItem[] = [];
    do {
      if (this.acceptOp("*")) items.push({ expr: "*", alias: null });
      else {
        const expr = this.expr();
        let alias: string | null = null;
        if (this.acceptKw("AS")) alias = this.ident();
        else if (this.peek().t === "qid" || (this.peek().t === "id" && !isReserved(this.peek().v)))
          alias = this.ident();
        items.push({ expr, alias });
      }
    } while (this.acceptOp(","));
    this.expectKw("FROM");
    let table = this.ident();
    if (this.acceptOp(".")) table = `${table}.${this.ident()}`;
    const where = this.acceptKw("WHERE") ? this.expr() : null;
    const groupBy: Expr[] = [];
    if (this.acceptKw("GROUP")) {
      this.expectKw("BY");
      do groupBy.push(this.expr());
      while (this.acceptOp(","));
    }
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
      if (t.t !== "num") throw new SqlError("LIMIT expects a number");
      limit = Number(t.v);
    }
    this.acceptOp(";");
    if (this.peek().t !== "eof") throw new SqlError(`Unsupported SQL near '${this.peek().v}'`);
    return { items, table, where, groupBy, orderBy, limit };
  }

  ident(): string {
    const t = this.next();
    if (t.t === "qid") return t.v;
    if (t.t === "id") return t.v;
    throw new SqlError(`Expected an identifier but found '${t.v || "end of query"}'`);
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
      this.expectKw("NULL");
      return { k: "isnull", e: l, not };
    }
    const not = this.isKw("NOT") && (this.isKw("IN", 1) || this.isKw("LIKE", 1) || this.isKw("BETWEEN", 1));
    if (not) this.next();
    if (this.acceptKw("IN")) {
      this.expectOp("(");
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
    if (t.t === "num") return { k: "lit", v: Number(t.v) };
    if (t.t === "str") return { k: "lit", v: t.v };
    if (t.t === "op" && t.v === "(") {
      const e = this.expr();
      this.expectOp(")");
      return e;
    }
    if (t.t === "op" && t.v === "-") return { k: "un", op: "-", e: this.primary() };
    if (t.t === "qid") return { k: "col", name: t.v };
    if (t.t === "id") {
      const upper = t.v.toUpperCase();
      if (upper === "NULL") return { k: "lit", v: null };
      if (upper === "TRUE") return { k: "lit", v: 1 };
      if (upper === "FALSE") return { k: "lit", v: 0 };
      if (upper === "TIMESTAMP" && this.peek().t === "str") {
        const text = this.next().v;
        const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(" ", "T")}Z`);
        if (Number.isNaN(ms)) throw new SqlError(`Illegal TIMESTAMP literal '${text}'`);
        return { k: "lit", v: new Timestamp(ms) };
      }
      if (this.acceptOp("(")) return this.call(upper);
      return { k: "col", name: t.v };
    }
    throw new SqlError(`Unexpected '${t.v || "end of query"}'`);
  }
  call(name: string): Expr {
    let star = false;
    const args: Expr[] = [];
    if (name === "FLOOR" || name === "CEIL") {
      const e = this.expr();
      if (this.acceptKw("TO")) {
        const unit = this.ident().toUpperCase();
        this.expectOp(")");
        return {
          k: "fn",
          name: "TIME_FLOOR",
          args: [e, { k: "lit", v: unitPeriod(unit) }],
          star,
          filter: null,
        };
      }
      args.push(e);
    } else if (this.acceptOp("*")) star = true;
    else if (!this.acceptOp(")")) {
      if (this.acceptKw("DISTINCT")) throw new SqlError("COUNT(DISTINCT …) is not supported by the emulator");
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
    if (
      !AGGREGATES.has(name) &&
      ![
        "TIME_FLOOR",
        "FLOOR",
        "CEIL",
        "LOWER",
        "UPPER",
        "TIME_PARSE",
        "MILLIS_TO_TIMESTAMP",
        "TIMESTAMP_TO_MILLIS",
      ].includes(name)
    ) {
      throw new SqlError(`No match found for function signature ${name}(...)`);
    }
    return { k: "fn", name, args, star, filter };
  }
}

const RESERVED = new Set([
  "FROM",
  "WHERE",
  "GROUP",
  "ORDER",
  "LIMIT",
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
  if (!p) throw new SqlError(`Unsupported time unit ${unit}`);
  return p;
}

export function parseSql(sql: string): SqlQuery {
  return new Parser(tokenize(sql)).query();
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

function evalRow(e: Expr, row: SqlRow): Value {
  switch (e.k) {
    case "lit":
      return e.v;
    case "col": {
      if (!(e.name in row)) throw new SqlError(`Column '${e.name}' not found in any table`);
      return row[e.name] as Value;
    }
    case "un": {
      const v = evalRow(e.e, row);
      if (e.op === "NOT") return v === null ? null : truthy(v) ? 0 : 1;
      return v === null ? null : -Number(v);
    }
    case "bin": {
      if (e.op === "AND") return truthy(evalRow(e.l, row)) && truthy(evalRow(e.r, row)) ? 1 : 0;
      if (e.op === "OR") return truthy(evalRow(e.l, row)) || truthy(evalRow(e.r, row)) ? 1 : 0;
      const l = evalRow(e.l, row);
      const r = evalRow(e.r, row);
      if (e.op === "||") return l === null || r === null ? null : `${valueText(l)}${valueText(r)}`;
      if (["+", "-", "*", "/"].includes(e.op)) {
        if (l === null || r === null) return null;
        const x = l instanceof Timestamp ? l.ms : Number(l);
        const y = r instanceof Timestamp ? r.ms : Number(r);
        return e.op === "+" ? x + y : e.op === "-" ? x - y : e.op === "*" ? x * y : x / y;
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
      const v = evalRow(e.e, row);
      const hit = e.list.some((x) => cmp(v, evalRow(x, row)) === 0);
      return (e.not ? !hit : hit) ? 1 : 0;
    }
    case "isnull": {
      const isNull = evalRow(e.e, row) === null;
      return (e.not ? !isNull : isNull) ? 1 : 0;
    }
    case "like": {
      const v = evalRow(e.e, row);
      const p = String(evalRow(e.pattern, row));
      const re = new RegExp(
        `^${p
          .replace(/[.+^${}()|[\]\\*?]/g, "\\$&")
          .replace(/%/g, ".*")
          .replace(/_/g, ".")}$`,
        "s",
      );
      const hit = v !== null && re.test(valueText(v));
      return (e.not ? !hit : hit) ? 1 : 0;
    }
    case "between": {
      const v = evalRow(e.e, row);
      const lo = cmp(v, evalRow(e.lo, row));
      const hi = cmp(v, evalRow(e.hi, row));
      const hit = lo !== null && hi !== null && lo >= 0 && hi <= 0;
      return (e.not ? !hit : hit) ? 1 : 0;
    }
    case "fn":
      return evalScalarFn(e, row);
  }
}

function valueText(v: Value): string {
  return v instanceof Timestamp ? v.toJSON() : String(v);
}

function evalScalarFn(e: Extract<Expr, { k: "fn" }>, row: SqlRow): Value {
  if (AGGREGATES.has(e.name)) throw new SqlError(`Aggregate ${e.name} is not allowed here`);
  const args = e.args.map((a) => evalRow(a, row));
  const a0 = args[0] ?? null;
  switch (e.name) {
    case "TIME_FLOOR": {
      if (a0 === null) return null;
      const ms = a0 instanceof Timestamp ? a0.ms : Number(a0);
      let g: ReturnType<typeof parseGranularity>;
      try {
        g = parseGranularity(String(args[1]));
      } catch (error) {
        throw new SqlError((error as Error).message);
      }
      return new Timestamp(bucketStart(g, ms));
    }
    case "LOWER":
      return a0 === null ? null : valueText(a0).toLowerCase();
    case "UPPER":
      return a0 === null ? null : valueText(a0).toUpperCase();
    case "TIME_PARSE": {
      const ms = a0 === null ? Number.NaN : Date.parse(valueText(a0));
      return Number.isNaN(ms) ? null : new Timestamp(ms);
    }
    case "MILLIS_TO_TIMESTAMP":
      return a0 === null ? null : new Timestamp(Number(a0));
    case "TIMESTAMP_TO_MILLIS":
      return a0 instanceof Timestamp ? a0.ms : null;
    default:
      throw new SqlError(`No match found for function signature ${e.name}(...)`);
  }
}

function hasAggregate(e: Expr): boolean {
  switch (e.k) {
    case "fn":
      return AGGREGATES.has(e.name) || e.args.some(hasAggregate);
    case "un":
      return hasAggregate(e.e);
    case "bin":
      return hasAggregate(e.l) || hasAggregate(e.r);
    default:
      return false;
  }
}

/** Evaluates an output expression over a group: aggregates fold the rows, the rest reads the first row. */
function evalGroup(e: Expr, rows: SqlRow[]): Value {
  if (e.k === "fn" && AGGREGATES.has(e.name)) {
    const scoped = e.filter ? rows.filter((r) => truthy(evalRow(e.filter as Expr, r))) : rows;
    if (e.name === "COUNT") {
      if (e.star || e.args.length === 0) return scoped.length;
      return scoped.filter((r) => evalRow(e.args[0] as Expr, r) !== null).length;
    }
    const values = scoped
      .map((r) => evalRow(e.args[0] as Expr, r))
      .filter((v): v is Exclude<Value, null> => v !== null);
    if (values.length === 0) return null;
    const nums = values.map((v) => (v instanceof Timestamp ? v.ms : Number(v)));
    if (e.name === "SUM") return nums.reduce((a, b) => a + b, 0);
    if (e.name === "AVG") return nums.reduce((a, b) => a + b, 0) / nums.length;
    const pick = e.name === "MIN" ? Math.min(...nums) : Math.max(...nums);
    return values[0] instanceof Timestamp ? new Timestamp(pick) : pick;
  }
  if (e.k === "bin" || e.k === "un") {
    if (!hasAggregate(e)) return rows[0] ? evalRow(e, rows[0]) : null;
    const sub: SqlRow = {};
    const swap = (x: Expr): Expr => ({ k: "lit", v: evalGroup(x, rows) });
    if (e.k === "un") return evalRow({ ...e, e: swap(e.e) }, sub);
    return evalRow({ ...e, l: swap(e.l), r: swap(e.r) }, sub);
  }
  return rows[0] ? evalRow(e, rows[0]) : null;
}

function itemName(item: SelectItem, index: number): string {
  if (item.alias) return item.alias;
  if (item.expr !== "*" && item.expr.k === "col") return item.expr.name;
  return `EXPR$${index}`;
}

function columnRefs(e: Expr, out: string[]): string[] {
  switch (e.k) {
    case "col":
      out.push(e.name);
      break;
    case "un":
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
function validate(q: SqlQuery, columns: string[]): void {
  const known = new Set(columns);
  const aliases = new Set(q.items.flatMap((i) => (i.alias ? [i.alias] : [])));
  const check = (e: Expr, allowAliases: boolean) => {
    for (const name of columnRefs(e, [])) {
      if (!known.has(name) && !(allowAliases && aliases.has(name))) {
        throw new SqlError(`Column '${name}' not found in any table`);
      }
    }
  };
  for (const i of q.items) if (i.expr !== "*") check(i.expr, false);
  if (q.where) check(q.where, false);
  for (const g of q.groupBy) check(g, true);
  for (const o of q.orderBy) check(o.expr, true);
}

/** Runs a parsed query over rows; `columns` lists the table's columns (for `*` and unknown-column errors). */
export function execute(
  q: SqlQuery,
  rows: SqlRow[],
  columns: string[],
): { columns: string[]; rows: Value[][] } {
  validate(q, columns);
  const filtered = q.where ? rows.filter((r) => truthy(evalRow(q.where as Expr, r))) : rows;
  const exprItems: Array<{ name: string; expr: Expr }> = [];
  q.items.forEach((item, i) => {
    if (item.expr === "*") for (const c of columns) exprItems.push({ name: c, expr: { k: "col", name: c } });
    else exprItems.push({ name: itemName(item, i), expr: item.expr });
  });
  const grouped = q.groupBy.length > 0 || exprItems.some((x) => hasAggregate(x.expr));
  let out: Value[][];
  if (grouped) {
    const groupExprs = q.groupBy.map((g) => {
      if (g.k === "lit" && typeof g.v === "number") {
        const ref = exprItems[g.v - 1];
        if (!ref) throw new SqlError(`Ordinal out of range: ${g.v}`);
        return ref.expr;
      }
      return g;
    });
    const groups = new Map<string, SqlRow[]>();
    for (const r of filtered) {
      const key = JSON.stringify(groupExprs.map((g) => evalRow(g, r)));
      const list = groups.get(key) ?? [];
      list.push(r);
      groups.set(key, list);
    }
    if (groups.size === 0 && q.groupBy.length === 0) groups.set("[]", []);
    out = [...groups.values()].map((g) => exprItems.map((x) => evalGroup(x.expr, g)));
  } else {
    out = filtered.map((r) => exprItems.map((x) => evalRow(x.expr, r)));
  }
  const names = exprItems.map((x) => x.name);
  if (q.orderBy.length > 0) {
    const keys = q.orderBy.map((o) => {
      let index = -1;
      if (o.expr.k === "lit" && typeof o.expr.v === "number") index = o.expr.v - 1;
      else if (o.expr.k === "col") index = names.indexOf(o.expr.name);
      else index = exprItems.findIndex((x) => JSON.stringify(x.expr) === JSON.stringify(o.expr));
      if (index < 0 || index >= names.length)
        throw new SqlError("ORDER BY must name an output column or ordinal");
      return { index, desc: o.desc };
    });
    out.sort((a, b) => {
      for (const k of keys) {
        const c = cmp(a[k.index] ?? null, b[k.index] ?? null) ?? ((a[k.index] ?? null) === null ? -1 : 1);
        if (c !== 0) return k.desc ? -c : c;
      }
      return 0;
    });
  }
  if (q.limit !== null) out = out.slice(0, q.limit);
  return { columns: names, rows: out };
}
