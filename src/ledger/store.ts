import type { Clock } from "../core/clock.js";
import type {
  EventRow,
  JobRow,
  JobState,
  JsonObject,
  LedgerTaskState,
  NewJob,
  NewTask,
  StateCounts,
  TaskRef,
  TaskRow,
  Transition,
} from "./types.js";

export type Dialect = "sqlite" | "postgres";

/** Options of `claim`. */
export interface ClaimOptions {
  /** Task kind to claim. */
  readonly kind: string;
  /** Lease owner written on the claimed rows (unique per driver instance). */
  readonly owner: string;
  /** Lease length in ms from now. */
  readonly leaseMs: number;
  /** Maximum number of tasks to claim. */
  readonly limit: number;
  /** Restrict the claim to these ids (after an `isEligible` pre-filter); the predicate still applies. */
  readonly ids?: readonly string[];
  /** Claim only tasks of these jobs. @default every job in the ledger */
  readonly jobIds?: readonly string[];
}

/** Options of `listDue`. */
export interface ListDueOptions {
  readonly kind: string;
  readonly limit: number;
  /** Only tasks of these jobs. @default every job in the ledger */
  readonly jobIds?: readonly string[];
}

export interface ListJobsOptions {
  readonly kind?: string;
  readonly state?: JobState;
  /** @default 100 */
  readonly limit?: number;
  /** Only jobs after this one in the listing's order (newest first): a page cursor. */
  readonly after?: { readonly createdAt: number; readonly id: string };
}

/** A page of a job's tasks in id order. */
export interface TaskPage {
  /** Only tasks with a larger id (the last of the page before). */
  readonly afterId?: string;
  /** At most this many. @default every one */
  readonly limit?: number;
}

export interface ListEventsOptions {
  readonly jobId?: string;
  readonly taskId?: string;
  /** Only events with a larger id (for tailing). */
  readonly afterId?: number;
  /** Only these events (a tail re-reading ids it saw skipped: a transaction not yet committed). */
  readonly ids?: readonly number[];
  /** Newest first instead of oldest first. @default false */
  readonly newestFirst?: boolean;
  /** @default 1000 */
  readonly limit?: number;
}

/** What a client's idempotency key is bound to: the first request's body hash and the job it named. */
export interface RememberedRequest {
  readonly key: string;
  readonly requestHash: string;
  readonly jobId: string;
  /** False when the key was already bound (then the stored binding is returned, whatever was asked). */
  readonly created: boolean;
}

/** Partitions of one kind in one state, over the whole ledger. */
export interface KindStateCount {
  readonly kind: string;
  readonly state: LedgerTaskState;
  readonly count: number;
}

/** A lease a driver holds, as `renewLeases` is asked to extend it: the row at its last committed version. */
export interface HeldLease {
  readonly id: string;
  readonly version: number;
}

/** A lease `renewLeases` extended; a canceled row is renewed too, with its cancel's reason. */
export interface RenewedLease {
  readonly id: string;
  readonly canceled: boolean;
  readonly reason: string | null;
}

export interface RenewLeasesResult {
  readonly renewed: readonly RenewedLease[];
  /** Ids whose row is no longer (this owner, this version, running): taken over, finished or moved on. */
  readonly lost: readonly string[];
}

export interface CreateJobResult {
  readonly job: JobRow;
  /** False when the job id already existed; then nothing was written and the stored job is returned. */
  readonly created: boolean;
  /**
   * With `sameInputs` to refuse: the open jobs over the same inputs with partitions left, which kept this one
   * from being created (nothing was written; `job` is the first of them).
   */
  readonly blockedBy?: readonly string[];
}

export interface CreateJobOptions {
  /**
   * Jobs over the same inputs share a base id (a `new` job's id is the base id and a nonce). With this, the
   * creating transaction looks for an open job over them with partitions left, under a lock on the base id
   * (PostgreSQL's advisory lock; SQLite's `BEGIN IMMEDIATE`), so racing requests on any host see each
   * other: `"refuse"` creates nothing and names them (`blockedBy`); `"find-again"` answers that job as
   * found again (the job asked for first, if it is the one).
   */
  readonly sameInputs?: { readonly baseId: string; readonly whenUnfinished: "refuse" | "find-again" };
}

/**
 * The durable ledger. Every method is one atomic operation; every task write is a compare-and-set and
 * every committed transition appends an event. Storage failures reject with `LedgerError` (code
 * `Ledger`); a refused CAS is not an error: it resolves to `null`.
 */
export interface Store {
  readonly dialect: Dialect;
  /** The clock every timestamp comes from (injected so tests can move and backdate time). */
  readonly clock: Clock;

