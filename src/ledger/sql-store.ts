import { type Clock, yieldToEventLoop } from "../core/clock.js";
import { LedgerError, ledgerFailure } from "./errors.js";
import type { Executor, Query } from "./executor.js";
import { analyzeTasks } from "./sql/analyze-tasks.js";
import { appendEvents, type NewEvent } from "./sql/append-events.js";
import { CANCEL_CHUNK, cancelJob, cancelJobTasks, finishCanceledUnheld } from "./sql/cancel-job.js";
import { cancelTask } from "./sql/cancel-task.js";
import { readHeldProgress, writeProgress } from "./sql/checkpoint.js";
import { listDue, markClaimed, pickDistinctKeys, selectClaimable } from "./sql/claim.js";
import { countByKind, countTasks } from "./sql/count-tasks.js";
import { dropDead } from "./sql/drop-dead.js";
import { getJob } from "./sql/get-job.js";
import { getTask } from "./sql/get-task.js";
import { insertJob } from "./sql/insert-job.js";
import { insertTasks, TASK_CHUNK } from "./sql/insert-tasks.js";
import { listDead } from "./sql/list-dead.js";
import { listEvents } from "./sql/list-events.js";
import { listJobs } from "./sql/list-jobs.js";
import { listTasks } from "./sql/list-tasks.js";
import { getIdempotencyKey, insertIdempotencyKey } from "./sql/remember-request.js";
import { renewLease } from "./sql/renew-lease.js";
import { renewLeases } from "./sql/renew-leases.js";
import { replanTask } from "./sql/replan-task.js";
import { requeue } from "./sql/requeue.js";
import { type DbRow, toEvent, toJob, toRenewed, toTask } from "./sql/rows.js";
import { setJobState } from "./sql/set-job-state.js";
import { transition } from "./sql/transition.js";
import { transitionWithEvent } from "./sql/transition-with-event.js";
import { lockBase, unfinishedOfBase } from "./sql/unfinished-of-base.js";
import type {
  ClaimOptions,
  CreateJobOptions,
  CreateJobResult,
  Dialect,
  HeldLease,
  KindStateCount,
  ListDueOptions,
  ListEventsOptions,
  ListJobsOptions,
  RememberedRequest,
  RenewLeasesResult,
  Store,
  TaskPage,
} from "./store.js";
import {
  type EventRow,
  type JobRow,
  type JobState,
  type JsonObject,
  type LedgerTaskState,
  type NewJob,
  type NewTask,
  type StateCounts,
  TASK_STATES,
  type TaskRef,
  type TaskRow,
  type Transition,
} from "./types.js";

const DEFAULT_ACTOR = "segops";
/** A concurrent claimer took the same exclusion key between our snapshot and our update: try again. */
const CLAIM_ATTEMPTS = 5;
/** A job of this many tasks or more refreshes the planner's statistics once committed (`analyzeTasks`). */
const ANALYZE_AFTER_TASKS = 10_000;

/**
 * The `Store` over either backend: composes the one-statement builders of `sql/` into atomic operations
 * and appends an event for every committed transition. Both backends share this code, so they behave
 * identically by construction; only the executor and a few statement variants differ.
 */
export class SqlStore implements Store {
  readonly dialect: Dialect;

  constructor(
    readonly executor: Executor,
    readonly clock: Clock,
  ) {
    this.dialect = executor.dialect;
  }

