import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { EventFeed, JobWaiters } from "../../src/serve/feed.js";

/** The change feed and the long-poll waiters, on a real SQLite ledger and a manual clock. */

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
});

async function setup() {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  store = await openStore("sqlite::memory:", { clock });
  await store.createJob({ id: "job", kind: "backfill" }, [{ id: "job/a", kind: "k" }]);
  const feed = new EventFeed({ store, clock, tickMs: 100 });
  await feed.start();
  const shutdown = new AbortController();
  const waiters = new JobWaiters({ store, feed, clock, shutdown: shutdown.signal });
  return { clock, feed, waiters, shutdown, s: store };
}

async function finish(s: Store, clock: ManualClock) {
  const [row] = await s.claim({ kind: "k", owner: "me", leaseMs: 60_000, limit: 1 });
  await s.transition({ id: "job/a", owner: "me", version: row!.version }, { to: "done", reason: "ok" });
  await s.setJobState("job", "done", "every partition finished", "me");
  await clock.advance(100);
}

describe("JobWaiters", () => {
  it("answers every waiter of a job as soon as the feed shows its end, and leaves no listener behind", async () => {
    const { clock, feed, waiters, shutdown, s } = await setup();
    const client = new AbortController();
    const parked = Promise.all([waiters.wait("job", 60_000, client.signal), waiters.wait("job", 60_000)]);
    for (let i = 0; i < 50 && waiters.waiting < 2; i++) await new Promise((r) => setImmediate(r));
    expect(waiters.waiting).toBe(2);
    await finish(s, clock);
    const [a, b] = await parked;
    expect(a?.ended).toBe(true);
    expect(b?.job.state).toBe("done");
    expect(waiters.waiting).toBe(0);
    // Regression: a wait must not leave a listener on the long-lived signals (one per request, forever).
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);
    expect(getEventListeners(client.signal, "abort")).toHaveLength(0);
    await feed.stop();
  });

  it("answers at the timeout with ended: false, at once on the drain signal, and null for no such job", async () => {
    const { clock, feed, waiters, shutdown } = await setup();
    const timedOut = waiters.wait("job", 1000);
    for (let i = 0; i < 50 && waiters.waiting < 1; i++) await new Promise((r) => setImmediate(r));
    await clock.advance(1000);
    expect((await timedOut)?.ended).toBe(false);
    const draining = waiters.wait("job", 60_000);
    for (let i = 0; i < 50 && waiters.waiting < 1; i++) await new Promise((r) => setImmediate(r));
    shutdown.abort();
    expect((await draining)?.ended).toBe(false);
    expect(await waiters.wait("nope", 1000)).toBeNull();
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);
    await feed.stop();
  });
});
