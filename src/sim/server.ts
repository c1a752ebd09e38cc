import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { systemClock } from "../core/clock.js";
import { ClusterEngine } from "./cluster-engine.js";
import { embeddedKillBuffer } from "./embedded-kill.js";
import type { SimEngine } from "./engine.js";
import { FaultInjector, type FaultRule } from "./faults.js";
import { DEFAULTS, type SimOptions, validateOptions } from "./options.js";
import { loadState, persistTo, restoreState } from "./persistence.js";
import { druidError, empty, json, type Reply, readBody, text, writeReply } from "./reply.js";
import { hash32, seededRng } from "./rng.js";
import { type Route, SimRouter } from "./router.js";
import { brokerRoutes } from "./routes/broker.js";
import { coordinatorRoutes } from "./routes/coordinator.js";
import { dataSourceRoutes } from "./routes/datasources.js";
import { msqRoutes } from "./routes/msq.js";
import { nativeRoutes } from "./routes/native.js";
import { overlordRoutes } from "./routes/overlord.js";
import { scaledClock } from "./scaled-clock.js";
import type { SimStatsSnapshot } from "./stats.js";

/** A running emulator. */
export interface SimHandle {
  /** Base URL, e.g. `http://127.0.0.1:8888` (serves every Druid path, like a Router). */
  readonly url: string;
  readonly port: number;
  /** The Druid major release emulated (`/status` answers `<n>.0.0`). */
  readonly druidVersion: number;
  /** The emulated cluster, for tests that need to look inside. */
  readonly engine: SimEngine;
  /** Replaces the fault rules (counts start again). */
  setFaults(rules: FaultRule[]): void;
  /** Makes a datasource's future segments never load (true) or load normally again (false). */
  setNeverLoad(dataSource: string, never: boolean): void;
  /**
   * Disables (false) or enables (true) the emulated MiddleManager `index` (0-based), as its
   * `/druid/worker/v1/disable` and `enable` do; `/workers` then lists it as the emulated release does.
   */
  setWorkerEnabled(index: number, enabled: boolean): void;
  /**
   * Stops (false) or starts (true) the emulated Historical (`POST /__sim/historical/stop`, `…/start`): stopped, it
   * serves nothing and its clones (`cloneServers`, Druid 34+) keep what they held.
   */
  setHistoricalUp(up: boolean): void;
  /** Request counts, submissions, per-task events and slot peaks (same as `GET /__sim/stats`). */
  stats(): SimStatsSnapshot;
  resetStats(): void;
  /** Advances the emulated cluster to the clock's current time (requests do this too). */
  tick(): void;
  /** Persists state (if `dataDir`) and stops listening. */
  close(): Promise<void>;
}

