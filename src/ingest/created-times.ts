import type { Clock } from "../core/clock.js";
import type { CallOptions } from "../druid/client.js";

/**
 * Druid's `createdTime` of our running tasks, for the replace's ownership proof (`notBefore`: our lock, and so
 * our version, cannot be older than our task). The bulk status answer (`TaskStatus`) has no `createdTime`; one
 * status GET per task at SUCCESS cost a request a task. Instead, while any running task of ours has none yet,
 * one `GET /druid/indexer/v1/tasks?datasource=<ds>&max=0` a datasource every `listEveryMs` gives every active
 * task's `createdTime` at once (`max=0`: no complete task, active ones are never capped; docs/druid-api.md §2.5,
 * §12). A task that ends before a list saw it falls back to its own status GET, as before.
 *
 * The two answers are the same value: the list (`OverlordResource#getTasks` → `TaskQueryTool#getTaskStatusPlusList`)
 * and the status GET (`OverlordResource#getTaskStatus` → `TaskQueryTool#getTaskInfo`) both read the task's
 * `created_date` from task storage, stamped once at insert (`MetadataTaskStorage.insert`); the list keeps it when
 * it adds the runner's fields to an active task. A task id is only recorded while its task is watched: a
 * resubmission of the same id (Druid forgot the task) is a new insert with a new `createdTime`, so what was
 * learnt of the old one is dropped when its wait ends (`forget`).
 */
export interface CreatedTimeSource {
  tasks(
    filter: { datasource: string; max: number },
    options?: CallOptions,
  ): Promise<ReadonlyArray<{ id: string; createdTime?: string | null }>>;
  taskStatus(
    id: string,
    options?: CallOptions,
  ): Promise<{ status?: { createdTime?: string | null } | null } | null>;
}

export interface CreatedTimesOptions {
  source: CreatedTimeSource;
  clock: Clock;
  /**
   * Least time between two lists of one datasource: a task that runs longer than this is seen by a list, a
   * shorter one costs its own status GET. Batch tasks rarely end within 30 s (a peon's JVM start alone is
   * seconds; the cost benchmark's shortest is 20 s): a list every 30 s then serves most tasks at about one
   * request per 30 s of running, however many run.
   * @default 30000
   */
  listEveryMs?: number;
}

export const DEFAULT_LIST_EVERY_MS = 30_000;

/** Lists in a row that leave a watched task out before it is no longer listed for (one may race its insert). */
const MAX_MISSES = 2;

export interface CreatedTimesStats {
  lists: number;
  /** Tasks whose `createdTime` came from a list. */
  fromList: number;
  /** Tasks that needed their own status GET. */
  fromStatus: number;
}

export class CreatedTimes {
  readonly #source: CreatedTimeSource;
  readonly #clock: Clock;
  readonly #listEveryMs: number;
  /** Watched task id → its datasource and the watch's number (a list answers only the watch it was sent for). */
  readonly #watched = new Map<
    string,
    {
      datasource: string;
      watch: number;
      signal?: AbortSignal | undefined;
      onAbort: () => void;
      misses: number;
    }
  >();
  #watches = 0;
  /** Watched task id → `createdTime`, once a list gave it. */
  readonly #known = new Map<string, string>();
  #loop: Promise<void> | null = null;
  #sleep: AbortController | null = null;
  /** Aborted by `close`: ends a list waiting on Druid (an outage) when the runner stops. */
  readonly #closing = new AbortController();
  readonly stats: CreatedTimesStats = { lists: 0, fromList: 0, fromStatus: 0 };

