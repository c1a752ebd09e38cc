import { SqlError } from "./sql.js";

/** A parameter Druid's planner cannot cast (it answers 500 with the exception, docs/druid-api.md §3.6). */
export class SqlParameterCastError extends Error {}

/** A Druid SQL dynamic parameter (`{"type": "VARCHAR", "value": "x"}`, docs/druid-api.md §3.6). */
export interface SqlParameterValue {
  type?: unknown;
  value?: unknown;
}

const NUMERIC = new Set(["TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "REAL", "DOUBLE", "DECIMAL"]);

function literal(p: SqlParameterValue, position: number): string {
  const type = typeof p?.type === "string" ? p.type.toUpperCase() : "";
  const value = p?.value;
  if (value === null || value === undefined) return "NULL";
  if (NUMERIC.has(type) || (type === "" && typeof value === "number")) {
    const n = Number(value);
    if (!Number.isFinite(n))
      throw new SqlError(`Parameter at position [${position}] is not a number: ${String(value)}`);
    return String(n);
  }
  if (type === "BOOLEAN") return value === true || value === "true" ? "TRUE" : "FALSE";
  if (type === "TIMESTAMP") {
    // Druid 33 takes a TIMESTAMP parameter as epoch milliseconds, or as text `yyyy-MM-dd HH:mm:ss`; text
    // with anything more (fractional seconds, a `T`, a zone) fails inside its planner with a
    // ClassCastException, answered as a 500 (docs/druid-api.md §3.6, observed on a real Druid 33).
    // Both name a wall-clock time in sqlTimeZone (2026-06-01T00:00Z's millis select as
    // 2026-06-01T00:00:00.000-07:00 under America/Los_Angeles): a literal without an offset, read in the zone.
    if (typeof value === "number" && Number.isFinite(value))
      return `TIMESTAMP '${new Date(value).toISOString().replace("T", " ").replace("Z", "")}'`;
    if (typeof value === "string" && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(value))
      return `TIMESTAMP '${value}'`;
    throw new SqlParameterCastError(
      "java.lang.ClassCastException: class java.lang.String cannot be cast to class java.lang.Number (java.lang.String and java.lang.Number are in module java.base of loader 'bootstrap')",
    );
  }
  return `'${String(value).replace(/'/g, "''")}'`;
}

/**
 * Binds dynamic parameters the way Druid's planner does, by position: each `?` outside string literals
 * and quoted identifiers becomes the parameter's literal. A `?` without a parameter is Druid's
 * "Parameter at position [n] is not bound" error.
 */
export function bindParameters(query: string, parameters: readonly SqlParameterValue[]): string {
  let out = "";
  let position = 0;
  for (let i = 0; i < query.length; i++) {
    const c = query[i] as string;
    if (c === "'" || c === '"') {
      const end = closingQuote(query, i, c);
      out += query.slice(i, end + 1);
      i = end;
    } else if (c === "?") {
      const p = parameters[position];
      if (p === undefined) throw new SqlError(`Parameter at position [${position}] is not bound`);
      out += literal(p, position);
      position++;
    } else {
      out += c;
    }
  }
  return out;
}

/** Index of the quote closing the one at `start` (a doubled quote is an escaped one). */
function closingQuote(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] !== quote) continue;
    if (text[i + 1] === quote) {
      i++;
      continue;
    }
    return i;
  }
  return text.length - 1;
}
