import { createHash } from "node:crypto";
import { canonicalJson } from "../../core/canonical-json.js";
import { UsageError } from "../../core/errors.js";
import {
  contains,
  formatInterval,
  type Interval,
  intervalSlug,
  overlaps,
  parseInterval,
} from "../../core/interval.js";
import { datasourcePart } from "../../core/task-id.js";
import type { DruidClient } from "../../druid/client.js";
import type { ClusterBinding } from "../../druid/cluster.js";
import type { DataSegment } from "../../druid/types.js";
import type { JsonObject, NewJob, NewTask } from "../../ledger/types.js";
import { chunkExclusionKey } from "../../work/chunk.js";
import { segmentId, toTimelineSegment } from "../../work/segments.js";

/**
 * Rolling a datasource's interval back to an earlier version V (docs/architecture.md, "Segment operations"):
 * per time chunk of V, the newer used versions are marked unused, then V's segments used, then segops waits
 * until V is served and audits that V is the one live version. Druid has no way back on its own (apache/druid
 * #10305 was closed unmerged); version-scoped markUsed/markUnused (#16141) make it possible.
 *
 * Everything that can make a rollback impossible is found before anything changes: V never existed or was
 * killed (its segments are neither used nor unused any more), or only part of V survives in a chunk, or a
 * newer segment reaches outside the interval (marking it unused would take data outside the interval too).
 */

export const ROLLBACK_KIND = "rollback";

export interface RollbackRequest {
  datasource: string;
  interval: Interval;
  /**
   * What to restore in each time chunk: one version (`--to-version`), or the newest version written before
   * an instant (`--before`: a backfill gives every day its own version, so "how it was before the bad
   * replace" is a time, not one version).
   */
  target: { version: string } | { before: string };
  cluster?: ClusterBinding;
}

/** What Druid has for the request (read once, before planning). */
export interface RollbackFacts {
  request: RollbackRequest;
  /** Used segments overlapping the interval (overshadowed ones included). */
  used: DataSegment[];
  /** Unused segments overlapping the interval (killed ones are gone). */
  unused: DataSegment[];
}

export interface RollbackPayload {
  datasource: string;
  /** The chunk: V's segments' interval. */
  interval: string;
  toVersion: string;
  /** V's segment ids in the chunk (all must be served at the end). */
  segmentIds: string[];
  /** Newer versions used in the chunk when planned (marked unused first). */
  newerVersions: string[];
}

/** Reads what Druid has for the request: the used and unused segments of the datasource in the interval. */
export async function inspectRollback(client: DruidClient, request: RollbackRequest): Promise<RollbackFacts> {
  const text = formatInterval(request.interval);
  const [used, unused] = await Promise.all([
    client.metadataSegments(request.datasource, [text]),
    client.unusedSegments(request.datasource, text),
  ]);
  return { request, used, unused: unused.map((u) => u.segment) };
}

function core(s: DataSegment): number {
  const partitions = (s.shardSpec as { partitions?: unknown }).partitions;
  return typeof partitions === "number" && partitions > 0 ? partitions : 1;
}

/**
 * A refusal naming the request field it is about (`path`: `interval`, `toVersion` or `before`, the API's
 * body fields; the CLI's flags of the same names), so the service answers with `errors[].path`.
 */
function refuse(
  message: string,
  path: "interval" | "toVersion" | "before",
  details: Record<string, unknown> = {},
): never {
  throw new UsageError(`cannot roll back: ${message}`, { ...details, path, problem: message });
}

function targetField(t: RollbackRequest["target"]): "toVersion" | "before" {
  return "version" in t ? "toVersion" : "before";
}

function describeTarget(t: RollbackRequest["target"]): string {
  return "version" in t ? `version ${t.version}` : `the newest version before ${t.before}`;
}

/**
 * Plans the job from the facts (pure): one partition per time chunk whose live version is not the target
 * already. Druid versions are ISO instants (the lock's time), so they compare as strings.
 */
