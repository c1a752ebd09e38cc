import type { Clock } from "../core/clock.js";
import { DEFAULTS } from "../core/defaults.js";
import { formatInterval, type Interval, overlaps, parseInterval } from "../core/interval.js";
import type { DataSegment } from "../druid/types.js";
import { type LoadRule, neverLoaded, undecidedByRules } from "./load-rules.js";
import {
  coalesceIntervals,
  type ServedBy,
  segmentId,
  servedByHistoricals,
  toTimelineSegment,
} from "./segments.js";
import { type Pending, TickBatcher } from "./tick-batcher.js";
import { type LiveData, liveDataOf, liveTimeline, type TimelineSegment } from "./timeline.js";

/**
 * The handoff gate (architecture doc, step 5): SUCCESS is not queryable. A partition is handed off when,
 * over its whole interval, the live timeline (built from the metadata store's used segments, including
 * overshadowed ones, docs/druid-api.md §3.4) shows our version and every live non-tombstone segment is
 * served by a Historical (§3.2a) — the criterion Druid's own `loadstatus` applies (§3.3), plus the
 * version check it lacks. Checks are batched per datasource: one metadata POST with every waiting
 * interval, and the Coordinator's served view of just those intervals (one serverview GET per range of
 * touching intervals, ranges that lie close read as one hull; past `maxServedRanges` ranges, the datasource's
 * whole served list once), per tick. A partition still waiting is checked less and less often while nothing
 * new is served over it (`CheckSchedule`), on a grid shared by every partition so that their checks coincide.
 */

export type HandoffVerdict =
  | {
      state: "handed-off";
      /** Null only for an attempt that provably ingested no rows (it published nothing). */
      version: string | null;
      segments: TimelineSegment[];
      proof: OwnershipProof | null;
      /**
       * Every used segment overlapping the interval, with its served flag, as this verdict read them (set by
       * the checker): the audit that follows in the same run judges the same reads instead of asking again.
       */
      seen?: readonly TimelineSegment[];
    }
  | { state: "waiting"; version: string | null; missing: string[]; proof: OwnershipProof | null }
  /**
   * Someone else's newer version is live over ours (ours still used, or already marked unused by the
   * Coordinator, see `supersededWhileGone`): waiting cannot help.
   */
  | { state: "superseded"; version: string; liveVersions: string[] }
  /** Our segments are there, but the load rules never load some of them: waiting cannot help. */
  | { state: "never-loaded"; version: string; reason: string }
  /**
   * Our attempt published data, but none of it is used any more (marked unused, dropped, forgotten) and no
   * newer version is live over the whole interval in its place.
   */
  | { state: "lost"; reason: string }
  /**
   * A new version exists but nothing proves it is ours (it is later than our task could have locked, or
   * our baseline was read after the task ran). `candidate` is what the caller may try to prove otherwise.
   */
  | { state: "unproven"; candidate: string | null; reason: string };

/** How a version was tied to our attempt. */
export type OwnershipProof =
  /** Recorded earlier (it was proven then); from then on only that version counts. */
  | "recorded"
  /** New since the baseline read before our submission, and within our task's lifetime. */
  | "window"
  /** New since the baseline, and the task's duration is unknown (older checkpoints). */
  | "baseline"
  /** No other task of the datasource was created between our task and this version. */
  | "sole-task";

/**
 * What existed before our attempt was submitted (checkpointed then), so that afterwards our segments
 * can be told apart: Druid's segment metadata does not name the task that published it.
 */
export interface Baseline {
  versions: string[];
  segmentIds: string[];
}

export interface HandoffQuestion {
  interval: Interval;
  mode: "replace" | "append";
  baseline: Baseline;
  /**
   * False when the Druid task already existed when the baseline was read (another job or ledger
   * submitted the same spec): the baseline then already holds the task's own segments.
   * @default true
   */
  baselineTrusted?: boolean;
  /** Our version once identified (checkpointed), so a later foreign version is not mistaken for ours. */
  version?: string | null;
  /**
   * When Druid created our task (`createdTime`, ISO): our lock — and so our version, a lock timestamp
   * (docs/druid-api.md, "Versions") — cannot be older, which rules out a foreign task that locked before ours.
   */
  notBefore?: string | null;
  /**
   * `createdTime` + the task's run duration (ISO): the latest lock time that certainly belongs to our
   * task's lifetime. A replace that overshadows ours must lock after our task released its lock, so a
   * version past this is ours only if something else proves it (a lock that waited longer than the run).
   */
  notAfter?: string | null;
  /** Rows the attempt ingested per its report (null when Druid kept no report). */
  rowsIngested?: number | null;
}

type Ours =
  | { kind: "found"; segments: TimelineSegment[]; proof: OwnershipProof }
  | { kind: "none" }
  | { kind: "lost"; reason: string }
  | { kind: "unproven"; candidate: string | null; reason: string };

/**
 * Our segments, and how we know they are ours. For a replace: the recorded version if there is one;
 * else the oldest version that was not there before and is not older than our task (Druid gives each
 * lock a fresh, increasing version; a later foreign replace is newer, an earlier one older than our
 * task), accepted only within our task's lifetime. For an append: the segment ids that were not there
 * before (they join the chunk's existing version), which needs a baseline read before the task existed.
 */
