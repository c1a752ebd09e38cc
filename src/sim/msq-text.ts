import { SqlError, SqlPlanningError, SqlRuntimeError, UnsupportedSqlError } from "./sql.js";

/**
 * Reading an MSQ statement's text without a SQL parser (msq.ts, msq-select.ts): comments stripped, quoted text
 * masked so keywords are found only in SQL, lists split at top level, identifiers unquoted. And the error a
 * statement the planner refuses raises: Druid's message (`invalidInput`, 400) or the emulator's own
 * (`unsupported`) where it cannot read what Druid may well run.
 */
export class MsqPlanError extends Error {
  constructor(
    message: string,
    readonly errorCode = "invalidInput",
    /** Where in the statement Calcite's validator points (an offset into the submitted text), if it does. */
    readonly at?: number,
  ) {
    super(message);
  }
}

/** The SQL engine's errors as the planner's: Druid's refusals `invalidInput`, the emulator's gaps `unsupported`. */
export function asPlanError<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof SqlError)
      throw new MsqPlanError(
        error.message,
        error instanceof UnsupportedSqlError ? "unsupported" : "invalidInput",
        error.span?.[0],
      );
    if (error instanceof SqlPlanningError || error instanceof SqlRuntimeError)
      throw new MsqPlanError(error.message, "invalidInput");
    throw error;
  }
}

/**
 * Druid's wording of a Calcite validation error: the message and where it points, ` (line [l], column [c])`,
 * 1-based (`DruidPlanner`'s translation of `CalciteContextException`).
 */
export function withPosition(message: string, text: string, at: number): string {
  const before = text.slice(0, at);
  const line = before.split("\n").length;
  const column = at - before.lastIndexOf("\n");
  return `${message} (line [${line}], column [${column}])`;
}

/** A SQL identifier, bare or double-quoted. */
export const IDENT = `(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_]*)`;

/** Comments blanked (same length, newlines kept, so positions still point into the text), quoted text kept. */
export function stripComments(sql: string): string {
  return sql.replace(/('(?:[^']|'')*')|("(?:[^"]|"")*")|--[^\n]*|\/\*[\s\S]*?\*\//g, (m, q1, q2) =>
    q1 !== undefined || q2 !== undefined ? m : m.replace(/[^\n]/g, " "),
  );
}

/** Quoted literals and identifiers blanked (same length), so keywords are found only in SQL text. */
export function mask(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, (q) => `${q[0]}${" ".repeat(q.length - 2)}${q[0]}`);
}

export function unquoteIdent(s: string): string {
  const t = s.trim();
  return t.startsWith('"') ? t.slice(1, -1).replace(/""/g, '"') : t;
}

/** A single-quoted SQL literal's text. */
export function literal(s: string): string {
  return s.slice(1, -1).replace(/''/g, "'");
}

/** Splits on commas outside parentheses and quotes. */
export function splitTopLevel(text: string): string[] {
  const masked = mask(text);
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < masked.length; i++) {
    const ch = masked[i];
    if (ch === "(") depth++;
    else if (ch === ")") depth--;
    else if (ch === "," && depth === 0) {
      out.push(text.slice(from, i));
      from = i + 1;
    }
  }
  out.push(text.slice(from));
  return out.map((s) => s.trim()).filter((s) => s !== "");
}

/** The index of the `)` closing the `(` at `open` in masked text, or -1. */
export function closing(masked: string, open: number): number {
  let depth = 0;
  for (let i = open; i < masked.length; i++) {
    if (masked[i] === "(") depth++;
    else if (masked[i] === ")" && --depth === 0) return i;
  }
  return -1;
}
