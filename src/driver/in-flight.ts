import type { HeldLease, RenewedLease, Store } from "../ledger/store.js";
import type { JsonObject, TaskRef, TaskRow, Transition } from "../ledger/types.js";

/** Why a handler's signal was aborted. */
export type StopReason = "canceled" | "lost" | "shutdown";

/**
 * One claimed task held by this driver: the last committed row (its version is what every CAS pins),
 * the handler's abort signal, and a queue that serialises this task's writes (heartbeat, checkpoint,
 * outcome) so none of them races another with a stale version.
 */
export class InFlight {
  readonly controller = new AbortController();
  /** Set when another actor owns the outcome (taken over, finished): forget the task, run no hook. */
  lost = false;
  #row: TaskRow;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    row: TaskRow,
    readonly owner: string,
    private readonly store: Store,
  ) {
    this.#row = row;
  }

  get row(): TaskRow {
    return this.#row;
  }

  get ref(): TaskRef {
    return { id: this.#row.id, owner: this.owner, version: this.#row.version };
  }

  stop(reason: StopReason): void {
    if (reason === "lost") this.lost = true;
    if (!this.controller.signal.aborted) this.controller.abort(new TaskStopped(reason));
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(fn);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** What the driver's heartbeat renews for this task; null once the task is lost. */
  get lease(): HeldLease | null {
    return this.lost ? null : { id: this.#row.id, version: this.#row.version };
  }

  /**
   * The heartbeat renewed `sent`: nothing to keep in memory (the lease's expiry is not read here) unless
   * the row was canceled meanwhile, which tells the handler to stop.
   */
  renewed(sent: HeldLease, answer: RenewedLease): void {
    if (this.lost || !answer.canceled || this.#row.version !== sent.version) return;
    this.#row = { ...this.#row, canceled: true, reason: answer.reason };
    this.stop("canceled");
  }

  /**
   * The heartbeat's renewal of `sent` was refused. One of our own writes may have moved the version
   * between the heartbeat reading it and the database answering: after this task's queued writes, a
   * version still at `sent` means another actor owns the row.
   */
  refused(sent: HeldLease): Promise<void> {
    return this.#serial(async () => {
      if (!this.lost && this.#row.version === sent.version) this.stop("lost");
    });
  }

  /** Heartbeat of this task alone: extends the lease; a refusal means another actor took the task. */
  renew(leaseMs: number): Promise<TaskRow | null> {
    return this.#serial(async () => {
      if (this.lost) return null;
      const row = await this.store.renewLease(this.ref, leaseMs);
      if (!row) this.stop("lost");
      else {
        this.#row = row;
        if (row.canceled) this.stop("canceled");
      }
      return row;
    });
  }

  /** `ctx.checkpoint`: null (and the handler's signal aborted) when canceled, taken over or finished. */
  checkpoint(progress: JsonObject): Promise<TaskRow | null> {
    return this.#serial(async () => {
      if (this.lost) return null;
      const row = await this.store.checkpoint(this.ref, progress);
      if (row) this.#row = row;
      else await this.#explainRefusal();
      return row;
    });
  }

  /** Commits an outcome; null when refused (then `lost` or a cancel has been recorded). */
  commit(change: Transition): Promise<TaskRow | null> {
    return this.#serial(async () => {
      if (this.lost) return null;
      const row = await this.store.transition(this.ref, change);
      if (row) this.#row = row;
      else await this.#explainRefusal();
      return row;
    });
  }

  /** The row is still the one we hold: running, leased to us, no transition committed by anyone else. */
  #isOurs(fresh: TaskRow): boolean {
    return (
      fresh.state === "running" && fresh.leaseOwner === this.owner && fresh.version === this.#row.version
    );
  }

  /** Re-reads the row: still ours and only canceled meanwhile → we finish it; anything else → lost. */
  async #explainRefusal(): Promise<void> {
    const fresh = await this.store.getTask(this.#row.id);
    if (fresh && this.#isOurs(fresh) && fresh.canceled) {
      this.#row = fresh;
      this.stop("canceled");
    } else {
      this.stop("lost");
    }
  }

  /** Fresh read before another step (after a progress wait): false when no longer ours. */
  refresh(): Promise<boolean> {
    return this.#serial(async () => {
      if (this.lost) return false;
      const fresh = await this.store.getTask(this.#row.id);
      if (!fresh || !this.#isOurs(fresh)) {
        this.stop("lost");
        return false;
      }
      this.#row = fresh;
      return true;
    });
  }
}

/** The abort reason handlers see on `ctx.signal`. */
export class TaskStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(`task stopped: ${reason}`);
    this.name = "TaskStopped";
  }
}