export function identifyOurs(used: readonly TimelineSegment[], q: HandoffQuestion): Ours {
  const inInterval = used.filter((s) => s.start < q.interval.end && q.interval.start < s.end);
  const trusted = q.baselineTrusted !== false;
  const where = formatInterval(q.interval);
  if (q.mode === "append") {
    if (!trusted) {
      return {
        kind: "unproven",
        candidate: null,
        reason: `the task was submitted before this job read ${where} (by another job or ledger with the same spec), so its appended segments cannot be told apart from the ones already there`,
      };
    }
    const before = new Set(q.baseline.segmentIds);
    const ours = inInterval.filter((s) => !before.has(s.id));
    return ours.length > 0 ? { kind: "found", segments: ours, proof: "baseline" } : { kind: "none" };
  }
  if (q.version) {
    const ours = inInterval.filter((s) => s.version === q.version);
    return ours.length > 0
      ? { kind: "found", segments: ours, proof: "recorded" }
      : { kind: "lost", reason: `our version ${q.version} is no longer used in ${where}` };
  }
  const before = new Set(trusted ? q.baseline.versions : []);
  const notBefore = q.notBefore ?? "";
  if (!trusted && !notBefore) {
    return { kind: "unproven", candidate: null, reason: "Druid did not say when our task was created" };
  }
  const fresh = [...new Set(inInterval.map((s) => s.version))]
    .filter((v) => !before.has(v) && v >= notBefore)
    .sort();
  const version = fresh[0];
  if (version === undefined) return { kind: "none" };
  if (q.notAfter && version > q.notAfter) {
    return {
      kind: "unproven",
      candidate: version,
      reason: `the oldest new version ${version} is later than our task's lifetime (${q.notBefore} to ${q.notAfter})`,
    };
  }
  const segments = inInterval.filter((s) => s.version === version);
  return { kind: "found", segments, proof: q.notAfter ? "window" : "baseline" };
}

/** What else the decision may look at: the datasource's load rules (null when unknown) and the time. */
export interface HandoffContext {
  rules?: readonly LoadRule[] | null;
  now?: number;
}

/** Pure decision for one partition, from the used segments overlapping it (with served flags). */
export function handoffVerdict(
  q: HandoffQuestion,
  used: readonly TimelineSegment[],
  context: HandoffContext = {},
): HandoffVerdict {
  const found = identifyOurs(used, q);
  if (found.kind === "lost" && q.mode === "replace" && q.version) {
    const newer = supersededWhileGone(used, q.interval, q.version);
    if (newer) return { state: "superseded", version: q.version, liveVersions: newer };
  }
  // Druid marks segments a drop rule matches unused (Druid 33's RunRules): data gone under a rule that drops
  // the interval is "never queryable under the load rules", the cause, rather than lost.
  if ((found.kind === "lost" || (found.kind === "none" && q.rowsIngested !== 0)) && context.rules) {
    const reason = neverLoaded(context.rules, [q.interval], context.now ?? Date.now());
    if (reason) return { state: "never-loaded", version: q.version ?? "(unknown)", reason };
  }
  if (found.kind === "lost") return { state: "lost", reason: found.reason };
  if (found.kind === "unproven")
    return { state: "unproven", candidate: found.candidate, reason: found.reason };
  if (found.kind === "none") {
    // Druid commits segment metadata before it reports SUCCESS, so "nothing new" is final, not a lag. It
    // is a success only for an attempt that ingested no rows (it publishes nothing, or in REPLACE_LEGACY
    // leaves chunks alone); rows ingested and nothing of ours used means our data is gone.
    if (q.rowsIngested === 0) return { state: "handed-off", version: null, segments: [], proof: null };
    return {
      state: "lost",
      reason:
        q.rowsIngested === null || q.rowsIngested === undefined
          ? `no new segments in ${formatInterval(q.interval)} and Druid kept no report saying the task ingested nothing`
          : `the task ingested ${q.rowsIngested} row(s) but none of its segments is used in ${formatInterval(q.interval)}`,
    };
  }
  const ours = found.segments;
  // Versions compare as strings (docs/druid-api.md, "Versions").
  const version = ours.map((s) => s.version).sort()[ours.length - 1] as string;
  const oursIds = new Set(ours.map((s) => s.id));
  const pieces = liveTimeline(used, q.interval);
  const missing: string[] = [];
  const newer = new Set<string>();
  for (const p of pieces) {
    const touchesOurs = ours.some((s) => s.start < p.end && p.start < s.end);
    if (!touchesOurs) continue;
    if (p.liveVersion !== null && p.liveVersion > version) {
      newer.add(p.liveVersion);
      continue;
    }
    if (p.liveVersion !== version) {
      missing.push(
        `${formatInterval(p)}: live version ${p.liveVersion ?? "none"}, ours ${version} not complete`,
      );
      continue;
    }
    for (const s of p.live) {
      if (!s.tombstone && !s.served && (q.mode === "replace" || oursIds.has(s.id)))
        missing.push(`${s.id} not served`);
    }
  }
  if (newer.size > 0) return { state: "superseded", version, liveVersions: [...newer].sort() };
  if (missing.length > 0 && context.rules) {
    // Say at once when the rules will never load what we wait for, instead of at the handoff timeout.
    const unserved = ours
      .filter((s) => !s.tombstone && !s.served)
      .map((s) => ({ start: s.start, end: s.end }));
    const reason = neverLoaded(context.rules, unserved, context.now ?? Date.now());
    if (reason) return { state: "never-loaded", version, reason };
    // A rule segops cannot read decides: no verdict from the rules, but said with what the gate waits for.
    const undecided = undecidedByRules(context.rules, unserved, context.now ?? Date.now());
    if (undecided) missing.push(undecided);
  }
  return missing.length === 0
    ? { state: "handed-off", version, segments: ours, proof: found.proof }
    : { state: "waiting", version, missing: [...new Set(missing)], proof: found.proof };
}

