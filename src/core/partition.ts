import { UsageError } from "./errors.js";
import {
  bucketStart,
  checkTiling,
  describeInstant,
  type Granularity,
  granularityLabel,
  increment,
  isAligned,
  parseGranularity,
} from "./granularity.js";
import { formatInstant, formatInterval, type Interval } from "./interval.js";

/**
 * Partition planning: a job's range is cut into partitions on granularity boundaries, one ledger task
 * each. Boundaries matter because Druid locks and replaces whole time chunks (docs/druid-api.md §4.3, §4.4):
 * a partition that is not aligned to the chunks would make two neighbouring tasks fight over one chunk.
 *
 * The partitions are Druid's own buckets (`Granularity.getIterable`: `bucketStart` of the start, then
 * `increment`), so a period in a time zone gives local days, months…: `P1D` in America/Los_Angeles cuts
 * 2026-03-08 as 23 hours and 2026-11-01 as 25, each from local midnight. Where Druid's buckets do not tile
 * (a missing local midnight, PT1H across Australia/Lord_Howe's 30-minute DST shift) planning is refused.
 */

/** A range that cannot be partitioned as asked (misaligned, empty, too many partitions). Exit code 2. */
export class PartitionError extends UsageError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message, details);
  }
}

/** Options for {@link splitInterval}. */
export interface SplitOptions {
  /** Widen a misaligned range outwards to the nearest boundaries instead of failing. @default false */
  readonly widen?: boolean;
  /** Refuse plans with more partitions than this (a typo like PT1S over a year). @default 100000 */
  readonly maxPartitions?: number;
}

const granularityName = granularityLabel;

function asGranularity(g: Granularity | string): Granularity {
  return typeof g === "string" ? parseGranularity(g) : g;
}

/** Floor and ceiling of `ms` on the granularity's boundaries (equal when aligned; ceil = the floor's bucket end). */
export function alignedBounds(g: Granularity, ms: number): { floor: number; ceil: number } {
  const floor = bucketStart(g, ms);
  return { floor, ceil: floor === ms ? ms : increment(g, floor) };
}

/** `range` widened outwards to the granularity's boundaries. */
export function widenToGranularity(range: Interval, g: Granularity | string): Interval {
  const gran = asGranularity(g);
  return { start: alignedBounds(gran, range.start).floor, end: alignedBounds(gran, range.end).ceil };
}

/**
 * Splits `range` into consecutive buckets of `g`. The range must start and end on boundaries of `g`
 * (or `widen` must be set); the error names the nearest aligned bounds either side.
 */
