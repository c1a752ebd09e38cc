import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backoffCeiling } from "../../src/core/backoff.js";
import { DruidClient, type DruidClientOptions } from "../../src/druid/client.js";
import {
  CapacityError,
  NotFoundError,
  SpecRejectedError,
  TransientError,
  UnavailableError,
} from "../../src/druid/errors.js";
import { closedPort, FakeDruid, InstantClock, MemoryLogger } from "./helpers/fake-druid.js";

const TASK = "/druid/indexer/v1/task";
const ID = "index_parallel_wiki_2015-09-12_3f9a0c1b2d4e_a1";
const spec = { type: "index_parallel", id: ID, spec: { dataSchema: { dataSource: "wiki" } } };
const retry = { baseMs: 100, capMs: 2000, multiplier: 2, maxAttempts: 4, maxTotalWaitMs: 60_000 };

let druid: FakeDruid;
let clock: InstantClock;
const clients: DruidClient[] = [];

function client(options: Partial<DruidClientOptions> = {}): DruidClient {
  const c = new DruidClient({ url: druid.url, clock, retry, random: () => 0.5, ...options });
  clients.push(c);
  return c;
}

beforeEach(async () => {
  druid = new FakeDruid();
  clock = new InstantClock();
  await druid.start();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await druid.close();
});

