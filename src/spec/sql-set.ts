import type { JsonValue } from "../core/canonical-json.js";

/**
 * Leading `SET key = value;` statements of an SQL template (apache/druid #17894, Druid 34 and newer): Druid
 * builds the query context from them, over the request's own context. Read here with their place in the
 * template (line and column), so a finding can say where to look. Pure.
 */

/** One leading SET statement. */
export interface SetStatement {
  readonly key: string;
  /** The value as Druid reads it: a string literal unquoted, TRUE/FALSE as booleans, numbers as numbers. */
  readonly value: JsonValue;
  /** The statement as written, e.g. `SET maxNumTasks = 3;`. */
  readonly text: string;
  /** Offsets of the statement in the query (end exclusive, after its `;`). */
  readonly start: number;
  readonly end: number;
  /** 1-based line and column of `SET`. */
  readonly line: number;
  readonly column: number;
}

/** Comments replaced by spaces (newlines kept), quoted text untouched: offsets still point into the query. */
export function maskComments(sql: string): string {
  return sql.replace(
    /('(?:[^']|'')*')|("(?:[^"]|"")*")|--[^\n]*|\/\*[\s\S]*?\*\//g,
    (m, s?: string, d?: string) => (s !== undefined || d !== undefined ? m : m.replace(/[^\n]/g, " ")),
  );
}

const SET_AT = /SET\s+("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^']|'')*'|[^;'"\s][^;'"]*?)\s*;/iy;

/** The SET statements before the query's one real statement, in order. */
export function leadingSetStatements(query: string): SetStatement[] {
  const masked = maskComments(query);
  const out: SetStatement[] = [];
  let pos = 0;
  for (;;) {
    while (pos < masked.length && /\s/.test(masked[pos] as string)) pos++;
    SET_AT.lastIndex = pos;
    const m = SET_AT.exec(masked);
    if (!m) return out;
    const end = pos + m[0].length;
    const before = query.slice(0, pos);
    const line = before.split("\n").length;
    const column = pos - before.lastIndexOf("\n");
    out.push({
      key: unquoteIdentifier(m[1] as string),
      value: literalValue(m[2] as string),
      text: query.slice(pos, end),
      start: pos,
      end,
      line,
      column,
    });
    pos = end;
  }
}

/**
 * The query without its leading SET statements and the context they build, merged over `context` (as Druid 34
 * would: SET wins). What a Druid older than 34 needs, since it refuses SET statements: the same context, sent
 * in the request.
 */
export function setStatementsToContext(
  query: string,
  context: { readonly [key: string]: JsonValue },
): { query: string; context: { [key: string]: JsonValue }; moved: string[] } {
  const sets = leadingSetStatements(query);
  const last = sets.at(-1);
  if (!last) return { query, context: { ...context }, moved: [] };
  const merged: { [key: string]: JsonValue } = { ...context };
  for (const set of sets) merged[set.key] = set.value;
  // What stood before and between the SETs (comments, blank lines) is dropped with them.
  return {
    query: query.slice(last.end).replace(/^\s*\n/, ""),
    context: merged,
    moved: sets.map((s) => s.key),
  };
}

function unquoteIdentifier(text: string): string {
  return text.startsWith('"') ? text.slice(1, -1).replace(/""/g, '"') : text;
}

function literalValue(raw: string): JsonValue {
  const text = raw.trim();
  if (text.startsWith("'")) return text.slice(1, -1).replace(/''/g, "'");
  if (/^(true|false)$/i.test(text)) return text.toLowerCase() === "true";
  if (/^null$/i.test(text)) return null;
  const n = Number(text);
  return text !== "" && Number.isFinite(n) ? n : text;
}
