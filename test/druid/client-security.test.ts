import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DruidClient, type DruidClientOptions } from "../../src/druid/client.js";
import { TlsError, TransientError, UnauthorizedError } from "../../src/druid/errors.js";
import { closedPort, FakeDruid, InstantClock, MemoryLogger } from "./helpers/fake-druid.js";

const PASSWORD = "pa55-W0rd!secret";
const TOKEN = "tok_9f8e7d6c5b4a";
const BASIC = Buffer.from(`admin:${PASSWORD}`).toString("base64");
const CA = new URL("./fixtures/tls/localhost.crt", import.meta.url);

let druid: FakeDruid;
let clock: InstantClock;
const clients: DruidClient[] = [];

function client(options: Partial<DruidClientOptions> = {}): DruidClient {
  const c = new DruidClient({
    url: druid.url,
    clock,
    retry: { maxAttempts: 3 },
    random: () => 0,
    ...options,
  });
  clients.push(c);
  return c;
}

beforeEach(async () => {
  druid = new FakeDruid();
  clock = new InstantClock();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await druid.close();
});

function leakCheck(error: unknown, secrets: string[]): void {
  expect(error).toBeInstanceOf(Error);
  const e = error as Error;
  const surfaces = [
    e.message,
    e.stack ?? "",
    JSON.stringify(e),
    String(e),
    JSON.stringify((e as { details?: unknown }).details),
  ];
  for (const surface of surfaces) {
    for (const secret of secrets) expect(surface).not.toContain(secret);
  }
}

describe("authentication", () => {
  it("sends basic credentials on every request", async () => {
    await druid.start();
    druid.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
    await client({ auth: { type: "basic", username: "admin", password: PASSWORD } }).workers();
    expect(druid.requests[0]?.headers.authorization).toBe(`Basic ${BASIC}`);
  });

  it("sends a bearer token", async () => {
    await druid.start();
    druid.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
    await client({ auth: { type: "bearer", token: TOKEN } }).workers();
    expect(druid.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("moves user:password out of the URL into a basic header", async () => {
    await druid.start();
    druid.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
    const url = druid.url.replace("http://", `http://admin:${encodeURIComponent(PASSWORD)}@`);
    await client({ url }).workers();
    expect(druid.requests[0]?.headers.authorization).toBe(`Basic ${BASIC}`);
  });

  it("never retries a 401", async () => {
    await druid.start();
    druid.on("GET", "/druid/indexer/v1/workers", {
      status: 401,
      body: "<html><body><table><tr><th>MESSAGE:</th><td>Unauthorized</td></tr></table></body></html>",
    });
    const error = await client({ auth: { type: "basic", username: "admin", password: PASSWORD } })
      .workers()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(druid.count()).toBe(1);
  });
});

describe("credentials never appear in errors or logs", () => {
  const secrets = [PASSWORD, BASIC, encodeURIComponent(PASSWORD)];

  it("not on 401, echoed bodies, exhausted 5xx, resets or unusable answers", async () => {
    await druid.start();
    const logger = new MemoryLogger();
    const auth = { type: "basic", username: "admin", password: PASSWORD } as const;
    druid.on("GET", "/druid/indexer/v1/workers", { status: 401, body: { error: "Unauthorized request" } });
    // A misbehaving proxy echoing the Authorization header back in its error page.
    druid.handle("GET", "/druid/indexer/v1/totalWorkerCapacity", (req) => ({
      status: 500,
      body: `upstream rejected header ${String(req.headers.authorization)} (password ${PASSWORD})`,
    }));
    druid.on("GET", "/druid/indexer/v1/leader", { reset: true });
    druid.handle("GET", "/druid/indexer/v1/tasks", (req) => ({
      status: 200,
      body: `not json ${String(req.headers.authorization)}`,
    }));
    druid.handle("POST", "/druid/indexer/v1/task", () => ({
      status: 400,
      body: { error: `Task[${PASSWORD}] already exists!` },
    }));
    const c = client({ auth, logger });
    const errors = await Promise.all([
      c.workers().catch((e: unknown) => e),
      c.totalWorkerCapacity().catch((e: unknown) => e),
      c.leader().catch((e: unknown) => e),
      c.tasks().catch((e: unknown) => e),
      c.submitTask({ type: "index_parallel", id: "mine" }).catch((e: unknown) => e),
    ]);
    expect((errors[1] as TransientError).message).toContain("[REDACTED]");
    for (const error of errors) leakCheck(error, secrets);
    expect(logger.entries.length).toBeGreaterThan(0);
    expect(JSON.stringify(logger.entries)).not.toContain(PASSWORD);
    expect(JSON.stringify(logger.entries)).not.toContain(BASIC);
  });

  it("not when the connection is refused, with credentials given in the URL", async () => {
    const port = await closedPort();
    const c = new DruidClient({
      url: `http://admin:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}`,
      clock,
      retry: { maxAttempts: 2 },
    });
    clients.push(c);
    const error = await c.workers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    leakCheck(error, secrets);
  });

  it("not for a bearer token", async () => {
    await druid.start();
    druid.handle("GET", "/druid/indexer/v1/workers", (req) => ({
      status: 503,
      body: `no leader for ${String(req.headers.authorization)}`,
    }));
    const error = await client({ auth: { type: "bearer", token: TOKEN } })
      .workers()
      .catch((e: unknown) => e);
    leakCheck(error, [TOKEN]);
  });

  it("not in the usage error for a malformed URL", () => {
    let error: unknown;
    try {
      new DruidClient({ url: `http://admin:${PASSWORD}@[bad` });
    } catch (e) {
      error = e;
    }
    leakCheck(error, [PASSWORD]);
    expect((error as Error).message).toContain("`url`");
  });
});

describe("TLS", () => {
  beforeEach(async () => {
    await druid.start({ tls: true });
    druid.on("GET", "/druid/indexer/v1/workers", { status: 200, body: [] });
  });

  it("trusts a custom CA given as PEM text", async () => {
    await expect(client({ tls: { ca: readFileSync(CA, "utf8") } }).workers()).resolves.toEqual([]);
  });

  it("trusts a custom CA given as a file", async () => {
    await expect(client({ tls: { caFile: CA.pathname } }).workers()).resolves.toEqual([]);
  });

  it("fails fast, without retrying, on an untrusted certificate", async () => {
    const error = await client()
      .workers()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TlsError);
    expect((error as TlsError).attempts).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it("can skip verification when told to", async () => {
    await expect(client({ tls: { rejectUnauthorized: false } }).workers()).resolves.toEqual([]);
  });
});
