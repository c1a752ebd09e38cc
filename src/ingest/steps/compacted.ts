import { formatInterval, parseInterval } from "../../core/interval.js";
import { TaskProgress } from "../../driver/signals.js";
import type { DataSegment } from "../../druid/types.js";
import {
  compactedFromOurs,
  compactionInputInterval,
  type DruidCompaction,
  isDruidAutoCompaction,
  type NewerSegment,
} from "../../work/compacted.js";
import { servedIdsIn, toTimelineSegment } from "../../work/segments.js";
import { liveDataOf, liveTimeline } from "../../work/timeline.js";
import type { IngestSummary } from "../types.js";
import { type Attempt, describeError, isFatal, rowsIngestedOf, type StepIO } from "./attempt.js";

/**
 * A newer version over ours, seen by the handoff gate or the audit after our task SUCCEEDED: when Druid's own
 * compaction wrote it from ours (work/compacted.ts, `compactedFromOurs`), the partition ends done with the note,
 * once the compacted data is served; while such a compaction has not ended, or the compacted data is not served
 * yet (within the handoff timeout), it waits (a `TaskProgress`); null once it ended done. Otherwise the answer is why the version is not shown
 * to be a compaction of ours ("" when Druid's task list holds no automatic compaction at all), and the caller ends
 * the partition superseded, as before. Read only on this rare path: the interval's used
 * and unused segments and served view, the datasource's `compact` tasks and their payloads.
 */
export async function endIfCompactedByDruid(a: Attempt, io: StepIO, ours: string): Promise<string | null> {
  const { datasource } = a.payload;
  const where = formatInterval(a.interval);
  let compactions: DruidCompaction[];
  let reads: [DataSegment[], DataSegment[], ReadonlySet<string>];
  try {
    compactions = await compactTasks(a, io);
    // No automatic compaction in Druid's task list: nothing more to read, the version is another writer's (and
    // the partition is superseded in the usual words).
    if (compactions.length === 0) return "";
    reads = await Promise.all([
      io.client.metadataSegments(datasource, [where], a.call),
      io.client.unusedSegments(datasource, where, a.call).then((u) => u.map((x) => x.segment)),
      servedIdsIn(io.client, datasource, where, a.call),
    ]);
  } catch (error) {
    if (!isFatal(error)) throw error;
    return `Druid's segments or task list could not be read: ${describeError(error)}`;
  }
  const [used, unused, servedIds] = reads;
  const newer: NewerSegment[] = [...used, ...unused]
    .filter((s) => s.version > ours)
    .map((s) => {
      const { start, end } = parseInterval(s.interval);
      return { version: s.version, start, end, compactionState: s.lastCompactionState != null };
    });
  const verdict = compactedFromOurs({ interval: a.interval, ours, newer, compactions });
  if (verdict.kind === "foreign") return verdict.reason;
  if (verdict.kind === "not-yet") throw new TaskProgress(`waiting: ${verdict.reason}`, io.settings.tickMs);
  const segments = used.map((s) => toTimelineSegment(s, servedIds));
  const unserved = liveTimeline(segments, a.interval).flatMap((p) =>
    p.live.filter((s) => !s.tombstone && !s.served).map((s) => s.id),
  );
  const p = a.progress();
  if (unserved.length > 0) {
    // As long as the handoff gate waits for our own data, and no longer.
    const waited = io.clock.now() - (p.handoffSince ?? p.succeededAt ?? io.clock.now());
    if (waited >= io.settings.handoffTimeoutMs)
      return `${verdict.note}, but the compacted data is still not served after ${Math.round(waited / 1000)}s (${unserved.slice(0, 3).join(", ")})`;
    throw new TaskProgress(`waiting for Druid's compaction of ${where} to be served`, io.settings.tickMs);
  }
  const live = liveDataOf(segments, a.interval);
  const summary: IngestSummary = {
    taskIds: p.taskIds ?? [a.taskId],
    druidTaskId: a.taskId,
    version: ours,
    rows: live.rows,
    rowsIngested: rowsIngestedOf(p.rowStats),
    segments: live.segments,
    bytes: live.bytes,
    druidDurationMs: p.druidDurationMs ?? null,
    handoffMs: null,
    compactionCandidates: 0,
    attempts: a.task.attempt,
  };
  const compactedBy = { note: verdict.note, by: verdict.by };
  await a.save({ step: "done", outcome: null, version: ours, compactedBy, summary });
  a.note("done", verdict.note);
  return null;
}

/**
 * The datasource's automatic compaction tasks (Druid's task list: active, and complete of the last day) with their
 * input intervals.
 */
async function compactTasks(a: Attempt, io: StepIO): Promise<DruidCompaction[]> {
  const listed = (
    await io.client.tasks({ datasource: a.payload.datasource, type: "compact" }, a.call)
  ).filter((t) => isDruidAutoCompaction(t.id));
  return Promise.all(
    listed.map(async (t) => {
      let inputInterval = null;
      try {
        inputInterval = compactionInputInterval(
          (await io.client.taskPayload(t.id, a.call)).payload,
          parseInterval,
        );
      } catch (error) {
        if (!isFatal(error)) throw error;
      }
      return {
        id: t.id,
        state: t.statusCode ?? t.status ?? "UNKNOWN",
        createdTime: t.createdTime,
        durationMs: typeof t.duration === "number" ? t.duration : null,
        inputInterval,
      };
    }),
  );
}
