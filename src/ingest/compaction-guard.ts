import { formatInterval, type Interval, parseInterval, sameInterval } from "../core/interval.js";
import type { CallOptions } from "../druid/client.js";
import { datasourceCompactionConfig } from "../work/compaction-config.js";
import { skipIntervalFor, skips, withoutSkipInterval, withSkipInterval } from "./compaction-skip.js";

/**
 * Keeps auto-compaction out of the intervals a backfill writes (compaction-skip.ts; apache/druid #19792, Druid
 * 39): a partition about to submit adds its interval to its datasource's `skipIntervals`, and takes it out once
 * it is over (done after its audit, failed, dead or canceled). The Coordinator's config API has no
 * compare-and-set for one datasource's entry, so each change is a read-modify-write of the whole entry that
 * keeps every other field and entry, is read back, and is done again when another writer's change replaced it.
 *
 * What segops added is recorded with the partition (its progress' `compactionSkip`), so any host that resumes
 * the partition removes it, and segops never removes an entry it did not add (an operator's). Partitions sharing
 * one skip interval (days of a month compacted monthly) remove it when the last is over: this process's by its
 * own count, other hosts' and jobs' by the ledger (`heldElsewhere`). What a removal left behind (Druid down when
 * the partition ended, a job canceled while nothing ran it) the ledger still records, and `clear` takes it out
 * later (compaction-leftovers.ts).
 * On a Druid before 39 nothing is written; a datasource with auto-compaction gets one warning that compaction
 * may race the backfill.
 */

/** The client calls the guard makes (a `DruidClient` has them). */
export interface CompactionConfigClient {
  compactionConfig(options?: CallOptions): Promise<Record<string, unknown>>;
  setDatasourceCompactionConfig(config: Record<string, unknown>, options?: CallOptions): Promise<void>;
  capabilities?(): Promise<{ readonly compactionSkipIntervals: boolean; readonly behavesAs: number }>;
  /** The Overlord's supervisor ids: a compaction supervisor is `autocompact__<dataSource>`. */
  supervisorIds?(options?: CallOptions): Promise<string[]>;
}

/** Writes tried per change before giving up (each after reading the config again). */
export const SKIP_WRITE_ATTEMPTS = 3;

export class CompactionGuard {
  /** Partitions (ledger task ids) of this process holding each `datasource|interval`. */
  readonly #holders = new Map<string, Set<string>>();
  /** One change at a time per datasource in this process: two partitions' writes must not undo each other. */
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #warned = new Set<string>();

  constructor(
    private readonly o: {
      client: CompactionConfigClient;
      /** Said once per datasource on a Druid without skipIntervals. */
      warn: (message: string) => void;
      /**
       * Whether a partition outside this process that is not over (another host's, another job's) still records
       * the interval: then it stays. A failed read keeps it too (it is cleared later). @default none
       */
      heldElsewhere?: (datasource: string, interval: string, holder: string) => Promise<boolean>;
    },
  ) {}

  /**
   * Puts the partition's interval (widened to the compaction granularity) in the datasource's skip intervals,
   * unless it is there already and not segops' (`owned`: what the partition recorded before). Answers the
   * interval to record with the partition as segops', or null when there is nothing of segops' to remove later
   * (no auto-compaction for the datasource, a Druid before 39, an operator's entry).
   */
  hold(
    datasource: string,
    partition: Interval,
    holder: string,
    owned: string | undefined,
    call: CallOptions = {},
  ): Promise<string | null> {
    return this.#serial(datasource, async () => {
      if (!(await this.#supported(datasource, call))) return null;
      const config = await this.#config(datasource, call);
      if (!config) return null;
      const interval = skipIntervalFor(partition, config);
      const text = formatInterval(interval);
      const key = `${datasource}|${text}`;
      const holders = this.#holders.get(key);
      let ours = owned === text || (holders !== undefined && holders.size > 0);
      // Already there: an operator's, unless a partition elsewhere recorded it (another host wrote it first); then
      // it is segops' and this partition holds it too, so the other's end does not take it from under this one.
      if (skips(config, interval) && !ours && text !== formatInterval(partition))
        ours = (await this.o.heldElsewhere?.(datasource, text, holder)) === true;
      if (skips(config, interval) && !ours) return null;
      await this.#change(datasource, call, config, (c) => withSkipInterval(c, interval), true, interval);
      this.#holders.set(key, (holders ?? new Set()).add(holder));
      return text;
    });
  }

