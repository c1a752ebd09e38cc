import type { DbRow } from "./sql/rows.js";
import type { Statement } from "./sql/statement.js";
import type { Dialect } from "./store.js";

/** Runs one statement and returns its rows. */
export type Query = (statement: Statement) => Promise<DbRow[]>;

/**
 * What a backend provides to the shared store logic: single statements, transactions, and a way to
 * recognise a unique-index violation (the exclusion index refusing a second running task of a key).
 */
export interface Executor {
  readonly dialect: Dialect;
  query: Query;
  /** Runs `fn` in one write transaction (SQLite `BEGIN IMMEDIATE`, Postgres `BEGIN`); rolls back on error. */
  tx<T>(fn: (query: Query) => Promise<T>): Promise<T>;
  /**
   * The statement lost to a concurrent transaction — the exclusion index refused a second running task
   * of a key, or (Postgres) a deadlock or serialization failure rolled it back: safe to retry from a fresh
   * snapshot.
   */
  isConflict(error: unknown): boolean;
  /** Throws a LedgerError when the storage under this connection is no longer the one it opened. */
  checkIdentity?(): void;
  close(): Promise<void>;
}
