import { parseGranularity } from "../../core/granularity.js";
import { formatInterval } from "../../core/interval.js";
import { TaskAbort } from "../../driver/signals.js";
import { auditTimeline } from "../../work/audit.js";
import { handoffVerdict } from "../../work/handoff.js";
import { servedIdsIn, toTimelineSegment } from "../../work/segments.js";
import { liveDataOf } from "../../work/timeline.js";
import type { IngestSummary } from "../types.js";
import { type Attempt, rowsIngestedOf, type StepIO } from "./attempt.js";
import { handoffQuestion, supersededOrCompacted } from "./handoff.js";

/**
 * The used segments overlapping the partition's interval with their served flags, read afresh (a resumed
 * audit). The served view of this interval only, as the handoff gate reads it (docs/druid-api.md §3.2a):
 * the datasource's whole served list would cost every partition's audit the whole datasource (16 MB at
 * 200,000 segments).
 */
async function readInterval(a: Attempt, io: StepIO) {
  const { datasource } = a.payload;
  const [used, servedIds] = await Promise.all([
    io.client.metadataSegments(datasource, [formatInterval(a.interval)], a.call),
    servedIdsIn(io.client, datasource, formatInterval(a.interval), a.call),
  ]);
  return used.map((s) => toTimelineSegment(s, servedIds));
}

/**
 * The version audit of the handed-off partition: one live version per time chunk, ours, served, nothing
 * appended twice. Passing, the partition's summary is recorded and the handler returns (done); a newer
 * version over ours ends it superseded, as the handoff step would.
 */
export async function auditPartition(a: Attempt, io: StepIO): Promise<void> {
  const { payload, taskId } = a;
  const p = a.progress();
  const segments = a.handoffSeen ?? (await readInterval(a, io));
  // Handed off, our version was live and served. A newer version over it since (another ledger's compaction:
  // nothing serialises it with us) is what the handoff gate calls superseded, by the same rule, also once the
  // Coordinator has marked ours unused: a resumed audit (the partition taken over, or run again after a crash)
  // reads afresh and may be first to see it.
  if (p.version) {
    const verdict = handoffVerdict(handoffQuestion(a), segments);
    if (verdict.state === "superseded") {
      await supersededOrCompacted(a, io, verdict, " after it was handed off");
      return;
    }
  }
  const ingested = rowsIngestedOf(p.rowStats);
  const liveNow = liveDataOf(segments, a.interval);
  if (ingested !== null && ingested > 0 && liveNow.segments === 0) {
    // Our task reported rows, yet the interval serves none (a tombstone or nothing): whatever is live is
    // not what our task published, so this can never be done.
    await a.save({ outcome: "lost" });
    throw new TaskAbort(
      `not done: ${taskId} ingested ${ingested} row(s) but ${payload.interval} serves none at version ${p.version ?? "?"} (a tombstone or no data): the data is not ours or is gone; check it with \`segops audit ${payload.datasource} --interval ${payload.interval}\``,
    );
  }
  const served = liveNow.rows;
  if (payload.mode === "replace" && ingested !== null && served !== null && served > ingested) {
    // Rollup can only merge rows: a replace whose interval serves more rows than its task ingested is
    // serving someone else's data, whatever the versions say.
    await a.save({ outcome: "lost" });
    throw new TaskAbort(
      `not done: ${payload.interval} serves ${served} row(s) but ${taskId} ingested ${ingested}: the live data is not (only) ours; check it with \`segops audit ${payload.datasource} --interval ${payload.interval}\``,
    );
  }
  const report = auditTimeline({
    datasource: payload.datasource,
    interval: a.interval,
    segments,
    granularity: parseGranularity(payload.segmentGranularity),
    expect: { ...(p.version ? { version: p.version } : {}), mode: payload.mode },
    sizeBand: io.settings.sizeBand,
  });
  const audit = {
    ok: report.ok,
    violations: report.violations,
    totals: report.totals,
    chunks: report.chunks,
    compactionCandidates: report.compactionCandidates.length,
  };
  if (!report.ok) {
    await a.save({ audit, outcome: "audit-failed" });
    throw new TaskAbort(
      `audit failed for ${payload.interval}: ${report.violations.map((v) => `${v.chunk} ${v.kind}: ${v.message}`).join("; ")}`,
    );
  }
  const summary: IngestSummary = {
    taskIds: p.taskIds ?? [taskId],
    druidTaskId: taskId,
    version: p.version ?? null,
    rows: report.totals.rows,
    rowsIngested: rowsIngestedOf(p.rowStats),
    segments: report.totals.segments,
    bytes: report.totals.bytes,
    druidDurationMs: p.druidDurationMs ?? null,
    handoffMs: p.handedOffAt && p.succeededAt ? p.handedOffAt - p.succeededAt : null,
    compactionCandidates: report.compactionCandidates.length,
    attempts: a.task.attempt,
  };
  await a.save({ step: "done", audit, summary });
  a.note("done", `${summary.rows ?? "?"} rows in ${summary.segments} segment(s)`);
}
