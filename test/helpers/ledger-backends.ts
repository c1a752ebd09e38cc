import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { startPostgres, type TestPostgres } from "./postgres.js";

/** A ledger backend the contract suite runs against, plus raw SQL access to simulate other actors. */
export interface Backend {
  readonly name: "sqlite" | "postgres";
  /** A URL of a fresh, empty ledger (its own file or schema). */
  freshUrl(): string;
  /** Runs raw SQL (`$1…` placeholders) against the ledger at `url`, e.g. to backdate a lease. */
  raw(url: string, text: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export function sqliteBackend(): Backend {
  const dir = mkdtempSync(join(tmpdir(), "segops-ledger-"));
  let n = 0;
  return {
    name: "sqlite",
    freshUrl: () => `sqlite:${join(dir, `ledger-${++n}.db`)}`,
    async raw(url, text, values = []) {
      const db = new Database(url.slice("sqlite:".length));
      try {
        db.pragma("busy_timeout = 5000");
        const stmt = db.prepare(text);
        const params = Object.fromEntries(values.map((v, i) => [String(i + 1), v]));
        if (stmt.reader) return stmt.all(params) as Record<string, unknown>[];
        stmt.run(params);
        return [];
      } finally {
        db.close();
      }
    },
    async close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function postgresBackend(): Promise<Backend> {
  const server: TestPostgres = await startPostgres();
  const clients = new Map<string, pg.Client>();
  return {
    name: "postgres",
    freshUrl: () => server.freshUrl(),
    async raw(url, text, values = []) {
      let client = clients.get(url);
      if (!client) {
        const u = new URL(url);
        const schema = u.searchParams.get("schema") ?? "public";
        u.searchParams.delete("schema");
        client = new pg.Client({ connectionString: u.toString(), options: `-c search_path=${schema}` });
        await client.connect();
        clients.set(url, client);
      }
      return (await client.query(text, values)).rows as Record<string, unknown>[];
    },
    async close() {
      for (const c of clients.values()) await c.end();
      await server.stop();
    },
  };
}