/**
 * For a recorded version of ours (seen used and proven ours, so our task did publish it) that is no longer
 * used: the newer versions live over the whole interval, or null. Druid's Coordinator marks a segment unused
 * once complete newer segments over it are served (its `MarkOvershadowedSegmentsAsUnused` duty, every
 * `druid.coordinator.period`), so this is the superseded state read after that duty ran, not a loss. Any
 * piece of the interval with no live version, or with one not newer than ours (a rollback, a kill), leaves
 * ours lost.
 */
export function supersededWhileGone(
  used: readonly TimelineSegment[],
  interval: Interval,
  version: string,
): string[] | null {
  const newer = new Set<string>();
  for (const p of liveTimeline(used, interval)) {
    // Versions compare as strings (docs/druid-api.md, "Versions").
    if (p.liveVersion === null || p.liveVersion <= version) return null;
    newer.add(p.liveVersion);
  }
  return newer.size > 0 ? [...newer].sort() : null;
}

/**
 * For a replace whose version was never recorded, when the oldest new used version is later than our task's
 * lifetime (`unproven`): ours may have been published, replaced by another writer and marked unused by the
 * Coordinator before the gate first looked. Then it is among the unused versions, new since the baseline and
 * within our task's lifetime (the window proof holds for it as for a used one); with newer versions live over
 * the whole interval that is the superseded state. Null when no such version exists or something older, or
 * nothing, shows through.
 */
export function supersededBeforeSeen(
  q: HandoffQuestion,
  used: readonly TimelineSegment[],
  unusedVersions: readonly string[],
): Extract<HandoffVerdict, { state: "superseded" }> | null {
  const { notBefore, notAfter } = q;
  if (q.mode !== "replace" || q.version || !notBefore || !notAfter) return null;
  const before = new Set(q.baselineTrusted !== false ? q.baseline.versions : []);
  // Versions compare as strings (docs/druid-api.md, "Versions").
  const ours = [...new Set(unusedVersions)]
    .filter((v) => !before.has(v) && v >= notBefore && v <= notAfter)
    .sort()[0];
  if (ours === undefined) return null;
  const newer = supersededWhileGone(used, q.interval, ours);
  return newer ? { state: "superseded", version: ours, liveVersions: newer } : null;
}

/** Reads what exists in the interval now: the baseline for the attempt about to be submitted. */
export async function readBaseline(
  source: Pick<HandoffSource, "metadataSegments">,
  datasource: string,
  interval: Interval,
  signal?: AbortSignal,
): Promise<Baseline> {
  return (await readBaselineAndLive(source, datasource, interval, signal)).baseline;
}

/** The baseline and, from the same read, what the interval serves now (for the pre-flight). */
export async function readBaselineAndLive(
  source: Pick<HandoffSource, "metadataSegments">,
  datasource: string,
  interval: Interval,
  signal?: AbortSignal,
): Promise<{ baseline: Baseline; live: LiveData }> {
  const used = await source.metadataSegments(
    datasource,
    [formatInterval(interval)],
    signal ? { signal } : {},
  );
  const segments = used.map((s) => toTimelineSegment(s, new Set()));
  return {
    baseline: {
      versions: [...new Set(segments.map((s) => s.version))].sort(),
      segmentIds: segments.map((s) => s.id).sort(),
    },
    live: liveDataOf(segments, interval),
  };
}

/** The Coordinator reads the gate needs (a DruidClient satisfies it). */
export interface HandoffSource {
  /** The datasource's rule chain with the defaults; optional (without it, rules are not considered). */
  loadRules?(datasource: string, options?: { signal?: AbortSignal }): Promise<LoadRule[]>;
  metadataSegments(
    datasource: string,
    intervals: readonly string[],
    options?: { signal?: AbortSignal },
  ): Promise<DataSegment[]>;
  /** Every segment id the Coordinator's inventory holds for the datasource (§3.2): the fallback. */
  servedSegments(datasource: string, options?: { signal?: AbortSignal }): Promise<string[]>;
  /**
   * The served view of one interval (`…/intervals/{interval}/serverview`, §3.2a). Optional: without it the
   * checker reads the whole served list.
   */
  servedInInterval?(
    datasource: string,
    interval: string,
    options?: { signal?: AbortSignal },
  ): Promise<Array<{ segment: DataSegment; servers: Array<ServedBy> }>>;
  /**
   * The cloned Historicals (the Coordinator dynamic config's `cloneServers`, Druid 34+): what they hold is not
   * served. Optional: without it no server is taken for a clone.
   */
  cloneServers?(options?: { signal?: AbortSignal }): Promise<ReadonlySet<string>>;
}

