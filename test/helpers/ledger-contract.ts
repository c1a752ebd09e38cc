import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { drain } from "../../src/driver/drain.js";
import { Driver, type DriverOptions } from "../../src/driver/driver.js";
import type { Runner, TaskContext } from "../../src/driver/runner.js";
import { TaskAbort, TaskDefer, TaskProgress, TaskRetry } from "../../src/driver/signals.js";
import { openStore } from "../../src/ledger/open.js";
import { LATEST_VERSION } from "../../src/ledger/sql/schema.js";
import type { RenewLeasesResult, Store } from "../../src/ledger/store.js";
import type { NewTask, TaskRow } from "../../src/ledger/types.js";
import type { Backend } from "./ledger-backends.js";

const T0 = Date.UTC(2026, 0, 1);
const LEASE = 60_000;

export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * The driver contract (docs/ledger-and-driver.md, "Ledger rules"), run unchanged against every backend. Assertions read the
 * committed row back from the store, never the caller's copy. Time is a ManualClock: no real sleeps.
 */
export function ledgerContract(makeBackend: () => Promise<Backend> | Backend): void {
  let backend: Backend;
  let clock: ManualClock;
  let url: string;
  let store: Store;
  let drivers: Driver[];
  let finished: string[];
  let gates: Array<() => void> = [];
  /** A gate a test opens; afterEach opens any left closed so a failed test cannot hang the suite. */
  const hold = () => {
    const d = deferred();
    gates.push(() => d.resolve());
    return d;
  };

  beforeAll(async () => {
    backend = await makeBackend();
  });
  afterAll(async () => {
    await backend?.close();
  });
  beforeEach(async () => {
    clock = new ManualClock(T0);
    url = backend.freshUrl();
    store = await openStore(url, { clock });
    drivers = [];
    finished = [];
  });
  afterEach(async () => {
    for (const open of gates) open();
    gates = [];
    for (const d of drivers) await d.stop().catch(() => undefined);
    await store.close().catch(() => undefined);
  });

  const task = (id: string, extra: Partial<NewTask> = {}): NewTask => ({ id, kind: "k", ...extra });
  const seed = (...tasks: NewTask[]) => store.createJob({ id: "job", kind: "backfill" }, tasks);
  const row = async (id: string): Promise<TaskRow> => {
    const t = await store.getTask(id);
    if (!t) throw new Error(`no task ${id}`);
    return t;
  };

  /** Lets the driver work: yields to I/O and moves the manual clock `step` ms per round. */
  /**
   * Waits for a condition another driver makes true, moving the test clock by `step` between checks. Each
   * round yields a macrotask, so database I/O gets its turn however loaded the machine is: a count of
   * microtask rounds alone can run out before a PostgreSQL round trip comes back. Bounded, not timed.
   */
  async function until(check: () => Promise<boolean> | boolean, what: string, step = 0): Promise<void> {
    const giveUp = Date.now() + 60_000;
    for (let i = 0; ; i++) {
      if (await check()) return;
      if (i >= 2000 && Date.now() > giveUp) break;
      await clock.advance(step);
      if (i >= 100) await new Promise((r) => setTimeout(r, 1));
    }
    throw new Error(`timed out waiting for: ${what}`);
  }
  const stateIs = (id: string, state: TaskRow["state"]) => async () => (await row(id)).state === state;

  function spec(overrides: Partial<Runner> & Pick<Runner, "handler">): Runner {
    return {
      kind: "k",
      concurrency: 2,
      maxRetry: 3,
      backoff: (retry) => retry * 1000,
      onFinish: (t) => {
        finished.push(t.id);
      },
      ...overrides,
    };
  }

  function drive(runner: Runner, options: Partial<DriverOptions> = {}): Driver {
    const d = new Driver({
      store,
      runners: [runner],
      clock,
      leaseMs: LEASE,
      pollMs: 100,
      random: () => 0.5,
      ...options,
    });
    d.start();
    drivers.push(d);
    return d;
  }

  describe("ledger", () => {
    it("re-creating a job with the same id returns the stored job unchanged", async () => {
      const first = await seed(task("a"), task("b"));
      clock.set(T0 + 5000);
      const again = await store.createJob({ id: "job", kind: "other", options: { x: 1 } }, [task("c")]);
      expect(first.created).toBe(true);
      expect(again.created).toBe(false);
      expect(again.job).toEqual(first.job);
      expect((await store.listTasks("job")).map((t) => t.id)).toEqual(["a", "b"]);
      expect(await store.listEvents({ jobId: "job" })).toHaveLength(3);
    });

    it("listTasks reads a job's tasks in id order, whole or a page after an id", async () => {
      await seed(task("c"), task("a"), task("d"), task("b"));
      await store.createJob({ id: "other", kind: "k", options: {} }, [task("a0"), task("b0")]);
      const ids = async (page?: { afterId?: string; limit?: number }) =>
        (await store.listTasks("job", page)).map((t) => t.id);
      expect(await ids()).toEqual(["a", "b", "c", "d"]);
      expect(await ids({ limit: 3 })).toEqual(["a", "b", "c"]);
      expect(await ids({ afterId: "b", limit: 1 })).toEqual(["c"]);
      expect(await ids({ afterId: "b" })).toEqual(["c", "d"]);
      expect(await ids({ afterId: "d", limit: 10 })).toEqual([]);
    });

    it("two stores opening one fresh ledger at once apply each migration exactly once", async () => {
      const fresh = backend.freshUrl();
      const [a, b] = await Promise.all([openStore(fresh, { clock }), openStore(fresh, { clock })]);
      await a.createJob({ id: "j", kind: "x" }, [task("t")]);
      expect((await b.getTask("t"))?.state).toBe("new");
      const versions = await backend.raw(fresh, "SELECT version FROM segops_schema ORDER BY version");
      expect(versions.map((r) => Number(r.version))).toEqual(
        Array.from({ length: LATEST_VERSION }, (_, i) => i + 1),
      );
      await Promise.all([a.close(), b.close()]);
    });

    it("a ledger whose schema is newer than this code is refused with a Ledger error", async () => {
      await backend.raw(
        url,
        "INSERT INTO segops_schema (version, description, applied_at) VALUES ($1, $2, $3)",
        [LATEST_VERSION + 1, "from the future", T0],
      );
      await expect(openStore(url, { clock })).rejects.toMatchObject({
        code: "Ledger",
        message: expect.stringMatching(/newer than this segops supports/),
      });
    });

    it("a claim takes due tasks only, so a task that is not due never stalls the others", async () => {
      await seed(task("later", { runAt: T0 + 60_000 }), task("now"));
      const claimed = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 10 });
      expect(claimed.map((t) => t.id)).toEqual(["now"]);
      expect(await row("later")).toMatchObject({ state: "new", leaseOwner: null, version: 0 });
      expect(await row("now")).toMatchObject({
        state: "running",
        leaseOwner: "me",
        leaseExpiresAt: T0 + LEASE,
      });
    });

    it("work already started is claimed before new work, so a crash's interrupted tasks resume first", async () => {
      await seed(
        ...Array.from({ length: 5 }, (_, i) => task(`new${i}`)),
        task("started", { runAt: T0 + 10 }),
      );
      await clock.advance(10);
      const [first] = await store.claim({
        kind: "k",
        owner: "dead-host",
        leaseMs: 1000,
        limit: 1,
        ids: ["started"],
      });
      expect(first?.id).toBe("started");
      await clock.advance(2000); // the dead host's lease expires
      const due = await store.listDue({ kind: "k", limit: 1 });
      expect(due.map((t) => t.id)).toEqual(["started"]);
      const claimed = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 2 });
      expect(claimed.map((t) => t.id)).toEqual(["started", "new0"]);
    });

    it("listDue and claim read every rank of the claim order, each cut at the limit: canceled, started by due time, then new", async () => {
      // Ten new tasks due first (T0), so a read that cut them before ranking would hide the others.
      await seed(
        ...Array.from({ length: 10 }, (_, i) => task(`new${i}`)),
        task("suspended-late", { runAt: T0 + 30 }),
        task("suspended-early", { runAt: T0 + 10 }),
        task("expired", { runAt: T0 + 20 }),
        task("canceled-later", { runAt: T0 + 3_600_000 }),
        task("canceled-now", { runAt: T0 + 5 }),
        task("blocked", { runAt: T0 + 40, exclusionKey: "held" }),
        task("holder", { runAt: T0 + 40, exclusionKey: "held" }),
      );
      await clock.advance(40);
      // Taken and handed back: suspended, due at their own times.
      for (const [id, runAt] of [
        ["suspended-early", T0 + 10],
        ["suspended-late", T0 + 30],
      ] as const) {
        const [held] = await store.claim({ kind: "k", owner: "a", leaseMs: LEASE, limit: 1, ids: [id] });
        expect(
          await store.transition(
            { id, owner: "a", version: held!.version },
            { to: "suspended", reason: "stop", runAt },
          ),
        ).not.toBeNull();
      }
      // Running under a lease that lapses; "holder" keeps its lease (and its key) throughout.
      await store.claim({ kind: "k", owner: "dead-host", leaseMs: 1000, limit: 1, ids: ["expired"] });
      await store.claim({ kind: "k", owner: "alive", leaseMs: 10 * LEASE, limit: 1, ids: ["holder"] });
      await store.cancelTask("canceled-later", "user asked");
      await store.cancelTask("canceled-now", "user asked");
      await clock.advance(2000);

      const order = [
        "canceled-now",
        "canceled-later",
        "suspended-early",
        "expired",
        "suspended-late",
        "new0",
      ];
      expect((await store.listDue({ kind: "k", limit: 6 })).map((t) => t.id)).toEqual(order);
      expect((await store.listDue({ kind: "k", limit: 3 })).map((t) => t.id)).toEqual(order.slice(0, 3));
      expect((await store.listDue({ kind: "k", limit: 100 })).map((t) => t.id)).toEqual([
        ...order,
        ...Array.from({ length: 9 }, (_, i) => `new${i + 1}`),
      ]);
      const claimed = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 4 });
      expect(claimed.map((t) => t.id)).toEqual(order.slice(0, 4));
      const next = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 3 });
      expect(next.map((t) => t.id)).toEqual(["suspended-late", "new0", "new1"]);
    });

    it("the database itself refuses a second running task with the same exclusion key", async () => {
      await seed(task("a", { exclusionKey: "ds/2026-01-01" }), task("b", { exclusionKey: "ds/2026-01-01" }));
      await expect(backend.raw(url, "UPDATE tasks SET state = 'running'")).rejects.toThrow();
      // Postgres reports the error before its abort releases the row locks: wait for the abort.
      await backend.raw(url, "SELECT 1");
      const claimed = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 10 });
      expect(claimed.map((t) => t.id)).toEqual(["a"]);
      expect(await store.claim({ kind: "k", owner: "other", leaseMs: LEASE, limit: 10 })).toEqual([]);
    });

    it("concurrent claimers never hold two running tasks of one key", async () => {
      const tasks = Array.from({ length: 60 }, (_, i) => task(`t${i}`, { exclusionKey: `key${i % 20}` }));
      await seed(...tasks);
      const other = await openStore(url, { clock });
      const [a, b] = await Promise.all([
        store.claim({ kind: "k", owner: "a", leaseMs: LEASE, limit: 40 }),
        other.claim({ kind: "k", owner: "b", leaseMs: LEASE, limit: 40 }),
      ]);
      await other.close();
      const running = (await store.listTasks("job")).filter((t) => t.state === "running");
      expect(running).toHaveLength(a.length + b.length);
      expect(running).toHaveLength(20);
      expect(new Set(running.map((t) => t.exclusionKey)).size).toBe(20);
    });

    it("every task write is a compare-and-set on id, owner and version, and terminal rows are final", async () => {
      await seed(task("a"));
      const [claimed] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1 });
      const stale = { id: "a", owner: "me", version: claimed!.version };
      const moved = await store.checkpoint(stale, { step: 1 });
      expect(moved?.version).toBe(stale.version + 1);
      const suspend = { to: "suspended", reason: "stale", runAt: T0 } as const;
      expect(await store.transition(stale, suspend)).toBeNull();
      expect(await store.checkpoint(stale, { step: 2 })).toBeNull();
      expect(await store.renewLease(stale, LEASE)).toBeNull();
      const current = { id: "a", owner: "me", version: moved!.version };
      expect(await store.transition({ ...current, owner: "intruder" }, suspend)).toBeNull();
      expect(await store.transition(current, { to: "done", reason: "ok" })).toMatchObject({ state: "done" });
      const done = await row("a");
      expect(
        await store.transition({ ...current, version: done.version }, { to: "failed", reason: "late" }),
      ).toBeNull();
      expect(await row("a")).toEqual(done);
      expect(done.progress).toEqual({ step: 1 });
    });

    it("renewLeases extends every lease an owner holds in one call; a row it no longer holds is reported lost, not renewed", async () => {
      await seed(
        task("mine"),
        task("taken"),
        task("moved"),
        task("finished"),
        task("canceled"),
        task("free"),
      );
      const held = ["mine", "taken", "moved", "finished", "canceled"];
      const claimed = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 5, ids: held });
      expect(claimed.map((t) => t.id).sort()).toEqual([...held].sort());
      const at = (id: string) => claimed.find((t) => t.id === id) as TaskRow;
      const ref = (id: string) => ({ id, owner: "me", version: at(id).version });
      // Another owner took "taken" over (new owner, new version); "moved" went on under a checkpoint whose
      // version the caller did not send; "finished" is done; "canceled" was flagged by a user.
      const theirs = clock.now() + 5 * LEASE;
      await backend.raw(
        url,
        "UPDATE tasks SET lease_owner = 'other', version = version + 1, lease_expires_at = $1 WHERE id = $2",
        [theirs, "taken"],
      );
      const moved = await store.checkpoint(ref("moved"), { step: 1 });
      expect(moved).not.toBeNull();
      expect(await store.transition(ref("finished"), { to: "done", reason: "ok" })).not.toBeNull();
      await store.cancelTask("canceled", "user asked");
      const before = await store.listTasks("job");
      await clock.advance(10_000);

      const sent = held.map((id) => ({
        id,
        version: at(id).version,
      }));
      const result = await store.renewLeases("me", sent, LEASE);
      expect([...result.renewed].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        { id: "canceled", canceled: true, reason: "user asked" },
        { id: "mine", canceled: false, reason: null },
      ]);
      expect([...result.lost].sort()).toEqual(["finished", "moved", "taken"]);

      const expected = clock.now() + LEASE;
      expect(await row("mine")).toMatchObject({ leaseExpiresAt: expected, version: at("mine").version });
      expect(await row("canceled")).toMatchObject({ leaseExpiresAt: expected, canceled: true });
      // Refused rows are untouched: not renewed, not bumped.
      for (const id of ["taken", "moved", "finished", "free"]) {
        expect(await row(id)).toEqual(before.find((t) => t.id === id));
      }
      expect((await row("taken")).leaseExpiresAt).toBe(theirs);
      // The right version renews "moved"; another owner's name renews nothing; an empty batch is a no-op.
      expect((await store.renewLeases("me", [{ id: "moved", version: moved!.version }], LEASE)).lost).toEqual(
        [],
      );
      expect(
        await store.renewLeases("intruder", [{ id: "mine", version: at("mine").version }], LEASE),
      ).toEqual({
        renewed: [],
        lost: ["mine"],
      });
      expect(await store.renewLeases("me", [], LEASE)).toEqual({ renewed: [], lost: [] });
      // No event: a heartbeat is not a transition.
      const events = await store.listEvents({ jobId: "job" });
      expect(events.filter((e) => e.reason.includes("lease"))).toEqual([]);
    });

    it("renewLeases renews thousands of leases in one call", async () => {
      const ids = Array.from({ length: 3000 }, (_, i) => `t${String(i).padStart(4, "0")}`);
      await seed(...ids.map((id) => task(id)));
      const claimed = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: ids.length });
      expect(claimed).toHaveLength(ids.length);
      await clock.advance(5000);
      const result = await store.renewLeases(
        "me",
        claimed.map((t) => ({ id: t.id, version: t.version })),
        LEASE,
      );
      expect(result.renewed).toHaveLength(ids.length);
      expect(result.lost).toEqual([]);
      const rows = await store.listTasks("job");
      expect(new Set(rows.map((t) => t.leaseExpiresAt))).toEqual(new Set([clock.now() + LEASE]));
    });

    it("jobs page newest first through an after-cursor, with no job missed or repeated (ties on time too)", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        // Two jobs share each instant, so the cursor must break ties on the id.
        clock.set(T0 + Math.floor(i / 2) * 1000);
        const id = `job-${String.fromCharCode(103 - i)}`;
        ids.push(id);
        await store.createJob({ id, kind: i % 2 ? "run" : "backfill" }, [task(`${id}/t`)]);
      }
      const seen: string[] = [];
      let after: { createdAt: number; id: string } | undefined;
      for (let page = 0; page < 10; page++) {
        const rows = await store.listJobs({ limit: 3, ...(after ? { after } : {}) });
        if (rows.length === 0) break;
        seen.push(...rows.map((r) => r.id));
        const last = rows.at(-1)!;
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect([...seen].sort()).toEqual([...ids].sort());
      expect(new Set(seen).size).toBe(ids.length);
      expect(seen).toEqual((await store.listJobs({ limit: 100 })).map((j) => j.id));
      expect((await store.listJobs({ kind: "run", limit: 100 })).map((j) => j.id)).toHaveLength(3);
    });

    it("an idempotency key binds to its first request; racing binders agree on one binding", async () => {
      const first = await store.rememberRequest("k1", "hash-a", "job-a");
      expect(first).toEqual({ key: "k1", requestHash: "hash-a", jobId: "job-a", created: true });
      const again = await store.rememberRequest("k1", "hash-b", "job-b");
      expect(again).toEqual({ key: "k1", requestHash: "hash-a", jobId: "job-a", created: false });
      const other = await openStore(url, { clock });
      try {
        const race = await Promise.all([
          store.rememberRequest("k2", "hash-x", "job-x"),
          other.rememberRequest("k2", "hash-y", "job-y"),
        ]);
        expect(race.filter((r) => r.created)).toHaveLength(1);
        expect(race[0]?.requestHash).toBe(race[1]?.requestHash);
        expect(race[0]?.jobId).toBe(race[1]?.jobId);
      } finally {
        await other.close();
      }
    });

    it("events are read by id, newest first, and partitions are counted per kind and state", async () => {
      await store.createJob({ id: "job", kind: "backfill" }, [
        task("a"),
        task("b"),
        task("c", { kind: "other" }),
      ]);
      const all = await store.listEvents({});
      expect(all.map((e) => e.id)).toEqual([...all.map((e) => e.id)].sort((x, y) => x - y));
      const newest = await store.listEvents({ newestFirst: true, limit: 1 });
      expect(newest[0]?.id).toBe(all.at(-1)?.id);
      const picked = [all[1]!.id, all[3]!.id];
      expect((await store.listEvents({ ids: picked })).map((e) => e.id)).toEqual(picked);
      expect(await store.listEvents({ ids: [] })).toEqual([]);
      const [a] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1 });
      await store.transition({ id: a!.id, owner: "me", version: a!.version }, { to: "done", reason: "ok" });
      const counts = (await store.countByKind()).sort((x, y) =>
        `${x.kind}${x.state}` < `${y.kind}${y.state}` ? -1 : 1,
      );
      expect(counts).toEqual([
        { kind: "k", state: "done", count: 1 },
        { kind: "k", state: "new", count: 1 },
        { kind: "other", state: "new", count: 1 },
      ]);
    });

    it("cancelling a job flags its non-terminal tasks, ends those no driver holds, and records who asked", async () => {
      await seed(task("a"), task("b"), task("c"));
      const [a] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: ["a"] });
      await store.transition({ id: "a", owner: "me", version: a!.version }, { to: "done", reason: "ok" });
      const [c] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: ["c"] });
      expect(await store.cancelJob("job", "user asked", "cli")).toBe(2);
      expect(await row("a")).toMatchObject({ state: "done", canceled: false });
      // Waiting to run: failed at once, as its driver would have finished it.
      expect(await row("b")).toMatchObject({
        state: "failed",
        canceled: true,
        reason: "canceled: user asked",
        lastError: "canceled: user asked",
        leaseOwner: null,
      });
      // Running: flagged, its driver finishes it.
      expect(await row("c")).toMatchObject({ state: "running", canceled: true, version: c!.version });
      expect((await store.getJob("job"))?.canceled).toBe(true);
      const events = await store.listEvents({ taskId: "b" });
      expect(events.map((e) => [e.fromState, e.toState, e.reason, e.actor])).toEqual([
        [null, "new", "task created", "segops"],
        ["new", "new", "cancel requested: user asked", "cli"],
        ["new", "failed", "canceled: user asked", "cli"],
      ]);
      expect(await store.cancelTask("a", "too late")).toBeNull();
    });

    it("cancelling a job of thousands of tasks flags and ends every one, a chunk at a time", async () => {
      const ids = Array.from({ length: 2345 }, (_, i) => `t${String(i).padStart(4, "0")}`);
      await seed(...ids.map((id) => task(id)));
      const [held] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: ["t1500"] });
      expect(await store.cancelJob("job", "too big", "cli")).toBe(2345);
      const counts = await store.countTasks("job");
      expect([counts.failed, counts.running, counts.new]).toEqual([2344, 1, 0]);
      expect(await row("t1500")).toMatchObject({ state: "running", canceled: true, version: held!.version });
      const ended = await store.listEvents({ jobId: "job", limit: 10_000 });
      expect(ended.filter((e) => e.toState === "failed" && e.fromState === "new")).toHaveLength(2344);
      expect(ended.filter((e) => e.reason === "cancel requested: too big" && e.taskId)).toHaveLength(2345);
    });

    it("reopening a job clears its cancel flag; settling it does not", async () => {
      await seed(task("a"));
      await store.cancelJob("job", "user asked", "cli");
      expect(await store.setJobState("job", "failed", "every partition finished", "driver")).toMatchObject({
        state: "failed",
        canceled: true,
      });
      expect(await store.setJobState("job", "open", "partitions retried", "cli")).toMatchObject({
        state: "open",
        canceled: false,
      });
      expect(await store.getJob("job")).toMatchObject({ state: "open", canceled: false });
    });

    it("a failed or canceled task is retried as new (budget reset, cancel cleared, attempt kept); others are not", async () => {
      await seed(task("failed"), task("canceled"), task("done"), task("fresh"));
      for (const id of ["failed", "done"]) {
        const [t] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: [id] });
        const to = id === "failed" ? "failed" : "done";
        await store.transition({ id, owner: "me", version: t!.version }, { to, reason: "ended" });
      }
      await store.cancelTask("canceled", "user asked", "cli");
      const [c] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: ["canceled"] });
      await store.transition(
        { id: "canceled", owner: "me", version: c!.version },
        { to: "failed", reason: "canceled" },
      );

      for (const id of ["failed", "canceled"]) {
        const again = await store.retryTask(id, "cli");
        expect(again).toMatchObject({
          state: "new",
          retry: 0,
          canceled: false,
          attempt: 1,
          leaseOwner: null,
        });
        expect((await store.listEvents({ taskId: id })).at(-1)).toMatchObject({
          fromState: "failed",
          toState: "new",
          actor: "cli",
          reason: "retried after failure",
        });
      }
      expect(await store.retryTask("done")).toBeNull();
      expect(await store.retryTask("fresh")).toBeNull();
      expect(await store.retryTask("missing")).toBeNull();
      expect(await row("done")).toMatchObject({ state: "done" });
    });

    it("creates a job unless one over the same inputs is unfinished, atomically: of 20 racing creations one wins", async () => {
      const base = { id: "base", kind: "backfill", options: { baseId: "base" } };
      await store.createJob(base, [task("b1")]);
      const tryNew = (i: number) =>
        store.createJob(
          { id: `base-n${i}`, kind: "backfill", options: { baseId: "base", nonce: `n${i}` } },
          [task(`n${i}/1`)],
          "api",
          { sameInputs: { baseId: "base", whenUnfinished: "refuse" } },
        );
      const blocked = await tryNew(0);
      expect(blocked).toMatchObject({ created: false, blockedBy: ["base"], job: { id: "base" } });
      expect(await store.getJob("base-n0")).toBeNull();

      // The base job finishes: one of many racing `new` creations gets through, the others see it.
      const [b] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: ["b1"] });
      await store.transition({ id: "b1", owner: "me", version: b!.version }, { to: "done", reason: "ended" });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => tryNew(i + 1)));
      const created = results.filter((r) => r.created);
      expect(created).toHaveLength(1);
      const winner = created[0]!.job.id;
      for (const r of results.filter((r) => !r.created)) expect(r.blockedBy).toEqual([winner]);
      // The winner asked again is found again, not refused by itself.
      const again = await store.createJob(
        { id: winner, kind: "backfill", options: { baseId: "base" } },
        [],
        "api",
        { sameInputs: { baseId: "base", whenUnfinished: "refuse" } },
      );
      expect(again).toMatchObject({ created: false, job: { id: winner } });
      expect(again.blockedBy).toBeUndefined();
    });

    it("a plain creation finds the unfinished job over the same inputs again, a `new` one too; of racing plain and `new` creations one job is open", async () => {
      const plain = (id: string, taskId: string) =>
        store.createJob({ id, kind: "backfill", options: { baseId: id } }, [task(taskId)], "api", {
          sameInputs: { baseId: id, whenUnfinished: "find-again" },
        });
      const fresh = (base: string, nonce: string) =>
        store.createJob(
          { id: `${base}-${nonce}`, kind: "backfill", options: { baseId: base, nonce } },
          [task(`${base}-${nonce}/1`)],
          "api",
          { sameInputs: { baseId: base, whenUnfinished: "refuse" } },
        );
      const finish = async (id: string) => {
        const [t] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: [id] });
        await store.transition({ id, owner: "me", version: t!.version }, { to: "done", reason: "ended" });
      };

      // A `new` job alone, unfinished: the plain request is answered with it, nothing created.
      expect(await fresh("a", "n1")).toMatchObject({ created: true });
      const found = await plain("a", "a/1");
      expect(found).toMatchObject({ created: false, job: { id: "a-n1" } });
      expect(found.blockedBy).toBeUndefined();
      expect(await store.getJob("a")).toBeNull();
      expect(await store.getTask("a/1")).toBeNull();

      // The plain job finished, a `new` one unfinished: the plain request is answered with the unfinished one.
      expect(await plain("b", "b/1")).toMatchObject({ created: true });
      await finish("b/1");
      expect(await fresh("b", "n1")).toMatchObject({ created: true });
      expect(await plain("b", "b/1")).toMatchObject({ created: false, job: { id: "b-n1" } });
      // Both finished: the plain job is found again, as before.
      await finish("b-n1/1");
      expect(await plain("b", "b/1")).toMatchObject({ created: false, job: { id: "b" } });

      // A burst over new inputs, plain and `new` mixed: one job created; every other answer names it.
      const burst = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? fresh("c", `n${i}`) : plain("c", "c/1"))),
      );
      const created = burst.filter((r) => r.created);
      expect(created).toHaveLength(1);
      const winner = created[0]!.job.id;
      for (const r of burst.filter((r) => !r.created)) {
        expect(r.job.id).toBe(winner);
        if (r.blockedBy) expect(r.blockedBy).toEqual([winner]);
      }
      const open = (await store.listJobs()).filter((j) => j.id === "c" || j.id.startsWith("c-"));
      expect(open.map((j) => j.id)).toEqual([winner]);
    });

    it("a partition is planned anew (new payload, progress cleared, attempt moved on) by a CAS, never while it runs", async () => {
      await seed(task("done"), task("held"), task("stale"));
      const [d] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: ["done"] });
      await store.checkpoint({ id: "done", owner: "me", version: d!.version }, { step: "x" });
      const ended = await store.transition(
        { id: "done", owner: "me", version: d!.version + 1 },
        { to: "done", reason: "ended" },
      );
      const replanned = await store.replanTask(
        { id: "done", version: ended!.version },
        { source: "v2" },
        "source changed",
        "cli",
      );
      expect(replanned).toMatchObject({
        state: "new",
        payload: { source: "v2" },
        progress: {},
        attempt: 2,
        retry: 0,
        leaseOwner: null,
      });
      expect((await store.listEvents({ taskId: "done" })).at(-1)).toMatchObject({
        fromState: "done",
        toState: "new",
        actor: "cli",
        reason: "source changed",
      });
      // A stale version changes nothing; nor does a replan of a partition a driver holds.
      expect(
        await store.replanTask({ id: "done", version: ended!.version }, { source: "v3" }, "r"),
      ).toBeNull();
      const [h] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: ["held"] });
      expect(await store.replanTask({ id: "held", version: h!.version }, { source: "v2" }, "r")).toBeNull();
      expect(await row("held")).toMatchObject({ state: "running", payload: {} });
      expect(await store.replanTask({ id: "missing", version: 1 }, {}, "r")).toBeNull();
    });

    it("a dead letter is retried with its retry budget reset and its attempt kept, or dropped", async () => {
      await seed(task("a"), task("b"));
      for (const id of ["a", "b"]) {
        const [t] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: [id] });
        const r = await store.transition(
          { id, owner: "me", version: t!.version },
          { to: "retry", reason: "x", runAt: T0, ceiling: 5, newAttempt: true },
        );
        const [again] = await store.claim({ kind: "k", owner: "me", leaseMs: LEASE, limit: 1, ids: [id] });
        expect(r?.retry).toBe(1);
        await store.transition(
          { id, owner: "me", version: again!.version },
          { to: "dead", reason: "poison" },
        );
      }
      expect((await store.listDead("job")).map((t) => t.id)).toEqual(["a", "b"]);
      const retried = await store.retryDead("a", "cli");
      expect(await row("a")).toEqual(retried);
      expect(retried).toMatchObject({ state: "new", retry: 0, attempt: 2, runAt: T0 });
      expect(await store.dropDead("b", "cli")).toMatchObject({ state: "failed" });
      expect(await store.retryDead("b")).toBeNull();
      expect((await store.listEvents({ taskId: "a" })).at(-1)).toMatchObject({
        fromState: "dead",
        toState: "new",
      });
    });
  });

  describe("driver", () => {
    it("a handler that returns commits done and runs onFinish once", async () => {
      await seed(task("a"));
      drive(spec({ handler: async () => undefined }));
      await until(stateIs("a", "done"), "a done");
      expect(await row("a")).toMatchObject({
        state: "done",
        leaseOwner: null,
        leaseExpiresAt: null,
        retry: 0,
      });
      await until(() => finished.length === 1, "onFinish");
      expect(finished).toEqual(["a"]);
      const last = (await store.listEvents({ taskId: "a" })).at(-1);
      expect(last).toMatchObject({ fromState: "running", toState: "done" });
    });

    it("TaskDefer suspends with lease and exclusion released, no retry used, run_at persisted", async () => {
      await seed(task("a", { exclusionKey: "x" }), task("b", { exclusionKey: "x" }));
      let deferredAt = 0;
      const calls: string[] = [];
      drive(
        spec({
          concurrency: 1,
          handler: async (t) => {
            calls.push(t.id);
            if (t.id === "a" && calls.length === 1) {
              deferredAt = clock.now();
              throw new TaskDefer("not yet", 5000);
            }
          },
        }),
      );
      await until(stateIs("b", "done"), "b runs while a is deferred");
      expect(await row("a")).toMatchObject({
        state: "suspended",
        retry: 0,
        runAt: deferredAt + 5000,
        leaseOwner: null,
        reason: "not yet",
      });
      await until(stateIs("a", "done"), "a runs once due", 500);
      expect(calls).toEqual(["a", "b", "a"]);
      expect((await row("a")).retry).toBe(0);
    });

    it("TaskProgress keeps the lease and runs the next step after the cadence, no retry used", async () => {
      await seed(task("a", { exclusionKey: "x" }), task("b", { exclusionKey: "x" }));
      let calls = 0;
      let progressAt = 0;
      const driver = drive(
        spec({
          handler: async (t) => {
            if (t.id !== "a") return;
            calls++;
            if (calls <= 2) {
              progressAt = clock.now();
              throw new TaskProgress("polling Druid", 2000);
            }
          },
        }),
      );
      await until(async () => (await row("a")).reason === "polling Druid", "first progress commit");
      expect(await row("a")).toMatchObject({
        state: "running",
        leaseOwner: driver.owner,
        retry: 0,
        runAt: progressAt + 2000,
      });
      expect((await row("b")).state).toBe("new");
      await until(stateIs("a", "done"), "a done after two progress steps", 500);
      expect(calls).toBe(3);
      expect((await row("a")).retry).toBe(0);
      const progressEvents = (await store.listEvents({ taskId: "a" })).filter(
        (e) => e.reason === "polling Druid",
      );
      expect(progressEvents).toHaveLength(1);
      await until(stateIs("b", "done"), "b runs after a released the key", 100);
    });

    it("TaskRetry counts a retry, persists the backoff and can start a new attempt", async () => {
      await seed(task("a"));
      let failedAt = 0;
      drive(
        spec({
          handler: async () => {
            failedAt = clock.now();
            throw new TaskRetry("druid task FAILED", { newAttempt: true });
          },
        }),
      );
      await until(stateIs("a", "suspended"), "a suspended");
      expect(await row("a")).toMatchObject({
        state: "suspended",
        retry: 1,
        attempt: 2,
        lastError: "druid task FAILED",
        runAt: failedAt + 1000,
        leaseOwner: null,
      });
    });

    it("any other error is a retry and never stops the loop", async () => {
      await seed(task("a"), task("b"));
      let thrown = 0;
      const driver = drive(
        spec({
          concurrency: 1,
          handler: async (t) => {
            if (t.id === "a" && thrown++ === 0) throw new TypeError("cannot read x of undefined");
          },
        }),
      );
      await until(
        async () => (await row("a")).state === "done" && (await row("b")).state === "done",
        "both done",
        250,
      );
      expect(await row("a")).toMatchObject({ retry: 1, lastError: "TypeError: cannot read x of undefined" });
      expect(driver.state).toBe("running");
    });

    it("TaskAbort fails the task with its reason and uses no retry", async () => {
      await seed(task("a"));
      drive(
        spec({
          handler: async () => {
            throw new TaskAbort("spec invalid: dataSchema.dataSource is required");
          },
        }),
      );
      await until(stateIs("a", "failed"), "a failed");
      expect(await row("a")).toMatchObject({
        retry: 0,
        lastError: "spec invalid: dataSchema.dataSource is required",
      });
      await until(() => finished.length > 0, "onFinish");
      expect(finished).toEqual(["a"]);
    });

    it("a retry is counted on the committed row, not on the handler's copy", async () => {
      await seed(task("a"));
      drive(
        spec({
          maxRetry: 10,
          handler: async (t) => {
            // Another actor changed the count meanwhile (without touching the version).
            await backend.raw(url, "UPDATE tasks SET retry = 5 WHERE id = $1", [t.id]);
            throw new TaskRetry("flaky");
          },
        }),
      );
      await until(stateIs("a", "suspended"), "a suspended");
      expect((await row("a")).retry).toBe(6);
    });

    it("reaching the retry ceiling fails the task and runs onFinish once", async () => {
      await seed(task("a"));
      let calls = 0;
      drive(
        spec({
          maxRetry: 1,
          backoff: () => 0,
          handler: async () => {
            calls++;
            throw new Error("boom");
          },
        }),
      );
      await until(stateIs("a", "failed"), "a failed", 100);
      await clock.advance(5000);
      expect(calls).toBe(2);
      expect(await row("a")).toMatchObject({ state: "failed", retry: 2, lastError: "Error: boom" });
      expect(finished).toEqual(["a"]);
    });

    it("a task's own max_retry overrides the runner's ceiling", async () => {
      await seed(task("a", { maxRetry: 0 }));
      drive(
        spec({
          handler: async () => {
            throw new TaskRetry("nope");
          },
        }),
      );
      await until(stateIs("a", "failed"), "a failed at its own ceiling");
      expect((await row("a")).retry).toBe(1);
    });

    it("a task canceled before it runs is finished without its handler", async () => {
      await seed(task("a", { runAt: T0 + 3_600_000 }));
      await store.cancelTask("a", "user asked", "cli");
      let calls = 0;
      drive(
        spec({
          handler: async () => {
            calls++;
          },
        }),
      );
      await until(stateIs("a", "failed"), "a finished as canceled");
      expect(await row("a")).toMatchObject({ canceled: true, lastError: "canceled: user asked" });
      expect(calls).toBe(0);
      await until(() => finished.length > 0, "onFinish");
      expect(finished).toEqual(["a"]);
    });

    for (const late of ["defer", "retry", "progress"] as const) {
      it(`a task canceled during its handler is not resurrected by a late ${late}`, async () => {
        await seed(task("a"));
        const started = hold();
        const gate = hold();
        let calls = 0;
        drive(
          spec({
            handler: async () => {
              calls++;
              started.resolve();
              await gate.promise;
              if (late === "defer") throw new TaskDefer("later", 0);
              if (late === "retry") throw new TaskRetry("flaky");
              throw new TaskProgress("polling", 0);
            },
          }),
        );
        await started.promise;
        expect(await store.cancelTask("a", "user asked", "cli")).not.toBeNull();
        gate.resolve();
        await until(stateIs("a", "failed"), "a finished as canceled");
        await clock.advance(10_000);
        expect(await row("a")).toMatchObject({ state: "failed", canceled: true, retry: 0 });
        expect(calls).toBe(1);
        expect(finished).toEqual(["a"]);
        // Not even briefly: the late outcome was never committed.
        const transitions = (await store.listEvents({ taskId: "a" })).map(
          (e) => `${e.fromState}->${e.toState}`,
        );
        expect(transitions).toEqual(["null->new", "new->running", "running->running", "running->failed"]);
      });
    }

    it("checkpoint merges progress into the committed row", async () => {
      await seed(task("a"));
      const seen: (TaskRow | null)[] = [];
      drive(
        spec({
          handler: async (_t, ctx) => {
            seen.push(await ctx.checkpoint({ druidTaskId: "index_x_a1" }));
            seen.push(await ctx.checkpoint({ step: "submitted" }));
          },
        }),
      );
      await until(stateIs("a", "done"), "a done");
      expect((await row("a")).progress).toEqual({ druidTaskId: "index_x_a1", step: "submitted" });
      expect(seen[1]?.version).toBe((seen[0]?.version ?? 0) + 1);
      const checkpoints = (await store.listEvents({ taskId: "a" })).filter((e) => e.reason === "checkpoint");
      expect(checkpoints.map((e) => e.data)).toEqual([{ druidTaskId: "index_x_a1" }, { step: "submitted" }]);
    });

    it("checkpoint after a cancel returns null, aborts the handler's signal and writes nothing", async () => {
      await seed(task("a"));
      const started = hold();
      const gate = hold();
      let result: TaskRow | null | undefined;
      let aborted = false;
      drive(
        spec({
          handler: async (_t, ctx: TaskContext) => {
            started.resolve();
            await gate.promise;
            result = await ctx.checkpoint({ druidTaskId: "late" });
            aborted = ctx.signal.aborted;
          },
        }),
      );
      await started.promise;
      await store.cancelTask("a", "stop");
      gate.resolve();
      await until(async () => (await row("a")).state !== "running", "a settled");
      expect(result).toBeNull();
      expect(aborted).toBe(true);
      // Returning after being told of the cancel is not completing: the task ends canceled, not done.
      expect(await row("a")).toMatchObject({
        progress: {},
        canceled: true,
        state: "failed",
        lastError: "canceled: stop",
      });
    });

    it("after lease expiry another driver takes over; the old owner's late writes are refused", async () => {
      await seed(task("a"));
      const started = hold();
      const gate = hold();
      let lateCheckpoint: TaskRow | null | undefined;
      const onFinishBy: string[] = [];
      const old = drive(
        spec({
          concurrency: 1,
          onFinish: () => {
            onFinishBy.push("old");
          },
          handler: async (_t, ctx) => {
            started.resolve();
            await gate.promise;
            lateCheckpoint = await ctx.checkpoint({ from: "old" });
          },
        }),
      );
      await started.promise;
      // The old owner's host "died": its lease ran out.
      await backend.raw(url, "UPDATE tasks SET lease_expires_at = $1 WHERE id = $2", [clock.now() - 1, "a"]);
      const fresh = drive(
        spec({
          onFinish: () => {
            onFinishBy.push("new");
          },
          handler: async (_t, ctx) => {
            await ctx.checkpoint({ from: "new" });
          },
        }),
      );
      await until(stateIs("a", "done"), "taken over and done");
      gate.resolve();
      await until(() => old.inFlight === 0, "old owner gave up");
      expect(lateCheckpoint).toBeNull();
      expect(await row("a")).toMatchObject({ state: "done", progress: { from: "new" }, retry: 0 });
      expect(onFinishBy).toEqual(["new"]);
      const events = await store.listEvents({ taskId: "a" });
      expect(events.filter((e) => e.toState === "done").map((e) => e.actor)).toEqual([fresh.owner]);
      expect(events.some((e) => e.reason.startsWith(`claimed after the lease of ${old.owner}`))).toBe(true);
    });

    it("the heartbeat extends the lease while a handler runs; a refused renewal aborts the handler", async () => {
      await seed(task("a"));
      const started = hold();
      const gate = hold();
      let signal: AbortSignal | undefined;
      drive(
        spec({
          handler: async (_t, ctx) => {
            signal = ctx.signal;
            started.resolve();
            await gate.promise;
          },
        }),
        { heartbeatMs: LEASE / 6 },
      );
      await started.promise;
      const claimedUntil = (await row("a")).leaseExpiresAt ?? 0;
      await until(async () => ((await row("a")).leaseExpiresAt ?? 0) > claimedUntil, "lease renewed", 1000);
      expect(clock.now() - T0).toBeLessThan(LEASE);
      expect(signal?.aborted).toBe(false);
      // Another actor took the task over (new owner, new version, its own fresh lease — so the test's clock
      // can run on while the heartbeat notices, without this driver claiming the row back).
      await backend.raw(
        url,
        "UPDATE tasks SET lease_owner = 'other', version = version + 1, lease_expires_at = $1 WHERE id = $2",
        [clock.now() + 100 * LEASE, "a"],
      );
      await until(() => signal?.aborted === true, "handler told to stop", 1000);
      expect(signal?.reason).toMatchObject({ reason: "lost" });
      gate.resolve();
      await clock.advance(1000);
      expect(await row("a")).toMatchObject({ state: "running", leaseOwner: "other" });
      expect(finished).toEqual([]);
    });

    it("one heartbeat statement renews every task a driver holds, each period", async () => {
      await seed(task("a"), task("b"), task("c"));
      const calls: Array<{ name: string; n: number }> = [];
      const counted = new Proxy(store, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (key === "renewLeases")
            return (owner: string, leases: readonly unknown[], ms: number) => {
              calls.push({ name: "renewLeases", n: leases.length });
              return target.renewLeases(owner, leases as never, ms);
            };
          if (key === "renewLease")
            return (...args: Parameters<Store["renewLease"]>) => {
              calls.push({ name: "renewLease", n: 1 });
              return target.renewLease(...args);
            };
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      let started = 0;
      const gate = hold();
      drive(
        spec({
          concurrency: 3,
          handler: async () => {
            started++;
            await gate.promise;
          },
        }),
        { store: counted, heartbeatMs: 1000 },
      );
      await until(() => started === 3, "three handlers running");
      await until(() => calls.length >= 3, "three heartbeats", 1000);
      expect(calls.slice(0, 3)).toEqual([
        { name: "renewLeases", n: 3 },
        { name: "renewLeases", n: 3 },
        { name: "renewLeases", n: 3 },
      ]);
      const rows = await store.listTasks("job");
      expect(rows.every((t) => t.state === "running" && (t.leaseExpiresAt ?? 0) > T0 + LEASE)).toBe(true);
      gate.resolve();
      await until(async () => (await store.countTasks("job")).done === 3, "all done", 100);
    });

    it("a renewal refused only because the task's own checkpoint moved its version does not stop the handler", async () => {
      await seed(task("a"));
      const beatSent = deferred();
      const checkpointed = deferred();
      let delayed = false;
      const answers: RenewLeasesResult[] = [];
      // The heartbeat reads the version, then the handler's checkpoint commits before the renewal reaches
      // the database: the renewal is refused for a version this driver itself moved past.
      const racing = new Proxy(store, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (key === "renewLeases")
            return async (owner: string, leases: readonly never[], ms: number) => {
              if (!delayed) {
                delayed = true;
                beatSent.resolve();
                await checkpointed.promise;
              }
              const answer = await target.renewLeases(owner, leases, ms);
              answers.push(answer);
              return answer;
            };
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      let signal: AbortSignal | undefined;
      let checkpoint: TaskRow | null = null;
      let runs = 0;
      const gate = hold();
      drive(
        spec({
          handler: async (_t, ctx) => {
            runs++;
            signal = ctx.signal;
            await beatSent.promise;
            checkpoint = await ctx.checkpoint({ step: "after" });
            checkpointed.resolve();
            await gate.promise;
          },
        }),
        { store: racing, heartbeatMs: 1000 },
      );
      await until(() => runs === 1, "handler started");
      await clock.advance(1000); // the first beat
      await until(() => answers.length === 1, "the stale renewal answered");
      expect(checkpoint).not.toBeNull();
      expect(answers[0]).toEqual({ renewed: [], lost: ["a"] });
      const renewedAt = (await row("a")).leaseExpiresAt ?? 0;
      // The next beat carries the new version and renews.
      await until(async () => ((await row("a")).leaseExpiresAt ?? 0) > renewedAt, "renewed again", 100);
      expect(answers[1]).toMatchObject({ lost: [] });
      expect(clock.now() - T0).toBeLessThan(LEASE);
      expect(signal?.aborted).toBe(false);
      expect(runs).toBe(1);
      gate.resolve();
      await until(stateIs("a", "done"), "done", 100);
      expect(await row("a")).toMatchObject({ progress: { step: "after" } });
    });

    it("a cancel reaches a running handler through the heartbeat", async () => {
      await seed(task("a"));
      const started = hold();
      drive(
        spec({
          handler: (_t, ctx) => {
            started.resolve();
            return new Promise((_, reject) =>
              ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
            );
          },
        }),
        { heartbeatMs: 1000 },
      );
      await started.promise;
      await store.cancelTask("a", "user asked");
      await until(stateIs("a", "failed"), "finished as canceled", 500);
      expect(await row("a")).toMatchObject({ canceled: true, retry: 0, lastError: "canceled: user asked" });
      expect(finished).toEqual(["a"]);
    });

    it("a graceful stop hands unfinished tasks back: suspended, due now, no retry used", async () => {
      await seed(task("a"));
      const started = hold();
      const driver = drive(
        spec({
          handler: (_t, ctx) => {
            started.resolve();
            return new Promise((_, reject) =>
              ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
            );
          },
        }),
      );
      await started.promise;
      clock.set(T0 + 7000);
      await driver.stop();
      expect(driver.state).toBe("stopped");
      expect(await row("a")).toMatchObject({
        state: "suspended",
        runAt: T0 + 7000,
        leaseOwner: null,
        retry: 0,
      });
      expect(finished).toEqual([]);
    });

    it("tasks with the same exclusion key never run at once, across drivers", async () => {
      const tasks = Array.from({ length: 12 }, (_, i) => task(`t${i}`, { exclusionKey: `key${i % 3}` }));
      await seed(...tasks);
      const active = new Map<string, number>();
      let maxPerKey = 0;
      let total = 0;
      let maxTotal = 0;
      const runner = spec({
        concurrency: 4,
        handler: async (t, ctx) => {
          const key = t.exclusionKey ?? "";
          active.set(key, (active.get(key) ?? 0) + 1);
          total++;
          maxPerKey = Math.max(maxPerKey, active.get(key) ?? 0);
          maxTotal = Math.max(maxTotal, total);
          await ctx.clock.sleep(300);
          active.set(key, (active.get(key) ?? 0) - 1);
          total--;
        },
      });
      drive(runner);
      drive(runner);
      await until(async () => (await store.countTasks("job")).done === 12, "all done", 100);
      expect(maxPerKey).toBe(1);
      expect(maxTotal).toBeGreaterThan(1);
    });

    it("isEligible false skips a task with no claim, no write and no retry", async () => {
      await seed(task("a"), task("b"));
      drive(spec({ isEligible: (t) => t.id !== "b", handler: async () => undefined }));
      await until(stateIs("a", "done"), "a done");
      await clock.advance(1000);
      expect(await row("b")).toMatchObject({ state: "new", version: 0, retry: 0, leaseOwner: null });
      expect(await store.listEvents({ taskId: "b" })).toHaveLength(1);
    });

    it("the poison rule moves a task to the dead-letter state", async () => {
      await seed(task("a"));
      drive(
        spec({
          isPoison: (_t, error) => error instanceof Error && error.message.includes("ParseException"),
          handler: async () => {
            throw new Error("ParseException: bad row 17");
          },
        }),
      );
      await until(stateIs("a", "dead"), "a dead");
      expect(await row("a")).toMatchObject({
        retry: 0,
        lastError: "poison: Error: ParseException: bad row 17",
      });
      expect((await store.listDead()).map((t) => t.id)).toEqual(["a"]);
      await until(() => finished.length > 0, "onFinish");
      expect(finished).toEqual(["a"]);
    });

    it("a storage failure stops the driver with a Ledger error instead of being swallowed", async () => {
      await seed(task("a"));
      const driver = drive(spec({ handler: async () => undefined }));
      await until(stateIs("a", "done"), "a done");
      await store.close();
      const stopped = expect(driver.done()).rejects.toMatchObject({ code: "Ledger" });
      await clock.advance(500);
      await stopped;
      expect(driver.state).toBe("stopped");
    });

    it("drain runs until every task of the job is terminal", async () => {
      await seed(task("a"), task("b"), task("c", { exclusionKey: "k" }), task("d", { exclusionKey: "k" }));
      const seen = new Set<string>();
      const result = drain({
        store,
        clock,
        jobId: "job",
        leaseMs: LEASE,
        pollMs: 100,
        runners: [
          spec({
            handler: async (t) => {
              if (!seen.has(t.id)) {
                seen.add(t.id);
                throw new TaskDefer("first look", 1000);
              }
              if (t.id === "b") throw new TaskAbort("bad");
            },
          }),
        ],
      });
      let settled = false;
      result.then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      // The check reads the store so each round waits for real I/O before the clock moves on.
      await until(async () => (await store.countTasks("job")) !== null && settled, "drain returned", 100);
      expect(await result).toEqual({
        reason: "idle",
        counts: { new: 0, running: 0, suspended: 0, done: 3, failed: 1, dead: 0 },
      });
    });
  });
}
