import { UnavailableError } from "./errors.js";

/**
 * One backoff per Druid host during an outage, as pure decisions (no clock, no I/O; randomness is a
 * parameter). A host that stops answering is "down" once enough attempts in a row went unanswered; from
 * then on one probe is let through per backoff step and every other call is refused before it is sent
 * (`DruidUnreachableError`), until an answer brings the host back. `OutageMonitor` (outage.ts) keeps the
 * state per host and applies these decisions to every call of the client.
 */

/** When the next probe goes out while a host is down: p-retry's schedule (`minTimeout · factor^n`, capped). */
export interface ProbeSchedule {
  /**
   * Wait before the first probe after the host was found down, in ms.
   * @default 1000
   */
  minTimeoutMs?: number;
  /**
   * Growth of the wait per failed probe.
   * @default 2
   */
  factor?: number;
  /**
   * Longest wait between two probes, in ms: how late, at worst, work resumes after Druid is back.
   * @default 30000
   */
  maxTimeoutMs?: number;
  /**
   * Share of each wait taken off at random (0 to 1), so that hosts which lost Druid together do not probe
   * in step; the wait never exceeds `maxTimeoutMs`.
   * @default 0.2
   */
  jitter?: number;
}

/** What makes a host down: unanswered attempts in a row (one reset is no outage). */
export interface TripRule {
  /**
   * Unanswered attempts in a row, with no answer in between.
   * @default 3
   */
  failures?: number;
  /**
   * Time from the first of them to the last, in ms. None by default: a call's own retries can all fail
   * within a second, and it should find the host down, not give up on its own and cost its work a retry.
   * @default 0
   */
  spanMs?: number;
  /**
   * A probe with no outcome after this long (its caller gave up before an answer) no longer blocks the next.
   * @default 60000
   */
  probeTimeoutMs?: number;
}

export const DEFAULT_PROBE_SCHEDULE: Readonly<Required<ProbeSchedule>> = {
  minTimeoutMs: 1000,
  factor: 2,
  maxTimeoutMs: 30_000,
  jitter: 0.2,
};

export const DEFAULT_TRIP_RULE: Readonly<Required<TripRule>> = {
  failures: 3,
  spanMs: 0,
  probeTimeoutMs: 60_000,
};