describe("retry policy", () => {
  it("retries 5xx on an idempotent submit and succeeds within the budget", async () => {
    druid.on(
      "POST",
      TASK,
      { status: 500, body: "boom" },
      { status: 502, body: "" },
      { status: 200, body: { task: ID } },
    );
    const result = await client().submitTask(spec);
    expect(result).toEqual({ outcome: "accepted", taskId: ID });
    expect(druid.count("POST", TASK)).toBe(3);
    // Full jitter with random 0.5: half of each ceiling (rounded down), growing per retry.
    expect(clock.sleeps).toEqual([50, 100]);
    for (const [i, ms] of clock.sleeps.entries()) expect(ms).toBeLessThanOrEqual(backoffCeiling(i, retry));
  });

  it("resends the same body after a connection reset, and a duplicate answer then means reattach", async () => {
    // First POST reached Druid but the answer was lost; the resend is told the id already exists.
    druid.on(
      "POST",
      TASK,
      { reset: true },
      {
        status: 400,
        body: {
          error: "druidException",
          errorCode: "entryAlreadyExists",
          errorMessage: `Task[${ID}] already exists`,
        },
      },
    );
    const result = await client().submitTask(spec);
    expect(result).toEqual({ outcome: "duplicate", taskId: ID });
    expect(druid.count("POST", TASK)).toBe(2);
    const [first, second] = druid.requests;
    expect(JSON.parse(second?.body ?? "")).toEqual(spec);
    expect(second?.body).toBe(first?.body);
  });

  it("never retries a 4xx", async () => {
    druid.on("POST", TASK, {
      status: 400,
      body: { error: "Cannot construct instance of `x.DataSchema`, problem: timestampSpec must not be null" },
    });
    const error = await client()
      .submitTask(spec)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SpecRejectedError);
    expect(druid.count()).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it("does not retry a 404 either", async () => {
    druid.on("GET", `${TASK}/nope/status`, { status: 404, body: "Cannot find any task with id: [nope]" });
    const error = await client()
      .taskStatus("nope")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).taskId).toBe("nope");
    expect(druid.count()).toBe(1);
  });

  it("gives up after maxAttempts with the last error, counting attempts", async () => {
    const logger = new MemoryLogger();
    druid.on("GET", "/druid/indexer/v1/workers", { status: 500, body: { error: "Task Runner is sad" } });
    const error = await client({ logger })
      .workers()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).attempts).toBe(4);
    expect(druid.count()).toBe(4);
    expect(clock.sleeps).toHaveLength(3);
    expect(logger.entries.filter((e) => e.level === "debug")).toHaveLength(3);
    expect(logger.entries.at(-1)?.obj).toMatchObject({
      endpoint: "GET /druid/indexer/v1/workers",
      attempts: 4,
    });
  });

  it("stops when the total wait budget would be exceeded", async () => {
    druid.on("GET", "/druid/indexer/v1/workers", { status: 503, headers: { "retry-after": "30" }, body: "" });
    const error = await client({ retry: { ...retry, maxTotalWaitMs: 45_000 } })
      .workers()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect(clock.sleeps).toEqual([30_000]);
    expect(druid.count()).toBe(2);
  });

  it("honours Retry-After on 429 and backs off on 503", async () => {
    druid.on(
      "POST",
      TASK,
      {
        status: 429,
        headers: { "retry-after": "3" },
        body: {
          errorCode: "general",
          category: "CAPACITY_EXCEEDED",
          errorMessage: "Task queue already contains [9] tasks.",
        },
      },
      { status: 503, body: "" },
      { status: 200, body: { task: ID } },
    );
    const result = await client().submitTask(spec);
    expect(result.outcome).toBe("accepted");
    expect(clock.sleeps[0]).toBe(3000);
    expect(clock.sleeps[1]).toBeLessThanOrEqual(backoffCeiling(1, retry));
    expect(druid.count()).toBe(3);
  });

  it("retries 429 and 503 even without a pinned id, since Druid refused before acting", async () => {
    druid.on(
      "POST",
      TASK,
      { status: 429, body: "" },
      { status: 503, body: "" },
      { status: 200, body: { task: "auto_id" } },
    );
    const result = await client().submitTask({ type: "index_parallel", spec: {} });
    expect(result).toEqual({ outcome: "accepted", taskId: "auto_id" });
    expect(druid.count()).toBe(3);
  });

  it("does not resend an unpinned submit after an ambiguous failure (it could start a second task)", async () => {
    druid.on("POST", TASK, { status: 500, body: "" }, { status: 200, body: { task: "auto_id" } });
    const error = await client()
      .submitTask({ type: "index_parallel", spec: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect(druid.count()).toBe(1);
  });

  it("resends an unpinned submit when the connection was refused (nothing was sent)", async () => {
    const port = await closedPort();
    const c = new DruidClient({ url: `http://127.0.0.1:${port}`, clock, retry, random: () => 0.5 });
    clients.push(c);
    const error = await c.submitTask({ type: "index_parallel", spec: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).requestSent).toBe(false);
    expect((error as TransientError).attempts).toBe(4);
    expect(clock.sleeps).toHaveLength(3);
  });

  it("a capacity error that outlives the budget surfaces as Capacity", async () => {
    druid.on("POST", "/druid/v2/sql", {
      status: 429,
      body: { error: "Query capacity exceeded", errorMessage: "Too many concurrent queries" },
    });
    const error = await client()
      .sql("SELECT 1")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CapacityError);
    expect(druid.count()).toBe(4);
  });
});

