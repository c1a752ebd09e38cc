import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { LedgerError, ledgerFailure } from "./errors.js";
import type { Executor, Query } from "./executor.js";
import type { DbRow } from "./sql/rows.js";
import { currentVersionSql, LATEST_VERSION, MIGRATIONS, metaTable, recordVersionSql } from "./sql/schema.js";
import type { Statement } from "./sql/statement.js";

/** Options of the SQLite backend. */
export interface SqliteOptions {
  /** How long a writer waits for another process's write lock before failing. @default 5000 */
  readonly busyTimeoutMs?: number;
  /** Clock reading for `applied_at` of migrations. */
  readonly now: () => number;
}

const BEGIN: Statement = { text: "BEGIN IMMEDIATE", values: [] };
const COMMIT: Statement = { text: "COMMIT", values: [] };
const QUEUES = new Map<string, { tail: Promise<unknown> }>();

function bind(values: readonly unknown[]): Record<string, unknown> {
  const named: Record<string, unknown> = {};
  values.forEach((v, i) => {
    named[String(i + 1)] = v;
  });
  return named;
}

/**
 * better-sqlite3 is synchronous and one connection is shared by every async caller of this process,
 * so statements and transactions go through one queue: nothing can slip into another caller's
 * transaction between its awaits. Other processes are kept apart by WAL + busy_timeout + BEGIN IMMEDIATE.
 */
export class SqliteExecutor implements Executor {
  readonly dialect = "sqlite" as const;
  readonly #db: Database.Database;
  readonly #cache = new Map<string, Database.Statement>();
  readonly #queue: { tail: Promise<unknown> };

  private constructor(db: Database.Database, queue: { tail: Promise<unknown> }) {
    this.#db = db;
    this.#queue = queue;
  }

  static open(path: string, options: SqliteOptions): SqliteExecutor {
    let db: Database.Database;
    try {
      if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
      db = new Database(path);
      db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
      if (path !== ":memory:") db.pragma("journal_mode = WAL");
      // Checkpoint (and fsync) every ~16 MB of WAL rather than every 4 MB: a transition writes several
      // index pages, and the default made checkpoint fsyncs the main cost of committing.
      db.pragma("wal_autocheckpoint = 4000");
      db.pragma("synchronous = NORMAL");
      db.pragma("foreign_keys = ON");
    } catch (error) {
      throw new LedgerError(`cannot open SQLite ledger ${path}: ${(error as Error).message}`, { path });
    }
    // One queue per database file in this process: two stores on one file must not interleave, or the
    // second's BEGIN IMMEDIATE would block the event loop on a lock only this same thread can release.
    const key = path === ":memory:" ? Symbol(path) : resolve(path);
    let queue = typeof key === "string" ? QUEUES.get(key) : undefined;
    if (!queue) {
      queue = { tail: Promise.resolve() };
      if (typeof key === "string") QUEUES.set(key, queue);
    }
    const executor = new SqliteExecutor(db, queue);
    executor.#migrate(options.now);
    return executor;
  }

  #migrate(now: () => number): void {
    const db = this.#db;
    try {
      db.exec("BEGIN IMMEDIATE");
      try {
        db.exec(metaTable("sqlite"));
        const current = Number((db.prepare(currentVersionSql).get() as DbRow).version);
        if (current > LATEST_VERSION) throw newerSchema(current);
        for (const m of MIGRATIONS) {
          if (m.version <= current) continue;
          for (const sql of m.statements("sqlite")) db.exec(sql);
          db.prepare(recordVersionSql).run(bind([m.version, m.description, now()]));
        }
        db.exec("COMMIT");
      } catch (error) {
        db.exec("ROLLBACK");
        throw error;
      }
    } catch (error) {
      db.close();
      throw ledgerFailure("migration", error);
    }
  }

  #run(s: Statement): DbRow[] {
    let prepared = this.#cache.get(s.text);
    if (!prepared) {
      prepared = this.#db.prepare(s.text);
      this.#cache.set(s.text, prepared);
    }
    const params = bind(s.values);
    if (prepared.reader) return prepared.all(params) as DbRow[];
    prepared.run(params);
    return [];
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#queue.tail.then(fn);
    this.#queue.tail = result.catch(() => undefined);
    return result;
  }

  query: Query = (s) => this.#serial(async () => this.#run(s));

  tx<T>(fn: (query: Query) => Promise<T>): Promise<T> {
    return this.#serial(async () => {
      this.#run(BEGIN);
      try {
        const result = await fn(async (s) => this.#run(s));
        this.#run(COMMIT);
        return result;
      } catch (error) {
        if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  isConflict(error: unknown): boolean {
    // BEGIN IMMEDIATE serialises writers, so the only conflict is the exclusion index.
    const code = (error as { code?: unknown } | null)?.code;
    return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
  }

  async close(): Promise<void> {
    await this.#serial(async () => {
      if (this.#db.open) this.#db.close();
    });
  }
}

export function newerSchema(found: number): LedgerError {
  return new LedgerError(
    `the ledger's schema is version ${found}, newer than this segops supports (${LATEST_VERSION}): upgrade segops, or use another ledger`,
    { found, supported: LATEST_VERSION },
  );
}