  async #guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw error instanceof LedgerError ? error : ledgerFailure(operation, error);
    }
  }

  async #events(q: Query, events: readonly NewEvent[], now: number): Promise<void> {
    for (let i = 0; i < events.length; i += TASK_CHUNK) {
      // SQLite's statements are synchronous: the process serves others between chunks (the queue keeps
      // them out of this transaction).
      if (i > 0) await yieldToEventLoop();
      await q(appendEvents(this.dialect, events.slice(i, i + TASK_CHUNK), now));
    }
  }

  createJob(
    job: NewJob,
    tasks: readonly NewTask[],
    actor = DEFAULT_ACTOR,
    options: CreateJobOptions = {},
  ): Promise<CreateJobResult> {
    return this.#guard("createJob", async () => {
      const result = await this.executor.tx(async (q): Promise<CreateJobResult> => {
        const same = options.sameInputs;
        if (same) {
          const lock = lockBase(this.dialect, same.baseId);
          if (lock) await q(lock);
        }
        // Read once the lock is ours: jobs over the same inputs are then stamped in the order they were created.
        const now = this.clock.now();
        const again = (await q(getJob(this.dialect, job.id)))[0];
        const found = (row: DbRow): CreateJobResult => ({
          job: toJob(row),
          created: false,
        });
        // A `new` job asked for again (its nonce retried) is found again, whatever else is open.
        if (again && same?.whenUnfinished !== "find-again") return found(again);
        if (same) {
          const unfinished = (await q(unfinishedOfBase(this.dialect, same.baseId))).map((r) => String(r.id));
          // The work over these inputs: the job asked for if it has partitions left, else another that has.
          const pick = unfinished.includes(job.id) ? job.id : unfinished[0];
          if (pick !== undefined) {
            const row = pick === job.id ? again : (await q(getJob(this.dialect, pick)))[0];
            if (row)
              return same.whenUnfinished === "find-again"
                ? found(row)
                : { ...found(row), blockedBy: unfinished };
          }
        }
        if (again) return found(again);
        const inserted = (await q(insertJob(this.dialect, job, now)))[0];
        if (!inserted) {
          const existing = (await q(getJob(this.dialect, job.id)))[0];
          if (!existing)
            throw new LedgerError(`job ${job.id} vanished while being created`, { jobId: job.id });
          return { job: toJob(existing), created: false };
        }
        for (let i = 0; i < tasks.length; i += TASK_CHUNK) {
          if (i > 0) await yieldToEventLoop();
          await q(insertTasks(this.dialect, job.id, tasks.slice(i, i + TASK_CHUNK), now));
        }
        await this.#events(
          q,
          [
            { jobId: job.id, taskId: null, fromState: null, toState: "open", reason: "job created", actor },
            ...tasks.map((t) => ({
              jobId: job.id,
              taskId: t.id,
              fromState: null,
              toState: "new",
              reason: "task created",
              actor,
            })),
          ],
          now,
        );
        return { job: toJob(inserted), created: true };
      });
      const analyze = analyzeTasks(this.dialect);
      if (result.created && analyze && tasks.length >= ANALYZE_AFTER_TASKS) {
        // Statistics only: the job is committed whatever this does (e.g. a role that may not ANALYZE).
        await this.executor.query(analyze).catch(() => undefined);
      }
      return result;
    });
  }

  getJob(id: string): Promise<JobRow | null> {
    return this.#guard("getJob", async () => {
      const row = (await this.executor.query(getJob(this.dialect, id)))[0];
      return row ? toJob(row) : null;
    });
  }

  listJobs(options: ListJobsOptions = {}): Promise<JobRow[]> {
    return this.#guard("listJobs", async () =>
      (await this.executor.query(listJobs(this.dialect, options))).map(toJob),
    );
  }

  setJobState(id: string, state: JobState, reason: string, actor = DEFAULT_ACTOR): Promise<JobRow | null> {
    return this.#guard("setJobState", () =>
      this.executor.tx(async (q) => {
        const now = this.clock.now();
        const before = (await q(getJob(this.dialect, id)))[0];
        const row = (await q(setJobState(this.dialect, id, state, now)))[0];
        if (!before || !row) return null;
        await this.#events(
          q,
          [{ jobId: id, taskId: null, fromState: String(before.state), toState: state, reason, actor }],
          now,
        );
        return toJob(row);
      }),
    );
  }

  getTask(id: string): Promise<TaskRow | null> {
    return this.#guard("getTask", async () => {
      const row = (await this.executor.query(getTask(this.dialect, id)))[0];
      return row ? toTask(row) : null;
    });
  }

  listTasks(jobId: string, page?: TaskPage): Promise<TaskRow[]> {
    return this.#guard("listTasks", async () =>
      (await this.executor.query(listTasks(this.dialect, jobId, page))).map(toTask),
    );
  }

  countTasks(jobId: string): Promise<StateCounts> {
    return this.#guard("countTasks", async () => {
      const counts = Object.fromEntries(TASK_STATES.map((s) => [s, 0])) as StateCounts;
      for (const row of await this.executor.query(countTasks(this.dialect, jobId))) {
        counts[row.state as keyof StateCounts] = Number(row.n);
      }
      return counts;
    });
  }

  rememberRequest(key: string, requestHash: string, jobId: string): Promise<RememberedRequest> {
    return this.#guard("rememberRequest", async () => {
      const now = this.clock.now();
      const inserted = (
        await this.executor.query(insertIdempotencyKey(this.dialect, key, requestHash, jobId, now))
      )[0];
      const row = inserted ?? (await this.executor.query(getIdempotencyKey(this.dialect, key)))[0];
      if (!row) throw new LedgerError(`idempotency key vanished while being read`, {});
      return {
        key,
        requestHash: String(row.request_hash),
        jobId: String(row.job_id),
        created: inserted !== undefined,
      };
    });
  }

  countByKind(): Promise<KindStateCount[]> {
    return this.#guard("countByKind", async () =>
      (await this.executor.query(countByKind(this.dialect))).map((row) => ({
        kind: String(row.kind),
        state: row.state as LedgerTaskState,
        count: Number(row.n),
      })),
    );
  }

  listEvents(options: ListEventsOptions): Promise<EventRow[]> {
    return this.#guard("listEvents", async () =>
      (await this.executor.query(listEvents(this.dialect, options))).map(toEvent),
    );
  }

  cancelTask(id: string, reason: string, actor = DEFAULT_ACTOR): Promise<TaskRow | null> {
    return this.#guard("cancelTask", () =>
      this.executor.tx(async (q) => {
        const now = this.clock.now();
        const row = (await q(cancelTask(this.dialect, id, reason, now)))[0];
        if (!row) return null;
        const task = toTask(row);
        await this.#events(q, [cancelEvent(task, reason, actor)], now);
        return task;
      }),
    );
  }

  cancelJob(id: string, reason: string, actor = DEFAULT_ACTOR): Promise<number> {
    return this.#guard("cancelJob", () =>
      this.executor.tx(async (q) => {
        const now = this.clock.now();
        const job = (await q(cancelJob(this.dialect, id, now)))[0];
        if (!job) return 0;
        // A chunk at a time, the process free in between (SQLite's statements are synchronous).
        const tasks: Array<Pick<TaskRow, "jobId" | "id" | "state">> = [];
        for (;;) {
          const rows = await q(cancelJobTasks(this.dialect, id, reason, now));
          for (const r of rows)
            tasks.push({ jobId: id, id: String(r.id), state: String(r.state) as LedgerTaskState });
          if (rows.length < CANCEL_CHUNK) break;
          await yieldToEventLoop();
        }
        const finished: string[] = [];
        for (;;) {
          const rows = await q(finishCanceledUnheld(this.dialect, id, reason, now));
          for (const r of rows) finished.push(String(r.id));
          if (rows.length < CANCEL_CHUNK) break;
          await yieldToEventLoop();
        }
        const flaggedFrom = new Map(tasks.map((t) => [t.id, t.state]));
        const jobState = String(job.state);
        await this.#events(
          q,
          [
            {
              jobId: id,
              taskId: null,
              fromState: jobState,
              toState: jobState,
              reason: `cancel requested: ${reason}`,
              actor,
            },
            ...tasks.map((t) => cancelEvent(t, reason, actor)),
            ...finished.map((taskId) => ({
              jobId: id,
              taskId,
              fromState: flaggedFrom.get(taskId) ?? "new",
              toState: "failed",
              reason: `canceled: ${reason}`,
              actor,
            })),
          ],
          now,
        );
        return tasks.length;
      }),
    );
  }

  listDead(jobId?: string): Promise<TaskRow[]> {
    return this.#guard("listDead", async () =>
      (await this.executor.query(listDead(this.dialect, jobId))).map(toTask),
    );
  }

  retryDead(id: string, actor = DEFAULT_ACTOR): Promise<TaskRow | null> {
    const reason = "retried from dead letter";
    return this.#guard("retryDead", () =>
      this.#simpleTransition(
        requeue(this.dialect, id, "dead", reason, this.clock.now()),
        "dead",
        reason,
        actor,
      ),
    );
  }

  retryTask(id: string, actor = DEFAULT_ACTOR): Promise<TaskRow | null> {
    return this.#guard("retryTask", async () => {
      const current = (await this.executor.query(getTask(this.dialect, id)))[0];
      const state = current ? toTask(current).state : null;
      if (state !== "failed" && state !== "dead") return null;
      const reason = `retried after ${state === "dead" ? "dead letter" : "failure"}`;
      // The UPDATE is a CAS on the state just read: a concurrent retry or drop makes it a no-op.
      return this.#simpleTransition(
        requeue(this.dialect, id, state, reason, this.clock.now()),
        state,
        reason,
        actor,
      );
    });
  }

  replanTask(
    ref: { id: string; version: number },
    payload: JsonObject,
    reason: string,
    actor = DEFAULT_ACTOR,
  ): Promise<TaskRow | null> {
    return this.#guard("replanTask", async () => {
      const current = (await this.executor.query(getTask(this.dialect, ref.id)))[0];
      if (!current) return null;
      const before = toTask(current);
      if (before.version !== ref.version || before.state === "running") return null;
      return this.#simpleTransition(
        replanTask(this.dialect, ref, JSON.stringify(payload), reason, this.clock.now()),
        before.state,
        reason,
        actor,
      );
    });
  }

  dropDead(id: string, actor = DEFAULT_ACTOR): Promise<TaskRow | null> {
    return this.#guard("dropDead", () =>
      this.#simpleTransition(
        dropDead(this.dialect, id, this.clock.now()),
        "dead",
        "dropped from dead letter",
        actor,
      ),
    );
  }

  #simpleTransition(
    statement: Parameters<Query>[0],
    from: string,
    reason: string,
    actor: string,
  ): Promise<TaskRow | null> {
    return this.executor.tx(async (q) => {
      const row = (await q(statement))[0];
      if (!row) return null;
      const task = toTask(row);
      await this.#events(
        q,
        [{ jobId: task.jobId, taskId: task.id, fromState: from, toState: task.state, reason, actor }],
        this.clock.now(),
      );
      return task;
    });
  }

  listDue(options: ListDueOptions): Promise<TaskRow[]> {
    return this.#guard("listDue", async () =>
      (await this.executor.query(listDue(this.dialect, options, this.clock.now()))).map(toTask),
    );
  }

  claim(options: ClaimOptions): Promise<TaskRow[]> {
    if (options.limit < 1 || (options.ids && options.ids.length === 0)) return Promise.resolve([]);
    return this.#guard("claim", async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.#claimOnce(options);
        } catch (error) {
          // Another host committed a running task with one of our keys after our snapshot (the unique index
          // refused the whole statement), or a deadlock on rows: nothing was claimed, and a fresh snapshot
          // will skip what the other took.
          if (!this.executor.isConflict(error) || attempt >= CLAIM_ATTEMPTS) throw error;
        }
      }
    });
  }

  #claimOnce(o: ClaimOptions): Promise<TaskRow[]> {
    return this.executor.tx(async (q) => {
      const now = this.clock.now();
      const candidates = (await q(selectClaimable(this.dialect, o, now))).map((r: DbRow) => ({
        id: String(r.id),
        jobId: String(r.job_id),
        state: String(r.state),
        leaseOwner: r.lease_owner === null ? null : String(r.lease_owner),
        exclusionKey: r.exclusion_key === null ? null : String(r.exclusion_key),
      }));
      const picked = pickDistinctKeys(candidates);
      if (picked.length === 0) return [];
      const byId = new Map(picked.map((c) => [c.id, c]));
      const rows = (await q(markClaimed(this.dialect, [...byId.keys()], o, now))).map(toTask);
      await this.#events(
        q,
        rows.map((t) => {
          const before = byId.get(t.id);
          return {
            jobId: t.jobId,
            taskId: t.id,
            fromState: before?.state ?? null,
            toState: "running",
            reason:
              before?.state === "running"
                ? `claimed after the lease of ${before.leaseOwner ?? "?"} expired`
                : t.canceled
                  ? "claimed to finish a canceled task"
                  : "claimed",
            actor: o.owner,
          };
        }),
        now,
      );
      const order = new Map(picked.map((c, i) => [c.id, i]));
      return rows.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
    });
  }

  renewLease(ref: TaskRef, leaseMs: number): Promise<TaskRow | null> {
    return this.#guard("renewLease", async () => {
      const row = (await this.executor.query(renewLease(this.dialect, ref, this.clock.now() + leaseMs)))[0];
      return row ? toTask(row) : null;
    });
  }

  renewLeases(owner: string, leases: readonly HeldLease[], leaseMs: number): Promise<RenewLeasesResult> {
    if (leases.length === 0) return Promise.resolve({ renewed: [], lost: [] });
    return this.#guard("renewLeases", async () => {
      const statement = renewLeases(this.dialect, owner, leases, this.clock.now() + leaseMs);
      for (let attempt = 1; ; attempt++) {
        try {
          const renewed = (await this.executor.query(statement)).map(toRenewed);
          const kept = new Set(renewed.map((r) => r.id));
          return { renewed, lost: leases.filter((l) => !kept.has(l.id)).map((l) => l.id) };
        } catch (error) {
          // Postgres: the many-row UPDATE deadlocked with another many-row write (a job's cancel) taking
          // the same rows in another order and was rolled back whole; the renewal is idempotent.
          if (!this.executor.isConflict(error) || attempt >= CLAIM_ATTEMPTS) throw error;
        }
      }
    });
  }

  transition(ref: TaskRef, change: Transition): Promise<TaskRow | null> {
    return this.#guard("transition", async () => {
      const now = this.clock.now();
      const event =
        change.to === "progress" && change.quiet
          ? null
          : {
              fromState: "running",
              reason: change.reason,
              actor: ref.owner,
              ...(change.data ? { data: change.data } : {}),
            };
      if (this.dialect === "postgres") {
        // One statement, one round trip: the hot path of every driver.
        const row = (
          await this.executor.query(transitionWithEvent(this.dialect, ref, change, now, event))
        )[0];
        return row ? toTask(row) : null;
      }
      return this.executor.tx(async (q) => {
        const row = (await q(transition(this.dialect, ref, change, now)))[0];
        if (!row) return null;
        const task = toTask(row);
        if (event)
          await this.#events(q, [{ ...event, jobId: task.jobId, taskId: task.id, toState: task.state }], now);
        return task;
      });
    });
  }

  checkpoint(ref: TaskRef, progress: JsonObject): Promise<TaskRow | null> {
    return this.#guard("checkpoint", () =>
      this.executor.tx(async (q) => {
        const now = this.clock.now();
        const held = (await q(readHeldProgress(this.dialect, ref)))[0];
        if (!held) return null;
        const merged = { ...(JSON.parse(String(held.progress)) as JsonObject), ...progress };
        const row = (await q(writeProgress(this.dialect, ref, JSON.stringify(merged), now)))[0];
        if (!row) return null;
        const task = toTask(row);
        await this.#events(
          q,
          [
            {
              jobId: task.jobId,
              taskId: task.id,
              fromState: "running",
              toState: "running",
              reason: "checkpoint",
              actor: ref.owner,
              data: progress,
            },
          ],
          now,
        );
        return task;
      }),
    );
  }

  async verify(): Promise<void> {
    this.executor.checkIdentity?.();
  }

  close(): Promise<void> {
    return this.#guard("close", () => this.executor.close());
  }
}

function cancelEvent(task: Pick<TaskRow, "jobId" | "id" | "state">, reason: string, actor: string): NewEvent {
  return {
    jobId: task.jobId,
    taskId: task.id,
    fromState: task.state,
    toState: task.state,
    reason: `cancel requested: ${reason}`,
    actor,
  };
}
