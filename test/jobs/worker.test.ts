import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { DruidClient } from "../../src/druid/client.js";
import { Worker } from "../../src/jobs/worker.js";
import { LedgerError } from "../../src/ledger/errors.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { until } from "../helpers/cli-process.js";

/**
 * The service's worker waits a ledger outage out (a restarting PostgreSQL, dropped sessions): it claims
 * nothing while the ledger fails, says why it is paused, claims again once the ledger answers, and only a
 * failure longer than `ledgerOutageMs` stops it with the error. A refusal that waiting cannot fix (a
 * schema newer than this code) stops it at once.
 */

let sim: SimHandle | undefined;
let client: DruidClient | undefined;
let store: Store | undefined;
let worker: Worker | undefined;
afterEach(async () => {
  await worker?.stop().catch(() => undefined);
  await client?.close();
  await store?.close();
  await sim?.close();
  sim = client = store = worker = undefined;
});

/** A store whose every call fails with `failure()` while it returns an error. */
function flaky(inner: Store, failure: () => Error | null): Store {
  return new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function" || key === "close") return value;
      return (...args: unknown[]) => {
        const error = failure();
        if (error) return Promise.reject(error);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

async function setUp(failure: () => Error | null, ledgerOutageMs?: number) {
  sim = await startSim({ timeScale: 100 });
  client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 20 } });
  store = await openStore("sqlite::memory:");
  worker = new Worker({
    store: flaky(store, failure),
    client,
    clock: systemClock,
    tickMs: 20,
    ...(ledgerOutageMs !== undefined ? { ledgerOutageMs } : {}),
  });
  await worker.start();
  return worker;
}

const unavailable = () =>
  new LedgerError("ledger query failed: terminating connection", { operation: "query" });

describe("the worker and a failing ledger", () => {
  it("pauses for the ledger while it fails and claims again once it answers", async () => {
    let down = false;
    const w = await setUp(() => (down ? unavailable() : null));
    expect(w.state).toBe("running");
    down = true;
    await until("the worker pauses for the ledger", () => w.state === "paused" && w.pausedFor === "ledger");
    down = false;
    await until("the worker runs again", () => w.state === "running");
    expect(w.pausedFor).toBeNull();
    expect(w.failure).toBeUndefined();
  });

  it("stops with the error once the ledger has failed for longer than ledgerOutageMs", async () => {
    let down = false;
    const w = await setUp(() => (down ? unavailable() : null), 200);
    down = true;
    await w.done;
    expect(w.state).toBe("stopped");
    expect(w.failure).toBeInstanceOf(LedgerError);
  });

  it("stops at once on a ledger error waiting cannot fix", async () => {
    let refuse = false;
    const w = await setUp(() =>
      refuse
        ? new LedgerError("the ledger's schema is version 9, newer than this segops supports", { found: 9 })
        : null,
    );
    refuse = true;
    await w.done;
    expect(w.state).toBe("stopped");
    expect(String(w.failure)).toMatch(/newer than this segops supports/);
  });
});
