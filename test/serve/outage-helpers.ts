import { mkdtempSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { type Clock, systemClock } from "../../src/core/clock.js";
import type { DruidAttempt } from "../../src/druid/http.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type RunningService, type ServiceOptions, startService } from "../../src/serve/server.js";
import type { SimOptions } from "../../src/sim/options.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";

/**
 * What the outage tests share: a clock that runs `scale` times faster than the system's (ten simulated
 * minutes in seconds: the service sleeps, backs off and times out on it, and the tests count requests and
 * log lines per simulated second, never real ones), a TCP proxy in front of the emulator that can stop
 * listening (connections refused, the emulator and its tasks running on), and a service on both.
 */

export interface ScaledClock extends Clock {
  readonly scale: number;
}

export function scaledClock(scale: number): ScaledClock {
  const realStart = Date.now();
  return {
    scale,
    now: () => realStart + (Date.now() - realStart) * scale,
    sleep: (ms, signal) => systemClock.sleep(ms / scale, signal),
  };
}

export interface SwitchProxy {
  readonly url: string;
  /** Stops listening and cuts every open connection: whoever connects is refused. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startSwitchProxy(target: string): Promise<SwitchProxy> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(Number(to.port), to.hostname);
        sockets.add(client);
        sockets.add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        for (const end of [client, upstream]) {
          end.on("error", drop);
          end.on("close", drop);
        }
        client.pipe(upstream).pipe(client);
      });
      s.once("error", reject);
      s.listen(port, "127.0.0.1", () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  const down = async () => {
    const s = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();
  return { url: `http://127.0.0.1:${port}`, down, up: listen, close: down };
}

export interface OutageService {
  service: RunningService;
  sim: SimHandle;
  proxy: SwitchProxy;
  store: Store;
  clock: ScaledClock;
  /** Every JSON log line, with the service clock's time it was written at. */
  logs: Array<{ at: number; line: Record<string, unknown> }>;
  /** Every attempt the Druid client made (requests sent), at the service clock's time. */
  attempts: Array<{ at: number; attempt: DruidAttempt }>;
  call(
    path: string,
    init?: RequestInit & { json?: unknown },
    // biome-ignore lint/suspicious/noExplicitAny: test convenience for reading arbitrary JSON bodies
  ): Promise<{ status: number; json: any; text: string }>;
  stop(): Promise<void>;
}

/** A service on a scaled clock, behind a switch proxy in front of the emulator (stop it with `stop`). */
export async function startOutageService(options: {
  scale: number;
  sim?: SimOptions;
  service?: Partial<ServiceOptions>;
  token?: string | null;
}): Promise<OutageService> {
  const sim = await startSim({ timeScale: 30, capacity: 2, handoffDelayMs: 2000, seed: 11, ...options.sim });
  const proxy = await startSwitchProxy(sim.url);
  const clock = scaledClock(options.scale);
  // The ledger stamps and compares times too: on the same clock as the service.
  const store = await openStore(
    `sqlite:${join(mkdtempSync(join(tmpdir(), "segops-outage-")), "ledger.db")}`,
    {
      clock,
    },
  );
  const logs: OutageService["logs"] = [];
  const attempts: OutageService["attempts"] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const text of String(chunk).split("\n").filter(Boolean))
        logs.push({ at: clock.now(), line: JSON.parse(text) as Record<string, unknown> });
      done();
    },
  });
  const token = options.token ?? null;
  const service = await startService({
    port: 0,
    store,
    druid: {
      url: proxy.url,
      clock,
      retry: { baseMs: 250, capMs: 30_000, maxAttempts: 5, maxTotalWaitMs: 30_000 },
      onAttempt: (attempt) => attempts.push({ at: clock.now(), attempt }),
    },
    clock,
    log: pino({ level: "info" }, sink),
    token,
    // The service's own cadences, in simulated time.
    tickMs: 1000,
    leaseMs: 300_000,
    handoffTimeoutMs: 3_600_000,
    concurrency: 8,
    ...options.service,
  });
  const call = async (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    if (token) headers.set("authorization", `Bearer ${token}`);
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers.set("content-type", "application/json");
    }
    const res = await fetch(`${service.url}${path}`, {
      ...init,
      headers,
      ...(body !== undefined ? { body, method: init.method ?? "POST" } : {}),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  };
  const stop = async () => {
    await service.stop();
    await store.close();
    await proxy.close();
    await sim.close();
  };
  return { service, sim, proxy, store, clock, logs, attempts, call, stop };
}

/** Waits (real time, a cap for a loaded machine, not a speed check) until `check` holds. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  capMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + capMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
