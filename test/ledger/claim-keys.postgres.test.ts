import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { markClaimed } from "../../src/ledger/sql/claim.js";
import type { Store } from "../../src/ledger/store.js";
import { type Backend, postgresBackend } from "../helpers/ledger-backends.js";

/**
 * Two hosts claiming tasks of the same exclusion key at once on a shared PostgreSQL ledger. Before the key
 * locks, the second claim inserted a `tasks_running_key` entry the first had inserted uncommitted and
 * waited on it; two such claims in opposite key orders waited for each other until the deadlock detector
 * rolled one back a second later (CI saw a lease dated from before that wait lapse under a fast test clock).
 */
describe("claims on PostgreSQL never wait for each other's exclusion keys", () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = await postgresBackend();
  });
  afterAll(async () => {
    await backend?.close();
  });

  /**
   * Resolves with the claims' answer, or fails as soon as one of segops' server backends waits on a lock
   * instead (each test file has a cluster of its own, so those backends are this test's).
   */
  async function withoutWaiting<T>(work: Promise<T>, watcher: string): Promise<T> {
    let settled = false;
    const result = work.finally(() => {
      settled = true;
    });
    for (;;) {
      const waiting = await backend.raw(
        watcher,
        "SELECT query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = 'segops'",
      );
      if (waiting.length > 0) {
        result.catch(() => undefined); // the claims fail too once their stores close
        throw new Error(`a claim waits on another transaction's lock: ${String(waiting[0]?.query)}`);
      }
      if (settled) return result;
      await new Promise((r) => setImmediate(r));
    }
  }

  it("a claim leaves a key another claim is taking, uncommitted, for later and takes the rest at once", async () => {
    const url = backend.freshUrl();
    const watcher = backend.freshUrl();
    const store: Store = await openStore(url);
    try {
      await store.createJob({ id: "job", kind: "backfill" }, [
        { id: "a1", kind: "k", exclusionKey: "A" },
        { id: "a2", kind: "k", exclusionKey: "A" },
        { id: "b1", kind: "k", exclusionKey: "B" },
        { id: "free", kind: "k" },
      ]);
      // Another host, mid-claim: its statement took a1 (and key A's lock); its transaction is still open.
      const other = markClaimed(
        "postgres",
        ["a1"],
        { kind: "k", owner: "other", leaseMs: 60_000, limit: 1 },
        Date.now(),
      );
      await backend.raw(url, "BEGIN");
      expect((await backend.raw(url, other.text, [...other.values])).map((r) => r.id)).toEqual(["a1"]);

      const claimed = await withoutWaiting(
        store.claim({ kind: "k", owner: "me", leaseMs: 60_000, limit: 10 }),
        watcher,
      );
      expect(claimed.map((t) => t.id).sort()).toEqual(["b1", "free"]);

      await backend.raw(url, "COMMIT");
      // Once the other host committed, its running a1 holds key A: a2 stays waiting.
      expect(await store.claim({ kind: "k", owner: "me", leaseMs: 60_000, limit: 10 })).toEqual([]);
      expect((await store.getTask("a2"))?.state).toBe("new");
    } finally {
      await backend.raw(url, "ROLLBACK").catch(() => undefined);
      await store.close();
    }
  });

  it("many claims racing over the same keys each take a key at most once and never wait", async () => {
    const url = backend.freshUrl();
    const watcher = backend.freshUrl();
    const stores = await Promise.all(Array.from({ length: 4 }, () => openStore(url)));
    try {
      // Rounds of fresh keys: each round is another chance for the claims to meet in opposite orders.
      for (let round = 0; round < 10; round++) {
        const keys = ["A", "B", "C", "D", "E"].map((k) => `${k}${round}`);
        await stores[0]!.createJob(
          { id: `job${round}`, kind: "backfill" },
          Array.from({ length: 40 }, (_, i) => ({
            id: `r${round}t${i}`,
            kind: "k",
            exclusionKey: keys[i % keys.length],
          })),
        );
        const claims = await withoutWaiting(
          Promise.all(
            stores.map((s, i) =>
              s.claim({ kind: "k", owner: `host${i}`, leaseMs: 60_000, limit: 10, jobIds: [`job${round}`] }),
            ),
          ),
          watcher,
        );
        // Every key is taken by exactly one host: none twice, and none lost (the claims that found a key
        // locked left it; the one holding the lock took it).
        expect(
          claims
            .flat()
            .map((t) => t.exclusionKey)
            .sort(),
        ).toEqual(keys);
      }
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it("a claim that meets the first tasks locked by another claim takes the next ones, at once", async () => {
    const url = backend.freshUrl();
    const watcher = backend.freshUrl();
    const store: Store = await openStore(url);
    try {
      await store.createJob(
        { id: "job", kind: "backfill" },
        Array.from({ length: 30 }, (_, i) => ({ id: `t${String(i).padStart(2, "0")}`, kind: "k" })),
      );
      // Another host, mid-claim: it holds the first ten in claim order, uncommitted.
      await backend.raw(url, "BEGIN");
      await backend.raw(url, "SELECT id FROM tasks ORDER BY run_at, id LIMIT 10 FOR UPDATE");
      const claimed = await withoutWaiting(
        store.claim({ kind: "k", owner: "me", leaseMs: 60_000, limit: 10 }),
        watcher,
      );
      expect(claimed.map((t) => t.id)).toEqual(Array.from({ length: 10 }, (_, i) => `t${i + 10}`));
    } finally {
      await backend.raw(url, "ROLLBACK").catch(() => undefined);
      await store.close();
    }
  });
});
