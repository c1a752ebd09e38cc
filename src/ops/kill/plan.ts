import { createHash } from "node:crypto";
import { canonicalJson } from "../../core/canonical-json.js";
import { UsageError } from "../../core/errors.js";
import { formatInterval, type Interval, intervalSlug, overlaps, parseInterval } from "../../core/interval.js";
import { datasourcePart } from "../../core/task-id.js";
import type { DruidClient, UnusedSegment } from "../../druid/client.js";
import type { ClusterBinding } from "../../druid/cluster.js";
import type { DataSegment } from "../../druid/types.js";
import type { Store } from "../../ledger/store.js";
import type { JsonObject, NewJob, NewTask, TaskRow } from "../../ledger/types.js";
import { chunkExclusionKey } from "../../work/chunk.js";
import { segmentId } from "../../work/segments.js";
import { ROLLBACK_KIND } from "../rollback/plan.js";

/**
 * Deleting unused segments for good (`segops kill`): only segments that are unused and were marked unused
 * long enough ago, optionally only some versions. Kill tasks that take every slot (apache/druid #14769,
 * #16247) and kills of data still needed (#8853) are what goes wrong by hand, so: the plan names every
 * segment before anything runs (a dry run shows it), a chunk whose live version is not fully served is
 * refused (its predecessor may still be the way back), a chunk with no used version at all is refused unless
 * the versions are named (that is a rollback between its two marks, or a crash there: the unused versions are
 * the only copies), a chunk an unfinished rollback of the same ledger works on is refused, tasks are capped
 * like any other work, and each kill task only deletes what was unused when planned
 * (`maxUsedStatusLastUpdatedTime`). Each kill partition covers one time chunk and carries the chunk's
 * exclusion key, so a kill never runs beside an ingestion, compaction or rollback of that chunk.
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
  /** Rollback partitions of the same ledger not finished over the interval (when a ledger was read). */
  rollbacks?: UnfinishedRollback[];
}

/** A rollback partition that has not restored its chunk yet: nothing else may touch the chunk. */
export interface UnfinishedRollback {
  taskId: string;
  interval: string;
  state: string;
  step: string | null;
}

/** The ledger reads `inspectKill` needs (a `Store` satisfies it). */
export type KillLedger = Pick<Store, "listJobs" | "listTasks">;

/**
 * The rollback partitions of `datasource` over `interval` that are unfinished: not ended yet (new,
 * running, suspended), or ended without being done after marking the newer versions unused and before
 * marking the target used (step `mark`), which leaves the chunk with no used version until it is finished.
 */
export async function unfinishedRollbacks(
  ledger: KillLedger,
  datasource: string,
  interval: Interval,
): Promise<UnfinishedRollback[]> {
  const jobs = [
    ...(await ledger.listJobs({ kind: ROLLBACK_KIND, state: "open", limit: 1000 })),
    ...(await ledger.listJobs({ kind: ROLLBACK_KIND, state: "failed", limit: 1000 })),
  ].filter((j) => j.options.datasource === datasource);
  const out: UnfinishedRollback[] = [];
  for (const job of jobs) {
    for (const task of await ledger.listTasks(job.id)) {
      const chunk = rollbackChunk(task);
      if (chunk === null || !overlaps(parseInterval(chunk), interval)) continue;
      const step = typeof task.progress.step === "string" ? task.progress.step : null;
      const open = task.state === "new" || task.state === "running" || task.state === "suspended";
      // A rollback that stopped because newer data was published since its plan left that data live.
      const stopped = typeof task.progress.stopped === "string";
      if (open || (task.state !== "done" && step === "mark" && !stopped))
        out.push({ taskId: task.id, interval: chunk, state: task.state, step });
    }
  }
  return out;
}

function rollbackChunk(task: TaskRow): string | null {
  const interval = task.payload.interval;
  return task.kind === ROLLBACK_KIND && typeof interval === "string" ? interval : null;
}

