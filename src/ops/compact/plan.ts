import { createHash } from "node:crypto";
import { canonicalJson } from "../../core/canonical-json.js";
import { formatInterval, type Interval, intervalSlug, overlaps, parseInterval } from "../../core/interval.js";
import { datasourcePart } from "../../core/task-id.js";
import type { DruidClient } from "../../druid/client.js";
import type { ClusterBinding } from "../../druid/cluster.js";
import type { DataSegment } from "../../druid/types.js";
import type { JsonObject, NewJob, NewTask } from "../../ledger/types.js";
import { type AuditReport, auditTimeline, DEFAULT_SIZE_BAND, type SizeBand } from "../../work/audit.js";
import { chunkExclusionKey } from "../../work/chunk.js";
import { bandWithCompactionConfig, compactionRows } from "../../work/compaction-config.js";
import { toTimelineSegment } from "../../work/segments.js";
import { liveTimeline, type TimelineSegment } from "../../work/timeline.js";
import { readCompactionConfig } from "../compaction-config.js";

/**
 * Compacting a datasource's fragmented time chunks (`segops compact`): one partition per chunk the
 * audit flags, one `compact` task each. Compaction and ingestion fighting over locks (apache/druid
 * #11190, #13282) is what goes wrong by hand, so a chunk a running task holds a lock on is skipped when
 * planned and waited for when submitted, segops' own ingestion of the chunk never runs beside it (the
 * same exclusion key), and a compaction whose lock an ingestion took is tried again later.
 */

export const COMPACT_KIND = "compact";

export interface CompactRequest {
  datasource: string;
  interval: Interval;
  /** Every chunk with data, not only the ones the audit flags. @default false */
  all?: boolean;
  /** The healthy segment size: chunks with a segment outside it are flagged. @default DEFAULT_SIZE_BAND */
  sizeBand?: SizeBand;
  /** Rows per segment a compaction writes (dynamic partitioning). @default the datasource compaction config's rows cap, else 5,000,000 */
  maxRowsPerSegment?: number;
  cluster?: ClusterBinding;
}

/** What Druid has for the request (read once, before planning). */
export interface CompactFacts {
  request: CompactRequest;
  /** Used segments overlapping the interval, overshadowed ones included. */
  used: DataSegment[];
  /** Ids of segments Historicals serve. */
  served: string[];
  /** Intervals that running tasks of the datasource hold locks on (`/lockedIntervals`). */
  locked: string[];
  /**
   * The datasource's auto-compaction config (null: none, or the cluster config could not be read): its rows
   * cap replaces the band's, as the audit's.
   */
  compactionConfig?: Record<string, unknown> | null;
}

export interface CompactPayload {
  datasource: string;
  /** The time chunk (its live segments' interval): the compaction's input interval. */
  interval: string;
  maxRowsPerSegment: number;
  sizeBand: SizeBand;
  /** Why the chunk was flagged, for reports. */
  reasons: string[];
  /** The live segments compacted (ids); they name the Druid task, so the same input is one task. */
  inputs: string[];
  bytes: number;
  /** The Druid task id without its attempt number. */
  taskIdBase: string;
}

/** A chunk of the timeline as the planner sees it. */
export interface ChunkVerdict {
  interval: string;
  /** Empty = healthy. */
  reasons: string[];
  inputs: string[];
  bytes: number;
  rows: number | null;
}

/**
 * The chunks of an audit report and why each needs compacting (pure): more than one live version, or a
 * compaction candidate of the audit (a segment above the band, or small ones merging would make fewer).
 * Tombstone-only chunks hold nothing to compact.
 */
export function chunkVerdicts(report: AuditReport, segments: readonly TimelineSegment[]): ChunkVerdict[] {
  const window = parseInterval(report.interval);
  const pieces = liveTimeline(segments, window);
  const candidates = new Map(report.compactionCandidates.map((c) => [c.segment, c]));
  return report.chunks
    .filter((c) => !c.tombstone && c.segments > 0)
    .map((chunk) => {
      const { start, end } = parseInterval(chunk.interval);
      const live = [
        ...new Set(
          pieces.filter((p) => p.start < end && start < p.end).flatMap((p) => p.live.map((s) => s.id)),
        ),
      ].sort();
      const flagged = live.map((id) => candidates.get(id)).filter((c) => c !== undefined);
      const reasons: string[] = [];
      if (chunk.liveVersions.length > 1) reasons.push(`${chunk.liveVersions.length} live versions`);
      const big = flagged.filter((c) => c.reason !== "small");
      if (big.length > 0) reasons.push(`${big.length} segment(s) above the size band`);
      // The audit flags small segments only where the chunk has more segments than its rows and bytes need
      // under the band's caps (a split forced by maxRows leaves a small last segment behind; a lone small
      // segment cannot get bigger), so a flagged small one means merging helps.
      const small = flagged.filter((c) => c.reason === "small");
      if (small.length > 0) reasons.push(`${chunk.segments} segments, ${small.length} below the size band`);
      return { interval: chunk.interval, reasons, inputs: live, bytes: chunk.bytes, rows: chunk.rows };
    });
}