/** How long the clone list, once read, stands: clones are set up by hand, rarely. */
export const CLONES_TTL_MS = 60_000;

/**
 * Ranges of waiting intervals up to which the served view is read per range (docs/benchmarks.md, "Handoff
 * checks at scale"). Measured at 200,000 served segments, 1,000 ranges cost segops about the CPU of one whole
 * list (0.15 ms a range against 150–180 ms) at a thirteenth of the bytes, and each is a timeline lookup for the
 * Coordinator where the whole list copies every server's segments; past that the one list is cheaper.
 */
export const MAX_SERVED_RANGES = 1000;
/** Served-view requests in flight at once, per datasource. */
const SERVED_CONCURRENCY = 4;
/**
 * How long a datasource's load rules, once read, serve the checks: rules change by hand, rarely, and only
 * sharpen a verdict (a wait the rules will never end is ended early), so reading them every tick was a request
 * a tick per datasource for an answer that did not change
 * (docs/benchmarks.md, "What segops costs a Druid").
 */
export const RULES_TTL_MS = 60_000;

/**
 * How much longer than the waiting ranges themselves one served-view read may span: ranges whose hull is at most
 * this many times their summed length are read with one serverview GET (what lies between them is served data
 * of the datasource, read for nothing, so the bytes stay within this factor of the ranges' own), instead of one
 * GET each.
 */
export const MAX_HULL_SPAN = 4;

/**
 * The longest pause between two checks of a partition while nothing new is served over it, in ticks. A handoff is
 * seen up to this late (docs/benchmarks.md, "What segops costs a Druid"); Druid's own handoff takes at least one
 * Coordinator period (`druid.coordinator.period`, 60 s by default), so the first minute's checks mostly wait.
 */
export const MAX_CHECK_INTERVAL_TICKS = 8;

/**
 * The longest a waiting partition's used segments, once read, stand in for a fresh metadata read, in ticks. A
 * round reads the metadata store only for partitions whose served view changed since their last read (or that
 * were never read): what a check decides on is the used segments against what is served, and while what is
 * served over a partition stays the same, only a change in the metadata store alone could change the verdict (a
 * version marked unused, or another task's newer version published, neither served yet). Such a change is seen
 * up to this late; one that reaches what is served is seen at once.
 */
export const METADATA_MAX_AGE_TICKS = 30;

export interface HandoffCheckerOptions {
  source: HandoffSource;
  clock: Clock;
  /** Time between checks while anyone waits. @default DEFAULTS.tickMs (1000) */
  tickMs?: number;
  /** Above this many ranges of waiting intervals, read the whole served list instead. @default MAX_SERVED_RANGES */
  maxServedRanges?: number;
  /**
   * Longest pause between two checks of a partition still waiting while nothing new is served over it; a tick
   * (`tickMs`) checks every partition every tick. @default MAX_CHECK_INTERVAL_TICKS ticks
   */
  maxCheckIntervalMs?: number;
  /** How long a partition's used segments stand while its served view is unchanged. @default METADATA_MAX_AGE_TICKS ticks */
  metadataMaxAgeMs?: number;
}

/**
 * When each waiting partition is next worth checking: first at once, then after a tick, doubling up to a cap while
 * its served view stays the same, back to a tick when it changes. Due times sit on a grid of the pause itself
 * (multiples of 2, 4, 8 ticks), so partitions waiting together are checked in the same rounds: one metadata POST
 * and one served read for all of them. Pure state, no I/O.
 */
export class CheckSchedule {
  readonly #by = new Map<string, { pauseMs: number; dueAt: number; served: string; askedAt: number }>();

  constructor(
    private readonly tickMs: number,
    private readonly capMs: number,
  ) {}

  /** Whether the partition under `key` is due for a check in the round at `now` (a new one always is). */
  due(key: string, now: number): boolean {
    const s = this.#by.get(key);
    if (s) s.askedAt = now;
    return !s || s.dueAt <= now;
  }

  /** A check said "waiting" with `served` (what is served over the interval, as a comparable string). */
  waiting(key: string, served: string, now: number): void {
    const s = this.#by.get(key);
    const pauseMs =
      !s || s.served !== served ? this.tickMs : Math.min(Math.max(s.pauseMs * 2, this.tickMs), this.capMs);
    this.#by.set(key, {
      pauseMs,
      dueAt: Math.ceil((now + pauseMs / 2) / pauseMs) * pauseMs,
      served,
      askedAt: now,
    });
  }

  /** Whether the partition under `key` is due by `at` without being marked asked (a new one always is). */
  dueBy(key: string, at: number): boolean {
    const s = this.#by.get(key);
    return !s || s.dueAt <= at;
  }

  /** Whether the partition under `key` is waiting in the schedule. */
  has(key: string): boolean {
    return this.#by.has(key);
  }

  /** The partition's wait is over (a verdict other than waiting): forget it. */
  done(key: string): void {
    this.#by.delete(key);
  }

  /** Forgets partitions nobody asked about for a while (canceled, or taken over by another host). */
  prune(now: number): void {
    for (const [key, s] of this.#by) if (now - s.askedAt > 4 * this.capMs + this.tickMs) this.#by.delete(key);
  }

  get size(): number {
    return this.#by.size;
  }
}

