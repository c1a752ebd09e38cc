import { position, SqlError } from "./sql.js";

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
/** Calcite tokens the emulator reads no construct with (`?` is bound before parsing, `{fn …}`, `^`). */
const QUIET_CHARS = "?{}^";

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
      // An unclosed comment: Calcite's lexer reaches the end inside it.
      if (end < 0) throw lexical(sql, base, sql.length, null, "");
      i = end + 2;
    } else if (c === "'" || c === '"') {
      const quoted = readQuoted(sql, i);
      if (quoted === null) {
        // Unclosed, with no closed prefix: Calcite's lexer makes the lone quote a token of its own.
        i++;
        out.push({ t: "op", v: c, at: start, end: i });
      } else {
        i = quoted.end;
        out.push({ t: c === "'" ? "str" : "qid", v: quoted.v, at: start, end: i });
      }
    } else if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(sql[i + 1] ?? ""))) {
      // `5.`, `.5`, `5.5`, `5e3` (the longest number, as Calcite's lexer takes it).
      const m = /^(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:e[+-]?[0-9]+)?/i.exec(sql.slice(i)) as RegExpExecArray;
      i += m[0].length;
      out.push({ t: "num", v: m[0], at: start, end: i });
    } else if (/[\p{L}_$]/u.test(c)) {
      const m = /^[\p{L}_$][\p{L}\p{N}_$]*/u.exec(sql.slice(i)) as RegExpExecArray;
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
      } else if (c === "!") {
        // `!` is a token only as `!=`: Calcite's lexer fails on the character after it.
        throw i + 1 < sql.length
          ? lexical(sql, base, i + 1, sql[i + 1] as string, "!")
          : lexical(sql, base, i + 1, null, "");
      } else if (QUIET_CHARS.includes(c)) {
        // Calcite tokens the emulator's grammar has no place for: the parser refuses them where they stand.
        i++;
        out.push({ t: "op", v: c, at: start, end: i });
      } else throw lexical(sql, base, i, c, "");
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

/**
 * A quoted string or identifier from `at` (its opening quote): Calcite's lexer takes the longest closed quote, so
 * an unclosed `'it''s` is the string `'it'` and then a lone `'`. Null when no prefix closes.
 */
function readQuoted(sql: string, at: number): { v: string; end: number } | null {
  const q = sql[at] as string;
  let v = "";
  let closed: { v: string; end: number } | null = null;
  let i = at + 1;
  while (i < sql.length) {
    if (sql[i] === q) {
      closed = { v, end: i + 1 };
      if (sql[i + 1] !== q) return closed;
      v += q;
      i += 2;
    } else v += sql[i++];
  }
  return closed;
}

/**
 * Where Druid's parser stopped and why, in offsets of the whole statement (an MSQ query part's tokens carry
 * the statement's offsets), rendered into Druid's message against the statement's text.
 */
/** A token of a fault: its offsets and text as written; `image` null for the end of the text the parser read. */
export interface FaultToken {
  at: number;
  end: number;
  image: string | null;
}

export type SyntaxFault =
  /** `DruidPlanner.translateException`: the tokens JavaCC looked ahead at (the first is the one it stopped on). */
  | { k: "token"; tokens: FaultToken[]; identOk: boolean }
  /** Calcite's `TokenMgrError`: a character no token starts with, or the end inside a comment. */
  | { k: "lexical"; at: number; encountered: string | null; after: string }
  /** A message of the parser's own, without a position (Calcite's `SqlParseException` text). */
  | { k: "plain"; message: string };

/**
 * Druid's answer to text its SQL parser refuses: 400 `invalidInput`, the message `DruidPlanner.translateException`
 * builds from Calcite's `SqlParseException`. Every token-level refusal is "Received an unexpected token [...]
 * (line [l], column [c])" with the position in the context, except a keyword where an identifier could stand,
 * which Calcite's `normalizeException` rewords as "Incorrect syntax near the keyword ..." (no position context).
 * Druid's message goes on with the token sequences JavaCC expected (", acceptable options: [...]" and the
 * context's `expected`, or "\nWas expecting one of: ..."): the emulator leaves that part out, as it cannot
 * list Calcite's grammar states faithfully (docs/emulator.md, "Behaviours, by contract section": SQL the emulator cannot read).
 */