export function planRollback(facts: RollbackFacts): {
  job: NewJob;
  tasks: NewTask[];
  chunks: RollbackPayload[];
} {
  const { request } = facts;
  const inRange = (s: DataSegment) => overlaps(parseInterval(s.interval), request.interval);
  const all = [...facts.used, ...facts.unused].filter(inRange);
  const used = facts.used.filter(inRange);
  refuseUnknownVersion(request, all);
  const byChunk = new Map<string, DataSegment[]>();
  for (const s of all) byChunk.set(s.interval, [...(byChunk.get(s.interval) ?? []), s]);
  const payloads: RollbackPayload[] = [];
  const unrestorable: string[] = [];
  for (const [interval, segs] of [...byChunk.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const planned = planChunk(request, used, interval, segs);
    if (planned === "unrestorable") unrestorable.push(interval);
    else if (planned !== null) payloads.push(planned);
  }
  if (unrestorable.length > 0)
    refuse(
      `${describeTarget(request.target)} is gone (killed, or never written) for ${unrestorable.join(", ")}`,
      targetField(request.target),
      { unrestorable },
    );
  return { ...rollbackJob(request, payloads), chunks: payloads };
}

/** A version the user named must exist in the interval, used or unused. */
function refuseUnknownVersion(request: RollbackRequest, all: readonly DataSegment[]): void {
  const t = request.target;
  if (!("version" in t) || all.some((s) => s.version === t.version)) return;
  const known = [...new Set(all.map((s) => s.version))].sort();
  refuse(
    `no segment of ${request.datasource} in ${formatInterval(request.interval)} has ${describeTarget(t)} (killed, or never written); versions there: ${known.join(", ") || "none"}`,
    targetField(t),
    { datasource: request.datasource, versions: known },
  );
}

/**
 * One chunk's rollback: the version to restore and the newer ones to mark unused; null when there is
 * nothing to do (already the target, or nothing of it here), `unrestorable` when a `--before` target has
 * nothing to go back to. Refuses a target reaching outside the interval or missing a partition, and a
 * newer segment reaching outside the interval (marking it unused would take data outside it too).
 */
function planChunk(
  request: RollbackRequest,
  used: readonly DataSegment[],
  interval: string,
  segs: readonly DataSegment[],
): RollbackPayload | "unrestorable" | null {
  const t = request.target;
  const range = formatInterval(request.interval);
  const chunk = parseInterval(interval);
  const versions = [...new Set(segs.map((s) => s.version))].sort();
  const live = used
    .filter((s) => overlaps(parseInterval(s.interval), chunk))
    .map((s) => s.version)
    .sort()
    .at(-1);
  const target =
    "version" in t ? versions.find((v) => v === t.version) : versions.filter((v) => v < t.before).at(-1);
  // Nothing of the target here: with --before, a chunk written only after it has nothing to go back to.
  if (target === undefined)
    return "before" in t && live !== undefined && live >= t.before ? "unrestorable" : null;
  if (live === target) return null; // already what was asked
  if (!contains(request.interval, chunk))
    refuse(
      `${describeTarget(t)} has segments over ${interval}, reaching outside ${range}; widen the interval to cover it`,
      "interval",
    );
  const mine = segs.filter((s) => s.version === target);
  const parts = new Set(mine.map((s) => s.shardSpec.partitionNum ?? 0));
  const expected = Math.max(...mine.map(core));
  const missing = Array.from({ length: expected }, (_, p) => p).filter((p) => !parts.has(p));
  if (missing.length > 0)
    refuse(
      `version ${target} of ${interval} lacks partition(s) ${missing.join(", ")} (killed): restoring it would lose data`,
      targetField(t),
    );
  const newer = used.filter((s) => s.version > target && overlaps(parseInterval(s.interval), chunk));
  for (const s of newer) {
    if (!contains(request.interval, parseInterval(s.interval)))
      refuse(
        `newer segment ${segmentId(s)} reaches outside ${range}: marking it unused would remove data outside the interval; widen the interval to ${s.interval}`,
        "interval",
      );
  }
  return {
    datasource: request.datasource,
    interval: formatInterval(chunk),
    toVersion: target,
    segmentIds: mine.map(segmentId).sort(),
    newerVersions: [...new Set(newer.map((s) => s.version))].sort(),
  };
}

/** The job (named by the request) and one task per chunk, keyed by the chunk. */
function rollbackJob(request: RollbackRequest, payloads: readonly RollbackPayload[]) {
  const ds = request.datasource;
  const range = formatInterval(request.interval);
  const identity = {
    datasource: ds,
    interval: range,
    target: request.target,
    cluster: request.cluster
      ? { overlord: request.cluster.overlord, coordinator: request.cluster.coordinator }
      : null,
  };
  const hash = createHash("sha256").update(canonicalJson(identity)).digest("hex").slice(0, 10);
  const jobId = `rollback_${datasourcePart(ds)}_${intervalSlug(request.interval)}_${hash}`;
  const job: NewJob = {
    id: jobId,
    kind: ROLLBACK_KIND,
    options: {
      datasource: ds,
      range,
      target: request.target,
      baseId: jobId,
      ...(request.cluster ? { cluster: { ...request.cluster } } : {}),
    },
  };
  const tasks = payloads.map(
    (p): NewTask => ({
      id: `${jobId}/${intervalSlug(parseInterval(p.interval))}`,
      kind: ROLLBACK_KIND,
      payload: p as unknown as JsonObject,
      // Never at the same time as an ingestion (or another operation) of the same chunk.
      exclusionKey: chunkExclusionKey(ds, p.interval),
    }),
  );
  return { job, tasks };
}

/** The served-and-live check of one chunk after the marks, from Druid's views (pure). */
export function chunkRestored(
  payload: RollbackPayload,
  used: readonly DataSegment[],
  served: ReadonlySet<string>,
): { restored: boolean; waitingFor: string[]; stillUsedNewer: string[] } {
  const chunk = parseInterval(payload.interval);
  const usedIds = new Set(used.map(segmentId));
  const waitingFor = payload.segmentIds.filter((id) => !usedIds.has(id) || !served.has(id));
  const stillUsedNewer = used
    .filter((s) => s.version > payload.toVersion && overlaps(parseInterval(s.interval), chunk))
    .map((s) => toTimelineSegment(s, served).id);
  return { restored: waitingFor.length === 0 && stillUsedNewer.length === 0, waitingFor, stillUsedNewer };
}

/**
 * Used versions newer than the target in the chunk that the plan did not name (pure): published after the
 * rollback was planned, so not the rollback's to hide.
 */
export function unplannedNewer(payload: RollbackPayload, used: readonly DataSegment[]): string[] {
  const chunk = parseInterval(payload.interval);
  const planned = new Set(payload.newerVersions);
  return [
    ...new Set(
      used
        .filter((s) => s.version > payload.toVersion && overlaps(parseInterval(s.interval), chunk))
        .map((s) => s.version)
        .filter((v) => !planned.has(v)),
    ),
  ].sort();
}

/** Why a rollback stopped when newer data appeared during it (the plan's versions are in the message). */
export function newerPublished(payload: RollbackPayload, versions: readonly string[]): string {
  const which =
    versions.length === 1
      ? `a newer version ${versions[0]} was`
      : `newer versions ${versions.join(", ")} were`;
  return `${which} published after the rollback was planned: roll back again if that is what you want (${payload.interval}: planned ${payload.newerVersions.join(", ") || "nothing"} unused and ${payload.toVersion} used; ${versions.length === 1 ? "it was" : "they were"} left as they are)`;
}