/** A read of the used segments overlapping an interval (a baseline before submitting), riding a round. */
interface UsedRead {
  read: Interval;
}
type Ask = HandoffQuestion | UsedRead;
type Answer = HandoffVerdict | DataSegment[];
const isRead = (q: Ask): q is UsedRead => "read" in q;

/** What a round's served view read: the ids, and (per range read) each id's interval; failed ranges apart. */
interface Served {
  ids: string[];
  /** Served segments' intervals by id; null when the whole served list was read (ids only). */
  intervals: Map<string, Interval> | null;
  failed: Array<{ range: Interval; error: unknown }>;
}

/**
 * Batches handoff questions per datasource; each `check` resolves at the next tick. A round sends one metadata
 * POST per datasource with the intervals that need it: the checks whose served view changed since their used
 * segments were last read (or never read, or read `metadataMaxAgeMs` ago), and any `readUsed` asked meanwhile.
 */
export class HandoffChecker {
  readonly #batcher: TickBatcher<string, Ask, Answer>;
  /**
   * `served*`: served-view requests per range (or hull of close ranges), and rounds that read the whole served list
   * instead; `deferred`: partitions left out of a round because their next check was not due; `metadataReads`:
   * metadata POSTs; `metadataReused`: checks decided on used segments read in an earlier round; `usedReads`:
   * `readUsed` answered (each riding a round's metadata POST).
   */
  readonly stats = {
    rounds: 0,
    requests: 0,
    servedRanges: 0,
    servedFallbacks: 0,
    deferred: 0,
    metadataReads: 0,
    metadataReused: 0,
    usedReads: 0,
  };
  #lastFlushEnd = Number.NEGATIVE_INFINITY;
  readonly #schedule: CheckSchedule;
  readonly #metadataMaxAgeMs: number;
  readonly #tickMs: number;
  /** Checks asked and not yet answered, per datasource and partition (how many of each). */
  readonly #asked = new Map<string, Map<string, number>>();
  /** Per waiting partition: its used segments as last read, what was served over it then, and when. */
  readonly #used = new Map<string, { segments: TimelineSegment[]; served: string | null; readAt: number }>();
  #clones: { readAt: number; hosts: ReadonlySet<string> } | null = null;
  readonly #rules = new Map<string, { readAt: number; rules: LoadRule[] }>();

