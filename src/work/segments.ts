import { type Interval, parseInterval } from "../core/interval.js";
import type { DataSegment } from "../druid/types.js";
import type { TimelineSegment } from "./timeline.js";

/**
 * Core partition count of a segment's (interval, version) set, per shard spec type (docs/druid-api.md §3.5):
 * numbered/hashed carry `partitions` (or `numBuckets`), range/single carry `numCorePartitions`, and a
 * linear/none shard is complete on its own.
 */
function corePartitions(shard: DataSegment["shardSpec"]): number {
  const n = (key: string) => (typeof shard[key] === "number" ? (shard[key] as number) : undefined);
  switch (shard.type) {
    case "tombstone":
      return 1;
    case "range":
    case "single":
      return n("numCorePartitions") ?? 1;
    case "hashed":
      return n("partitions") ?? n("numBuckets") ?? 1;
    case "numbered":
    case "numbered_overwrite":
      // A numbered set with partitions=0 is the "no core" form used by appends into an empty chunk.
      return Math.max(1, n("partitions") ?? 1);
    default:
      return 1;
  }
}

/** The segment id: Druid's `identifier` when present, else built per §4.1. */
export function segmentId(s: DataSegment): string {
  if (typeof s.identifier === "string") return s.identifier;
  const [start, end] = s.interval.split("/");
  const p = s.shardSpec.partitionNum ?? 0;
  return `${s.dataSource}_${start}_${end}_${s.version}${p ? `_${p}` : ""}`;
}

/** Converts Druid's DataSegment JSON to the timeline's view; `served` = announced by a data server. */
export function toTimelineSegment(s: DataSegment, servedIds: ReadonlySet<string>): TimelineSegment {
  const { start, end } = parseInterval(s.interval);
  const id = segmentId(s);
  const tombstone = s.shardSpec.type === "tombstone" || s.loadSpec?.type === "tombstone";
  const rows =
    typeof s.totalRows === "number" ? s.totalRows : typeof s.num_rows === "number" ? s.num_rows : null;
  return {
    id,
    start,
    end,
    version: s.version,
    partitionNum: s.shardSpec.partitionNum ?? 0,
    corePartitions: corePartitions(s.shardSpec),
    tombstone,
    sizeBytes: s.size,
    numRows: tombstone ? 0 : rows,
    served: servedIds.has(id),
  };
}

/**
 * The waiting intervals as few disjoint ranges: sorted, overlapping or touching ones merged (a backfill's
 * consecutive partitions become one range, one served-view request). Pure.
 */
export function coalesceIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Array<{ start: number; end: number }> = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ start: i.start, end: i.end });
  }
  return out;
}

/** Server types Druid replicates segments to (`ServerType.isSegmentReplicationTarget`): not realtime tasks. */
const REPLICATION_TARGETS = new Set(["historical", "bridge"]);

/** A server of the served view, as segops reads it (`DruidServerMetadata`). */
export interface ServedBy {
  type?: string;
  name?: string;
  hostAndPort?: string | null;
}

/**
 * Ids of the serverview's segments (docs/druid-api.md §3.2a) that a Historical serves: Druid's own handoff check
 * (`DataSourcesResource.isSegmentLoaded`) counts only servers that are segment replication targets, so a segment
 * a realtime task announces is not handed off. A cloned Historical (`clones`: the Coordinator dynamic config's
 * `cloneServers`, Druid 34, apache/druid #17863) does not count either: Brokers leave clones out of queries by
 * default (`cloneQueryMode` excludeClones, apache/druid #17899), so a segment only a clone holds is not queryable.
 *
 * "Served" is what the Broker can route a query to, not what sits on a disk: a virtual storage Historical (Druid 35,
 * `druid.segmentCache.virtualStorage`, apache/druid #18176) announces a segment as soon as it is assigned, without
 * downloading it (`SegmentLocalCacheManager.load` does nothing in that mode), and downloads it when a query reads it.
 * Its announced segments count as served like any other Historical's: the gate neither waits for a download that
 * only a query starts, nor calls a segment served that no Historical announced. Pure.
 */
export function servedByHistoricals(
  infos: ReadonlyArray<{ segment: DataSegment; servers: ReadonlyArray<ServedBy> }>,
  clones: ReadonlySet<string> = new Set(),
): string[] {
  const ids = new Set<string>();
  for (const info of infos) {
    const serving = info.servers.some(
      (s) =>
        REPLICATION_TARGETS.has(String(s.type ?? "").toLowerCase()) &&
        !clones.has(s.name ?? "") &&
        !clones.has(s.hostAndPort ?? ""),
    );
    if (serving) ids.add(segmentId(info.segment));
  }
  return [...ids];
}

/**
 * Ids of the segments a Historical serves over `interval`, from the Coordinator's served view of just that
 * interval (§3.2a): what the handoff gate, the audit and the segment operations' checks read, so that their
 * cost follows the interval and not the datasource (its whole served list is 16 MB at 200,000 segments).
 */
export async function servedIdsIn(
  client: {
    servedInInterval(
      ds: string,
      interval: string,
      options?: { signal?: AbortSignal },
    ): Promise<ReadonlyArray<{ segment: DataSegment; servers: ReadonlyArray<{ type?: string }> }>>;
  },
  datasource: string,
  interval: string,
  options?: { signal?: AbortSignal },
): Promise<Set<string>> {
  return new Set(servedByHistoricals(await client.servedInInterval(datasource, interval, options)));
}
