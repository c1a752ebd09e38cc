import { overlaps, parseInterval } from "../../core/interval.js";
import { TaskAbort, TaskRetry } from "../../driver/signals.js";
import { segmentId } from "../../work/segments.js";
import type { TaskIO } from "../druid-task.js";
import type { Partition } from "../step-table.js";
import { lostItsLock } from "./lock-lost.js";
import type { KillPayload } from "./plan.js";
import { type KillProgress, killTaskId } from "./types.js";

/** One kill batch as its steps see it. */
export type KillPart = Partition<KillPayload, KillProgress>;

/**
 * A new attempt (the last one's kill task lost its lock to another writer) submits again, under its own
 * id: the failed one can never be resubmitted. A partition sent back to run after its kill task FAILED
 * (`segops retry`) moves on to a new attempt first: the same id would only read the same failure.
 */
export async function startKillAttempt(part: KillPart, _io: TaskIO): Promise<void> {
  const p = part.progress();
  // Progress written before attempts were recorded belongs to the first attempt.
  const recorded = p.attempt ?? 1;
  if (p.step === "running" && p.druidState === "FAILED" && recorded === part.task.attempt)
    throw new TaskRetry(
      `kill task ${killTaskId(part.payload, recorded)} FAILED before it was sent back to run: a new attempt under a new id`,
      { newAttempt: true },
    );
  if (p.step === "running" && recorded !== part.task.attempt)
    await part.save({
      step: "submit",
      attempt: part.task.attempt,
      druidTaskId: null,
      druidState: null,
      errorMsg: null,
    });
}

/**
 * Submits the batch's kill task under the attempt's pinned id (a duplicate is the same task: a reattach),
 * within Druid's kill budget and a worker slot (a kill task takes one, like an ingestion: never all at
 * once). Every attempt carries the plan's versions and cut-off, so it deletes only what the plan saw unused.
 */
export async function submitKill(part: KillPart, io: TaskIO): Promise<void> {
  const { payload } = part;
  const taskId = killTaskId(payload, part.task.attempt);
  await io.tasks.submit(part.task.id, taskId, part.call.signal, async () => {
    if (payload.versions === null) await refuseBareChunk(part, io);
    await io.client.submitTask(
      {
        type: "kill",
        id: taskId,
        dataSource: payload.datasource,
        interval: payload.interval,
        ...(payload.versions ? { versions: payload.versions } : {}),
        maxUsedStatusLastUpdatedTime: new Date(payload.maxUsedStatusLastUpdatedTime).toISOString(),
      } as never,
      part.call,
    );
  });
  await part.save({ step: "running", attempt: part.task.attempt, druidTaskId: taskId });
}

/**
 * Checked again just before a kill of every unused version: a rollback (of another ledger, or one that
 * started after the plan) may since have left the chunk with no used version, its unused versions its
 * only copies.
 */
async function refuseBareChunk(part: KillPart, io: TaskIO): Promise<void> {
  const { datasource, interval } = part.payload;
  const used = await io.client.metadataSegments(datasource, [interval], part.call);
  const chunk = parseInterval(interval);
  if (!used.some((s) => overlaps(parseInterval(s.interval), chunk)))
    throw new TaskAbort(
      `refused to kill in ${interval}: no version of it is used any more (a rollback between its marks?), so its unused versions are its only copies; finish the rollback, or name the versions to delete (--version V; "versions" in an API request)`,
    );
}

/**
 * Follows the kill task to its end. One that failed because another writer took its lock (`lostItsLock`)
 * is tried again after the backoff, in a new attempt under a new id, within the partition's retries; any
 * other failed kill is not tried again blindly: it ends the partition.
 */
export async function awaitKill(part: KillPart, io: TaskIO): Promise<void> {
  const taskId = part.progress().druidTaskId ?? killTaskId(part.payload, part.task.attempt);
  const { state, errorMsg } = await io.tasks.ended(part.task.id, taskId, part.call.signal);
  if (state === "FAILED") {
    await part.save({ druidState: state, errorMsg });
    if (lostItsLock(errorMsg))
      throw new TaskRetry(`kill task ${taskId} lost its lock to another writer: ${errorMsg}`, {
        newAttempt: true,
      });
    throw new TaskAbort(`kill task ${taskId} FAILED: ${errorMsg ?? "no errorMsg"}`);
  }
  await part.save({ step: "verify", druidState: state });
}

/**
 * Every planned segment is gone: one still listed unused after the kill task succeeded is checked again
 * after a backoff (the retries bound it); one marked used again since planning was skipped by Druid, as it
 * must be, and so was one marked unused again after the plan's cut-off (used again by a rollback, then
 * overshadowed): the kill deletes only what was unused at the cut-off.
 */
export async function verifyKill(part: KillPart, io: TaskIO): Promise<void> {
  const { datasource, interval, segmentIds, maxUsedStatusLastUpdatedTime } = part.payload;
  const [unused, used] = await Promise.all([
    io.client.unusedSegments(datasource, interval, part.call),
    io.client.metadataSegments(datasource, [interval], part.call),
  ]);
  const remaining = new Set(
    unused
      .filter((u) => u.unusedSince === null || u.unusedSince <= maxUsedStatusLastUpdatedTime)
      .map((u) => segmentId(u.segment)),
  );
  const usedIds = new Set(used.map(segmentId));
  const left = segmentIds.filter((id) => remaining.has(id));
  // Marked used again since planning: Druid's kill skipped it; nothing to do for it.
  if (segmentIds.some((id) => usedIds.has(id))) await part.save({ left: [] });
  if (left.length > 0) {
    await part.save({ left });
    throw new TaskRetry(
      `${left.length} planned segment(s) still unused after the kill task: ${left.slice(0, 3).join(", ")}`,
    );
  }
  await part.save({ step: "done", left: [] });
}
