import type { Clock } from "../core/clock.js";
import { formatInterval, type Interval } from "../core/interval.js";
import type { DataSegment } from "../druid/types.js";
import { toTimelineSegment } from "./segments.js";
import { type Pending, TickBatcher } from "./tick-batcher.js";
import { liveTimeline, type TimelineSegment } from "./timeline.js";

/**
 * The handoff gate (architecture doc, step 5): SUCCESS is not queryable. A partition is handed off when,
 * over its whole interval, the live timeline (built from the metadata store's used segments, including
 * overshadowed ones, api-contract §3.4) shows our version and every live non-tombstone segment is
 * announced by a data server (§3.2) — the criterion Druid's own `loadstatus` applies (§3.3), plus the
 * version check it lacks. Checks are batched per datasource: one metadata POST with every waiting
 * interval and one inventory GET per tick, however many partitions wait.
 */

export type HandoffVerdict =
  | { state: "handed-off"; version: string | null; segments: TimelineSegment[] }
  | { state: "waiting"; version: string | null; missing: string[] }
  /** Someone else's newer version is live over ours: waiting cannot help. */
  | { state: "superseded"; version: string; liveVersions: string[] };

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
  /** Our version once identified (checkpointed), so a later foreign version is not mistaken for ours. */
  version?: string | null;
  /**
   * When Druid created our task (`createdTime`, ISO): our lock — and so our version, a lock timestamp
   * (§4.1) — cannot be older, which rules out a foreign task that locked the interval before ours.
   */
  notBefore?: string | null;
}

/**
 * Our segments: for a replace, the oldest version that was not there before and is not older than our
 * task (Druid gives each lock a fresh, increasing version, §4.1; a later foreign replace is newer, an
 * earlier one older than our task); for an append, the segment ids that were not there before (they
 * join the chunk's existing version, §4.3).
 */
export function identifyOurs(used: readonly TimelineSegment[], q: HandoffQuestion): TimelineSegment[] {
  const inInterval = used.filter((s) => s.start < q.interval.end && q.interval.start < s.end);
  if (q.mode === "append") {
    const before = new Set(q.baseline.segmentIds);
    return inInterval.filter((s) => !before.has(s.id));
  }
  if (q.version) return inInterval.filter((s) => s.version === q.version);
  const before = new Set(q.baseline.versions);
  const notBefore = q.notBefore ?? "";
  const fresh = [...new Set(inInterval.map((s) => s.version))]
    .filter((v) => !before.has(v) && v >= notBefore)
    .sort();
  const version = fresh[0];
  return version === undefined ? [] : inInterval.filter((s) => s.version === version);
}

/** Pure decision for one partition, from the used segments overlapping it (with served flags). */
export function handoffVerdict(q: HandoffQuestion, used: readonly TimelineSegment[]): HandoffVerdict {
  const ours = identifyOurs(used, q);
  // A task that ingested no rows publishes nothing (or, in REPLACE_LEGACY, leaves chunks alone): Druid
  // commits segment metadata before it reports SUCCESS, so "nothing new" is final, not a lag.
  if (ours.length === 0) return { state: "handed-off", version: null, segments: [] };
  // Versions compare as strings (api-contract §4.1).
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
  return missing.length === 0
    ? { state: "handed-off", version, segments: ours }
    : { state: "waiting", version, missing: [...new Set(missing)] };
}

/** Reads what exists in the interval now: the baseline for the attempt about to be submitted. */
export async function readBaseline(
  source: Pick<HandoffSource, "metadataSegments">,
  datasource: string,
  interval: Interval,
  signal?: AbortSignal,
): Promise<Baseline> {
  const used = await source.metadataSegments(
    datasource,
    [formatInterval(interval)],
    signal ? { signal } : {},
  );
  const segments = used.map((s) => toTimelineSegment(s, new Set()));
  return {
    versions: [...new Set(segments.map((s) => s.version))].sort(),
    segmentIds: segments.map((s) => s.id).sort(),
  };
}

/** The two Coordinator reads the gate needs (a DruidClient satisfies it). */
export interface HandoffSource {
  metadataSegments(
    datasource: string,
    intervals: readonly string[],
    options?: { signal?: AbortSignal },
  ): Promise<DataSegment[]>;
  servedSegments(datasource: string, options?: { signal?: AbortSignal }): Promise<string[]>;
}

export interface HandoffCheckerOptions {
  source: HandoffSource;
  clock: Clock;
  /** Time between checks while anyone waits. @default 2000 */
  tickMs?: number;
}

/** Batches handoff questions per datasource; each `check` resolves at the next tick. */
export class HandoffChecker {
  readonly #batcher: TickBatcher<string, HandoffQuestion, HandoffVerdict>;
  readonly stats = { rounds: 0, requests: 0 };

  constructor(private readonly options: HandoffCheckerOptions) {
    this.#batcher = new TickBatcher({
      name: "handoff checker",
      clock: options.clock,
      nextDelay: () => options.tickMs ?? 2000,
      flush: async (batch, signal) => {
        this.stats.rounds++;
        await Promise.all([...batch].map(([ds, pending]) => this.#checkDatasource(ds, pending, signal)));
      },
    });
  }

  check(datasource: string, question: HandoffQuestion, signal?: AbortSignal): Promise<HandoffVerdict> {
    return this.#batcher.ask(datasource, question, signal);
  }

  stop(): Promise<void> {
    return this.#batcher.stop();
  }

  async #checkDatasource(
    datasource: string,
    pending: Array<Pending<HandoffQuestion, HandoffVerdict>>,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      const intervals = [...new Set(pending.map((p) => formatInterval(p.question.interval)))];
      this.stats.requests += 2;
      const [used, served] = await Promise.all([
        this.options.source.metadataSegments(datasource, intervals, { signal }),
        this.options.source.servedSegments(datasource, { signal }),
      ]);
      const servedIds = new Set(served);
      const segments = used.map((s) => toTimelineSegment(s, servedIds));
      for (const p of pending) p.resolve(handoffVerdict(p.question, segments));
    } catch (error) {
      for (const p of pending) p.reject(error);
    }
  }
}
