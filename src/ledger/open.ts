import { type Clock, systemClock } from "../core/clock.js";
import { LedgerError, redactUrl } from "./errors.js";
import { PostgresExecutor } from "./postgres.js";
import { SqlStore } from "./sql-store.js";
import { SqliteExecutor } from "./sqlite.js";
import type { Store } from "./store.js";

/** Options of `openStore`. */
export interface OpenStoreOptions {
  /** Source of every timestamp written. @default systemClock */
  readonly clock?: Clock;
  /** PostgreSQL pool size. @default 10 */
  readonly poolSize?: number;
  /** SQLite: how long to wait for another process's write lock. @default 5000 */
  readonly busyTimeoutMs?: number;
}

/** The embedded default ledger location (relative to the working directory). */
export const DEFAULT_LEDGER_URL = "sqlite:.segops/ledger.db";

/**
 * Opens a ledger and applies pending migrations.
 * - `sqlite:PATH` (e.g. `sqlite:.segops/ledger.db`, `sqlite::memory:`)
 * - `postgres://user:pass@host:5432/db` or `postgresql://…`, optional `?schema=name` (default `public`)
 *
 * @example const store = await openStore("sqlite:.segops/ledger.db");
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const clock = options.clock ?? systemClock;
  const now = () => clock.now();
  if (url.startsWith("sqlite:")) {
    const path = url.slice("sqlite:".length).replace(/^\/\//, "");
    if (path === "")
      throw new LedgerError("empty SQLite ledger path: expected sqlite:PATH or sqlite::memory:");
    const busy = options.busyTimeoutMs;
    return new SqlStore(
      SqliteExecutor.open(path, { now, ...(busy !== undefined ? { busyTimeoutMs: busy } : {}) }),
      clock,
    );
  }
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const pool = options.poolSize;
    return new SqlStore(
      await PostgresExecutor.open(url, { now, ...(pool !== undefined ? { poolSize: pool } : {}) }),
      clock,
    );
  }
  throw new LedgerError(
    `unsupported ledger URL ${redactUrl(url)}: expected sqlite:PATH, sqlite::memory: or postgres://…`,
  );
}
