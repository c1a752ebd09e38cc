import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { type Backend, postgresBackend } from "../helpers/ledger-backends.js";

/**
 * Right after a backfill's tasks are inserted, PostgreSQL has no statistics for them until autovacuum comes
 * by (up to a minute later), and its planner, guessing one row per index, joined a claim's candidates
 * against every waiting task: 1.8 s a claim with 100,000 just inserted (docs/benchmarks.md). A job of
 * 10,000 tasks or more analyzes the table once it is committed; a small one leaves it to autovacuum.
 */
describe("a bulk job refreshes PostgreSQL's statistics of the tasks table", () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await postgresBackend();
  });
  afterAll(async () => {
    await backend?.close();
  });

  const tasks = (job: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({ id: `${job}-${i}`, kind: "k", exclusionKey: `${job}-${i}` }));

  it("10,000 tasks are analyzed once committed; 100 are not", async () => {
    const url = backend.freshUrl();
    const store = await openStore(url);
    try {
      // Autovacuum off for this table, so only segops can analyze it: the planner's row estimate
      // (reltuples) stays -1, never analyzed, unless segops did.
      await backend.raw(url, "ALTER TABLE tasks SET (autovacuum_enabled = false)");
      await store.createJob({ id: "small", kind: "backfill" }, tasks("small", 100));
      const [small] = await backend.raw(url, "SELECT reltuples FROM pg_class WHERE oid = 'tasks'::regclass");
      expect(Number(small?.reltuples)).toBe(-1);
      await store.createJob({ id: "big", kind: "backfill" }, tasks("big", 10_000));
      const [big] = await backend.raw(url, "SELECT reltuples FROM pg_class WHERE oid = 'tasks'::regclass");
      expect(Number(big?.reltuples)).toBe(10_100);
    } finally {
      await store.close();
    }
  });
});
