import { type Interval, overlaps } from "../core/interval.js";
import { segmentId } from "./ids.js";
import type { Row } from "./ingest.js";
import { instantText, intervalText } from "./instant-text.js";
import type { CompactPlan, PartitionsPlan } from "./plans.js";
import { partition, segmentSize } from "./publish.js";
import type { SegmentStore, SimSegment } from "./timeline.js";

/**
 * The `compact` task (docs/druid-api.md §3.9): it reads the visible segments of its interval (used, not
 * overshadowed, tombstones aside) and rewrites each time chunk as new segments under its lock's version,
 * so the old ones become overshadowed. The rows stay what they were (compaction changes layout, never
 * data); the emulator does not roll rows up a second time across segments.
 */

/** One time chunk's input: the rows of its visible segments. */
export interface CompactChunk {
  interval: Interval;
  rows: Row[] | null;
  numRows: number;
  dimensions: string[];
  metrics: string[];
  columnTypes: Record<string, string>;
  rollup: boolean;
  /** The input segments (ids), for the task's log and tests. */
  inputs: string[];
}

/**
 * A compaction whose interval holds no segment when the queue asks it `isReady` (it finds its segments to
 * lock them): `TaskQueue` records the exception as the failure, with no run and no duration. A real Druid
 * 33 answered exactly this (docs/druid-api.md §3.9).
 */
export const NO_SEGMENTS_NOT_READY =
  "Encountered error[No segments found for compaction. Please check that datasource name and interval are correct.] while waiting for task to be ready. See Overlord logs for more details.";

/**
 * `NativeCompactionRunner`'s answer when segments were there at `isReady` but none is left to read when it
 * runs (`TaskStatus.failure`): the interval spec printed by its `toString`.
 */
export function nothingToCompactMessage(interval: Interval): string {
  return `Can't find segments from inputSpec[CompactionIntervalSpec{interval=${intervalText(interval)}, sha256OfSortedSegmentIds=null}], nothing to do.`;
}

/** The chunks a compaction of `interval` reads at `now`, in time order; empty = nothing to do. */
export function compactInput(
  store: SegmentStore,
  dataSource: string,
  interval: Interval,
  now: number,
): CompactChunk[] {
  const byChunk = new Map<string, SimSegment[]>();
  for (const s of store.visible(dataSource, now)) {
    if (s.tombstone || !overlaps(s.interval, interval)) continue;
    const key = `${s.interval.start}/${s.interval.end}`;
    byChunk.set(key, [...(byChunk.get(key) ?? []), s]);
  }
  return [...byChunk.values()]
    .map((group) => {
      const sorted = [...group].sort((a, b) => a.partitionNum - b.partitionNum);
      const first = sorted[0] as SimSegment;
      const synthetic = sorted.some((s) => s.rows === null);
      return {
        interval: first.interval,
        rows: synthetic ? null : sorted.flatMap((s) => s.rows as Row[]),
        numRows: sorted.reduce((n, s) => n + s.numRows, 0),
        dimensions: union(sorted.map((s) => s.dimensions)),
        metrics: union(sorted.map((s) => s.metrics)),
        columnTypes: Object.assign({}, ...sorted.map((s) => s.columnTypes ?? {})),
        rollup: sorted.every((s) => s.rollup === true),
        inputs: sorted.map((s) => s.id),
      };
    })
    .sort((a, b) => a.interval.start - b.interval.start);
}

function union(lists: string[][]): string[] {
  return [...new Set(lists.flat())];
}

/** The segments a finished compaction publishes: per chunk, its rows split per the partitionsSpec. */
export function compactedSegments(req: {
  taskId: string;
  dataSource: string;
  plan: CompactPlan;
  chunks: CompactChunk[];
  version: string;
  now: number;
  servedAt: number | null;
}): SimSegment[] {
  const out: SimSegment[] = [];
  for (const chunk of req.chunks) {
    const parts = partition(chunk, req.plan.partitions, chunk.dimensions);
    const state = compactionState(req.plan.partitions, chunk);
    parts.forEach((part, i) => {
      out.push({
        id: segmentId(req.dataSource, chunk.interval, req.version, i),
        dataSource: req.dataSource,
        interval: chunk.interval,
        version: req.version,
        partitionNum: i,
        corePartitions: parts.length,
        shardSpec: part.shardSpec(i, parts.length),
        size: segmentSize(part.numRows, chunk.dimensions.length, chunk.metrics.length),
        numRows: part.numRows,
        dimensions: chunk.dimensions,
        metrics: chunk.metrics,
        columnTypes: chunk.columnTypes,
        loadSpec: {
          type: "local",
          path: `/druid/segments/${req.dataSource}/${instantText(chunk.interval.start)}_${instantText(chunk.interval.end)}/${req.version}/${i}/index.zip`,
        },
        tombstone: false,
        taskId: req.taskId,
        publishedAt: req.now,
        servedAt: req.servedAt,
        unusedAt: null,
        rows: part.rows,
        rollup: chunk.rollup,
        lastCompactionState: state,
      });
    });
  }
  return out;
}

const DIMENSION_TYPES: Record<string, string> = { BIGINT: "long", DOUBLE: "double", FLOAT: "float" };

/**
 * `CompactionState` as a compaction records it on its segments (`lastCompactionState`): the partitionsSpec it
 * used, the dimensions and the granularity spec with the input's rollup. A real Druid adds the indexSpec,
 * metricsSpec and transformSpec; segops reads only `partitionsSpec` and `granularitySpec.rollup`.
 */
function compactionState(partitions: PartitionsPlan, chunk: CompactChunk): Record<string, unknown> {
  return {
    partitionsSpec:
      partitions.type === "dynamic"
        ? { type: "dynamic", maxRowsPerSegment: partitions.maxRowsPerSegment, maxTotalRows: null }
        : {
            type: partitions.type,
            numShards: partitions.numShards,
            partitionDimensions: partitions.partitionDimensions,
          },
    dimensionsSpec: {
      dimensions: chunk.dimensions.map((name) => ({
        type: DIMENSION_TYPES[chunk.columnTypes[name] ?? ""] ?? "string",
        name,
      })),
    },
    granularitySpec: { type: "uniform", rollup: chunk.rollup, intervals: null },
  };
}