export function splitInterval(
  range: Interval,
  g: Granularity | string,
  options: SplitOptions = {},
): Interval[] {
  const gran = asGranularity(g);
  const name = granularityName(gran);
  if (gran.kind !== "period") {
    throw new PartitionError(
      `cannot split a range by granularity ${name}: choose a period such as DAY or HOUR`,
      {
        granularity: name,
      },
    );
  }
  if (!(range.end > range.start)) {
    throw new PartitionError(
      `cannot split an empty range ${formatInstant(range.start)}/${formatInstant(range.end)}`,
    );
  }
  let target = range;
  if (!options.widen) {
    const problems: string[] = [];
    const misaligned: ("start" | "end")[] = [];
    for (const [label, ms] of [
      ["start", range.start],
      ["end", range.end],
    ] as const) {
      const { floor, ceil } = alignedBounds(gran, ms);
      if (floor !== ms) {
        misaligned.push(label);
        problems.push(
          `the ${label} ${describeInstant(gran, ms)} is not on a ${name} boundary (nearest: ${describeInstant(gran, floor)} before, ${describeInstant(gran, ceil)} after)`,
        );
      }
    }
    if (problems.length > 0) {
      const widened = widenToGranularity(range, gran);
      throw new PartitionError(
        `range ${formatInterval(range)} is not aligned to ${name}: ${problems.join("; ")}. Use ${formatInterval(widened)} instead, or a finer granularity`,
        {
          range: formatInterval(range),
          granularity: name,
          widened: formatInterval(widened),
          // Which bound is off, so a caller names the flag or field that gave it (`--from`, `--to`).
          misaligned,
        },
      );
    }
  } else {
    target = widenToGranularity(range, gran);
  }
  const max = options.maxPartitions ?? 100_000;
  const out: Interval[] = [];
  for (let s = target.start; s < target.end; ) {
    const e = increment(gran, s);
    out.push({ start: s, end: e });
    if (out.length > max) {
      throw new PartitionError(
        `range ${formatInterval(target)} by ${name} gives more than ${max} partitions; choose a coarser granularity`,
        { range: formatInterval(target), granularity: name, maxPartitions: max },
      );
    }
    s = e;
  }
  // Druid locks the chain of increments but puts each row in its bucketStart's bucket: they must agree.
  const last = out[out.length - 1] as Interval;
  const mismatch =
    checkTiling(gran, out) ??
    (last.end !== target.end
      ? `Druid's ${name} buckets do not tile here: the bucket starting ${describeInstant(gran, last.start)} ends at ${describeInstant(gran, last.end)}, past the range's end ${describeInstant(gran, target.end)}`
      : undefined);
  if (mismatch) {
    throw new PartitionError(
      `cannot partition ${formatInterval(target)} by ${name}: ${mismatch}. Druid would lock and fill overlapping time chunks; split the range there or choose another granularity`,
      { range: formatInterval(target), granularity: name },
    );
  }
  return out;
}

/** One problem {@link checkPartitions} found; `indexes` point into the list as given. */
export interface PartitionProblem {
  readonly kind: "overlap" | "gap" | "misaligned" | "empty";
  readonly indexes: readonly number[];
  readonly message: string;
}

/**
 * Checks a list of partitions for overlaps, gaps between consecutive partitions (in time order) and
 * bounds off the granularity's boundaries. An empty result means the list tiles its span exactly.
 */
export function checkPartitions(intervals: readonly Interval[], g: Granularity | string): PartitionProblem[] {
  const gran = asGranularity(g);
  const name = granularityName(gran);
  const problems: PartitionProblem[] = [];
  const order = intervals.map((iv, i) => ({ iv, i }));
  for (const { iv, i } of order) {
    if (!(iv.end > iv.start)) {
      problems.push({ kind: "empty", indexes: [i], message: `partition #${i} ${show(iv)} is empty` });
      continue;
    }
    const off = [iv.start, iv.end].filter((ms) => gran.kind === "period" && !isAligned(gran, ms));
    if (off.length > 0) {
      problems.push({
        kind: "misaligned",
        indexes: [i],
        message: `partition #${i} ${show(iv)} is not aligned to ${name} (${off.map((ms) => describeInstant(gran, ms)).join(", ")})`,
      });
    }
  }
  order.sort((a, b) => a.iv.start - b.iv.start || a.iv.end - b.iv.end || a.i - b.i);
  // Track the partition reaching furthest so far: an overlap need not be with the immediate predecessor.
  let reach: { iv: Interval; i: number } | undefined;
  for (const cur of order) {
    if (!(cur.iv.end > cur.iv.start)) continue;
    if (reach) {
      if (cur.iv.start < reach.iv.end) {
        problems.push({
          kind: "overlap",
          indexes: [reach.i, cur.i],
          message: `partitions #${reach.i} ${show(reach.iv)} and #${cur.i} ${show(cur.iv)} overlap`,
        });
      } else if (cur.iv.start > reach.iv.end) {
        problems.push({
          kind: "gap",
          indexes: [reach.i, cur.i],
          message: `gap ${formatInstant(reach.iv.end)}/${formatInstant(cur.iv.start)} between partitions #${reach.i} and #${cur.i}`,
        });
      }
    }
    if (!reach || cur.iv.end > reach.iv.end) reach = cur;
  }
  return problems;
}

function show(iv: Interval): string {
  return `${formatInstant(iv.start)}/${formatInstant(iv.end)}`;
}