export async function inspectCompaction(client: DruidClient, request: CompactRequest): Promise<CompactFacts> {
  const text = formatInterval(request.interval);
  const [used, served, locked, compactionConfig] = await Promise.all([
    client.metadataSegments(request.datasource, [text]),
    client.servedSegments(request.datasource),
    client.lockedIntervals(request.datasource, { intervals: [text] }),
    readCompactionConfig(client, request.datasource),
  ]);
  return { request, used, served, locked, compactionConfig };
}

/** The audit of `interval` and the verdict on each of its chunks, from the used segments and the served ids. */
export function judgeChunks(
  datasource: string,
  interval: Interval,
  used: readonly DataSegment[],
  served: ReadonlySet<string>,
  sizeBand: SizeBand,
): { report: AuditReport; verdicts: ChunkVerdict[] } {
  const segments = used.map((s) => toTimelineSegment(s, served));
  const report = auditTimeline({ datasource, interval, segments, sizeBand });
  return { report, verdicts: chunkVerdicts(report, segments) };
}

export interface CompactPlan {
  job: NewJob;
  tasks: NewTask[];
  chunks: ChunkVerdict[];
  /** Flagged chunks left out because a running task holds a lock on them. */
  skipped: Array<{ interval: string; lockedBy: string }>;
}

/** Plans the compaction (pure): the flagged (or, with `all`, every) chunk that no running task locks. */
export function planCompaction(facts: CompactFacts): CompactPlan {
  const { request } = facts;
  const ds = request.datasource;
  const config = facts.compactionConfig ?? null;
  // An explicit maxRowsPerSegment wins over the datasource's compaction config, for judging and writing.
  const band =
    request.maxRowsPerSegment !== undefined
      ? (request.sizeBand ?? DEFAULT_SIZE_BAND)
      : bandWithCompactionConfig(request.sizeBand ?? DEFAULT_SIZE_BAND, config);
  const maxRows = request.maxRowsPerSegment ?? compactionRows(config)?.maxRows ?? 5_000_000;
  const verdicts = judgeChunks(ds, request.interval, facts.used, new Set(facts.served), band).verdicts.filter(
    (v) => request.all || v.reasons.length > 0,
  );
  const locks = facts.locked.map((l) => ({ text: l, interval: parseInterval(l) }));
  const skipped: CompactPlan["skipped"] = [];
  const chunks: ChunkVerdict[] = [];
  for (const v of verdicts) {
    const lock = locks.find((l) => overlaps(l.interval, parseInterval(v.interval)));
    if (lock) skipped.push({ interval: v.interval, lockedBy: lock.text });
    else chunks.push(v);
  }
  const range = formatInterval(request.interval);
  const identity = hashOf({
    datasource: ds,
    range,
    all: request.all === true,
    band,
    maxRows,
    cluster: request.cluster
      ? { overlord: request.cluster.overlord, coordinator: request.cluster.coordinator }
      : null,
  });
  // The job is named by what it compacts: after a crash a new plan of the same request leaves out the
  // chunks already compacted, while a chunk still in flight keeps its inputs and so its Druid task id.
  const jobId = `compact_${datasourcePart(ds)}_${intervalSlug(request.interval)}_${hashOf({ identity, chunks: chunks.map((c) => c.inputs) })}`;
  const tasks = chunks.map((c): NewTask => {
    const chunk = parseInterval(c.interval);
    const payload: CompactPayload = {
      datasource: ds,
      interval: c.interval,
      maxRowsPerSegment: maxRows,
      sizeBand: band,
      reasons: c.reasons,
      inputs: c.inputs,
      bytes: c.bytes,
      taskIdBase: `segops_compact_${datasourcePart(ds)}_${intervalSlug(chunk)}_${hashOf({ ds, inputs: c.inputs, maxRows })}`,
    };
    return {
      id: `${jobId}/${intervalSlug(chunk)}`,
      kind: COMPACT_KIND,
      payload: payload as unknown as JsonObject,
      // The ingestion of the same chunk has this key: segops never compacts what it is ingesting.
      exclusionKey: chunkExclusionKey(ds, c.interval),
    };
  });
  return {
    job: {
      id: jobId,
      kind: COMPACT_KIND,
      options: {
        datasource: ds,
        range,
        all: request.all === true,
        baseId: jobId,
        ...(request.cluster ? { cluster: { ...request.cluster } } : {}),
      },
    },
    tasks,
    chunks,
    skipped,
  };
}

function hashOf(value: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(value as never))
    .digest("hex")
    .slice(0, 10);
}
