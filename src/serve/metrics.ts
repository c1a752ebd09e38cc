import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { DriverObserver } from "../driver/driver.js";
import type { DruidAttempt } from "../druid/http.js";
import { BUDGET_CLASSES, type BudgetClass } from "../druid/request-budget.js";
import { KINDS } from "../jobs/kinds.js";
import type { Store } from "../ledger/store.js";
import type { EventRow, TaskRow, Transition } from "../ledger/types.js";
import { histogramQuantile } from "./load-history.js";

/**
 * The service's Prometheus metrics (prom-client, text exposition format at `/metrics`). Counters and
 * histograms count what this process did; `segops_partitions` is read from the shared ledger at scrape
 * time, so every host of a ledger reports the same value (aggregate it with `max`, not `sum`).
 * docs/operations.md lists each metric with example alerts.
 */

export interface LatencyQuantiles {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  /** Detection only: partitions done whose Druid end came after segops saw it (see `detectionUnmeasured`). */
  unmeasured?: number;
}

/** Where the service's gauges read from at scrape time. */
export interface MetricSources {
  store: Store;
  /** Worker slots as last seen by this process (`AdmissionTracker.slots`). */
  slots(): { ours: number; used: number; capacity: number } | null;
  /** Long-poll waiters and event streams open right now. */
  waiters(): number;
  /** When the change feed last read the ledger (ms since epoch), null before its first read. */
  lastFeedTick(): number | null;
  /** Since when this process's worker is blocked by the cluster (`AdmissionTracker.blockedSince`). @default never */
  blockedSince?(): number | null;
  /** Whether this process's worker makes progress (`Worker.progress`); null or absent: no worker. */
  progress?(): { stalled: boolean; lastProgressAt: number } | null;
  /** The kinds of work whose counters start at 0. @default every registered kind (`KINDS`) */
  kinds?: readonly string[];
  /** Whether this process reaches Druid, and since when not (`druidReachability`). @default always reachable */
  druid?(): { reachable: boolean; since?: string | undefined };
  /**
   * The cluster's Druid release as read from `/status`, and the release segops behaves as there (capabilities.ts);
   * null before the first read has finished. @default never read
   */
  druidRelease?(): { version: string | null; behavesAs: number } | null;
}

/** The transitions whose counters start at 0 for every kind (the ones alerts and dashboards read). */
const COUNTED_TRANSITIONS = ["done", "failed", "dead", "retry"] as const;

