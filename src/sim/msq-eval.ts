import { inputJson } from "./json-value.js";
import { type SqlType, Timestamp, type Value } from "./sql.js";
import type { Expr } from "./sql-ast.js";

/**
 * What an MSQ ingestion adds to the Broker engine's value model (sql-eval.ts evaluates its expressions): input
 * columns typed by EXTERN's signature, the native type each SQL type is stored as, and the aggregates an
 * ingestion writes as metrics. Values are the Broker engine's: timestamps as Timestamp, BOOLEAN as LONG 1/0
 * (`docs/querying/sql-data-types.md`: BOOLEAN's runtime type is LONG), SQL NULL for missing values, and arrays as
 * Druid reads them (an `array<…>` column's values).
 */

export type Row = Record<string, unknown>;

/**
 * The SQL type of an input column's native type (`RowSignature.getRelDataType`: long → BIGINT, string →
 * VARCHAR…; a column named `__time` is a TIMESTAMP whatever its type, as Druid types its time column).
 */
export function sqlTypeOf(native: string, name?: string): SqlType {
  const t = native.toLowerCase();
  if (name === "__time") return "TIMESTAMP";
  if (t === "long") return "BIGINT";
  if (t === "double") return "DOUBLE";
  if (t === "float") return "FLOAT";
  if (t.startsWith("array")) return "ARRAY";
  // A nested column (sql-json.ts): the Broker engine's complex type.
  if (t === "complex<json>") return "OTHER";
  return "VARCHAR";
}

/** The native type a dimension of this SQL type is stored as (`Columns.getNativeType`). */
export function nativeOf(t: SqlType): "string" | "long" | "double" | "float" | "json" {
  if (t === "OTHER") return "json";
  if (t === "BIGINT" || t === "INTEGER" || t === "TIMESTAMP" || t === "DATE" || t === "BOOLEAN")
    return "long";
  if (t === "DOUBLE" || t === "DECIMAL") return "double";
  if (t === "FLOAT") return "float";
  return "string";
}

const NUMERIC = new Set<SqlType>([
  "BIGINT",
  "INTEGER",
  "DOUBLE",
  "FLOAT",
  "DECIMAL",
  "TIMESTAMP",
  "DATE",
  "BOOLEAN",
]);
export const isNumeric = (t: SqlType) => NUMERIC.has(t);

/** Aggregates an ingestion may write as metrics, and what they combine into (`docs/querying/sql-aggregations.md`). */
export const STORED_AGGREGATES = new Set([
  "COUNT",
  "SUM",
  "MIN",
  "MAX",
  // Sketches (sql-sketches.ts): DS_HLL/DS_THETA stored as sketch metrics, APPROX_COUNT_DISTINCT_DS_* finalized.
  "APPROX_COUNT_DISTINCT_DS_HLL",
  "APPROX_COUNT_DISTINCT_DS_THETA",
  "DS_HLL",
  "DS_THETA",
]);
/** Aggregates Druid has that the emulator does not store (sketches, first/last, AVG): refused as unsupported. */
const OTHER_AGGREGATES = new Set([
  "AVG",
  "EARLIEST",
  "LATEST",
  "EARLIEST_BY",
  "LATEST_BY",
  "ANY_VALUE",
  "APPROX_COUNT_DISTINCT",
  "APPROX_QUANTILE_DS",
  "DS_QUANTILES_SKETCH",
  "ARRAY_AGG",
  "STRING_AGG",
  "LISTAGG",
  "BIT_AND",
  "BIT_OR",
  "BIT_XOR",
  "STDDEV",
  "VARIANCE",
  "GROUPING",
]);

export function isAggregate(e: Expr): e is Extract<Expr, { k: "fn" }> {
  return e.k === "fn" && (STORED_AGGREGATES.has(e.name) || OTHER_AGGREGATES.has(e.name));
}

function num(v: unknown): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v !== "string") return null;
  const t = v.trim();
  if (t === "") return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/**
 * A column's input value as its SQL type: a long column's unreadable value is null (as Druid reads it), a JSON
 * boolean a long 1/0, an object its JSON text, an array column's value an array (a single value one of one).
 */
export function inputValue(v: unknown, type: SqlType): Value {
  if (v === undefined || v === null) return null;
  if (type === "OTHER") return inputJson(v);
  if (type === "BIGINT") {
    const x = num(v);
    return x === null ? null : Math.trunc(x);
  }
  if (type === "DOUBLE" || type === "FLOAT") return num(v);
  if (type === "TIMESTAMP") {
    const x = num(v) ?? (typeof v === "string" ? Date.parse(v) : Number.NaN);
    return Number.isFinite(x) ? new Timestamp(Math.trunc(x)) : null;
  }
  if (type === "ARRAY") return (Array.isArray(v) ? v : [v]) as unknown as Value;
  if (Array.isArray(v)) return v.map((x) => (x === null ? null : String(x))) as unknown as Value;
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}
