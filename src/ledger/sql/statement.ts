import type { Dialect } from "../store.js";

/** One parameterised SQL statement. Placeholders are `$1…$n` in both dialects (better-sqlite3 binds them by name). */
export interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
  /** Hot path: Postgres keeps it prepared per connection (parsed and planned once). */
  readonly prepare?: boolean;
}

/** Collects parameter values and hands out their placeholders, so values never enter SQL text. */
export class Params {
  readonly values: unknown[] = [];
  constructor(readonly dialect: Dialect) {}

  /** Adds a value and returns its placeholder (`$n`). Booleans become 0/1 on SQLite. */
  add(value: unknown): string {
    this.values.push(this.dialect === "sqlite" && typeof value === "boolean" ? (value ? 1 : 0) : value);
    return `$${this.values.length}`;
  }

  /** A predicate `column IN (ids…)` with the list bound as one parameter. */
  inList(column: string, ids: readonly string[]): string {
    return this.dialect === "postgres"
      ? `${column} = ANY(${this.add([...ids])}::text[])`
      : `${column} IN (SELECT value FROM json_each(${this.add(JSON.stringify(ids))}))`;
  }

  /** A predicate `column IN (numbers…)` with the list bound as one parameter. */
  inNumbers(column: string, values: readonly number[]): string {
    return this.dialect === "postgres"
      ? `${column} = ANY(${this.add([...values])}::bigint[])`
      : `${column} IN (SELECT value FROM json_each(${this.add(JSON.stringify(values))}))`;
  }

  statement(text: string): Statement {
    return { text, values: this.values };
  }

  /** A hot-path statement with a fixed text, kept prepared on Postgres connections. */
  prepared(text: string): Statement {
    return { text, values: this.values, prepare: true };
  }
}

/** States a driver may claim from; anything else is terminal or owned. */
export const CLAIMABLE = "('new', 'suspended')";
export const NON_TERMINAL = "('new', 'running', 'suspended')";