const LATENCY_BUCKETS = [0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800];

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #druidRequests: Counter<"endpoint" | "code">;
  readonly #druidBytes: Counter<"endpoint">;
  readonly #transitions: Counter<"kind" | "to">;
  readonly #attempts: Counter<"kind">;
  readonly #retries: Counter<"kind">;
  readonly #deadLetters: Counter<"kind">;
  readonly #takeovers: Counter;
  readonly #statusTick: Histogram;
  readonly #detection: Histogram;
  /**
   * Partitions done whose end by Druid's clock (createdTime + duration) is after segops recorded it: Druid's
   * clock runs ahead of this host's (an emulator's --time-scale above 1, or clock skew), so no detection
   * latency can be measured for them; the dashboard says so instead of a bare "–".
   */
  #detectionUnmeasured = 0;
  readonly #handoff: Histogram;
  readonly #http: Counter<"route" | "method" | "code">;
  readonly #refused: Counter;
  readonly #budgetWaits: Counter<"class">;
  readonly #budgetWaited: Counter<"class">;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    const m = activityMetrics(registers);
    this.#druidRequests = m.druidRequests;
    this.#druidBytes = m.druidBytes;
    this.#transitions = m.transitions;
    this.#attempts = m.attempts;
    this.#retries = m.retries;
    this.#deadLetters = m.deadLetters;
    this.#takeovers = m.takeovers;
    this.#statusTick = m.statusTick;
    this.#detection = m.detection;
    this.#handoff = m.handoff;
    this.#http = m.http;
    this.#refused = m.refused;
    this.#budgetWaits = m.budgetWaits;
    this.#budgetWaited = m.budgetWaited;
    for (const cls of BUDGET_CLASSES) {
      this.#budgetWaits.inc({ class: cls }, 0);
      this.#budgetWaited.inc({ class: cls }, 0);
    }
    // A labelled series exists only once it has a value, and `increase()`/`rate()` cannot see the step to
    // a series' first sample: without a 0 first, the first dead letter after a start would never alert
    // (https://prometheus.io/docs/practices/instrumentation/#avoid-missing-metrics).
    for (const kind of sources.kinds ?? KINDS.map((k) => k.name)) {
      this.#attempts.inc({ kind }, 0);
      this.#retries.inc({ kind }, 0);
      this.#deadLetters.inc({ kind }, 0);
      for (const to of COUNTED_TRANSITIONS) this.#transitions.inc({ kind, to }, 0);
    }
    ledgerGauge(sources, registers);
    druidSlotGauges(sources, registers);
    workerGauges(sources, registers);
    druidReachabilityGauges(sources, registers);
  }

  /** For `DruidHttpOptions.onAttempt`. */
  readonly druidAttempt = (attempt: DruidAttempt): void => {
    this.#druidRequests.inc({
      endpoint: attempt.route,
      code: attempt.status === null ? "none" : String(attempt.status),
    });
    this.#druidBytes.inc({ endpoint: attempt.route }, attempt.bytes ?? 0);
  };

  /** For `OutageMonitorOptions.onRefused`: a call refused here, not sent, while Druid does not answer. */
  readonly druidRefused = (_route: string): void => {
    this.#refused.inc();
  };

  /** For the request budget's `onWait`: a call held back by `--druid-request-budget`, and for how long. */
  readonly druidBudgetWait = (cls: BudgetClass, waitedMs: number): void => {
    this.#budgetWaits.inc({ class: cls });
    this.#budgetWaited.inc({ class: cls }, waitedMs / 1000);
  };

  /** For `createMachinery`'s `onStatusLookup`. */
  readonly statusLookup = (durationMs: number): void => {
    this.#statusTick.observe(durationMs / 1000);
  };

  /** For the worker's driver. */
  readonly observer: DriverObserver = {
    claimed: (kind, rows) => {
      this.#attempts.inc({ kind }, rows.length);
    },
    committed: (kind, change, row) => this.#committed(kind, change, row),
  };

  /** For the change feed: events this process's driver (`owner`) committed. */
  feedEvents(events: readonly EventRow[], owner: string | undefined): void {
    for (const e of events) {
      if (e.actor === owner && e.reason.startsWith("claimed after the lease")) this.#takeovers.inc();
    }
  }

  httpRequest(route: string, method: string, status: number): void {
    this.#http.inc({ route, method, code: String(status) });
  }

  #committed(kind: string, change: Transition, row: TaskRow): void {
    const to = change.to === "retry" && row.state === "failed" ? "failed" : change.to;
    this.#transitions.inc({ kind, to });
    if (change.to === "retry" && row.state !== "failed") this.#retries.inc({ kind });
    if (row.state === "dead") this.#deadLetters.inc({ kind });
    if (row.state !== "done") return;
    const p = row.progress as Record<string, unknown>;
    const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
    const succeededAt = num(p.succeededAt);
    const handedOffAt = num(p.handedOffAt);
    if (succeededAt !== null && handedOffAt !== null && handedOffAt >= succeededAt)
      this.#handoff.observe((handedOffAt - succeededAt) / 1000);
    const created = typeof p.druidCreatedTime === "string" ? Date.parse(p.druidCreatedTime) : Number.NaN;
    const duration = num(p.druidDurationMs);
    if (succeededAt !== null && Number.isFinite(created) && duration !== null && duration >= 0) {
      const ended = created + duration;
      if (succeededAt >= ended) this.#detection.observe((succeededAt - ended) / 1000);
      else this.#detectionUnmeasured++;
    }
  }

  /** Detection and handoff latency quantiles (seconds) from this process's histograms. */
  async latencyQuantiles(): Promise<Record<"detection" | "handoff", LatencyQuantiles>> {
    const of = async (h: Histogram): Promise<LatencyQuantiles> => {
      const values = (await h.get()).values;
      const buckets = values
        .filter((v) => v.metricName?.endsWith("_bucket"))
        .map((v) => ({
          le: v.labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(v.labels.le),
          count: v.value,
        }));
      const count = values.find((v) => v.metricName?.endsWith("_count"))?.value ?? 0;
      return {
        count,
        p50: histogramQuantile(0.5, buckets),
        p90: histogramQuantile(0.9, buckets),
        p99: histogramQuantile(0.99, buckets),
      };
    };
    return {
      detection: { ...(await of(this.#detection)), unmeasured: this.#detectionUnmeasured },
      handoff: await of(this.#handoff),
    };
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** What this process did: Druid requests, ledger transitions, attempts, retries, latencies, API requests. */
function activityMetrics(registers: Registry[]) {
  return {
    druidRequests: new Counter({
      name: "segops_druid_requests_total",
      help: "HTTP requests (each attempt, retries included) this process sent to Druid, by endpoint route and status code ('none': no answer)",
      labelNames: ["endpoint", "code"],
      registers,
    }),
    druidBytes: new Counter({
      name: "segops_druid_response_bytes_total",
      help: "Bytes of the response bodies Druid sent this process (each attempt, retries included), by endpoint route",
      labelNames: ["endpoint"],
      registers,
    }),
    transitions: new Counter({
      name: "segops_ledger_transitions_total",
      help: "Ledger transitions this process committed, by kind of work and outcome",
      labelNames: ["kind", "to"],
      registers,
    }),
    attempts: new Counter({
      name: "segops_attempts_total",
      help: "Partition runs this process started: claims of a ledger task (a partition is claimed again after a hand-back, a deferral or a retry)",
      labelNames: ["kind"],
      registers,
    }),
    retries: new Counter({
      name: "segops_retries_total",
      help: "Retry-class failures this process committed (a backoff before the next run)",
      labelNames: ["kind"],
      registers,
    }),
    deadLetters: new Counter({
      name: "segops_dead_letters_total",
      help: "Partitions this process moved to the dead letters",
      labelNames: ["kind"],
      registers,
    }),
    takeovers: new Counter({
      name: "segops_lease_takeovers_total",
      help: "Partitions this process claimed after another owner's lease expired",
      registers,
    }),
    statusTick: new Histogram({
      name: "segops_status_poll_seconds",
      help: "Duration of one bulk task-status lookup (one poll tick of every watched Druid task)",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    detection: new Histogram({
      name: "segops_detection_latency_seconds",
      help: "From a Druid task's end (createdTime + duration) to segops recording it",
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    handoff: new Histogram({
      name: "segops_handoff_latency_seconds",
      help: "From a partition's Druid SUCCESS to its data proven served (handoff gate passed)",
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    refused: new Counter({
      name: "segops_druid_requests_refused_total",
      help: "Druid calls this process refused without sending them while Druid did not answer (one probe per backoff step goes instead)",
      registers,
    }),
    budgetWaits: new Counter({
      name: "segops_druid_request_budget_waits_total",
      help: "Druid calls this process held back by --druid-request-budget until a token accrued (sent later, never dropped), by class: status, handoff, other, admission",
      labelNames: ["class"],
      registers,
    }),
    budgetWaited: new Counter({
      name: "segops_druid_request_budget_wait_seconds_total",
      help: "Seconds Druid calls waited for --druid-request-budget's tokens, by class",
      labelNames: ["class"],
      registers,
    }),
    http: new Counter({
      name: "segops_http_requests_total",
      help: "API requests answered, by route pattern, method and status code",
      labelNames: ["route", "method", "code"],
      registers,
    }),
  };
}

/** `segops_partitions`: read from the shared ledger at scrape time (every host reports the same). */
function ledgerGauge(sources: MetricSources, registers: Registry[]): void {
  new Gauge({
    name: "segops_partitions",
    help: "Partitions in the ledger by kind of work and state (the whole shared ledger)",
    labelNames: ["kind", "state"],
    registers,
    async collect() {
      this.reset();
      for (const c of await sources.store.countByKind()) this.set({ kind: c.kind, state: c.state }, c.count);
    },
  });
}

/** Druid's worker slots and this process's share, as it last saw them. */
function druidSlotGauges(sources: MetricSources, registers: Registry[]): void {
  // Three gauges rather than one with a `who` label: a sum over such a label (capacity + used + ours)
  // would mean nothing (https://prometheus.io/docs/practices/naming/#labels).
  new Gauge({
    name: "segops_druid_worker_capacity_slots",
    help: "Task slots of Druid's enabled workers (sum of capacity in /druid/indexer/v1/workers), as this process last saw them",
    registers,
    collect() {
      const slots = sources.slots();
      if (slots) this.set(slots.capacity);
      else this.remove();
    },
  });
  new Gauge({
    name: "segops_druid_worker_used_slots",
    help: "Task slots in use on Druid's enabled workers by any task (sum of currCapacityUsed), as this process last saw them",
    registers,
    collect() {
      const slots = sources.slots();
      if (slots) this.set(slots.used);
      else this.remove();
    },
  });
  new Gauge({
    name: "segops_admission_reserved_slots",
    help: "Task slots this process's in-flight partitions hold or have reserved (1, or k+1 for k concurrent sub-tasks, each)",
    registers,
    collect() {
      const slots = sources.slots();
      if (slots) this.set(slots.ours);
      else this.remove();
    },
  });
}

/** This process's waiters, admission block, worker progress and change feed. */
function workerGauges(sources: MetricSources, registers: Registry[]): void {
  new Gauge({
    name: "segops_waiters",
    help: "Long-poll waiters and event streams open on this process",
    registers,
    collect() {
      this.set(sources.waiters());
    },
  });
  new Gauge({
    name: "segops_admission_blocked_since_timestamp_seconds",
    help: "Since when this process's partitions wait for worker slots other tasks hold, with none of its own in flight (unix seconds; absent when not blocked)",
    registers,
    collect() {
      const since = sources.blockedSince?.() ?? null;
      if (since !== null) this.set(since / 1000);
      else this.remove();
    },
  });
  new Gauge({
    name: "segops_worker_stalled",
    help: "1 while this process's worker is stalled: partitions of its jobs were due for the stall timeout while it held none and claimed nothing, with no outage or slot shortage to excuse it (GET /readyz answers 503); else 0",
    registers,
    collect() {
      const progress = sources.progress?.() ?? null;
      if (progress) this.set(progress.stalled ? 1 : 0);
      else this.remove();
    },
  });
  new Gauge({
    name: "segops_worker_last_progress_timestamp_seconds",
    help: "When this process's worker last claimed a partition or committed a change to one (unix seconds; its start, before the first)",
    registers,
    collect() {
      const progress = sources.progress?.() ?? null;
      if (progress) this.set(progress.lastProgressAt / 1000);
      else this.remove();
    },
  });
  new Gauge({
    name: "segops_feed_last_read_timestamp_seconds",
    help: "When this process last read the ledger's change feed (unix seconds); stale means the service is stuck",
    registers,
    collect() {
      const at = sources.lastFeedTick();
      if (at !== null) this.set(at / 1000);
      else this.remove();
    },
  });
}

/** Whether this process reaches Druid: the state `/readyz` and the dashboard's banner show. */
function druidReachabilityGauges(sources: MetricSources, registers: Registry[]): void {
  new Gauge({
    name: "segops_druid_reachable",
    help: "1 while this process reaches Druid; 0 while its calls are refused for an outage (one probe per backoff step) or its worker has handed its partitions back for Druid",
    registers,
    collect() {
      this.set(sources.druid?.().reachable === false ? 0 : 1);
    },
  });
  new Gauge({
    name: "segops_druid_unreachable_since_timestamp_seconds",
    help: "Since when Druid has not answered this process (unix seconds; absent while it answers)",
    registers,
    collect() {
      const state = sources.druid?.();
      const since = state && !state.reachable && state.since ? Date.parse(state.since) : Number.NaN;
      if (Number.isFinite(since)) this.set(since / 1000);
      else this.remove();
    },
  });
  new Gauge({
    name: "segops_druid_release_info",
    help: "1, labelled with the cluster's Druid release as /status reported it (version, empty when it could not be read) and the release whose behaviour segops follows there (behaves_as); absent before the first read",
    labelNames: ["version", "behaves_as"] as const,
    registers,
    collect() {
      this.reset();
      const release = sources.druidRelease?.();
      if (release) this.set({ version: release.version ?? "", behaves_as: String(release.behavesAs) }, 1);
    },
  });
}