export interface KillPayload {
  datasource: string;
  /** The batch's time chunk (its segments' interval); the kill task's `interval`. */
  interval: string;
  /** The versions the user named (null: every unused version, allowed only over a chunk with a used one). */
  versions: string[] | null;
  /** Segments marked unused no later than this (ms) are deleted: the plan's cut-off, ISO in the task. */
  maxUsedStatusLastUpdatedTime: number;
  segmentIds: string[];
  bytes: number;
  /** The pinned Druid task id of the first attempt; a later attempt's is `killTaskId` of it. */
  taskId: string;
}

/**
 * Reads what the plan needs from Druid and, given the ledger the kill will run in, the rollbacks of the
 * interval it has not finished.
 */
export async function inspectKill(
  client: DruidClient,
  request: KillRequest,
  now: number,
  ledger?: KillLedger,
): Promise<KillFacts> {
  const text = formatInterval(request.interval);
  const [used, unused, served, rollbacks] = await Promise.all([
    client.metadataSegments(request.datasource, [text]),
    client.unusedSegments(request.datasource, text),
    client.servedSegments(request.datasource),
    ledger ? unfinishedRollbacks(ledger, request.datasource, request.interval) : undefined,
  ]);
  return { request, now, used, unused, served, ...(rollbacks ? { rollbacks } : {}) };
}

const listed = (items: readonly string[]) =>
  `${items.slice(0, 5).join(", ")}${items.length > 5 ? `, … (${items.length})` : ""}`;

/** Plans the kill (pure): which segments go, in batches of one chunk each; refuses what must not be killed. */
export function planKill(facts: KillFacts): { job: NewJob; tasks: NewTask[]; batches: KillPayload[] } {
  const { request } = facts;
  const cutoff = facts.now - (request.olderThanMs ?? 0);
  // Each chunk is one or more partitions of its own (keyed like its ingestion), so the checks are per chunk.
  const chunks = doomedByChunk(facts, cutoff);
  refuseRollingBack(facts.rollbacks ?? [], chunks);
  if (!request.versions) refuseBareChunks(facts.used, chunks);
  refuseUnserved(facts, chunks);
  const names = killNames(request, cutoff);
  const batches = batchesOf(request, chunks, cutoff, names.hash);
  return {
    job: {
      id: names.jobId,
      kind: KILL_KIND,
      options: {
        datasource: request.datasource,
        range: formatInterval(request.interval),
        cutoff,
        versions: names.versions,
        baseId: names.jobId,
        ...(request.cluster ? { cluster: { ...request.cluster } } : {}),
      },
    },
    tasks: batches.map(({ name, payload }) => ({
      id: `${names.jobId}/${name}`,
      kind: KILL_KIND,
      payload: payload as unknown as JsonObject,
      // The chunk's key: never beside an ingestion, compaction or rollback of the same chunk.
      exclusionKey: chunkExclusionKey(request.datasource, payload.interval),
    })),
    batches: batches.map((b) => b.payload),
  };
}

/** The unused segments to delete, by chunk (in time order): inside the interval, of the versions, old enough. */
function doomedByChunk(facts: KillFacts, cutoff: number): Map<string, UnusedSegment[]> {
  const { request } = facts;
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
  const chunks = new Map<string, UnusedSegment[]>();
  for (const u of doomed) {
    const key = formatInterval(parseInterval(u.segment.interval));
    chunks.set(key, [...(chunks.get(key) ?? []), u]);
  }
  return chunks;
}

/**
 * A rollback of the chunk still under way (or stopped between its marks) must finish first: the unused
 * versions may be exactly what it restores.
 */
function refuseRollingBack(rollbacks: readonly UnfinishedRollback[], chunks: Map<string, UnusedSegment[]>) {
  const rollingBack = rollbacks.filter((r) =>
    [...chunks.keys()].some((c) => overlaps(parseInterval(c), parseInterval(r.interval))),
  );
  if (rollingBack.length === 0) return;
  const intervals = [...new Set(rollingBack.map((r) => r.interval))].sort();
  throw new UsageError(
    `cannot kill in ${listed(intervals)}: a rollback of it is not finished (${listed(rollingBack.map((r) => `${r.taskId} ${r.state}${r.step ? ` at ${r.step}` : ""}`))}); finish it first (segops resume JOB) and run again`,
    { path: "interval", intervals, rollbacks: rollingBack.map((r) => r.taskId) },
  );
}

