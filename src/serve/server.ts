import { setMaxListeners } from "node:events";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { serve } from "@hono/node-server";
import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import { UsageError } from "../core/errors.js";
import type { KindOfWork } from "../driver/kind.js";
import { DruidClient, type DruidClientOptions } from "../druid/client.js";
import { clusterOf } from "../druid/cluster.js";
import { OutageMonitor } from "../druid/outage.js";
import { type BudgetClass, RequestBudget } from "../druid/request-budget.js";
import { Worker } from "../jobs/worker.js";
import type { Store } from "../ledger/store.js";
import type { DruidServices } from "../work/services.js";
import { buildApp } from "./app.js";
import { isLoopback } from "./auth.js";
import type { ApiDeps } from "./deps.js";
import { ALL_JOBS, EventFeed, JobWaiters } from "./feed.js";
import { LoadHistory } from "./load-history.js";
import { ServiceMetrics } from "./metrics.js";
import { parserProblemResponse } from "./problems.js";
import { druidReachability } from "./readiness.js";
import { findWebDir } from "./web.js";

/**
 * `segops serve`: the worker (every job of its cluster in the ledger), the change feed, the HTTP API and
 * the metrics in one process. Several of them on one PostgreSQL ledger split the work through leases.
 * A stop (SIGTERM) drains: long-polls are answered, the listener closes, held partitions are handed back
 * (suspended, due now, so another host takes them at once) and the process exits within a bound.
 */

export interface ServiceOptions {
  /** @default "127.0.0.1" */
  host?: string;
  /** 0 picks a free port. @default 7077 */
  port?: number;
  store: Store;
  /** Client options; the service adds its own `onAttempt` (metrics and the outage monitor). */
  druid: DruidClientOptions;
  clock: Clock;
  log: Logger;
  /** The API's bearer token; null runs without authentication, which only a loopback host may. */
  token: string | null;
  /** Partitions in flight at once in this process. @default DEFAULTS.maxConcurrency */
  concurrency?: number;
  tickMs?: number;
  leaseMs?: number;
  handoffTimeoutMs?: number;
  poisonAfter?: number;
  /** Hand partitions back while Druid has not answered this long. @default DEFAULTS.druidOutageTimeoutMs */
  outageTimeoutMs?: number;
  /**
   * Say the worker is stalled (`/readyz` 503, `segops_worker_stalled`) once partitions have been due for
   * it this long while it held none and claimed nothing. @default DEFAULT_STALL_TIMEOUT_MS (5 minutes)
   */
  stallTimeoutMs?: number;
  /** How long a stop may take before open connections are cut. @default 30000 */
  drainTimeoutMs?: number;
  /** @default 4 MiB */
  maxBodyBytes?: number;
  /** The most partitions one run or backfill request may plan. @default DEFAULTS.maxPartitionsPerRequest */
  maxPartitionsPerRequest?: number;
  /**
   * The kinds of work this service runs and answers for (its worker's runners, the partitions it
   * describes, the request routes it serves). @default every registered kind (`KINDS`)
   */
  kinds?: readonly KindOfWork<DruidServices, never>[];
  /** Lease owner id. @default host:pid:random */
  owner?: string;
  version?: string;
  /** The dashboard's built assets. @default dist/web (findWebDir); null serves no dashboard */
  webDir?: string | null;
  /** How often the dashboard's Druid view samples slots and requests. @default 10000 */
  loadSampleMs?: number;
}

export interface RunningService {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  /** The worker's lease owner id (what this host writes as the actor of its transitions). */
  readonly owner: string;
  readonly worker: Worker;
  readonly metrics: ServiceMetrics;
  /** Drains and stops (idempotent); resolves when everything is closed. */
  stop(reason?: string): Promise<void>;
  /** Resolves when the service has stopped (after `stop`, or a fatal ledger error). */
  readonly stopped: Promise<void>;
}