  constructor(private readonly options: HandoffCheckerOptions) {
    const tickMs = options.tickMs ?? DEFAULTS.tickMs;
    this.#schedule = new CheckSchedule(
      tickMs,
      options.maxCheckIntervalMs ?? MAX_CHECK_INTERVAL_TICKS * tickMs,
    );
    this.#metadataMaxAgeMs = options.metadataMaxAgeMs ?? METADATA_MAX_AGE_TICKS * tickMs;
    this.#tickMs = tickMs;
    this.#batcher = new TickBatcher({
      name: "handoff checker",
      clock: options.clock,
      // At most one check a tick, but a question asked after a tick or more of quiet is checked after a short
      // gathering pause, not a whole tick: a task that just succeeded would otherwise wait a tick for its first
      // look (the larger part of `segops run`'s overhead on a fast handoff, bench/overhead.ts).
      nextDelay: () =>
        Math.min(tickMs, Math.max(DEFAULTS.gatherMs, this.#lastFlushEnd + tickMs - options.clock.now())),
      flush: async (batch, signal) => {
        const now = options.clock.now();
        this.#schedule.prune(now);
        for (const key of this.#used.keys()) if (!this.#schedule.has(key)) this.#used.delete(key);
        const later: typeof batch = new Map();
        const due = new Map<
          string,
          {
            checks: Array<Pending<HandoffQuestion, HandoffVerdict>>;
            reads: Array<Pending<UsedRead, DataSegment[]>>;
          }
        >();
        for (const [ds, pending] of batch) {
          const [reads, checks] = partition(pending, (p) => isRead(p.question));
          const [ask, wait] = partition(checks, (p) =>
            this.#schedule.due(scheduleKey(ds, p.question as HandoffQuestion), now),
          );
          if (ask.length > 0 || reads.length > 0)
            due.set(ds, {
              checks: ask as unknown as Array<Pending<HandoffQuestion, HandoffVerdict>>,
              reads: reads as unknown as Array<Pending<UsedRead, DataSegment[]>>,
            });
          if (wait.length > 0) later.set(ds, wait);
          this.stats.deferred += wait.length;
        }
        // Not due yet: they ride a later round, costing no request now.
        if (later.size > 0) this.#batcher.requeue(later);
        if (due.size === 0) return;
        this.stats.rounds++;
        try {
          await Promise.all(
            [...due].map(([ds, { checks, reads }]) => this.#checkDatasource(ds, checks, reads, signal)),
          );
        } finally {
          this.#lastFlushEnd = options.clock.now();
        }
      },
    });
  }

  check(datasource: string, question: HandoffQuestion, signal?: AbortSignal): Promise<HandoffVerdict> {
    const key = scheduleKey(datasource, question);
    const keys = this.#asked.get(datasource) ?? new Map<string, number>();
    this.#asked.set(datasource, keys);
    keys.set(key, (keys.get(key) ?? 0) + 1);
    return (this.#batcher.ask(datasource, question, signal) as Promise<HandoffVerdict>).finally(() => {
      const n = (keys.get(key) ?? 1) - 1;
      if (n > 0) keys.set(key, n);
      else keys.delete(key);
      if (keys.size === 0 && this.#asked.get(datasource) === keys) this.#asked.delete(datasource);
    });
  }

  /** Whether a check of the datasource is waiting and due by `by` (so a round will read its metadata). */
  #roundDue(datasource: string, by: number): boolean {
    for (const key of this.#asked.get(datasource)?.keys() ?? [])
      if (this.#schedule.dueBy(key, by)) return true;
    return false;
  }

  /**
   * The used segments overlapping `interval` (the metadata store's, `POST …/metadata/datasources/{ds}/segments`),
   * read in the next round together with that round's checks of the datasource: one POST with all intervals
   * (Druid answers the used segments overlapping any of them, docs/druid-api.md §3.4), each asker given the
   * ones overlapping its own. A baseline read before submitting costs no request of its own when a check is due;
   * with none due within a tick it is read at once, alone.
   */
  readUsed(datasource: string, interval: Interval, signal?: AbortSignal): Promise<DataSegment[]> {
    // No check of the datasource due within a tick: nothing to share, so no reason to wait for a round.
    if (!this.#roundDue(datasource, this.options.clock.now() + this.#tickMs)) {
      this.stats.requests++;
      this.stats.metadataReads++;
      this.stats.usedReads++;
      return this.options.source.metadataSegments(
        datasource,
        [formatInterval(interval)],
        signal ? { signal } : {},
      );
    }
    return this.#batcher.ask(datasource, { read: interval }, signal) as Promise<DataSegment[]>;
  }

  stop(): Promise<void> {
    return this.#batcher.stop();
  }

  async #checkDatasource(
    datasource: string,
    checks: Array<Pending<HandoffQuestion, HandoffVerdict>>,
    reads: Array<Pending<UsedRead, DataSegment[]>>,
    signal: AbortSignal,
  ): Promise<void> {
    const source = this.options.source;
    let live = checks;
    let served: Served = { ids: [], intervals: null, failed: [] };
    let rules: LoadRule[] | null = null;
    if (checks.length > 0) {
      try {
        // The served view first: which checks need the metadata store read afresh depends on it.
        [served, rules] = await Promise.all([
          this.#served(
            datasource,
            checks.map((p) => p.question.interval),
            signal,
          ),
          this.#loadRules(datasource, signal),
        ]);
      } catch (error) {
        for (const p of checks) p.reject(error);
        if (signal.aborted) {
          for (const p of reads) p.reject(error);
          return;
        }
        live = [];
      }
    }
    const now = this.options.clock.now();
    const servedOverlapping = served.intervals ? servedIndex(served.intervals) : null;
    const servedNow = new Map<Pending<HandoffQuestion, HandoffVerdict>, string | null>();
    const fresh: Array<Pending<HandoffQuestion, HandoffVerdict>> = [];
    for (const p of live) {
      const key = scheduleKey(datasource, p.question);
      const over = servedOverlapping ? servedOverlapping(p.question.interval) : null;
      servedNow.set(p, over);
      const last = this.#used.get(key);
      if (!last || over === null || last.served !== over || now - last.readAt >= this.#metadataMaxAgeMs)
        fresh.push(p);
    }
    const intervals = [
      ...new Set(
        [...fresh.map((p) => p.question.interval), ...reads.map((r) => r.question.read)].map(formatInterval),
      ),
    ];
    let used: DataSegment[] = [];
    if (intervals.length > 0) {
      this.stats.requests += 1;
      this.stats.metadataReads += 1;
      try {
        used = await source.metadataSegments(datasource, intervals, { signal });
      } catch (error) {
        for (const p of [...fresh, ...reads]) p.reject(error);
        live = live.filter((p) => !fresh.includes(p));
        fresh.length = 0;
      }
    }
    for (const r of reads) {
      if (r.settled) continue;
      const i = r.question.read;
      this.stats.usedReads++;
      r.resolve(used.filter((s) => overlaps(parseIntervalOf(s), i)));
    }
    const servedIds = new Set(served.ids);
    const overlapping = overlapIndex(used.map((s) => toTimelineSegment(s, servedIds)));
    const isFresh = new Set(fresh);
    const context = { rules, now };
    // Each verdict sees only the segments overlapping its interval (all it looks at): 10,000 partitions
    // waiting on one datasource no longer cost 10,000 × every segment of it a tick.
    for (const p of live) {
      // A range whose served view failed fails only the partitions inside it: the others' answers are
      // whole (each range's serverview lists every served segment overlapping it).
      const failed = served.failed.find((f) => overlaps(f.range, p.question.interval));
      if (failed) {
        p.reject(failed.error);
        continue;
      }
      const key = scheduleKey(datasource, p.question);
      let seen: TimelineSegment[];
      if (isFresh.has(p)) {
        seen = overlapping(p.question.interval);
        this.#used.set(key, { segments: seen, served: servedNow.get(p) ?? null, readAt: now });
      } else {
        this.stats.metadataReused++;
        const last = this.#used.get(key);
        seen = (last?.segments ?? []).map((s) => ({ ...s, served: servedIds.has(s.id) }));
      }
      const verdict = handoffVerdict(p.question, seen, context);
      if (verdict.state === "waiting") this.#schedule.waiting(key, servedOver(seen), now);
      else {
        this.#schedule.done(key);
        this.#used.delete(key);
      }
      p.resolve(verdict.state === "handed-off" ? { ...verdict, seen } : verdict);
    }
  }

  /** The datasource's rules, read at most once per `RULES_TTL_MS`; null when they cannot be read (decide without). */
  async #loadRules(datasource: string, signal: AbortSignal): Promise<LoadRule[] | null> {
    const source = this.options.source;
    if (!source.loadRules) return null;
    const now = this.options.clock.now();
    const cached = this.#rules.get(datasource);
    if (cached && now - cached.readAt < RULES_TTL_MS) return cached.rules;
    this.stats.requests++;
    try {
      const rules = await source.loadRules(datasource, { signal });
      this.#rules.set(datasource, { readAt: now, rules });
      return rules;
    } catch {
      // Rules only sharpen the verdict: when they cannot be read, decide without them (and ask again next time).
      return null;
    }
  }