describe("leader redirects", () => {
  let leader: FakeDruid;
  beforeEach(async () => {
    leader = new FakeDruid();
    await leader.start();
  });
  afterEach(async () => {
    await leader.close();
  });

  it("follows a 307 to the leader keeping method, body and credentials", async () => {
    druid.handle("POST", TASK, (req) => ({ status: 307, headers: { location: `${leader.url}${req.path}` } }));
    leader.on("POST", TASK, { status: 200, body: { task: ID } });
    const c = client({ auth: { type: "basic", username: "admin", password: "pw-123456" } });
    const result = await c.submitTask(spec);
    expect(result.outcome).toBe("accepted");
    expect(druid.count()).toBe(1);
    expect(leader.count()).toBe(1);
    const forwarded = leader.requests[0];
    expect(forwarded?.method).toBe("POST");
    expect(JSON.parse(forwarded?.body ?? "")).toEqual(spec);
    expect(forwarded?.headers["content-type"]).toBe("application/json");
    expect(forwarded?.headers.authorization).toBe(
      `Basic ${Buffer.from("admin:pw-123456").toString("base64")}`,
    );
  });

  it("keeps the query string across the redirect", async () => {
    druid.handle("GET", "/druid/indexer/v1/tasks", (req) => ({
      status: 307,
      headers: { location: `${leader.url}${req.path}?${req.query}` },
    }));
    leader.on("GET", "/druid/indexer/v1/tasks", { status: 200, body: [] });
    await client().tasks({ state: "running", datasource: "wiki" });
    expect(leader.requests[0]?.query).toBe("state=running&datasource=wiki");
  });

  it("survives a leader change between calls: every call starts at the configured URL", async () => {
    const next = new FakeDruid();
    await next.start();
    try {
      druid.handle("GET", "/druid/indexer/v1/workers", (req) => ({
        status: 307,
        headers: { location: `${leader.url}${req.path}` },
      }));
      leader.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
      const c = client();
      await c.workers();
      // Leadership moves: the old leader now redirects to the new one.
      leader.handle("GET", "/druid/indexer/v1/workers", (req) => ({
        status: 307,
        headers: { location: `${next.url}${req.path}` },
      }));
      next.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [{ worker: { host: "mm:8091" } }] });
      const workers = await c.workers();
      expect(workers).toHaveLength(1);
      expect([druid.count(), leader.count(), next.count()]).toEqual([2, 2, 1]);
    } finally {
      await next.close();
    }
  });

  it("retries when the leader it was sent to is gone, then finds the new one", async () => {
    const port = await closedPort();
    let calls = 0;
    druid.handle("GET", "/druid/indexer/v1/workers", (req) => {
      calls += 1;
      // First: a stale redirect to a dead leader; afterwards: to the live one.
      const target = calls === 1 ? `http://127.0.0.1:${port}` : leader.url;
      return { status: 307, headers: { location: `${target}${req.path}` } };
    });
    leader.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
    await expect(client().workers()).resolves.toEqual([]);
    expect(druid.count()).toBe(2);
    expect(leader.count()).toBe(1);
    expect(clock.sleeps).toHaveLength(1);
  });

  it("caps redirect hops per attempt and reports Unavailable", async () => {
    druid.handle("GET", "/druid/indexer/v1/workers", (req) => ({
      status: 307,
      headers: { location: `${druid.url}${req.path}` },
    }));
    const error = await client({ maxRedirects: 2, retry: { ...retry, maxAttempts: 2 } })
      .workers()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).message).toContain("still redirected after 2 hops");
    // Two attempts, each: the first request plus two followed hops.
    expect(druid.count()).toBe(6);
  });
});

describe("timeouts, aborts and the connection pool", () => {
  it("turns a headers timeout into a Transient error", async () => {
    druid.on("GET", "/druid/indexer/v1/workers", { hang: true });
    const error = await client({ headersTimeoutMs: 20, retry: { maxAttempts: 1 } })
      .workers()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).message).toContain("timed out waiting for response headers");
  });

  it("rejects with the signal's reason when aborted during a retry wait, without another request", async () => {
    druid.on("GET", "/druid/indexer/v1/workers", { status: 503, body: "" });
    const controller = new AbortController();
    const stop = new Error("stop now");
    const abortingClock = new InstantClock();
    abortingClock.sleep = (ms, signal) => {
      controller.abort(stop);
      return signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve(void ms);
    };
    const c = client({ clock: abortingClock });
    await expect(c.workers({ signal: controller.signal })).rejects.toBe(stop);
    expect(druid.count()).toBe(1);
  });

  it("sends nothing when the signal is already aborted", async () => {
    druid.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
    const controller = new AbortController();
    controller.abort(new Error("cancelled"));
    await expect(client().workers({ signal: controller.signal })).rejects.toThrow("cancelled");
    expect(druid.count()).toBe(0);
  });

  it("keeps connections alive and never opens more than `connections` per origin", async () => {
    druid.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
    const c = client({ connections: 2 });
    await Promise.all(Array.from({ length: 12 }, () => c.workers()));
    await c.workers();
    const sockets = new Set(druid.requests.map((r) => r.socket));
    expect(druid.count()).toBe(13);
    expect(sockets.size).toBeLessThanOrEqual(2);
    expect(druid.maxInFlight).toBeLessThanOrEqual(2);
  });
});
