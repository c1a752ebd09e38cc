import { createHash } from "node:crypto";
import pg from "pg";
import { LedgerError, ledgerFailure, newerSchema, redactUrl, scrub } from "./errors.js";
import type { Executor, Query } from "./executor.js";
import type { DbRow } from "./sql/rows.js";
import { currentVersionSql, LATEST_VERSION, MIGRATIONS, metaTable, recordVersionSql } from "./sql/schema.js";
import type { Statement } from "./sql/statement.js";

/** Options of the PostgreSQL backend. */
export interface PostgresOptions {
  /** Connections in the pool. @default 10 */
  readonly poolSize?: number;
  /** Clock reading for `applied_at` of migrations. */
  readonly now: () => number;
}

/** A stable name per statement text, for pg's per-connection prepared statements. */
function statementName(text: string): string {
  return `segops_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Splits the segops-only `schema` parameter off a connection string (default schema `public`). */
export function parsePostgresUrl(url: string): {
  connectionString: string;
  schema: string;
  password?: string;
} {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new LedgerError(`invalid PostgreSQL ledger URL ${redactUrl(url)}`);
  }
  const schema = parsed.searchParams.get("schema") ?? "public";
  if (!SCHEMA_NAME.test(schema)) {
    throw new LedgerError(
      `invalid schema "${schema}" in the ledger URL: expected lower-case letters, digits and _ (at most 63)`,
    );
  }
  parsed.searchParams.delete("schema");
  const password = parsed.password ? decodeURIComponent(parsed.password) : undefined;
  return { connectionString: parsed.toString(), schema, ...(password ? { password } : {}) };
}

export class PostgresExecutor implements Executor {
  readonly dialect = "postgres" as const;
  readonly #pool: pg.Pool;
  readonly #secret: string | undefined;
  #poolError: Error | undefined;

  private constructor(pool: pg.Pool, secret: string | undefined) {
    this.#pool = pool;
    this.#secret = secret;
    // An idle client losing its connection must not crash the process; the next query reports it.
    pool.on("error", (error) => {
      this.#poolError = error;
    });
  }

  static async open(url: string, options: PostgresOptions): Promise<PostgresExecutor> {
    const { connectionString, schema, password } = parsePostgresUrl(url);
    const pool = new pg.Pool({
      connectionString,
      max: options.poolSize ?? 10,
      options: `-c search_path=${schema}`,
      application_name: "segops",
    });
    const executor = new PostgresExecutor(pool, password);
    try {
      await executor.#migrate(schema, options.now);
    } catch (error) {
      await pool.end().catch(() => undefined);
      // A schema-version refusal is already precise; anything else gets the (redacted) URL as context.
      if (error instanceof LedgerError && "found" in error.details) throw error;
      throw new LedgerError(
        `cannot open PostgreSQL ledger ${redactUrl(url)}: ${scrub((error as Error).message, password)}`,
        { url: redactUrl(url) },
      );
    }
    return executor;
  }

  /** Applies missing migrations under a transaction-scoped advisory lock, so concurrent starters queue. */
  async #migrate(schema: string, now: () => number): Promise<void> {
    await this.tx(async (q) => {
      await q({
        text: "SELECT pg_advisory_xact_lock(hashtext($1))",
        values: [`segops.ledger.migrate:${schema}`],
      });
      // Identifier validated by SCHEMA_NAME above; identifiers cannot be bound as parameters.
      await q({ text: `CREATE SCHEMA IF NOT EXISTS "${schema}"`, values: [] });
      await q({ text: metaTable("postgres"), values: [] });
      const rows = await q({ text: currentVersionSql, values: [] });
      const current = Number(rows[0]?.version ?? 0);
      if (current > LATEST_VERSION) throw newerSchema(current);
      for (const m of MIGRATIONS) {
        if (m.version <= current) continue;
        for (const text of m.statements("postgres")) await q({ text, values: [] });
        await q({ text: recordVersionSql, values: [m.version, m.description, now()] });
      }
    });
  }

  #fail(operation: string, error: unknown): never {
    throw ledgerFailure(operation, error, this.#secret);
  }

  query: Query = async (s: Statement) => {
    try {
      const result = await this.#pool.query({
        text: s.text,
        values: s.values as unknown[],
        ...(s.prepare ? { name: statementName(s.text) } : {}),
      });
      return result.rows as DbRow[];
    } catch (error) {
      this.#fail("query", this.#poolError ?? error);
    }
  };

  async tx<T>(fn: (query: Query) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      this.#fail("connect", error);
    }
    const q: Query = async (s) => (await client.query(s.text, s.values as unknown[])).rows as DbRow[];
    let broken = false;
    // A checked-out client whose connection drops between two queries (PostgreSQL restarted, the session
    // terminated) emits 'error'; the pool only listens on idle clients, and an unheard 'error' ends the
    // process. The next query of the transaction fails and reports it; the client is then discarded.
    const onError = () => {
      broken = true;
    };
    client.on("error", onError);
    try {
      await client.query("BEGIN");
      const result = await fn(q);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      try {
        await client.query("ROLLBACK");
      } catch {
        broken = true;
      }
      if (error instanceof LedgerError || this.isConflict(error)) throw error;
      this.#fail("transaction", error);
    } finally {
      client.off("error", onError);
      client.release(broken);
    }
  }

  isConflict(error: unknown): boolean {
    const code = (error as { code?: unknown } | null)?.code;
    // unique_violation (a claim met a running row another host committed after its snapshot),
    // deadlock_detected (many-row writes locking rows in different orders), serialization_failure
    return code === "23505" || code === "40P01" || code === "40001";
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
