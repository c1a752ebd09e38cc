import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";

/**
 * Whether a worker makes progress. A worker is *stalled* when, for `stallAfterMs` without a break, it
 * was expected to move and did not:
 *
 * - expected to move: partitions of the jobs it runs are due (claimable now), it holds none, and nothing
 *   already reported excuses it (paused for a Druid or ledger outage, Druid not answering, admission
 *   blocked by worker slots other tasks hold);
 * - did not move: it claimed no partition and committed no change to one (a step such as the submission
 *   to Druid, a retry, an end).
 *
 * A worker busy with partitions of its own is never stalled, however long their Druid tasks run: waiting
 * for them is the normal pace of a backfill. What this catches is a host that looks up and idle while
 * work waits for it, e.g. one still counting admission slots for partitions another host took over.
 *
 * Pure logic over an injected clock: the worker tells it what it sees once a tick (`observe`) and every
 * claim and commit (`progressed`).
 */

/** Five minutes (`DEFAULTS.stallTimeoutMs`): longer than any claim cycle or Druid hiccup short of an outage. */
export const DEFAULT_STALL_TIMEOUT_MS = DEFAULTS.stallTimeoutMs;

/** What the worker sees at one look. */
export interface WorkerLook {
  /** Why it is not expected to move now, already reported elsewhere (a pause, an outage); null: nothing. */
  readonly excuse: string | null;
  /** Partitions it holds. */
  readonly held: number;
  /** Whether partitions of its jobs are due; undefined when not read at this look (the last answer stands). */
  readonly due?: boolean;
}

export interface StallState {
  readonly stalled: boolean;
  /** When stalled: since when it has been expected to move and has not. Null otherwise. */
  readonly since: number | null;
  /** Its last claim or commit (its start, before the first). */
  readonly lastProgressAt: number;
}

export interface ProgressWatchOptions {
  readonly clock: Clock;
  /** @default DEFAULT_STALL_TIMEOUT_MS */
  readonly stallAfterMs?: number;
  /**
   * How often an idle worker asks the ledger whether partitions are due (a read per kind of work).
   * @default a tenth of `stallAfterMs`, at most 10 s
   */
  readonly dueCheckMs?: number;
}

export class ProgressWatch {
  readonly #clock: Clock;
  readonly #stallAfterMs: number;
  readonly #dueCheckMs: number;
  #lastProgressAt: number;
  /** Since when it has been expected to move without moving (null: it is not, or it moved since). */
  #idleSince: number | null = null;
  #due = false;
  #dueReadAt = Number.NEGATIVE_INFINITY;

  constructor(options: ProgressWatchOptions) {
    this.#clock = options.clock;
    this.#stallAfterMs = options.stallAfterMs ?? DEFAULT_STALL_TIMEOUT_MS;
    this.#dueCheckMs = options.dueCheckMs ?? Math.min(10_000, this.#stallAfterMs / 10);
    this.#lastProgressAt = this.#clock.now();
  }

  get stallAfterMs(): number {
    return this.#stallAfterMs;
  }

  /** A claim or a committed change: the worker moves. */
  progressed(): void {
    this.#lastProgressAt = this.#clock.now();
    this.#idleSince = null;
  }

  /** Whether the next look should say whether partitions are due: only an idle, unexcused worker needs it. */
  wantsDue(look: Omit<WorkerLook, "due">): boolean {
    return look.excuse === null && look.held === 0 && this.#clock.now() - this.#dueReadAt >= this.#dueCheckMs;
  }

  observe(look: WorkerLook): void {
    const now = this.#clock.now();
    if (look.excuse !== null || look.held > 0) {
      // Not idle, or excused: the span restarts, and whether work is due is read afresh once idle again.
      this.#idleSince = null;
      this.#due = false;
      this.#dueReadAt = Number.NEGATIVE_INFINITY;
      return;
    }
    if (look.due !== undefined) {
      this.#due = look.due;
      this.#dueReadAt = now;
    }
    if (!this.#due) this.#idleSince = null;
    else this.#idleSince ??= now;
  }

  get state(): StallState {
    const since = this.#idleSince;
    const stalled = since !== null && this.#clock.now() - since >= this.#stallAfterMs;
    return { stalled, since: stalled ? since : null, lastProgressAt: this.#lastProgressAt };
  }
}