export class SqlSyntaxError extends SqlError {
  constructor(
    readonly fault: SyntaxFault,
    /** The text the fault's offsets point into (re-rendered against the whole statement where that differs). */
    text: string,
  ) {
    super(renderSyntaxFault(fault, text).message);
  }
  /** Druid's message and `context` (besides `sourceType`) against the statement's text. */
  render(text: string): { message: string; context: Record<string, string> } {
    return renderSyntaxFault(this.fault, text);
  }
}

function lexical(
  sql: string,
  base: number,
  at: number,
  encountered: string | null,
  after: string,
): SqlSyntaxError {
  return new SqlSyntaxError({ k: "lexical", at: base + at, encountered, after }, " ".repeat(base) + sql);
}

/** Calcite's reserved words (its SQL reference, "Keywords"; SQL:2011's reserved list), besides the clause words. */
export const SQL_RESERVED: readonly string[] = (
  "ABS ALL ALLOCATE ALTER ANY ARE ARRAY ASYMMETRIC AT AVG BEGIN BIGINT BINARY BLOB BOOLEAN BOTH CALL CARDINALITY " +
  "CAST CEIL CEILING CHAR CHARACTER CHAR_LENGTH CHARACTER_LENGTH CHECK CLOB CLOSE COALESCE COLLATE COLLECT COLUMN " +
  "COMMIT CONDITION CONNECT CONSTRAINT CONVERT CORR CORRESPONDING COUNT COVAR_POP COVAR_SAMP CREATE CUBE CUME_DIST " +
  "CURRENT CURRENT_CATALOG CURRENT_DATE CURRENT_PATH CURRENT_ROLE CURRENT_SCHEMA CURRENT_TIME CURRENT_TIMESTAMP " +
  "CURRENT_USER CURSOR CYCLE DATE DAY DEALLOCATE DEC DECIMAL DECLARE DEFAULT DELETE DENSE_RANK DEREF DESCRIBE " +
  "DETERMINISTIC DISALLOW DISCONNECT DISTINCT DOUBLE DROP DYNAMIC EACH ELEMENT ESCAPE EVERY EXEC EXECUTE EXISTS EXP " +
  "EXPLAIN EXTEND EXTERNAL EXTRACT FALSE FIRST_VALUE FLOAT FLOOR FOR FOREIGN FREE FUNCTION FUSION GET GLOBAL GRANT " +
  "GROUPING HOLD HOUR IDENTITY IMPORT INDICATOR INOUT INSENSITIVE INSERT INT INTEGER INTERSECTION INTERVAL INTO " +
  "LAG LANGUAGE LARGE LAST_VALUE LATERAL LEAD LEADING LIKE_REGEX LN LOCAL LOCALTIME LOCALTIMESTAMP LOWER MATCH MAX " +
  "MEMBER MERGE METHOD MIN MINUTE MOD MODIFIES MODULE MONTH MULTISET NATIONAL NCHAR NCLOB NEW NEXT NO NONE " +
  "NORMALIZE NTH_VALUE NTILE NULL NULLIF NUMERIC OCTET_LENGTH OF OLD ONLY OPEN OUT OUTER OVERLAPS OVERLAY " +
  "PARAMETER PARTITION PERCENT_RANK PERCENTILE_CONT PERCENTILE_DISC PERIOD POSITION POWER PRECISION PREPARE " +
  "PRIMARY PROCEDURE RANGE RANK READS REAL RECURSIVE REF REFERENCES REFERENCING RELEASE RESET RESULT RETURN " +
  "RETURNS REVOKE ROLLBACK ROLLUP ROW ROW_NUMBER ROWS SAVEPOINT SCOPE SCROLL SEARCH SECOND SENSITIVE SESSION_USER " +
  "SET SIMILAR SMALLINT SOME SPECIFIC SQL SQLEXCEPTION SQLSTATE SQLWARNING SQRT START STATIC STDDEV_POP " +
  "STDDEV_SAMP STREAM SUBMULTISET SUBSTRING SUM SYMMETRIC SYSTEM SYSTEM_USER TABLE TABLESAMPLE TIME TIMESTAMP " +
  "TINYINT TO TRAILING TRANSLATE TRANSLATION TREAT TRIGGER TRIM TRUE TRUNCATE UESCAPE UNIQUE UNKNOWN UNNEST UPDATE " +
  "UPPER UPSERT USER VALUES VAR_POP VAR_SAMP VARBINARY VARCHAR VARYING WHENEVER WIDTH_BUCKET WITHIN WITHOUT YEAR"
).split(" ");