export async function startService(o: ServiceOptions): Promise<RunningService> {
  const host = o.host ?? "127.0.0.1";
  if (o.token === null && !isLoopback(host)) {
    throw new UsageError(
      `refusing to serve on ${host} without a token: anyone who can reach it could start and cancel work; pass --api-token-file (or set SEGOPS_API_TOKEN), or bind 127.0.0.1`,
      { host },
    );
  }
  const parts = assemble(o);
  const { client, feed, worker, load } = parts;
  const webDir = o.webDir === undefined ? findWebDir() : o.webDir;
  const { app } = buildApp(apiDeps(o, parts, webDir));
  const server = await listen(app, host, o.port ?? 7077, client);
  // Listening first: a port in use fails before any partition is claimed.
  try {
    await feed.start();
    await worker.start();
    load.start();
    // The cluster's release, read now rather than at the first admission: requests are then checked against
    // its rules (ingest/release-check.ts) from the start. Never throws; a Druid down is read again later.
    void client.capabilities();
  } catch (error) {
    await load.stop();
    await feed.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await client.close();
    throw error;
  }
  const owner = worker.owner ?? "driver";
  logStateChanges(parts, owner, o.log);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  o.log.info(
    { url, owner, cluster: clusterOf(client), dashboard: webDir ? `${url}/` : "not built (npm run build)" },
    "serving",
  );
  const { stop, stopped, draining } = drainer(o, parts, server);
  // A worker stopped by a storage error takes the service down with it (the exit code says so).
  void worker.done.then(() => {
    if (!draining() && worker.failure !== undefined) {
      o.log.error({ err: worker.failure }, "the worker stopped on a ledger error");
      void stop("ledger error");
    }
  });
  return { url, port, owner, worker, metrics: parts.metrics, stop, stopped };
}

/** The parts one service is made of: Druid client, change feed, waiters, metrics, worker, load history. */
interface Parts {
  readonly client: DruidClient;
  readonly monitor: OutageMonitor;
  readonly feed: EventFeed;
  readonly waiters: JobWaiters;
  readonly metrics: ServiceMetrics;
  readonly worker: Worker;
  readonly load: LoadHistory;
  readonly streams: { open: number };
  /** Aborted when the service drains. */
  readonly shutdown: AbortController;
}

function assemble(o: ServiceOptions): Parts {
  const tickMs = o.tickMs ?? DEFAULTS.tickMs;
  let metrics: ServiceMetrics | undefined;
  // One backoff per Druid host for every caller of this process: while Druid does not answer, one probe
  // per step goes out and the other calls are refused here (logged once per outage, not once a call).
  const monitor = new OutageMonitor(o.clock, undefined, {
    log: o.log,
    onRefused: (route) => metrics?.druidRefused(route),
  });
  const streams = { open: 0 };
  let worker: Worker | undefined;
  const load = new LoadHistory({
    clock: o.clock,
    slots: () => worker?.machinery.admission.slots ?? null,
    ...(o.loadSampleMs !== undefined ? { sampleMs: o.loadSampleMs } : {}),
  });
  const budget = o.druid.requestBudget;
  const client = new DruidClient({
    ...o.druid,
    // A budget given as a rate counts its waits in /metrics; a shared one given whole keeps its own counters.
    ...(budget && !(budget instanceof RequestBudget)
      ? {
          requestBudget: {
            ...budget,
            onWait: (cls: BudgetClass, waitedMs: number) => {
              metrics?.druidBudgetWait(cls, waitedMs);
              budget.onWait?.(cls, waitedMs);
            },
          },
        }
      : {}),
    gate: monitor,
    onAttempt: (attempt) => {
      monitor.record(attempt);
      metrics?.druidAttempt(attempt);
      load.druidAttempt(attempt);
      o.druid.onAttempt?.(attempt);
    },
  });
  const feed = new EventFeed({
    store: o.store,
    clock: o.clock,
    tickMs: Math.max(50, Math.floor(tickMs / 4)),
  });
  const shutdown = new AbortController();
  // Every parked long-poll and event stream listens for the shutdown: thousands at once are expected,
  // not a leak (Node warns past 10 listeners by default).
  setMaxListeners(0, shutdown.signal);
  const waiters = new JobWaiters({ store: o.store, feed, clock: o.clock, shutdown: shutdown.signal });
  metrics = new ServiceMetrics({
    store: o.store,
    slots: () => worker?.machinery.admission.slots ?? null,
    waiters: () => waiters.waiting + streams.open,
    lastFeedTick: () => feed.lastTickAt,
    blockedSince: () => worker?.machinery.admission.blockedSince ?? null,
    progress: () => worker?.progress ?? null,
    druid: () => druidReachability(monitor, worker ?? null, o.clock.now()),
    druidRelease: () => {
      const known = client.knownCapabilities();
      return known ? { version: known.version?.text ?? null, behavesAs: known.behavesAs } : null;
    },
  });
  worker = new Worker({
    store: o.store,
    client,
    clock: o.clock,
    tickMs,
    maxConcurrency: o.concurrency ?? DEFAULTS.maxConcurrency,
    ...(o.leaseMs !== undefined ? { leaseMs: o.leaseMs } : {}),
    ...(o.handoffTimeoutMs !== undefined ? { handoffTimeoutMs: o.handoffTimeoutMs } : {}),
    ...(o.poisonAfter !== undefined ? { poisonAfter: o.poisonAfter } : {}),
    ...(o.stallTimeoutMs !== undefined ? { stallTimeoutMs: o.stallTimeoutMs } : {}),
    ...(o.owner ? { owner: o.owner } : {}),
    ...(o.kinds ? { kinds: o.kinds } : {}),
    log: o.log,
    observer: metrics.observer,
    onStatusLookup: metrics.statusLookup,
    outage: { monitor, timeoutMs: o.outageTimeoutMs ?? DEFAULTS.druidOutageTimeoutMs },
  });
  return { client, monitor, feed, waiters, metrics, worker, load, streams, shutdown };
}

