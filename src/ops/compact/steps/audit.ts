import { overlaps, parseInterval } from "../../../core/interval.js";
import { TaskAbort, TaskRetry } from "../../../driver/signals.js";
import type { DataSegment } from "../../../druid/types.js";
import { segmentId } from "../../../work/segments.js";
import { type CompactionVerdict, chunkTotals, compactionVerdict, rolledUp, sameData } from "../totals.js";
import type { ChunkTotals } from "../types.js";
import { type CompactIO, type CompactPart, judgedChunk } from "./chunk.js";

/**
 * Compaction must never change data: the same rows and column totals as measured (a chunk another writer
 * replaced since cannot be compared, and ends `superseded`), one live version, no segment still flagged.
 */
export async function auditCompaction(part: CompactPart, io: CompactIO): Promise<void> {
  const { interval } = part.payload;
  const { used, report, verdicts } = await judgedChunk(part, io);
  const live = new Set(verdicts.flatMap((v) => v.inputs));
  const versions = [...new Set(report.chunks.flatMap((c) => c.liveVersions))];
  const after = await chunkTotals(
    io.client,
    part.payload.datasource,
    parseInterval(interval),
    part.call.signal,
  );
  await part.save({
    after,
    liveVersion: versions.length === 1 ? (versions[0] ?? null) : null,
    segmentsAfter: live.size,
  });
  const liveSegments = used.filter((s) => live.has(segmentId(s)));
  const verdict = await verdictOf(part, io, part.progress().before ?? after, after, used, liveSegments);
  if (verdict.kind === "superseded") {
    // Not the compaction's doing: the data served is the other writer's, which is theirs to answer for.
    await part.save({
      step: "done",
      outcome: "superseded",
      note: `the chunk was replaced by another writer since it was measured (version ${verdict.versions.join(", ")}; ${verdict.changed}): nothing to compare the compaction with`,
    });
    return;
  }
  if (verdict.kind === "rewritten") {
    // Another task appended to the chunk after it was measured: measure and compact again.
    throw new TaskRetry(
      `${interval} was rewritten by another task during the compaction (${verdict.changed})`,
      {
        newAttempt: true,
      },
    );
  }
  if (verdict.kind === "changed")
    throw new TaskAbort(`the compaction of ${interval} changed the data: ${verdict.changed}`);
  const still = verdicts.flatMap((v) => v.reasons);
  if (versions.length !== 1 || still.length > 0) {
    throw new TaskAbort(
      `after the compaction ${interval} has ${versions.length} live version(s)${still.length > 0 ? `; ${still.join("; ")}` : ""}`,
    );
  }
  await part.save({ step: "done" });
}

/**
 * The verdict on the totals; the chunk's unused segments are read only when they differ, to tell the
 * compaction's doing from another writer's.
 */
async function verdictOf(
  part: CompactPart,
  io: CompactIO,
  before: ChunkTotals,
  after: ChunkTotals,
  used: readonly DataSegment[],
  live: readonly DataSegment[],
): Promise<CompactionVerdict> {
  if (sameData(before, after, rolledUp(live)) === null) return { kind: "same" };
  const { payload } = part;
  const chunk = parseInterval(payload.interval);
  const unused = await io.client.unusedSegments(payload.datasource, payload.interval, part.call);
  const seen = [...used, ...unused.map((u) => u.segment)].filter((s) =>
    overlaps(parseInterval(s.interval), chunk),
  );
  // Before measure recorded its versions, the planned inputs' versions stand for them.
  const inputs = new Set(payload.inputs);
  const measured = part.progress().measured ?? [
    ...new Set(seen.filter((s) => inputs.has(segmentId(s))).map((s) => s.version)),
  ];
  return compactionVerdict({ before, after, measured, live, seen });
}