  /** Creates a job and its tasks atomically; idempotent on the job id. */
  createJob(
    job: NewJob,
    tasks: readonly NewTask[],
    actor?: string,
    options?: CreateJobOptions,
  ): Promise<CreateJobResult>;
  getJob(id: string): Promise<JobRow | null>;
  listJobs(options?: ListJobsOptions): Promise<JobRow[]>;
  /**
   * Binds an idempotency key to a request (by hash) and the job it names, unless the key is bound: then
   * the stored binding is returned. One statement, so two hosts racing on a key agree on one binding.
   */
  rememberRequest(key: string, requestHash: string, jobId: string): Promise<RememberedRequest>;
  /** Sets the job's state (decided by the job layer), with an event. Null when the job does not exist. */
  setJobState(id: string, state: JobState, reason: string, actor?: string): Promise<JobRow | null>;

  getTask(id: string): Promise<TaskRow | null>;
  /** A job's tasks in id order (for a backfill, time order): all, or a page of them. */
  listTasks(jobId: string, page?: TaskPage): Promise<TaskRow[]>;
  countTasks(jobId: string): Promise<StateCounts>;
  /** Every kind's partitions per state, over the whole ledger (metrics). */
  countByKind(): Promise<KindStateCount[]>;
  listEvents(options: ListEventsOptions): Promise<EventRow[]>;

  /** Flags a non-terminal task as canceled (CAS); the driver finishes it. Null when terminal/unknown. */
  cancelTask(id: string, reason: string, actor?: string): Promise<TaskRow | null>;
  /**
   * Flags the job and all its non-terminal tasks as canceled; those no driver holds (new, suspended) end
   * failed at once (`canceled: <reason>`), the running ones are finished by their driver. Returns how many
   * tasks were flagged.
   */
  cancelJob(id: string, reason: string, actor?: string): Promise<number>;

  listDead(jobId?: string): Promise<TaskRow[]>;
  /** dead → new with `retry` reset and `attempt` kept, due now. Null when the task is not dead. */
  retryDead(id: string, actor?: string): Promise<TaskRow | null>;
  /** failed or dead → new (retry budget reset, cancel cleared, attempt kept), due now. Null when neither. */
  retryTask(id: string, actor?: string): Promise<TaskRow | null>;
  /**
   * Plans a partition anew with `payload` (its input changed): progress cleared, back to `new` and due now,
   * the attempt moved on, with an event. A CAS on `ref.version`; null when the row changed since it was
   * read or a driver is running it.
   */
  replanTask(
    ref: { id: string; version: number },
    payload: JsonObject,
    reason: string,
    actor?: string,
  ): Promise<TaskRow | null>;
  /** dead → failed ("dropped"): kept for the audit trail, never run again. Null when not dead. */
  dropDead(id: string, actor?: string): Promise<TaskRow | null>;

  /** Due, claimable tasks of a kind, without claiming them (for `isEligible` pre-filtering). */
  listDue(options: ListDueOptions): Promise<TaskRow[]>;
  /**
   * Claims due tasks in one transaction (select the candidates, then mark them): (due or canceled) and
   * (new/suspended, or running with an expired lease), skipping tasks whose exclusion key is held by a
   * running task.
   */
  claim(options: ClaimOptions): Promise<TaskRow[]>;
  /** Extends the lease of the row held by `ref` (no version bump). Null when taken over or finished. */
  renewLease(ref: TaskRef, leaseMs: number): Promise<TaskRow | null>;
  /**
   * The heartbeat: extends every lease in `leases` held by `owner`, in one statement, each row a CAS on
   * (id, owner, version, running) like `renewLease`. Says which were renewed (with the cancel flag) and
   * which were refused.
   */
  renewLeases(owner: string, leases: readonly HeldLease[], leaseMs: number): Promise<RenewLeasesResult>;
  /** Commits an outcome as a CAS on `ref`, appending an event. Null when refused. */
  transition(ref: TaskRef, change: Transition): Promise<TaskRow | null>;
  /**
   * Shallow-merges `progress` into the row (CAS, version bumped) and appends a `checkpoint` event carrying
   * the patch. Null when canceled, taken over or finished.
   */
  checkpoint(ref: TaskRef, progress: JsonObject): Promise<TaskRow | null>;

  /**
   * Rejects with a LedgerError when the ledger is no longer the one this store opened (a SQLite file
   * deleted or replaced under the process). Long runs call it as they go.
   */
  verify?(): Promise<void>;

  close(): Promise<void>;
}
