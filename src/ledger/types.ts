import type { JsonValue } from "../core/canonical-json.js";

/**
 * Terminology (architecture.md, "Terminology"):
 * - **Job**: what a user asked for (one `run`, one `backfill`); its id is derived by the
 *   caller from the inputs, so re-creating the same job is a no-op that returns the stored one.
 * - **Ledger task**: one durable unit of work of a job (one partition); the driver claims, runs and
 *   commits it. States: `new` → `running` → `done` | `failed` | `dead`, with `suspended` between runs.
 * - **Lease**: `lease_owner` + `lease_expires_at`; only the owner may commit the task's transitions,
 *   and an expired lease lets any other driver claim the task (no sweeper).
 * - **Version**: bumped by every committed transition; each write is a compare-and-set on
 *   (id, owner, version), so a stale actor's late write changes nothing.
 * - **Event**: one append-only row per committed transition (the audit trail).
 * - **Dead letter**: the `dead` state; never retried automatically (`retryDead` / `dropDead`).
 */

/** Every state a ledger task can be in. `done`, `failed` and `dead` are terminal. */
export const TASK_STATES = ["new", "running", "suspended", "done", "failed", "dead"] as const;
export type LedgerTaskState = (typeof TASK_STATES)[number];

export const TERMINAL_STATES: readonly LedgerTaskState[] = ["done", "failed", "dead"];

export function isTerminal(state: LedgerTaskState): boolean {
  return state === "done" || state === "failed" || state === "dead";
}

/** A JSON object as stored in `options`, `payload`, `progress` and event `data`. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Job states; the job layer decides them (the ledger never derives a job state on its own). A cancel is
 * not a state but the job's `canceled` flag: its partitions finish as failed, so the job ends `failed`.
 */
export type JobState = "open" | "done" | "failed";

export interface JobRow {
  readonly id: string;
  readonly kind: string;
  readonly options: JsonObject;
  readonly state: JobState;
  readonly canceled: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface TaskRow {
  readonly id: string;
  readonly jobId: string;
  readonly kind: string;
  /** Tasks sharing a non-null key never run at the same time, across hosts. */
  readonly exclusionKey: string | null;
  readonly payload: JsonObject;
  readonly state: LedgerTaskState;
  /** Domain attempt number (e.g. the Druid task id suffix); bumped only by `TaskRetry(…, {newAttempt})`. */
  readonly attempt: number;
  /** Failed runs counted so far (retry-class outcomes). */
  readonly retry: number;
  /** Retry ceiling for this task; negative = unbounded, null = the runner's `maxRetry`. */
  readonly maxRetry: number | null;
  readonly progress: JsonObject;
  readonly leaseOwner: string | null;
  readonly leaseExpiresAt: number | null;
  /** Not claimable before this time (persisted backoff / defer). */
  readonly runAt: number;
  readonly canceled: boolean;
  /** Latest committed reason of any kind (defer, progress, cancel, failure). */
  readonly reason: string | null;
  /** Latest failure reason (retry-class error, abort, ceiling, dead letter). */
  readonly lastError: string | null;
  readonly version: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface EventRow {
  readonly id: number;
  readonly jobId: string;
  readonly taskId: string | null;
  readonly fromState: string | null;
  readonly toState: string;
  readonly reason: string;
  /** Who committed it: a driver owner id (`host:pid:…`) or a user action (`cli`). */
  readonly actor: string;
  readonly at: number;
  readonly data: JsonObject;
}

/** Input for one task of `createJob`. */
export interface NewTask {
  readonly id: string;
  readonly kind: string;
  readonly payload?: JsonObject;
  readonly exclusionKey?: string | null;
  readonly maxRetry?: number | null;
  /** Earliest run time; defaults to now. */
  readonly runAt?: number;
}

export interface NewJob {
  readonly id: string;
  readonly kind: string;
  readonly options?: JsonObject;
}

/** Identifies the exact committed row a driver holds: every write is a CAS on these three. */
export interface TaskRef {
  readonly id: string;
  readonly owner: string;
  readonly version: number;
}

/** Counts of a job's tasks per state (every state present, zero when none). */
export type StateCounts = Record<LedgerTaskState, number>;

/**
 * An outcome the driver commits with a CAS. Non-terminal outcomes (`suspend`, `retry`, `progress`)
 * are refused on a canceled row; terminal ones (`done`, `failed`, `dead`) are accepted on it.
 */
export type Transition =
  | { readonly to: "done"; readonly reason: string; readonly data?: JsonObject }
  | { readonly to: "failed"; readonly reason: string; readonly data?: JsonObject }
  | { readonly to: "dead"; readonly reason: string; readonly data?: JsonObject }
  /** Release lease and exclusion without using a retry (defer, shutdown hand-back). */
  | { readonly to: "suspended"; readonly reason: string; readonly runAt: number; readonly data?: JsonObject }
  /**
   * A retry-class failure: `retry + 1` computed in SQL on the committed row; the task fails instead
   * when that exceeds `ceiling` (≥ 0). `newAttempt` bumps `attempt` too.
   */
  | {
      readonly to: "retry";
      readonly reason: string;
      readonly runAt: number;
      readonly ceiling: number;
      readonly newAttempt?: boolean;
      readonly data?: JsonObject;
    }
  /** Stays running with the lease extended; `quiet` skips the event (same reason as last time). */
  | {
      readonly to: "progress";
      readonly reason: string;
      readonly runAt: number;
      readonly leaseExpiresAt: number;
      readonly quiet?: boolean;
      readonly data?: JsonObject;
    };