function apiDeps(o: ServiceOptions, p: Parts, webDir: string | null): ApiDeps {
  const { worker } = p;
  return {
    store: o.store,
    ...(o.kinds ? { kinds: o.kinds } : {}),
    client: p.client,
    clock: o.clock,
    feed: p.feed,
    waiters: p.waiters,
    worker,
    metrics: p.metrics,
    token: o.token,
    log: o.log,
    cluster: clusterOf(p.client),
    streams: p.streams,
    shutdown: p.shutdown.signal,
    load: p.load,
    blocked: () => {
      const admission = worker.machinery.admission;
      const since = admission.blockedSince ?? null;
      return since === null
        ? null
        : { since, reason: admission.describeBlocked() ?? "waiting for worker slots" };
    },
    webDir,
    outage: p.monitor,
    ...(o.maxBodyBytes !== undefined ? { maxBodyBytes: o.maxBodyBytes } : {}),
    ...(o.maxPartitionsPerRequest !== undefined
      ? { maxPartitionsPerRequest: o.maxPartitionsPerRequest }
      : {}),
    ...(o.version ? { version: o.version } : {}),
  };
}

/** Listens; a port in use, not ours or privileged is the user's to change (exit 2, naming the flags). */
async function listen(
  app: { fetch: (request: Request) => Response | Promise<Response> },
  host: string,
  port: number,
  client: DruidClient,
): Promise<ReturnType<typeof serve>> {
  return new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host }, () => resolve(s));
    s.once("error", reject);
    // What the HTTP parser refuses (e.g. a URL over its 16 KiB) is answered as a problem, like the rest.
    s.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
      if (error.code === "ECONNRESET" || !socket.writable) return void socket.destroy();
      socket.end(parserProblemResponse(error));
    });
  }).catch(async (error: NodeJS.ErrnoException) => {
    await client.close();
    if (error.code === "EADDRINUSE" || error.code === "EADDRNOTAVAIL" || error.code === "EACCES") {
      const why = {
        EADDRINUSE: "is in use",
        EADDRNOTAVAIL: "is not an address of this host",
        EACCES: "needs privileges",
      };
      throw new UsageError(
        `cannot listen on ${host}:${port}: the address ${why[error.code]} (--host, --port)`,
        {
          host,
          port,
        },
      );
    }
    throw error;
  });
}

/** One log line per state change this host (its driver or its API) committed; metrics count them all. */
function logStateChanges(p: Parts, owner: string, log: Logger): void {
  p.feed.subscribe(ALL_JOBS, (events) => {
    p.metrics.feedEvents(events, owner);
    for (const e of events) {
      if (e.actor !== owner && e.actor !== "api") continue;
      log.info(
        {
          jobId: e.jobId,
          taskId: e.taskId,
          from: e.fromState,
          to: e.toState,
          reason: e.reason,
          actor: e.actor,
        },
        "state change",
      );
    }
  });
}

/**
 * The drain: waiters and streams answered at once (clients re-poll another host), the listener closed,
 * partitions handed back, connections cut after the drain timeout. Idempotent.
 */
function drainer(
  o: ServiceOptions,
  p: Parts,
  server: ReturnType<typeof serve>,
): { stop: RunningService["stop"]; stopped: Promise<void>; draining: () => boolean } {
  let stopping: Promise<void> | null = null;
  let markStopped!: () => void;
  const stopped = new Promise<void>((resolve) => {
    markStopped = resolve;
  });
  const stop = (reason = "stop requested"): Promise<void> => {
    stopping ??= (async () => {
      o.log.info({ reason }, "draining: answering waiters, closing the listener, handing partitions back");
      p.shutdown.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const cut = setTimeout(() => {
        o.log.warn({}, "drain timeout: cutting the remaining connections");
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }, o.drainTimeoutMs ?? 30_000);
      cut.unref();
      try {
        await p.worker.stop().catch((error) => o.log.error({ err: error }, "worker stopped on an error"));
        await closed;
      } finally {
        clearTimeout(cut);
        await p.load.stop();
        await p.feed.stop();
        await p.client.close();
        o.log.info({}, "stopped");
        markStopped();
      }
    })();
    return stopping;
  };
  return { stop, stopped, draining: () => stopping !== null };
}