  /**
   * Ids served over the waiting intervals. The serverview overlaps, so segments reaching past an interval
   * still come back; it shows only what the served timeline makes visible, so a segment of ours hidden by a
   * newer served one counts as not served (queries would not read it either).
   */
  async #served(datasource: string, waiting: readonly Interval[], signal: AbortSignal): Promise<Served> {
    const source = this.options.source;
    let ranges = hullsOf(coalesceIntervals(waiting), MAX_HULL_SPAN);
    const servedInInterval = source.servedInInterval?.bind(source);
    const tooMany = ranges.length > (this.options.maxServedRanges ?? MAX_SERVED_RANGES);
    const clones = servedInInterval ? await this.#cloneHosts(signal) : new Set<string>();
    if (!servedInInterval || (tooMany && clones.size === 0)) {
      this.stats.requests++;
      this.stats.servedFallbacks++;
      return { ids: await source.servedSegments(datasource, { signal }), intervals: null, failed: [] };
    }
    // The whole served list does not say which server holds a segment, so a clone's copy would count as served:
    // with clones set up, one served view over the waiting intervals' whole extent instead (larger, but exact).
    if (tooMany) ranges = [{ start: ranges[0]?.start ?? 0, end: Math.max(...ranges.map((r) => r.end)) }];
    this.stats.requests += ranges.length;
    this.stats.servedRanges += ranges.length;
    const ids: string[] = [];
    const intervals = new Map<string, Interval>();
    const failed: Array<{ range: Interval; error: unknown }> = [];
    let next = 0;
    const worker = async () => {
      while (next < ranges.length) {
        const range = ranges[next++] as Interval;
        try {
          const infos = await servedInInterval(datasource, formatInterval(range), { signal });
          const mine = servedByHistoricals(infos, clones);
          ids.push(...mine);
          const servedHere = new Set(mine);
          for (const info of infos) {
            const id = segmentId(info.segment);
            if (servedHere.has(id)) intervals.set(id, parseIntervalOf(info.segment));
          }
        } catch (error) {
          if (signal.aborted) throw error;
          failed.push({ range, error });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(SERVED_CONCURRENCY, ranges.length) }, worker));
    return { ids, intervals, failed };
  }

  /** The clone Historicals, read at most once a {@link CLONES_TTL_MS}; none when they cannot be read. */
  async #cloneHosts(signal: AbortSignal): Promise<ReadonlySet<string>> {
    const source = this.options.source;
    if (!source.cloneServers) return new Set();
    const now = this.options.clock.now();
    if (this.#clones && now - this.#clones.readAt < CLONES_TTL_MS) return this.#clones.hosts;
    let hosts: ReadonlySet<string>;
    try {
      hosts = await source.cloneServers({ signal });
    } catch (error) {
      if (signal.aborted) throw error;
      // Unreadable (permissions, a Druid before 34): counted as before, every Historical serving.
      hosts = this.#clones?.hosts ?? new Set();
    }
    this.#clones = { readAt: now, hosts };
    return hosts;
  }
}

/** A waiting partition's place in the check schedule: its datasource and interval (one partition each). */
function scheduleKey(datasource: string, q: HandoffQuestion): string {
  return `${datasource}\u0000${q.interval.start}/${q.interval.end}`;
}

/** What is served over an interval, as a string that changes when anything of it starts or stops being served. */
function servedOver(seen: readonly TimelineSegment[]): string {
  return seen
    .filter((s) => s.served)
    .map((s) => s.id)
    .sort()
    .join(",");
}