/** Starts the Druid emulator (Overlord + Coordinator + Broker SQL on one port, like a Router). */
export async function startSim(options: SimOptions = {}): Promise<SimHandle> {
  validateOptions(options);
  const seed = options.seed ?? DEFAULTS.seed;
  const engine = createEngine(options, seed);
  const faults = new FaultInjector(options.faults ?? [], seededRng(hash32("faults", seed)));
  const persistence = options.dataDir ? persistTo(options.dataDir, engine) : null;
  const druidVersion = options.druidVersion ?? DEFAULTS.druidVersion;
  const router = new SimRouter([
    ...adminRoutes(faults, druidVersion, {
      ...(options.runtimeProperties ?? {}),
      ...(options.virtualStorage ? { "druid.segmentCache.virtualStorage": "true" } : {}),
    }),
    ...overlordRoutes(),
    ...dataSourceRoutes(),
    ...coordinatorRoutes(),
    ...brokerRoutes(),
    ...msqRoutes(),
    ...nativeRoutes(),
  ]);
  // Known once listening; handlers read it per request.
  let url = "";
  const handle = requestHandler({ router, engine, faults, druidVersion, url: () => url });
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // Bad input must never crash the emulator: answer like Jetty's default 500.
      if (!res.headersSent)
        writeReply(res, json(500, { error: error instanceof Error ? error.message : String(error) }));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? DEFAULTS.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  url = `http://${options.host ?? DEFAULTS.host}:${port}`;

  return {
    url,
    port,
    druidVersion,
    engine,
    setFaults: (rules) => faults.set(rules),
    setNeverLoad: (ds, never) => engine.setNeverLoad(ds, never),
    setWorkerEnabled: (index, enabled) => {
      if (!engine.setWorkerEnabled(index, enabled))
        throw new RangeError(`No emulated worker ${index}: there are ${engine.slots.workers.length}`);
    },
    setHistoricalUp: (up) => engine.setHistoricalUp(up),
    stats: () => {
      engine.sync();
      return snapshot(engine);
    },
    resetStats: () => resetStats(engine),
    tick: () => engine.sync(),
    close: async () => {
      engine.sync();
      persistence?.flush();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The emulated cluster, restored from `dataDir` when it holds a saved state. */
function createEngine(options: SimOptions, seed: number): ClusterEngine {
  const saved = options.dataDir ? loadState(options.dataDir) : null;
  const scaled = scaledClock(options.clock ?? systemClock, options.timeScale ?? DEFAULTS.timeScale);
  // Sim time never goes backwards across a restart (versions and task times stay ordered).
  const offset = saved ? Math.max(0, saved.savedAt - scaled.now()) : 0;
  const clock = offset === 0 ? scaled : { now: () => scaled.now() + offset, sleep: scaled.sleep };
  const engine = new ClusterEngine({
    clock,
    seed,
    workers: options.workers ?? DEFAULTS.workers,
    capacity: options.capacity ?? DEFAULTS.capacity,
    handoffDelayMs: options.handoffDelayMs ?? DEFAULTS.handoffDelayMs,
    unusedDelayMs: options.unusedDelayMs ?? DEFAULTS.unusedDelayMs,
    millisToWaitBeforeDeleting: options.millisToWaitBeforeDeleting ?? DEFAULTS.millisToWaitBeforeDeleting,
    neverLoad: new Set(options.neverLoadDataSources ?? []),
    maxQueueSize: options.maxQueueSize ?? DEFAULTS.maxQueueSize,
    druidVersion: options.druidVersion ?? DEFAULTS.druidVersion,
    baseDurationMs: options.baseDurationMs ?? DEFAULTS.baseDurationMs,
    perRowMs: options.perRowMs ?? DEFAULTS.perRowMs,
    ...(options.compactionPeriodMs !== undefined ? { compactionPeriodMs: options.compactionPeriodMs } : {}),
    embeddedKillBuffer: embeddedKillBuffer(
      options.runtimeProperties ?? {},
      options.druidVersion ?? DEFAULTS.druidVersion,
    ),
  });
  if (saved) restoreState(engine, saved);
  return engine;
}

/** Health and version as Druid answers them, and the emulator's own `/__sim` controls. */
function adminRoutes(
  faults: FaultInjector,
  druidVersion: number,
  properties: Record<string, string> = {},
): Route[] {
  return [
    { method: "GET", path: "/status/health", handler: () => json(200, true) },
    {
      method: "GET",
      path: "/status",
      handler: () => json(200, { version: `${druidVersion}.0.0`, modules: [] }),
    },
    { method: "GET", path: "/status/properties", handler: () => json(200, properties) },
    { method: "GET", path: "/__sim/stats", handler: ({ engine: e }) => json(200, snapshot(e)) },
    // The MiddleManagers' own disable/enable (`WorkerResource`), one path per emulated worker since they share a
    // port: the answer is the MiddleManager's, `{"<host>": "disabled"}`.
    ...(["disable", "enable"] as const).map(
      (verb): Route => ({
        method: "POST",
        path: `/__sim/workers/:index/${verb}`,
        handler: ({ engine: e, params }) => {
          const index = Number(params.index);
          const w = Number.isInteger(index) ? e.slots.workers[index] : undefined;
          if (!w || !e.setWorkerEnabled(index, verb === "enable")) return text(404, "Not Found");
          return json(200, { [w.host]: `${verb}d` });
        },
      }),
    ),
    // The Historical's process stopping or starting (a blue/green switch with clones, a crash).
    ...(["stop", "start"] as const).map(
      (verb): Route => ({
        method: "POST",
        path: `/__sim/historical/${verb}`,
        handler: ({ engine: e }) => {
          if (!(e instanceof ClusterEngine)) return text(404, "Not Found");
          e.setHistoricalUp(verb === "start");
          return empty(204);
        },
      }),
    ),
    {
      method: "POST",
      path: "/__sim/reset-stats",
      handler: ({ engine: e }) => {
        resetStats(e);
        return empty(204);
      },
    },
    {
      method: "POST",
      path: "/__sim/faults",
      handler: async (ctx) => {
        try {
          const rules = JSON.parse(await ctx.body()) as FaultRule[];
          if (!Array.isArray(rules)) throw new TypeError("Expected a JSON array of fault rules");
          faults.set(rules);
          return json(200, faults.rules());
        } catch (error) {
          return json(400, { error: (error as Error).message });
        }
      },
    },
  ];
}

/**
 * One request: counted, faulted when a rule says so, routed (405 when another method has the path, else
 * 404), and answered after the cluster is brought up to the clock's time.
 */
function requestHandler(deps: {
  router: SimRouter;
  engine: SimEngine;
  faults: FaultInjector;
  druidVersion: number;
  url: () => string;
}): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { router, engine, faults, druidVersion } = deps;
  return async (req, res) => {
    const method = req.method ?? "GET";
    const parsed = new URL(req.url ?? "/", "http://sim");
    const path = parsed.pathname;
    const match = router.find(method, path);
    engine.stats.request(method, match?.pattern ?? "(unmatched)");
    const fault = faults.decide(method, path);
    if (fault) {
      engine.stats.faultsInjected++;
      const { rule } = fault;
      if (rule.kind === "reset") {
        req.socket.destroy();
        return;
      }
      if (rule.kind === "latency") await new Promise((r) => setTimeout(r, rule.latencyMs ?? 0));
      else return writeReply(res, faultReply(rule, `${deps.url()}${path}${parsed.search}`, engine));
    }
    if (!match) {
      const other = ["GET", "POST", "DELETE"].some((m) => m !== method && router.find(m, path));
      return writeReply(res, other ? empty(405) : text(404, "Not Found"));
    }
    engine.sync();
    let cached: Promise<string> | null = null;
    const reply = await match.handler({
      req,
      params: match.params,
      query: parsed.searchParams,
      body: () => {
        cached ??= readBody(req);
        return cached;
      },
      engine,
      url: deps.url(),
      druidVersion,
    });
    writeReply(res, reply);
  };
}

function snapshot(engine: SimEngine): SimStatsSnapshot {
  return engine.stats.snapshot({
    capacity: engine.slots.total,
    used: engine.slots.used,
    maxUsed: engine.slots.maxUsed,
  });
}

function resetStats(engine: SimEngine): void {
  engine.stats.reset();
  engine.slots.resetMax();
}

/** The answer a faulted request gets (bodies as Druid would send them, docs/druid-api.md §2.1, §2.2). */
function faultReply(rule: FaultRule, location: string, engine: SimEngine): Reply {
  if (rule.kind === "failover") return { status: 307, headers: { Location: location } };
  if (rule.kind === "noLeader") return empty(503);
  switch (rule.status) {
    case 429: {
      const active = [...engine.tasks.values()].filter(
        (t) => t.phase === "waiting" || t.phase === "pending" || t.phase === "running",
      ).length;
      return druidError(
        "general",
        "ADMIN",
        "CAPACITY_EXCEEDED",
        `Task queue already contains [${active}] tasks. Retry later or increase 'druid.indexer.queue.maxSize'[${engine.options.maxQueueSize}].`,
      );
    }
    case 503:
      return empty(503);
    case 502:
      return text(
        502,
        "<html><body><h2>HTTP ERROR 502 Bad Gateway</h2></body></html>",
        "text/html;charset=iso-8859-1",
      );
    default:
      return druidError("general", "OPERATOR", "UNCATEGORIZED", "Internal server error (emulated fault)");
  }
}
