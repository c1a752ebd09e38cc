import { overlaps, parseInterval } from "../../../core/interval.js";
import { TaskDefer } from "../../../driver/signals.js";
import { chunkTotals } from "../totals.js";
import { type CompactIO, type CompactPart, judgedChunk, notServed } from "./chunk.js";

/**
 * A new attempt (the last one's lock was taken, or the chunk changed under it) starts over: its totals
 * are measured again, under a new Druid task id.
 */
export async function startAttempt(part: CompactPart, _io: CompactIO): Promise<void> {
  const p = part.progress();
  if (p.attempt !== part.task.attempt && p.step !== undefined && p.step !== "measure")
    await part.save({ step: "measure", attempt: part.task.attempt, druidTaskId: null, druidState: null });
}

/**
 * Records the chunk's rows and column totals, and the versions they are of, once no running task locks
 * it and every live segment is served (Broker SQL counts only served data: the totals would be partial).
 */
export async function measureChunk(part: CompactPart, io: CompactIO): Promise<void> {
  const { datasource, interval } = part.payload;
  const chunk = parseInterval(interval);
  const locked = await io.client.lockedIntervals(datasource, { intervals: [interval], ...part.call });
  if (locked.some((l) => overlaps(parseInterval(l), chunk)))
    throw new TaskDefer(`a running task holds a lock on ${interval}`, io.settings.tickMs * 10);
  const { report } = await judgedChunk(part, io);
  const unserved = notServed(report);
  if (unserved !== null)
    throw new TaskDefer(`waiting until the chunk is served to measure it: ${unserved}`, io.settings.tickMs);
  const before = await chunkTotals(io.client, datasource, chunk, part.call.signal);
  const measured = [...new Set(report.chunks.flatMap((c) => c.liveVersions))].sort();
  await part.save({ step: "submit", attempt: part.task.attempt, before, measured });
}
