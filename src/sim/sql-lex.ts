import { SqlError } from "./sql.js";

/** One token of Druid SQL as Calcite's lexer splits it (identifiers, quoted identifiers, strings, numbers, operators). */
export interface Token {
  t: "id" | "qid" | "str" | "num" | "op" | "eof";
  v: string;
  /** Offset of the token's first character in the query. */
  at: number;
  /** Offset one past its last character. */
  end: number;
}

/**
 * Calcite's operator tokens (`SqlParserImpl`'s grammar): `=>` names a table function's argument
 * (`EXTERN(inputSource => '…')`), `[`/`]` subscript an array, `:` pairs a key and value
 * (`JSON_OBJECT('k': v)`). A character outside these is Calcite's "Lexical error".
 */
const TWO_CHAR_OPS = ["<=", ">=", "<>", "!=", "||", "=>"];
const ONE_CHAR_OPS = "=<>(),.*+-/;%[]:";

/** `sql`'s tokens; `base` shifts their offsets when `sql` is a part of a longer statement (an MSQ query part). */
export function tokenize(sql: string, base = 0): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    const start = i;
    if (/\s/.test(c)) {
      i++;
    } else if (sql.startsWith("--", i)) {
      while (i < sql.length && sql[i] !== "\n") i++;
    } else if (sql.startsWith("/*", i)) {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'") {
      let v = "";
      i++;
      for (;;) {
        if (i >= sql.length) throw new SqlError("Unterminated string literal", [base + start, base + start]);
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
      let v = "";
      i++;
      for (;;) {
        if (i >= sql.length)
          throw new SqlError("Unterminated quoted identifier", [base + start, base + start]);
        if (sql[i] === '"' && sql[i + 1] === '"') {
          v += '"';
          i += 2;
        } else if (sql[i] === '"') {
          i++;
          break;
        } else v += sql[i++];
      }
      out.push({ t: "qid", v, at: start, end: i });
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(sql[i + 1] ?? ""))) {
      const m = /^[0-9]*\.?[0-9]+(e[+-]?[0-9]+)?|^[0-9]+\./i.exec(sql.slice(i)) as RegExpExecArray;
      i += m[0].length;
      out.push({ t: "num", v: m[0], at: start, end: i });
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i)) as RegExpExecArray;
      i += m[0].length;
      out.push({ t: "id", v: m[0], at: start, end: i });
    } else {
      const two = sql.slice(i, i + 2);
      if (TWO_CHAR_OPS.includes(two)) {
        i += 2;
        out.push({ t: "op", v: two, at: start, end: i });
      } else if (ONE_CHAR_OPS.includes(c)) {
        i++;
        out.push({ t: "op", v: c, at: start, end: i });
      } else throw new SqlError(`Lexical error: unexpected character '${c}'`, [base + start, base + start]);
    }
  }
  out.push({ t: "eof", v: "", at: sql.length, end: sql.length });
  if (base !== 0)
    for (const t of out) {
      t.at += base;
      t.end += base;
    }
  return out;
}
