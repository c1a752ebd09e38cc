import { createHash } from "node:crypto";
import { canonicalJson } from "../../core/canonical-json.js";
import { UsageError } from "../../core/errors.js";
import { formatInterval, type Interval, intervalSlug, overlaps, parseInterval } from "../../core/interval.js";
import { datasourcePart } from "../../core/task-id.js";
import type { DruidClient, UnusedSegment } from "../../druid/client.js";
import type { ClusterBinding } from "../../druid/cluster.js";
import type { DataSegment } from "../../druid/types.js";
import { segmentId } from "../../ingest/segments.js";
import type { JsonObject, NewJob, NewTask } from "../../ledger/types.js";

/**
 * Deleting unused segments for good (`segops kill`): only segments that are unused and were marked unused
 * long enough ago, optionally only some versions. Kill tasks that take every slot (apache/druid #14769,
 * #16247) and kills of data still needed (#8853) are what goes wrong by hand, so: the plan names every
 * segment before anything runs (a dry run shows it), a chunk whose live version is not fully served is
 * refused (its predecessor may still be the way back), tasks are capped like any other work, and each kill
 * task only deletes what was unused when planned (`maxUsedStatusLastUpdatedTime`).
 */

export const KILL_KIND = "kill";

export interface KillRequest {
  datasource: string;
  interval: Interval;
  /** Only segments marked unused at least this long ago. @default 0 (any unused segment) */
  olderThanMs?: number;
  /** Only these versions. @default every version */
  versions?: readonly string[];
  /** Segments per kill task. @default 100 */
  batchSize?: number;
  cluster?: ClusterBinding;
}

export interface KillFacts {
  request: KillRequest;
  /** When Druid was read (the retention is measured from here). */
  now: number;
  used: DataSegment[];
  unused: UnusedSegment[];
  /** Ids of segments Historicals serve. */
  served: string[];
}

export interface KillPayload {
  datasource: string;
  /** The batch's interval (its segments' span); the kill task's `interval`. */
  interval: string;
  versions: string[] | null;
  /** Segments marked unused no later than this (ms) are deleted: the plan's cut-off, ISO in the task. */
  maxUsedStatusLastUpdatedTime: number;
  segmentIds: string[];
  bytes: number;
  /** The pinned Druid task id. */
  taskId: string;
}

export async function inspectKill(
  client: DruidClient,
  request: KillRequest,
  now: number,
): Promise<KillFacts> {
  const text = formatInterval(request.interval);
  const [used, unused, served] = await Promise.all([
    client.metadataSegments(request.datasource, [text]),
    client.unusedSegments(request.datasource, text),
    client.servedSegments(request.datasource),
  ]);
  return { request, now, used, unused, served };
}

/** Plans the kill (pure): which segments go, in batches of chunks; refuses what must not be killed. */
export function planKill(facts: KillFacts): { job: NewJob; tasks: NewTask[]; batches: KillPayload[] } {
  const { request } = facts;
  const ds = request.datasource;
  const range = formatInterval(request.interval);
  const cutoff = facts.now - (request.olderThanMs ?? 0);
  const inside = (s: DataSegment) => {
    const i = parseInterval(s.interval);
    return request.interval.start <= i.start && i.end <= request.interval.end;
  };
  const doomed = facts.unused
    .filter((u) => inside(u.segment))
    .filter((u) => !request.versions || request.versions.includes(u.segment.version))
    // A segment with no recorded unused time is old enough only when no retention was asked.
    .filter((u) => (u.unusedSince === null ? (request.olderThanMs ?? 0) === 0 : u.unusedSince <= cutoff))
    .sort((a, b) =>
      a.segment.interval < b.segment.interval ? -1 : a.segment.interval > b.segment.interval ? 1 : 0,
    );
  // The live data over each chunk being cleaned must be served: until it is, an older version may be the
  // only way back (segops rollback), and that is what a kill removes.
  const served = new Set(facts.served);
  const notServed: string[] = [];
  for (const u of doomed) {
    const chunk = parseInterval(u.segment.interval);
    const live = facts.used.filter((s) => overlaps(parseInterval(s.interval), chunk));
    const newest = live
      .map((s) => s.version)
      .sort()
      .at(-1);
    for (const s of live) if (s.version === newest && !served.has(segmentId(s))) notServed.push(segmentId(s));
  }
  if (notServed.length > 0) {
    throw new UsageError(
      `cannot kill in ${range}: the live version of the chunks is not fully served yet (${[...new Set(notServed)].slice(0, 5).join(", ")}${notServed.length > 5 ? ", …" : ""}); wait for the handoff (or check the load rules) and run again`,
      { notServed: [...new Set(notServed)] },
    );
  }
  const batchSize = request.batchSize ?? 100;
  const identity = {
    datasource: ds,
    interval: range,
    versions: request.versions ? [...request.versions].sort() : null,
    cutoff,
    cluster: request.cluster
      ? { overlord: request.cluster.overlord, coordinator: request.cluster.coordinator }
      : null,
  };
  const hash = createHash("sha256").update(canonicalJson(identity)).digest("hex").slice(0, 10);
  // The request without its cut-off (which moves with the clock): a rerun of the same command finds the
  // open job of a run that crashed by it and resumes it instead of submitting new kill tasks.
  const { cutoff: _moving, ...request_ } = identity;
  const requestKey = createHash("sha256")
    .update(canonicalJson({ ...request_, olderThanMs: request.olderThanMs ?? 0, batchSize }))
    .digest("hex")
    .slice(0, 10);
  const jobId = `kill_${datasourcePart(ds)}_${intervalSlug(request.interval)}_${hash}`;
  const batches: KillPayload[] = [];
  for (let i = 0; i < doomed.length; i += batchSize) {
    const batch = doomed.slice(i, i + batchSize).map((u) => u.segment);
    const spans = batch.map((s) => parseInterval(s.interval));
    const span = { start: Math.min(...spans.map((x) => x.start)), end: Math.max(...spans.map((x) => x.end)) };
    batches.push({
      datasource: ds,
      interval: formatInterval(span),
      versions: request.versions ? [...request.versions] : null,
      maxUsedStatusLastUpdatedTime: cutoff,
      segmentIds: batch.map(segmentId).sort(),
      bytes: batch.reduce((n, s) => n + (s.size ?? 0), 0),
      taskId: `segops_kill_${datasourcePart(ds)}_${intervalSlug(span)}_${hash}`,
    });
  }
  return {
    job: {
      id: jobId,
      kind: KILL_KIND,
      options: {
        datasource: ds,
        range,
        cutoff,
        versions: identity.versions,
        requestKey,
        baseId: jobId,
        ...(request.cluster ? { cluster: { ...request.cluster } } : {}),
      },
    },
    tasks: batches.map((b) => ({
      id: `${jobId}/${intervalSlug(parseInterval(b.interval))}`,
      kind: KILL_KIND,
      payload: b as unknown as JsonObject,
      exclusionKey: `${ds}|kill|${b.interval}`,
    })),
    batches,
  };
}
