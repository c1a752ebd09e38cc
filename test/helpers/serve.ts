import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type RunningService, type ServiceOptions, startService } from "../../src/serve/server.js";
import type { SimOptions } from "../../src/sim/options.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";

/** A service on an emulator (fast time scale) and a SQLite ledger, stopped after each test. */
export interface TestService {
  service: RunningService;
  sim: SimHandle;
  store: Store;
  ledgerUrl: string;
  /** Every JSON log line the service wrote. */
  logs: string[];
  /** fetch against the service, with the token when one is set. */
  call(path: string, init?: RequestInit & { json?: unknown; token?: string | null }): Promise<ApiResult>;
}

export interface ApiResult {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience for reading arbitrary JSON bodies
  json: any;
}

const running: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.();
});

export async function startTestService(
  options: {
    sim?: SimOptions;
    token?: string | null;
    service?: Partial<ServiceOptions>;
    ledgerUrl?: string;
    /** Point the service at this Druid instead of the emulator (e.g. a closed port). */
    druidUrl?: string;
  } = {},
): Promise<TestService> {
  const sim = await startSim({ timeScale: 200, capacity: 8, handoffDelayMs: 2000, seed: 5, ...options.sim });
  const ledgerUrl =
    options.ledgerUrl ?? `sqlite:${join(mkdtempSync(join(tmpdir(), "segops-serve-")), "ledger.db")}`;
  const store = await openStore(ledgerUrl);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  const token = options.token === undefined ? null : options.token;
  const service = await startService({
    port: 0,
    store,
    druid: { url: options.druidUrl ?? sim.url, retry: { baseMs: 5, capMs: 50, maxAttempts: 3 } },
    clock: systemClock,
    log: pino({ level: "info" }, sink),
    token,
    tickMs: 20,
    leaseMs: 5000,
    concurrency: 8,
    ...options.service,
  });
  running.push(async () => {
    await service.stop();
    await store.close();
    await sim.close();
  });
  const call = async (
    path: string,
    init: RequestInit & { json?: unknown; token?: string | null } = {},
  ): Promise<ApiResult> => {
    const headers = new Headers(init.headers);
    const bearer = init.token === undefined ? token : init.token;
    if (bearer) headers.set("authorization", `Bearer ${bearer}`);
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    const res = await fetch(`${service.url}${path}`, {
      ...init,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(init.json !== undefined && !init.method ? { method: "POST" } : {}),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
  return { service, sim, store, ledgerUrl, logs, call };
}

/**
 * Another user's task holding worker slots of the emulator for far longer than any test (start the service
 * with `sim: { capacity: 1 }` to leave segops none); `free()` shuts it down.
 */
export async function otherUsersTask(
  t: TestService,
  id = "other_users_task",
): Promise<{ free(): Promise<void> }> {
  const res = await fetch(`${t.sim.url}/druid/indexer/v1/task`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "noop", id, context: { simDurationMs: 1e9 } }),
  });
  if (res.status !== 200) throw new Error(`the emulator refused ${id}: ${res.status} ${await res.text()}`);
  // The worker's capacity snapshot from its start may predate this task; admission trusts none older than
  // two ticks (40 ms in these services), so let that one age past it. (Ordering, not a timing assertion.)
  await new Promise((r) => setTimeout(r, 100));
  return {
    free: async () => {
      await fetch(`${t.sim.url}/druid/indexer/v1/task/${encodeURIComponent(id)}/shutdown`, {
        method: "POST",
      });
    },
  };
}
