import type { Clock } from "../core/clock.js";
import type { DruidError } from "./errors.js";
import {
  admit,
  afterAttempt,
  DruidUnreachableError,
  type HostState,
  hostAnswered,
  type ProbeSchedule,
  type TripRule,
  upState,
} from "./host-backoff.js";
import type { DruidAttempt, DruidGate } from "./http.js";

/** The endpoint family a call belongs to: its method and first four path segments (ids dropped). */
export function endpointFamily(endpoint: string): string {
  const [method, path = ""] = endpoint.split(" ", 2);
  return `${method} /${path.split("?")[0]?.split("/").filter(Boolean).slice(0, 4).join("/")}`;
}

interface FamilyState {
  /** First unanswered attempt since the family's last answer. */
  since: number;
  lastFailure: number;
  error: string;
  endpoint: string;
  /** Where its last failure was sent, and whether the host answered at all (a 5xx) or not. */
  origin: string | undefined;
  hostAnswered: boolean;
}

/** A Druid host (`http://host:port`) as the gate keeps it, with what its outage refused. */
interface HostRecord {
  state: HostState;
  /** The last unanswered call and why (`METHOD /path: message`). */
  lastError: string | null;
  /** Calls refused during the current outage, by route. */
  refused: Map<string, number>;
  /** Probes let through during the current outage. */
  probes: number;
  lastSummaryAt: number;
  /** Its last attempt or refused call: a host nothing has asked for `staleMs` no longer counts. */
  lastSeen: number;
}

/** The pino-compatible subset the monitor logs through. */
export interface OutageLog {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface OutageMonitorOptions {
  /** Where each host's outage is told: once when it starts, once when it ends, and a summary meanwhile. */
  log?: OutageLog;
  /** How often a host still down is summed up in the log, ms. @default 300000 (5 minutes) */
  summaryMs?: number;
  /** The probes' backoff while a host is down (host-backoff.ts). */
  schedule?: ProbeSchedule;
  /** What makes a host down (host-backoff.ts). */
  trip?: TripRule;
  /** Random source for the probes' jitter, in [0, 1). @default Math.random */
  random?: () => number;
  /** Told of every call refused before it was sent, by route pattern (metrics). */
  onRefused?: (route: string) => void;
}

/** A host that does not answer, as dashboards and metrics show it. */
export interface HostOutage {
  /** `http://host:port` (never credentials). */
  host: string;
  /** Its first unanswered attempt. */
  since: number;
  lastError: string | null;
  /** When the next probe may go. */
  nextProbeAt: number;
  /** Probes let through since it went down. */
  probes: number;
  /** Calls refused since it went down. */
  refused: number;
}

/**
 * Tracks whether Druid is answering, from every attempt the client makes (`onAttempt`), per endpoint
 * family: Druid down makes every family fail, but a single endpoint that keeps failing (a persistent 500
 * on `POST /taskStatus`) stalls a run just as surely while the others answer. An outage is the oldest
 * unbroken run of failures of a family still being tried; it ends when that family answers again.
 * A long run uses it to say "Druid unreachable since …" and to give up after a bounded outage.
 *
 * It also keeps one backoff per host: passed to the client as its `gate`, it refuses every call to a host
 * that does not answer (no answer at all, or a gateway's 502/504), except one probe per backoff step, so
 * that all of a process's callers together send about one request per step instead of each retrying on
 * its own; the first answer lets everything through again. It logs each host's outage when it starts and
 * when it ends (with what was refused meanwhile), and a summary every `summaryMs` while it lasts.
 */
export class OutageMonitor implements DruidGate {
  readonly #failing = new Map<string, FamilyState>();
  readonly #hosts = new Map<string, HostRecord>();
  readonly #options: OutageMonitorOptions;
  #refusedTotal = 0;

  /**
   * @param staleMs A family not tried for this long no longer counts (nothing is waiting on it).
   * @default 300000
   */
  constructor(
    private readonly clock: Clock,
    private readonly staleMs = 300_000,
    options: OutageMonitorOptions = {},
  ) {
    this.#options = options;
  }