/** A segment's interval, parsed. */
function parseIntervalOf(s: DataSegment): Interval {
  return parseInterval(s.interval);
}

/**
 * What is served over an interval, by served segment id (what the serverview answered, used or not in the
 * metadata as last read): a string that changes when anything served over it changes.
 */
function servedIndex(intervals: ReadonlyMap<string, Interval>): (interval: Interval) => string {
  const byStart = [...intervals].map(([id, i]) => ({ id, start: i.start, end: i.end }) as TimelineSegment);
  const overlapping = overlapIndex(byStart);
  return (interval) =>
    overlapping(interval)
      .map((s) => s.id)
      .sort()
      .join(",");
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}

/**
 * Sorted, disjoint ranges merged into hulls, left to right, while a hull spans at most `span` times the summed
 * length of the ranges inside it: ranges that lie close cost one served read, ranges far apart one each.
 */
export function hullsOf(ranges: readonly Interval[], span: number): Interval[] {
  const out: Array<{ start: number; end: number; inside: number }> = [];
  for (const r of ranges) {
    const last = out[out.length - 1];
    const length = r.end - r.start;
    if (last && r.end - last.start <= span * (last.inside + length)) {
      last.end = Math.max(last.end, r.end);
      last.inside += length;
    } else out.push({ start: r.start, end: r.end, inside: length });
  }
  return out.map(({ start, end }) => ({ start, end }));
}

/**
 * The segments overlapping an interval, in their original order, by binary search over the segments
 * sorted by start (a segment starting before `interval.start - longest` cannot reach into it).
 */
export function overlapIndex(
  segments: readonly TimelineSegment[],
): (interval: Interval) => TimelineSegment[] {
  const order = segments
    .map((_, i) => i)
    .sort((a, b) => (segments[a]?.start ?? 0) - (segments[b]?.start ?? 0));
  let longest = 0;
  for (const s of segments) longest = Math.max(longest, s.end - s.start);
  const firstStartingAtOrAfter = (t: number): number => {
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((segments[order[mid] as number]?.start ?? 0) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return (interval) => {
    const hits: number[] = [];
    for (let k = firstStartingAtOrAfter(interval.start - longest); k < order.length; k++) {
      const i = order[k] as number;
      const s = segments[i] as TimelineSegment;
      if (s.start >= interval.end) break;
      if (s.end > interval.start) hits.push(i);
    }
    return hits.sort((a, b) => a - b).map((i) => segments[i] as TimelineSegment);
  };
}

/** Slack on either side of the sole-task window. */
const SOLE_TASK_MARGIN_MS = 3_600_000;
/** The longest sole-task window asked for (Druid keeps complete tasks' records far shorter by default). */
const SOLE_TASK_MAX_WINDOW_MS = 30 * 86_400_000;

/** The task list read `proveSoleTask` needs (a DruidClient satisfies it). */
export interface TaskListSource {
  tasks(
    filter: { datasource?: string; createdTimeInterval?: string },
    options?: { signal?: AbortSignal },
  ): Promise<Array<{ id: string; groupId?: string | null; createdTime?: string | null }>>;
}

/**
 * A version is a lock time, and a task locks only after Druid created it. So a version that no other task
 * of the datasource could have taken — none but ours (and its sub-tasks) created between our task and that
 * version — is ours. Resolves true when proven, else with what stood in the way.
 */
export async function proveSoleTask(
  source: TaskListSource,
  q: { datasource: string; taskId: string; createdTime: string; version: string; now: number },
  signal?: AbortSignal,
): Promise<true | string> {
  const since = Date.parse(q.createdTime);
  // Druid reads createdTimeInterval as a length counted back from its own now (docs/druid-api.md, "Task
  // lists"), and segops' clock may be behind Druid's (skew, or an emulator's time scale): the window is
  // long enough only when the list holds our own task, so it grows until it does — evidence that cannot
  // be skewed, where a window on segops' clock silently missed the very tasks created in between.
  let length = Math.max(q.now - since, 0) + SOLE_TASK_MARGIN_MS;
  for (;;) {
    const window = `${new Date(since - SOLE_TASK_MARGIN_MS).toISOString()}/${new Date(since - SOLE_TASK_MARGIN_MS + length).toISOString()}`;
    const tasks = await source.tasks(
      { datasource: q.datasource, createdTimeInterval: window },
      signal ? { signal } : {},
    );
    if (!tasks.some((t) => t.id === q.taskId)) {
      if (length >= SOLE_TASK_MAX_WINDOW_MS)
        return `Druid's task list (created within ${Math.round(length / 86_400_000)} days) does not hold ${q.taskId}`;
      length = Math.min(length * 8, SOLE_TASK_MAX_WINDOW_MS);
      continue;
    }
    const others = tasks.filter(
      (t) =>
        t.id !== q.taskId &&
        t.groupId !== q.taskId &&
        typeof t.createdTime === "string" &&
        t.createdTime >= q.createdTime &&
        t.createdTime <= q.version,
    );
    if (others.length === 0) return true;
    return `${others.length} other task(s) of ${q.datasource} were created in between (${others
      .slice(0, 3)
      .map((t) => t.id)
      .join(", ")}${others.length > 3 ? ", …" : ""})`;
  }
}
