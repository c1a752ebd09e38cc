import type { Runner } from "../driver/runner.js";
import { TaskDefer, TaskProgress } from "../driver/signals.js";
import type { AdmissionTracker } from "../work/admission-tracker.js";
import type { DruidServices } from "../work/services.js";
import type { StatusBatcher } from "../work/status-batcher.js";
import { type BudgetSource, type CachedBudget, cachedBudget } from "./slots.js";
import { type OpsIO, opsIO } from "./step-table.js";

/**
 * Segment operations that run as pinned Druid tasks (compact, kill) under one of Druid's own budgets
 * (slots.ts): how many of this process's tasks of the kind may be at Druid at once, each also admitted to a
 * worker slot like an ingestion task. A partition holds its place from just before its submission until its
 * task ends or the partition leaves this host; one waiting for its segments to load holds none.
 */
export class BudgetedTasks {
  readonly #atDruid = new Set<string>();

  constructor(
    private readonly o: {
      budget: CachedBudget;
      batcher: StatusBatcher;
      admission?: AdmissionTracker | undefined;
      tickMs: number;
      /** How messages name the budget ("compaction budget") and the task ("compact"). */
      budgetName: string;
      taskType: string;
    },
  ) {}

  /** Whether the partition holds a place in the budget. */
  holds(taskId: string): boolean {
    return this.#atDruid.has(taskId);
  }

  /**
   * Submits a partition's pinned Druid task within the budget and a worker slot (`send` makes the
   * request: a duplicate id is Druid's answer for the same task, a reattach), or defers it while either
   * is taken. What `send` throws frees the place: the next try reserves again.
   */
  async submit(taskId: string, druidTaskId: string, signal: AbortSignal, send: () => Promise<unknown>) {
    const { admission, tickMs } = this.o;
    const cap = await this.o.budget(signal);
    if (cap !== null && !this.#atDruid.has(taskId) && this.#atDruid.size >= cap)
      throw new TaskDefer(`Druid's ${this.o.budgetName} (${cap} task(s)) is in use`, tickMs);
    // Reserved before the next await, so partitions reaching this point together cannot all pass.
    this.#atDruid.add(taskId);
    if (admission && !admission.admit(taskId, 1, undefined, this.o.taskType)) {
      this.#atDruid.delete(taskId);
      throw new TaskDefer("waiting for a free worker slot", tickMs);
    }
    try {
      await send();
    } catch (error) {
      this.#atDruid.delete(taskId); // not submitted (or not known to be)
      throw error;
    }
    admission?.track(taskId, 1, druidTaskId);
  }

  /**
   * The end of a partition's Druid task: comes back a tick later (`TaskProgress`) while it runs or is not
   * known yet, and frees its place once it has ended.
   */
  async ended(
    taskId: string,
    druidTaskId: string,
    signal: AbortSignal,
  ): Promise<{ state: "SUCCESS" | "FAILED"; errorMsg: string | null }> {
    // Its place and its worker slot are taken again each time: after a restart, for a task submitted by the run
    // that crashed, and after the partition left this host (abandon) and came back while its task still runs.
    this.#atDruid.add(taskId);
    this.o.admission?.track(taskId, 1, druidTaskId);
    const status = await this.o.batcher.get(druidTaskId, signal);
    if (status.state === "RUNNING" || status.state === "UNKNOWN")
      throw new TaskProgress(`${this.o.taskType} task ${druidTaskId} ${status.state}`, this.o.tickMs);
    this.#free(taskId);
    return { state: status.state, errorMsg: status.errorMsg ?? null };
  }

  #free(taskId: string): void {
    this.#atDruid.delete(taskId);
    this.o.admission?.untrack(taskId);
  }

  /** The runner's hooks that keep the budget this process's own: `submitStep` is where a place is taken. */
  hooks(
    submitStep: string,
    firstStep: string,
  ): Pick<Runner, "isEligible" | "release" | "onFinish" | "abandon"> {
    return {
      // A partition ready to submit is not claimed while the budget is known to be in use: claimed, it
      // would only be deferred a tick and claimed again, a ledger write and event each time (about 1,000 a
      // second with a budget of one). Read from the due row, unvalidated: the handler decodes and checks it.
      isEligible: (task) => {
        const step = (task.progress as { step?: unknown }).step ?? firstStep;
        if (step !== submitStep || this.#atDruid.has(task.id)) return true;
        const cap = this.o.budget.peek();
        return cap === undefined || cap === null || this.#atDruid.size < cap;
      },
      // Listed eligible but not claimed (isEligible reserves nothing): a task of ours still at Druid keeps
      // its place in the budget; admission keeps submitted tasks and drops only bare reservations.
      release: (taskId) => this.o.admission?.release(taskId),
      onFinish: (task) => this.#free(task.id),
      // It left this host (taken over, handed back, or put back to wait, when any host may claim it next): its
      // place in the budget and its worker slot are no longer this host's to count. Kept for a partition put
      // back to wait, they leaked for good once another host ended its task (admission then took the task,
      // gone from /workers, for one still pending, and refused everything). One that comes back here while its
      // task still runs takes them again (`ended`).
      abandon: (taskId) => this.#free(taskId),
    };
  }
}

/** The I/O of the steps of a kind that runs Druid tasks under a budget. */
export interface TaskIO extends OpsIO {
  readonly tasks: BudgetedTasks;
}

/**
 * The I/O of a kind whose Druid tasks run under `readBudget` (Druid's budget as it states it now, re-read
 * at most once a minute).
 */
export function taskIO(
  services: DruidServices,
  readBudget: (client: BudgetSource, signal: AbortSignal) => Promise<number | null>,
  names: { budgetName: string; taskType: string },
): TaskIO {
  const io = opsIO(services);
  const tasks = new BudgetedTasks({
    budget: cachedBudget((signal) => readBudget(io.client, signal), io.clock),
    batcher: services.batcher,
    admission: services.admission,
    tickMs: io.settings.tickMs,
    ...names,
  });
  return { ...io, tasks };
}