const usedOver = (used: readonly DataSegment[], chunk: Interval) =>
  used.filter((s) => overlaps(parseInterval(s.interval), chunk));

/**
 * A chunk with no used version at all serves nothing: its unused versions are its only copies (a rollback
 * between marking the newer version unused and the target used again, or a crash there). Only versions the
 * user names may go then.
 */
function refuseBareChunks(used: readonly DataSegment[], chunks: Map<string, UnusedSegment[]>) {
  const bare = [...chunks.keys()].filter((c) => usedOver(used, parseInterval(c)).length === 0);
  if (bare.length === 0) return;
  const versions = [
    ...new Set(bare.flatMap((c) => (chunks.get(c) ?? []).map((u) => u.segment.version))),
  ].sort();
  throw new UsageError(
    `cannot kill in ${listed(bare)}: no version of it is used, so its unused versions (${listed(versions)}) are its only copies (a rollback between its marks leaves a chunk so); finish the rollback, or name the versions to delete (--version V; "versions" in an API request)`,
    { path: "interval", intervals: bare, versions },
  );
}

/**
 * The live data over each chunk being cleaned must be served: until it is, an older version may be the
 * only way back (segops rollback), and that is what a kill removes.
 */
function refuseUnserved(facts: KillFacts, chunks: Map<string, UnusedSegment[]>) {
  const served = new Set(facts.served);
  const notServed: string[] = [];
  for (const c of chunks.keys()) {
    const live = usedOver(facts.used, parseInterval(c));
    const newest = live
      .map((s) => s.version)
      .sort()
      .at(-1);
    for (const s of live) if (s.version === newest && !served.has(segmentId(s))) notServed.push(segmentId(s));
  }
  if (notServed.length === 0) return;
  throw new UsageError(
    `cannot kill in ${formatInterval(facts.request.interval)}: the live version of the chunks is not fully served yet (${[...new Set(notServed)].slice(0, 5).join(", ")}${notServed.length > 5 ? ", …" : ""}); wait for the handoff (or check the load rules) and run again`,
    { notServed: [...new Set(notServed)] },
  );
}

/** The job's id and the hash its kill task ids carry: named by what the kill deletes. */
function killNames(request: KillRequest, cutoff: number) {
  const ds = request.datasource;
  const identity = {
    datasource: ds,
    interval: formatInterval(request.interval),
    versions: request.versions ? [...request.versions].sort() : null,
    cutoff,
    cluster: request.cluster
      ? { overlord: request.cluster.overlord, coordinator: request.cluster.coordinator }
      : null,
  };
  const hash = createHash("sha256").update(canonicalJson(identity)).digest("hex").slice(0, 10);
  const jobId = `kill_${datasourcePart(ds)}_${intervalSlug(request.interval)}_${hash}`;
  return { hash, jobId, versions: identity.versions };
}

const batchSizeOf = (request: KillRequest) => request.batchSize ?? 100;

/** The kill batches: each chunk's segments, `batchSize` at a time, each under its pinned kill task id. */
function batchesOf(
  request: KillRequest,
  chunks: Map<string, UnusedSegment[]>,
  cutoff: number,
  hash: string,
): Array<{ name: string; payload: KillPayload }> {
  const ds = request.datasource;
  const batchSize = batchSizeOf(request);
  const out: Array<{ name: string; payload: KillPayload }> = [];
  for (const [chunk, segments] of chunks) {
    const slug = intervalSlug(parseInterval(chunk));
    for (let i = 0; i < segments.length; i += batchSize) {
      const batch = segments.slice(i, i + batchSize).map((u) => u.segment);
      // A chunk with more segments than a batch holds is several partitions: the later ones numbered.
      const part = i === 0 ? "" : `_${i / batchSize}`;
      out.push({
        name: `${slug}${part}`,
        payload: {
          datasource: ds,
          interval: chunk,
          versions: request.versions ? [...request.versions] : null,
          maxUsedStatusLastUpdatedTime: cutoff,
          segmentIds: batch.map(segmentId).sort(),
          bytes: batch.reduce((n, s) => n + (s.size ?? 0), 0),
          taskId: `segops_kill_${datasourcePart(ds)}_${slug}_${hash}${part}`,
        },
      });
    }
  }
  return out;
}