  /** Pass as the client's `onAttempt`. */
  readonly record = (attempt: DruidAttempt): void => {
    this.#recordHost(attempt);
    const family = endpointFamily(attempt.endpoint);
    if (attempt.reachable) {
      this.#failing.delete(family);
      return;
    }
    const now = this.clock.now();
    const current = this.#failing.get(family);
    this.#failing.set(family, {
      since: current?.since ?? now,
      lastFailure: now,
      error: attempt.error.message,
      endpoint: attempt.endpoint,
      origin: attempt.origin,
      hostAnswered: hostAnswered(attempt.status),
    });
  };

  /** Pass as the client's `gate`: lets a call through, or refuses it while its host is down and no probe is due. */
  readonly admit = (call: { origin: string; endpoint: string; route: string }): void => {
    const host = this.#hosts.get(call.origin);
    if (!host || host.state.downSince === null) return;
    const now = this.clock.now();
    host.lastSeen = now;
    const decision = admit(host.state, now, this.#options.trip);
    host.state = decision.state;
    if (decision.send) {
      host.probes++;
      return;
    }
    host.refused.set(call.route, (host.refused.get(call.route) ?? 0) + 1);
    this.#refusedTotal++;
    this.#options.onRefused?.(call.route);
    this.#summarise(call.origin, host, now);
    throw new DruidUnreachableError({
      endpoint: call.endpoint,
      host: call.origin,
      since: host.state.downSince as number,
      retryAt: decision.retryAt,
      ...(host.lastError ? { lastError: host.lastError } : {}),
    });
  };

  /** Pass as the client's `gate`: a call that gave up on a host found down meanwhile says so. */
  readonly giveUp = (call: { origin: string; endpoint: string }, error: DruidError): DruidError => {
    const host = this.#hosts.get(call.origin);
    const since = host?.state.downSince ?? null;
    if (!host || since === null || !error.retryable || hostAnswered(error.status ?? null)) return error;
    return new DruidUnreachableError({
      endpoint: call.endpoint,
      host: call.origin,
      since,
      retryAt: Math.max(this.clock.now(), host.state.nextProbeAt),
      ...(host.lastError ? { lastError: host.lastError } : {}),
      cause: error,
    });
  };

  #recordHost(attempt: DruidAttempt): void {
    if (attempt.origin === undefined) return;
    const now = this.clock.now();
    const answered = hostAnswered(attempt.status);
    let host = this.#hosts.get(attempt.origin);
    if (!host) {
      if (answered) return;
      host = {
        state: upState(),
        lastError: null,
        refused: new Map(),
        probes: 0,
        lastSummaryAt: now,
        lastSeen: now,
      };
      this.#hosts.set(attempt.origin, host);
    }
    host.lastSeen = now;
    const wasDown = host.state.downSince;
    host.state = afterAttempt(
      host.state,
      { answered, now },
      this.#options.trip,
      this.#options.schedule,
      this.#options.random,
    );
    if (!attempt.reachable) host.lastError = `${attempt.endpoint}: ${attempt.error.message}`;
    if (wasDown === null && host.state.downSince !== null) {
      host.lastSummaryAt = now;
      this.#options.log?.warn(
        {
          druid: attempt.origin,
          since: iso(host.state.downSince),
          lastError: host.lastError,
          nextProbeAt: iso(host.state.nextProbeAt),
        },
        "Druid does not answer: work waits (nothing is lost), its calls are refused here and one probe goes per backoff step until it answers",
      );
    } else if (wasDown !== null && host.state.downSince === null) {
      // The host answers: what its families failed with while it did not answer was the outage, not them
      // (a family not tried since, e.g. submissions held back, would otherwise stay "down" for minutes).
      for (const [family, f] of this.#failing)
        if (f.origin === attempt.origin && !f.hostAnswered) this.#failing.delete(family);
      this.#options.log?.warn(
        {
          druid: attempt.origin,
          since: iso(wasDown),
          downMs: now - wasDown,
          probes: host.probes,
          refused: total(host.refused),
          waiting: waiting(host.refused),
        },
        `Druid answers again after ${humanDuration(now - wasDown)}: work resumes`,
      );
    }
    if (host.state.downSince === null && host.state.failuresInRow === 0) this.#hosts.delete(attempt.origin);
    else if (wasDown !== null && host.state.downSince !== null) this.#summarise(attempt.origin, host, now);
  }

  /** While a host stays down, one line every `summaryMs`: since when, what was refused, the next probe. */
  #summarise(origin: string, host: HostRecord, now: number): void {
    const every = this.#options.summaryMs ?? 300_000;
    const since = host.state.downSince;
    if (since === null || now - host.lastSummaryAt < every) return;
    host.lastSummaryAt = now;
    this.#options.log?.warn(
      {
        druid: origin,
        since: iso(since),
        downMs: now - since,
        probes: host.probes,
        refused: total(host.refused),
        waiting: waiting(host.refused),
        lastError: host.lastError,
        nextProbeAt: iso(host.state.nextProbeAt),
      },
      `Druid still does not answer (${humanDuration(now - since)}): work waits, one probe per backoff step`,
    );
  }

  /** The host down the longest, or null while every host answers (or has not failed enough to be down). */
  hostOutage(): HostOutage | null {
    const now = this.clock.now();
    let oldest: HostOutage | null = null;
    for (const [origin, h] of this.#hosts) {
      const since = h.state.downSince;
      if (since === null || now - h.lastSeen > this.staleMs || (oldest && oldest.since <= since)) continue;
      oldest = {
        host: origin,
        since,
        lastError: h.lastError,
        nextProbeAt: h.state.nextProbeAt,
        probes: h.probes,
        refused: total(h.refused),
      };
    }
    return oldest;
  }

  /** Calls refused before they were sent since this monitor was made. */
  get refusedTotal(): number {
    return this.#refusedTotal;
  }

  #oldest(): FamilyState | null {
    const now = this.clock.now();
    let oldest: FamilyState | null = null;
    for (const s of this.#failing.values()) {
      if (now - s.lastFailure > this.staleMs) continue;
      if (!oldest || s.since < oldest.since) oldest = s;
    }
    return oldest;
  }

  /** When the current outage began; null while Druid answers. */
  get since(): number | null {
    // A host that is down counts however long its families go untried: its calls are refused, not sent.
    const family = this.#oldest()?.since ?? null;
    const host = this.hostOutage()?.since ?? null;
    if (family === null) return host;
    return host === null ? family : Math.min(family, host);
  }

  /** How long the current outage has lasted, ms (0 when none). */
  outageMs(): number {
    const since = this.since;
    return since === null ? 0 : Math.max(0, this.clock.now() - since);
  }

  /** The unanswered call behind the outage and why (messages are already free of credentials). */
  get lastError(): string | null {
    const s = this.#oldest();
    return s ? `${s.endpoint}: ${s.error}` : (this.hostOutage()?.lastError ?? null);
  }

  /** One line for people: null while Druid answers. */
  describe(): string | null {
    const since = this.since;
    if (since === null) return null;
    return `Druid unreachable since ${new Date(since).toISOString()} (${Math.round(this.outageMs() / 1000)}s): ${this.lastError ?? "no answer"}`;
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

function total(refused: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const v of refused.values()) n += v;
  return n;
}