  /**
   * Takes out what {@link hold} recorded for the partition, once no other partition holds it: of this process by
   * its count, elsewhere by `heldElsewhere` — asked only for an interval wider than the partition (`partition`, as
   * the payload says it), since no two running partitions share one chunk (the ledger's exclusion key).
   */
  release(
    datasource: string,
    recorded: string,
    holder: string,
    call: CallOptions = {},
    partition?: string,
  ): Promise<void> {
    return this.#serial(datasource, async () => {
      const key = `${datasource}|${recorded}`;
      const holders = this.#holders.get(key);
      holders?.delete(holder);
      if (holders && holders.size > 0) return;
      this.#holders.delete(key);
      const widened =
        partition === undefined || !sameInterval(parseInterval(partition), parseInterval(recorded));
      if (widened && (await this.o.heldElsewhere?.(datasource, recorded, holder))) return;
      const interval = parseInterval(recorded);
      const config = await this.#config(datasource, call);
      if (!config) return;
      await this.#change(datasource, call, config, (c) => withoutSkipInterval(c, interval), false, interval);
    });
  }

  /**
   * Takes out a leftover (compaction-leftovers.ts): an entry segops recorded that no unfinished partition holds any
   * more. Not while a partition of this process holds it.
   */
  clear(datasource: string, recorded: string, call: CallOptions = {}): Promise<void> {
    return this.#serial(datasource, async () => {
      if ((this.#holders.get(`${datasource}|${recorded}`)?.size ?? 0) > 0) return;
      const interval = parseInterval(recorded);
      const config = await this.#config(datasource, call);
      if (!config) return;
      await this.#change(datasource, call, config, (c) => withoutSkipInterval(c, interval), false, interval);
    });
  }

  /** The partition runs elsewhere now (taken over, handed back): its host removes the entry, not this one. */
  forget(holder: string): void {
    for (const holders of this.#holders.values()) holders.delete(holder);
  }

  async #config(datasource: string, call: CallOptions): Promise<Record<string, unknown> | null> {
    return datasourceCompactionConfig(await this.o.client.compactionConfig(call), datasource);
  }

  /**
   * Whether the cluster skips intervals; before 39, reads the datasource's config once (per process) to say,
   * once, that its auto-compaction may race the backfill.
   */
  async #supported(datasource: string, call: CallOptions): Promise<boolean> {
    const caps = await this.o.client.capabilities?.();
    if (!caps || caps.compactionSkipIntervals) return true;
    if (this.#warned.has(datasource)) return false;
    this.#warned.add(datasource);
    const how = (await this.#config(datasource, call))
      ? "auto-compaction"
      : (await this.#supervised(datasource, call))
        ? "a compaction supervisor (autocompact)"
        : null;
    if (how) {
      this.o.warn(
        `${datasource} has ${how}, and Druid ${caps.behavesAs} cannot skip intervals (compaction skipIntervals came in Druid 39): auto-compaction may compact an interval while the backfill writes it (the partition's task then loses its lock and is retried; a compaction after its task SUCCEEDED is taken for Druid's compaction of ours); suspend the datasource's auto-compaction for the backfill to avoid it`,
      );
    }
    return false;
  }

  /**
   * Whether the Overlord runs a compaction supervisor for the datasource (apache/druid #16768; the recommended way
   * from Druid 37, #19252), which the Coordinator's compaction config does not list. Unknown (no such call, or it
   * failed) is no.
   */
  async #supervised(datasource: string, call: CallOptions): Promise<boolean> {
    try {
      return (await this.o.client.supervisorIds?.(call))?.includes(`autocompact__${datasource}`) === true;
    } catch {
      return false;
    }
  }

  /** Writes `next(config)` until a read shows it took (`present`: the interval is there, or gone). */
  async #change(
    datasource: string,
    call: CallOptions,
    first: Record<string, unknown>,
    next: (config: Record<string, unknown>) => Record<string, unknown> | null,
    present: boolean,
    interval: Interval,
  ): Promise<void> {
    let config: Record<string, unknown> | null = first;
    for (let i = 0; i < SKIP_WRITE_ATTEMPTS; i++) {
      if (!config) return; // the auto-compaction config was removed meanwhile: nothing to skip or clean
      const changed = next(config);
      if (!changed) return; // already as wanted
      await this.o.client.setDatasourceCompactionConfig(changed, call);
      config = await this.#config(datasource, call);
      if (!config || skips(config, interval) === present) return;
    }
    throw new Error(
      `could not ${present ? "add" : "remove"} ${formatInterval(interval)} ${present ? "to" : "from"} ${datasource}'s compaction skipIntervals: another writer changed the config ${SKIP_WRITE_ATTEMPTS} times in a row`,
    );
  }

  #serial<T>(datasource: string, run: () => Promise<T>): Promise<T> {
    const before = this.#queues.get(datasource) ?? Promise.resolve();
    const result = before.then(run, run);
    this.#queues.set(
      datasource,
      result.catch(() => {}),
    );
    return result;
  }
}