/**
 * Calcite's keywords (`SqlAbstractParserImpl.getMetadata().isKeyword`, reserved and not): an unexpected token
 * spelled as one of these, in upper case (the check compares the token's image), gets "Incorrect syntax near the
 * keyword". The reserved words and the non-reserved ones a Druid query is likely to misplace.
 */
const KEYWORDS = new Set([
  ...SQL_RESERVED,
  ...(
    "ALL ALTER AND ANY ARRAY AS ASC BETWEEN BY CASE CAST CLUSTERED CREATE CROSS CURRENT_DATE CURRENT_TIMESTAMP " +
    "DELETE DESC DISTINCT DROP ELSE END ESCAPE EXCEPT EXISTS EXPLAIN EXTEND FALSE FETCH FILTER FIRST FOR FROM FULL " +
    "GROUP HAVING ILIKE IN INNER INSERT INTERSECT INTERVAL INTO IS JOIN LAST LATERAL LEFT LIKE LIMIT MINUS NATURAL " +
    "NOT NULL NULLS OFFSET ON OR ORDER OUTER OVER OVERWRITE PARTITION PARTITIONED PLAN QUALIFY REPLACE RIGHT ROW ROWS " +
    "SELECT SET SOME TABLE TABLESAMPLE THEN TIMESTAMP TRUE UNION UNKNOWN UNNEST UPDATE USING VALUE VALUES WHEN WHERE " +
    "WINDOW WITH WITHIN"
  ).split(" "),
]);

/** `DruidPlanner.getUnexpectedTokenString`'s escapes of a token's image. */
function escapeImage(image: string): string {
  let out = "";
  for (const ch of image) {
    const code = ch.codePointAt(0) as number;
    if (ch === "\b") out += "\\b";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\f") out += "\\f";
    else if (ch === "\r") out += "\\r";
    else if (ch === '"') out += '\\"';
    else if (ch === "'") out += "\\'";
    else if (ch === "\\") out += "\\\\";
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return out;
}

/** Where JavaCC puts the end of input: on the text's last character (line 0, column 0 for no text). */
function eofPosition(text: string): { line: number; column: number } {
  return text.length === 0 ? { line: 0, column: 0 } : position(text, text.length - 1);
}

/**
 * The end of a part the parser read is the end of the statement, or (an MSQ query part, which ends where
 * `PARTITIONED BY` starts) the statement's next word, which Calcite's parser saw there.
 */
function followingWord(text: string, at: number): FaultToken {
  const m = /^\s*([\p{L}_$][\p{L}\p{N}_$]*)/u.exec(text.slice(at));
  if (!m) return { at, end: at, image: null };
  const start = at + m[0].length - (m[1] as string).length;
  return { at: start, end: at + m[0].length, image: m[1] as string };
}

function renderSyntaxFault(
  fault: SyntaxFault,
  text: string,
): { message: string; context: Record<string, string> } {
  if (fault.k === "plain") return { message: fault.message, context: {} };
  if (fault.k === "lexical") {
    const { line, column } = position(text, fault.at);
    const what =
      fault.encountered === null
        ? "<EOF> "
        : `"${escapeImage(fault.encountered)}" (${fault.encountered.codePointAt(0)}), `;
    return {
      message: `Lexical error at line ${line}, column ${column}.  Encountered: ${what}after : "${fault.after}"`,
      context: {},
    };
  }
  const tokens = fault.tokens.map((t) => (t.image === null ? followingWord(text, t.at) : t));
  const [first] = tokens;
  if (first?.image && fault.identOk && KEYWORDS.has(first.image)) {
    const { line, column } = position(text, first.at);
    return {
      message: `Incorrect syntax near the keyword '${first.image}' at line ${line}, column ${column}.`,
      context: {},
    };
  }
  const words: string[] = [];
  for (const t of tokens) {
    if (t.image === null) {
      words.push("<EOF>");
      break;
    }
    words.push(escapeImage(t.image));
  }
  const token = words.join(" ");
  const from = !first?.image ? eofPosition(text) : position(text, first.at);
  const to = !first?.image ? from : position(text, first.end - 1);
  return {
    message: `Received an unexpected token [${token}] (line [${from.line}], column [${from.column}])`,
    context: {
      line: String(from.line),
      column: String(from.column),
      endLine: String(to.line),
      endColumn: String(to.column),
      token,
    },
  };
}