/** What was refused, by route, the most first (at most ten routes). */
function waiting(refused: ReadonlyMap<string, number>): Record<string, number> {
  return Object.fromEntries([...refused].sort((a, b) => b[1] - a[1]).slice(0, 10));
}

/** "4m12s", "35s", "2h03m". */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/** An outage as a wait reports it: since when the failing call has not been answered, and that call. */
export interface OutageSeen {
  since: number;
  lastError: string | null;
}

/** "Druid unreachable since <ISO time> (<the failing call>: <why>)". */
export function describeOutage(outage: OutageSeen): string {
  return `Druid unreachable since ${new Date(outage.since).toISOString()} (${outage.lastError ?? "no answer"})`;
}

/**
 * Bounds a wait on Druid (`segops poll`, `segops wait`) by its outages: `signal` aborts once the monitor's
 * outage has lasted `timeoutMs`, and `tripped` is that outage. `current()` is the outage going on now, so
 * a deadline that came first while Druid was not answering can say so instead of blaming the task.
 */
export class OutageGuard {
  readonly #trip = new AbortController();
  readonly #stop = new AbortController();
  readonly #loop: Promise<void>;
  #tripped: OutageSeen | null = null;

  /** @param checkMs Longest time between two looks while Druid answers. @default 1000 */
  constructor(
    private readonly monitor: OutageMonitor,
    clock: Clock,
    timeoutMs: number,
    checkMs = 1000,
  ) {
    this.#loop = (async () => {
      while (!this.#stop.signal.aborted) {
        const since = monitor.since;
        const now = clock.now();
        if (since !== null && now - since >= timeoutMs) {
          this.#tripped = { since, lastError: monitor.lastError };
          this.#trip.abort(new Error(describeOutage(this.#tripped)));
          return;
        }
        // During an outage, look again when it would reach the timeout (not a whole check later).
        const wait = since === null ? checkMs : Math.min(checkMs, since + timeoutMs - now);
        await clock.sleep(Math.max(1, wait), this.#stop.signal).catch(() => undefined);
      }
    })();
  }

  /** Aborted once an outage outlasted the timeout. */
  get signal(): AbortSignal {
    return this.#trip.signal;
  }

  /** The outage that outlasted the timeout; null while none has. */
  get tripped(): OutageSeen | null {
    return this.#tripped;
  }

  /** The outage that stopped the wait, or else the one going on now; null while Druid answers. */
  current(): OutageSeen | null {
    if (this.#tripped) return this.#tripped;
    const since = this.monitor.since;
    return since === null ? null : { since, lastError: this.monitor.lastError };
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }
}
