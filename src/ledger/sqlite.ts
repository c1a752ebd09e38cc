import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { LedgerError, ledgerFailure, NoLedgerError, newerSchema } from "./errors.js";
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
  /** Refuse (with {@link NoLedgerError}) instead of creating a missing database file. */
  readonly mustExist?: boolean;
}

function osReason(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e.code ? `${e.code}: ${e.message.replace(/^[A-Z]+: /, "")}` : String(error);
}

/**
 * `mkdir -p` one level at a time. Node's `mkdirSync(…, { recursive: true })` loops forever where a
 * mkdir keeps failing with ENOENT under an existing parent (e.g. anything under /proc).
 */
export function ensureDirectory(dir: string): void {
  const missing: string[] = [];
  for (let d = resolve(dir); ; ) {
    const found = statSync(d, { throwIfNoEntry: false });
    if (found?.isDirectory()) break;
    if (found) throw Object.assign(new Error(`not a directory, ${d}`), { code: "ENOTDIR" });
    missing.push(d);
    const parent = dirname(d);
    if (parent === d) break;
    d = parent;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
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
  /** The file this connection holds, to notice it being deleted or replaced under a running process. */
  readonly #file: { path: string; dev: number; ino: number } | null;

  private constructor(
    db: Database.Database,
    queue: { tail: Promise<unknown> },
    file: { path: string; dev: number; ino: number } | null,
  ) {
    this.#db = db;
    this.#queue = queue;
    this.#file = file;
  }

  /**
   * A deleted ledger file stays writable through this open connection (the inode lives on), and a file
   * put in its place is another ledger: either way this process's work would be recorded nowhere anyone
   * can read. Throws a LedgerError naming what happened.
   */
  checkIdentity(): void {
    if (!this.#file) return;
    const { path, dev, ino } = this.#file;
    const now = statSync(path, { throwIfNoEntry: false });
    if (!now)
      throw new LedgerError(
        `the SQLite ledger ${path} was deleted while this process used it: what it recorded since is lost; restore the file (or start again) and rerun`,
        { path, reason: "deleted" },
      );
    if (now.dev !== dev || now.ino !== ino)
      throw new LedgerError(
        `the SQLite ledger ${path} was replaced by another file while this process used it: rerun against the ledger you mean`,
        { path, reason: "replaced" },
      );
  }

  static open(path: string, options: SqliteOptions): SqliteExecutor {
    if (path !== ":memory:") {
      if (options.mustExist && !existsSync(path)) throw new NoLedgerError(path);
      try {
        ensureDirectory(dirname(path));
      } catch (error) {
        throw new LedgerError(
          `cannot create the directory of the SQLite ledger ${path}: ${osReason(error)}`,
          { path },
        );
      }
    }
    let db: Database.Database;
    try {
      db = new Database(path, options.mustExist ? { fileMustExist: true } : {});
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
    const stat = path === ":memory:" ? undefined : statSync(path, { throwIfNoEntry: false });
    const file = stat ? { path, dev: stat.dev, ino: stat.ino } : null;
    const executor = new SqliteExecutor(db, queue, file);
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
