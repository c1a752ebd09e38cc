import type { Logger } from "pino";
import type { Clock } from "../core/clock.js";
import type { KindOfWork } from "../driver/kind.js";
import type { DruidClient } from "../druid/client.js";
import type { ClusterBinding } from "../druid/cluster.js";
import type { SourceProbe } from "../ingest/source.js";
import type { Store } from "../ledger/store.js";
import type { EventFeed, JobWaiters } from "./feed.js";
import type { LoadHistory } from "./load-history.js";
import type { ServiceMetrics } from "./metrics.js";
import type { DruidOutageSource, ReadyWorker } from "./readiness.js";

/**
 * What the API's handlers are built from: the parts the service injects (ledger, Druid client, feed,
 * waiters, worker). Every resource's routes read them from here.
 */

export interface ApiDeps {
  store: Store;
  /**
   * The kinds of work this service knows: partitions are described by their kind, and a kind that declares
   * a request gets its route. @default every registered kind (`KINDS`)
   */
  kinds?: readonly KindOfWork<never, never>[];
  client: DruidClient;
  clock: Clock;
  feed: EventFeed;
  waiters: JobWaiters;
  /** The local worker, for readiness and to pick up a new job at once; null when the API runs alone. */
  worker: (ReadyWorker & { refresh(): Promise<void> }) | null;
  metrics: ServiceMetrics | null;
  /** The API's bearer token; null: no authentication (loopback only, enforced by the server). */
  token: string | null;
  log: Logger;
  /** @default 4 MiB */
  maxBodyBytes?: number;
  /**
   * The most partitions one run or backfill request may plan: planning and storing them is work the
   * service does for one caller (a 100-year daily backfill is 36,525). @default DEFAULTS.maxPartitionsPerRequest
   */
  maxPartitionsPerRequest?: number;
  /** The Druid this service's jobs are for (part of each job's identity). */
  cluster: ClusterBinding;
  /** How a request's input is fingerprinted. @default this host's files and HEAD requests */
  sourceProbe?: SourceProbe;
  /** SSE comment lines that keep idle proxies from closing a stream. @default 15000 */
  heartbeatMs?: number;
  /** Aborted when the service drains: long-polls answer at once and streams end. */
  shutdown?: AbortSignal;
  /** segops' version, for the OpenAPI document. */
  version?: string;
  /** Event streams open right now (the app counts them; metrics read it). */
  streams: { open: number };
  /** Slots and Druid requests over time, for the dashboard (none: its Druid view is empty). */
  load?: LoadHistory | null;
  /**
   * What this host's worker waits on when the cluster blocks it (`AdmissionTracker.blockedSince` and
   * `describeBlocked`), for the dashboard's Druid view. @default never blocked
   */
  blocked?: () => BlockedState | null;
  /** The dashboard's built assets (index.html and assets/); null: `/` says it was not built. */
  webDir?: string | null;
  /** Whether Druid answers (the client's outage monitor), for readiness and the dashboard. @default always reachable */
  outage?: DruidOutageSource;
}

/** Since when (epoch ms) and on what a worker has waited for slots other tasks hold. */
export interface BlockedState {
  readonly since: number;
  readonly reason: string;
}
