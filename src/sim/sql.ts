import { instantText } from "./instant-text.js";
import type { JsonValue } from "./json-value.js";

/**
 * The values, types and errors of the emulator's Broker SQL (docs/druid-api.md §3.6). The engine is split by
 * role: sql-lex.ts (tokens), sql-parse.ts (text → query tree, sql-ast.ts), sql-eval.ts (expressions → typed
 * evaluators over sql-env.ts's rows and groups), sql-functions.ts (scalar functions), sql-aggregates.ts
 * (aggregators), sql-exec.ts (FROM/JOIN/WHERE/GROUP BY/HAVING/SELECT/ORDER BY/LIMIT over row arrays, and EXPLAIN). SQL the emulator cannot run is an `SqlError` that says so; what Druid
 * itself refuses is refused with Druid's message and position.
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
 * a 400 `general` error with the reason): the emulator would answer it, Druid does not. Most reasons come
 * with persona USER; some (LATEST without `__time`) with ADMIN, as a real Druid 33 answered.
 */
export class SqlPlanningError extends Error {
  constructor(
    message: string,
    readonly persona: "USER" | "ADMIN" = "USER",
  ) {
    super(message);
  }
}

/**
 * An error raised inside execution, in the shape Druid 33 answered it: `general` (500 ADMIN UNCATEGORIZED,
 * e.g. `/ by zero`), `defensive` (500 DEVELOPER DEFENSIVE, a function's unexpected exception) or `legacy`
 * (500 `legacyQueryException`, e.g. a scalar subquery with more than one row).
 */
export class SqlRuntimeError extends Error {
  constructor(
    message: string,
    readonly shape: "general" | "defensive" | "legacy" = "general",
  ) {
    super(message);
  }
}

/** SQL the emulator does not implement (Druid may well run it), told apart from what Druid refuses. */
export class UnsupportedSqlError extends SqlError {}

/** SQL the emulator does not implement (Druid may well run it): the message says so. */
export function unsupported(what: string, span?: [number, number]): SqlError {
  return new UnsupportedSqlError(`${what} is not supported by the emulator`, span);
}

/** Timestamps are their own type so they compare by time and print as ISO (Druid's object format). */
export class Timestamp {
  constructor(readonly ms: number) {}
  toJSON(): string {
    return instantText(this.ms);
  }
}

/** A `COMPLEX<json>` value or a JSON function's array is a JsonValue (sql-json.ts). */
export type Value = string | number | null | Timestamp | JsonValue;
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
  | "DATE"
  | "BOOLEAN"
  | "NULL"
  /** An array (Druid's ARRAY<STRING>, ARRAY<LONG>…: an EXTERN column typed `array<…>`), its values JS arrays. */
  | "ARRAY"
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
    case "DATE":
    case "BOOLEAN":
      return "LONG";
    case "DOUBLE":
    case "DECIMAL":
      return "DOUBLE";
    case "FLOAT":
      return "FLOAT";
    // The one complex type the emulator's SQL makes: nested JSON (sql-json.ts); its arrays are JSON functions'.
    case "OTHER":
      return "COMPLEX<json>";
    case "ARRAY":
      return "ARRAY<STRING>";
    default:
      return "STRING";
  }
}

/** 1-based line and column of a query offset (Druid's error context). */
export function position(sql: string, offset: number): { line: number; column: number } {
  const before = sql.slice(0, offset).split("\n");
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

export interface SqlResult {
  columns: Column[];
  rows: OutValue[][];
}