function resolveSchedule(schedule: ProbeSchedule): Required<ProbeSchedule> {
  const s = { ...DEFAULT_PROBE_SCHEDULE, ...definedOnly(schedule) };
  const finite = (name: string, v: number, min: number, max = Number.POSITIVE_INFINITY) => {
    if (!Number.isFinite(v) || v < min || v > max)
      throw new RangeError(`Expected \`${name}\` to be a finite number from ${min} to ${max}, got ${v}`);
  };
  finite("minTimeoutMs", s.minTimeoutMs, 0);
  finite("factor", s.factor, 1);
  finite("maxTimeoutMs", s.maxTimeoutMs, s.minTimeoutMs);
  finite("jitter", s.jitter, 0, 1);
  return s;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The wait before the next probe after `failedProbes` probes failed since the host went down (0: the first
 * probe): `min(maxTimeout, minTimeout · factor^failedProbes)`, less up to `jitter` of it at random.
 */
export function probeDelay(
  failedProbes: number,
  schedule: ProbeSchedule = {},
  random: () => number = Math.random,
): number {
  const { minTimeoutMs, factor, maxTimeoutMs, jitter } = resolveSchedule(schedule);
  // factor^n overflows to Infinity for large n; min() then gives the cap, as intended.
  const ceiling = Math.min(maxTimeoutMs, minTimeoutMs * factor ** Math.max(0, failedProbes));
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.round(ceiling * (1 - jitter * unit));
}

/** One host as the gate sees it. */
export interface HostState {
  /** First unanswered attempt of the current run (null: the last attempt was answered). */
  firstFailureAt: number | null;
  /** Unanswered attempts in a row. */
  failuresInRow: number;
  /** Since when the host is down (its first unanswered attempt); null while it is up. */
  downSince: number | null;
  /** Probes that failed since the host went down. */
  failedProbes: number;
  /** When the next probe may go. */
  nextProbeAt: number;
  /** When the probe under way was let through (null: none). */
  probeSentAt: number | null;
}

export function upState(): HostState {
  return {
    firstFailureAt: null,
    failuresInRow: 0,
    downSince: null,
    failedProbes: 0,
    nextProbeAt: 0,
    probeSentAt: null,
  };
}

/** Whether an attempt's outcome says the host itself answered: any HTTP status but a gateway's "no answer behind me". */
export function hostAnswered(status: number | null): boolean {
  return status !== null && status !== 502 && status !== 504;
}

/** The host's state after an attempt's outcome: an answer brings it back; enough failures in a row take it down. */
export function afterAttempt(
  state: HostState,
  outcome: { answered: boolean; now: number },
  rule: TripRule = {},
  schedule: ProbeSchedule = {},
  random: () => number = Math.random,
): HostState {
  if (outcome.answered) return upState();
  const { failures, spanMs } = { ...DEFAULT_TRIP_RULE, ...definedOnly(rule) };
  const now = outcome.now;
  const first = state.firstFailureAt ?? now;
  const inRow = state.failuresInRow + 1;
  if (state.downSince !== null) {
    // A failure while down: the probe's (a call sent before the host went down may land here too; either
    // way it is one more step of the backoff, and the probe slot is free again).
    const failedProbes = state.probeSentAt !== null ? state.failedProbes + 1 : state.failedProbes;
    return {
      ...state,
      failuresInRow: inRow,
      failedProbes,
      probeSentAt: null,
      nextProbeAt:
        state.probeSentAt !== null ? now + probeDelay(failedProbes, schedule, random) : state.nextProbeAt,
    };
  }
  if (inRow >= failures && now - first >= spanMs) {
    return {
      firstFailureAt: first,
      failuresInRow: inRow,
      downSince: first,
      failedProbes: 0,
      nextProbeAt: now + probeDelay(0, schedule, random),
      probeSentAt: null,
    };
  }
  return { ...state, firstFailureAt: first, failuresInRow: inRow };
}

/** Whether a call may go to the host now: always while it is up; while down, only as the probe. */
export type Admission =
  | { send: true; probe: boolean; state: HostState }
  | { send: false; retryAt: number; state: HostState };

const PROBE_PENDING_RETRY_MS = 1000;

export function admit(state: HostState, now: number, rule: TripRule = {}): Admission {
  if (state.downSince === null) return { send: true, probe: false, state };
  const { probeTimeoutMs } = { ...DEFAULT_TRIP_RULE, ...definedOnly(rule) };
  const probeLost = state.probeSentAt !== null && now - state.probeSentAt >= probeTimeoutMs;
  if (now >= state.nextProbeAt && (state.probeSentAt === null || probeLost))
    return { send: true, probe: true, state: { ...state, probeSentAt: now } };
  // While a probe is out its answer decides; look again a little later (an answer that brings the host
  // back lets everything through at once).
  const retryAt = state.probeSentAt !== null && !probeLost ? now + PROBE_PENDING_RETRY_MS : state.nextProbeAt;
  return { send: false, retryAt: Math.max(retryAt, now), state };
}

/**
 * A call to a Druid host that does not answer: refused before it was sent (a probe goes out once per
 * backoff step; see `OutageMonitor`), or given up after its own attempts found the host down. Safe to send
 * again (a refused call reached nobody; a given-up one was retried only if idempotent or never sent), and
 * no failure of the work that made it: the driver comes back to that work later, counting no retry.
 */
export class DruidUnreachableError extends UnavailableError {
  /** The mark `isDruidUnreachable` reads (a copy of this module from another package has its own class). */
  readonly druidUnreachable = true;
  /** Whether this call's request may have reached Druid (false: refused here, never sent). */
  readonly requestSent: boolean;
  /** Since when the host has not answered (ms since the epoch). */
  readonly unreachableSince: number;
  /** When the next probe may find it back (ms since the epoch): a good time to try again. */
  readonly retryAt: number;
  readonly host: string;

  constructor(init: {
    endpoint: string;
    host: string;
    since: number;
    retryAt: number;
    lastError?: string;
    /** The failure of the call's own last attempt, when it was sent (default: refused, never sent). */
    cause?: Error & { requestSent?: boolean };
  }) {
    const sent = init.cause !== undefined;
    super({
      endpoint: init.endpoint,
      druidMessage: `${init.host} has not answered since ${new Date(init.since).toISOString()}${init.lastError ? ` (${init.lastError})` : ""}; ${sent ? "no answer to this call either" : "not sent"}, the next probe at ${new Date(init.retryAt).toISOString()}`,
      ...(sent ? { cause: init.cause } : {}),
    });
    this.requestSent = sent && init.cause?.requestSent !== false;
    this.unreachableSince = init.since;
    this.retryAt = init.retryAt;
    this.host = init.host;
  }
}

/** True for a call refused because Druid does not answer, also across duplicated module copies. */
export function isDruidUnreachable(error: unknown): error is DruidUnreachableError {
  return (
    error instanceof DruidUnreachableError ||
    (error instanceof Error &&
      (error as { druidUnreachable?: unknown }).druidUnreachable === true &&
      typeof (error as { retryAt?: unknown }).retryAt === "number")
  );
}