  constructor(options: CreatedTimesOptions) {
    this.#source = options.source;
    this.#clock = options.clock;
    this.#listEveryMs = options.listEveryMs ?? DEFAULT_LIST_EVERY_MS;
    if (!(this.#listEveryMs > 0))
      throw new RangeError(`listEveryMs: expected a positive number of ms, got ${this.#listEveryMs}`);
  }

  /**
   * Our task `taskId` of `datasource` is submitted and running: learn its `createdTime` from a list. Watching
   * ends with `take` or `forget`, or when `signal` (the partition's claim) aborts.
   */
  watch(datasource: string, taskId: string, signal?: AbortSignal): void {
    if (this.#closing.signal.aborted) return;
    const was = this.#watched.get(taskId);
    if (was?.datasource === datasource && was.signal === signal) return;
    if (was) this.forget(taskId);
    if (signal?.aborted) return;
    const onAbort = () => this.forget(taskId);
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#watched.set(taskId, { datasource, watch: ++this.#watches, signal, onAbort, misses: 0 });
    this.#loop ??= this.#run().finally(() => {
      this.#loop = null;
    });
  }

  /** The wait for `taskId` ended without a `take` (failed, canceled, resubmitted): drop what was learnt. */
  forget(taskId: string): void {
    const was = this.#watched.get(taskId);
    was?.signal?.removeEventListener("abort", was.onAbort);
    this.#watched.delete(taskId);
    this.#known.delete(taskId);
    if (this.#lacking().size === 0) this.#sleep?.abort();
  }

  /**
   * The task ended: its `createdTime` from a list, or else from its own status GET (null when Druid gave
   * none). Stops watching it.
   */
  async take(taskId: string, options?: CallOptions): Promise<string | null> {
    const known = this.#known.get(taskId);
    this.forget(taskId);
    if (known !== undefined) {
      this.stats.fromList++;
      return known;
    }
    this.stats.fromStatus++;
    const status = await this.#source.taskStatus(taskId, options).catch(() => null);
    return status?.status?.createdTime ?? null;
  }

  /**
   * The runner stops: no more lists, the one under way (perhaps waiting out a Druid outage) aborted, every watch
   * dropped. A `take` afterwards still asks the task's own status.
   */
  close(): void {
    this.#closing.abort();
    for (const id of [...this.#watched.keys()]) this.forget(id);
    this.#sleep?.abort();
  }

  /** Watched tasks without a `createdTime` yet, by datasource. */
  #lacking(): Map<string, Map<string, number>> {
    const by = new Map<string, Map<string, number>>();
    for (const [id, { datasource, watch }] of this.#watched) {
      if (this.#known.has(id)) continue;
      const ids = by.get(datasource);
      if (ids) ids.set(id, watch);
      else by.set(datasource, new Map([[id, watch]]));
    }
    return by;
  }

  async #run(): Promise<void> {
    while (!this.#closing.signal.aborted && this.#lacking().size > 0) {
      this.#sleep = new AbortController();
      try {
        await this.#clock.sleep(this.#listEveryMs, this.#sleep.signal);
      } catch {
        // Nothing lacks a createdTime any more (forget aborted the wait).
      }
      this.#sleep = null;
      for (const [datasource, ids] of this.#lacking()) {
        if (this.#closing.signal.aborted) break;
        await this.#list(datasource, ids);
      }
    }
  }

  /** One list of the datasource's active tasks; `ids`: the watched ids it may answer, with their watch. */
  async #list(datasource: string, ids: ReadonlyMap<string, number>): Promise<void> {
    this.stats.lists++;
    let active: ReadonlyArray<{ id: string; createdTime?: string | null }>;
    try {
      active = await this.#source.tasks({ datasource, max: 0 }, { signal: this.#closing.signal });
    } catch {
      return; // the status GET at the end still answers
    }
    const listed = new Set<string>();
    for (const t of active) {
      listed.add(t.id);
      // Still the watch the list was sent for: a task forgotten and resubmitted meanwhile is a new insert.
      const watch = ids.get(t.id);
      if (watch === undefined || typeof t.createdTime !== "string") continue;
      if (this.#watched.get(t.id)?.watch === watch) this.#known.set(t.id, t.createdTime);
    }
    // A watched task that lists keep leaving out has ended (it is stored before its submission answers): stop
    // listing for it, and its `take` asks its own status. A watch whose partition went elsewhere ends here too.
    for (const [id, watch] of ids) {
      const w = this.#watched.get(id);
      if (listed.has(id) || w?.watch !== watch) continue;
      if (++w.misses >= MAX_MISSES) this.forget(id);
    }
  }
}
