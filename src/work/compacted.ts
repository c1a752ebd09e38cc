import { formatInterval, type Interval } from "../core/interval.js";

/**
 * Druid's own compaction over a partition that SUCCEEDED (docs/druid-versions.md, "Auto-compaction while a
 * backfill writes"): auto-compaction (the Coordinator's duty, `coordinator-issued_compact_…` up to Druid 36, or a
 * compaction supervisor, `auto_compact_…` from 37: apache/druid #19252) may rewrite the chunk between our task's
 * SUCCESS and our audit, under a newer version; a minor compaction (apache/druid #19059) also upgrades segments in
 * place to that version. The data is ours, rewritten: the partition is done, with a note, not superseded. Pure:
 * the caller reads the segments, the datasource's compact tasks and their input intervals.
 */

/** A `compact` task of the datasource as the Overlord lists it, with its input interval from its payload. */
export interface DruidCompaction {
  id: string;
  /** `statusCode` of the task list (`SUCCESS`, `RUNNING`, `FAILED`, …). */
  state: string;
  /** `createdTime` (ISO): a lock it took, and so the version it published, is not older. */
  createdTime: string;
  /** Run duration in ms (-1 or absent while it runs). */
  durationMs: number | null;
  /** `ioConfig.inputSpec.interval` of its payload (`interval` and `uncompacted` specs); null when unreadable. */
  inputInterval: Interval | null;
}

/** A segment (used or unused) over our interval whose version is newer than ours. */
export interface NewerSegment {
  version: string;
  start: number;
  end: number;
  /** It carries `lastCompactionState` (a compaction wrote or upgraded it with `storeCompactionState`). */
  compactionState: boolean;
}

export type CompactedVerdict =
  /** Every newer version is a compaction of ours (a chain of them: each compacted what the one before left). */
  | { kind: "compacted"; by: Array<{ taskId: string; version: string }>; note: string }
  /** A compaction that may have published a newer version has not ended yet: ask again. */
  | { kind: "not-yet"; reason: string }
  /** A newer version cannot be shown to be a compaction of ours: the partition is superseded, as before. */
  | { kind: "foreign"; reason: string };

/**
 * Whether a task id is Druid's automatic compaction's (`CompactSegments.TASK_ID_PREFIX` + `compact`): only those
 * count as Druid's own. A compact task someone submitted by hand, or another tool's (another segops ledger's
 * `segops compact`), is another writer: its version supersedes ours as any replace does.
 */
export function isDruidAutoCompaction(taskId: string): boolean {
  return taskId.startsWith("auto_compact_") || taskId.startsWith("coordinator-issued_compact_");
}

/** Which Druid service issued an automatic compaction, by its id. */
export function compactionIssuer(taskId: string): string {
  return taskId.startsWith("auto_compact_") ? "Druid's auto-compaction" : "the Coordinator's auto-compaction";
}

/**
 * Whether each version newer than ours over `interval` was published by a compaction of what was there after our
 * task, and so of our data. A version V is a compaction's when an automatic compaction task of the datasource
 * ({@link isDruidAutoCompaction}) SUCCEEDED whose
 * lifetime holds V (created no later than V, V no later than its end: the version is the lock the task took, and a
 * lock it took after our task released ours, since V is newer than ours) and whose input interval covers every
 * part of our interval where V has segments. Versions are checked oldest first, so a compaction of a compaction of
 * ours counts. Anything else newer than ours (another writer's replace, a compaction whose input interval could
 * not be read or does not cover ours, a SQL REPLACE) is foreign: superseded, as before.
 */
export function compactedFromOurs(q: {
  interval: Interval;
  ours: string;
  newer: readonly NewerSegment[];
  compactions: readonly DruidCompaction[];
}): CompactedVerdict {
  const where = formatInterval(q.interval);
  // Versions compare as strings (docs/druid-api.md, "Versions").
  const versions = [...new Set(q.newer.filter((s) => s.version > q.ours).map((s) => s.version))].sort();
  if (versions.length === 0) return { kind: "foreign", reason: `no version newer than ours in ${where}` };
  const by: Array<{ taskId: string; version: string }> = [];
  for (const version of versions) {
    const spans = q.newer
      .filter((s) => s.version === version)
      .map((s) => ({ start: Math.max(s.start, q.interval.start), end: Math.min(s.end, q.interval.end) }));
    const lockedThen = q.compactions.filter((c) => isDruidAutoCompaction(c.id) && c.createdTime <= version);
    const done = lockedThen.filter(
      (c) =>
        c.state === "SUCCESS" &&
        typeof c.durationMs === "number" &&
        c.durationMs >= 0 &&
        version <= new Date(Date.parse(c.createdTime) + c.durationMs).toISOString(),
    );
    const covering = done.find(
      (c) =>
        c.inputInterval !== null &&
        spans.every(
          (p) => (c.inputInterval as Interval).start <= p.start && p.end <= (c.inputInterval as Interval).end,
        ),
    );
    if (covering) {
      by.push({ taskId: covering.id, version });
      continue;
    }
    const running = lockedThen.find(
      (c) => c.state === "RUNNING" || c.state === "PENDING" || c.state === "WAITING",
    );
    if (running)
      return {
        kind: "not-yet",
        reason: `compaction ${running.id} may have published ${version} and has not ended`,
      };
    const unread = done.find((c) => c.inputInterval === null);
    return {
      kind: "foreign",
      reason: unread
        ? `version ${version} may be compaction ${unread.id}'s, but its input interval could not be read`
        : done.length > 0
          ? `version ${version} was published while compaction ${done[0]?.id} ran, but its input interval does not cover ${where}`
          : `no automatic compaction of the datasource (coordinator-issued_compact_… or auto_compact_…) ran when version ${version} was locked: another writer's`,
    };
  }
  const unmarked = versions.filter((v) => !q.newer.some((s) => s.version === v && s.compactionState));
  const chain = by.map((b) => `${b.taskId} (${compactionIssuer(b.taskId)}) as ${b.version}`).join(", then ");
  const note = `compacted by Druid from ours: our version ${q.ours} of ${where} was rewritten by ${chain}${
    unmarked.length > 0 ? ` (no lastCompactionState on ${unmarked.join(", ")})` : ""
  }`;
  return { kind: "compacted", by, note };
}

/** The input interval of a `compact` task's payload (`ioConfig.inputSpec.interval`, or the legacy `interval`). */
export function compactionInputInterval(
  payload: Record<string, unknown>,
  parse: (text: string) => Interval,
): Interval | null {
  const obj = (v: unknown): Record<string, unknown> =>
    v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const spec = obj(obj(payload.ioConfig).inputSpec);
  const text = typeof spec.interval === "string" ? spec.interval : payload.interval;
  if (typeof text !== "string") return null;
  try {
    return parse(text);
  } catch {
    return null;
  }
}
