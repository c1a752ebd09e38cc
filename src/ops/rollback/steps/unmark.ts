import { TaskAbort, TaskDefer } from "../../../driver/signals.js";
import { segmentId } from "../../../work/segments.js";
import type { OpsIO } from "../../step-table.js";
import { type RollbackPart, stopOnUnplanned } from "./guard.js";

/**
 * Marks the planned newer versions unused, once the target is known to be all there still (used or
 * unused): a kill since the plan would leave nothing to restore, and then nothing is changed. Not while
 * Druid runs a kill task of the datasource (see `deferWhileKilling`).
 */
export async function unmarkNewer(part: RollbackPart, io: OpsIO): Promise<void> {
  const { datasource, interval, toVersion, segmentIds, newerVersions } = part.payload;
  const [used, unused] = await Promise.all([
    io.client.metadataSegments(datasource, [interval], part.call),
    io.client.unusedSegments(datasource, interval, part.call),
  ]);
  await stopOnUnplanned(part, used);
  const present = new Set([...used.map(segmentId), ...unused.map((u) => segmentId(u.segment))]);
  const gone = segmentIds.filter((id) => !present.has(id));
  if (gone.length > 0)
    throw new TaskAbort(
      `version ${toVersion} of ${interval} lost ${gone.length} segment(s) since the rollback was planned (killed?): ${gone.slice(0, 3).join(", ")}; nothing was changed`,
    );
  if (newerVersions.length === 0) return part.save({ step: "mark", unmarked: 0 });
  await deferWhileKilling(part, io);
  const unmarked = await io.client.markSegments(
    datasource,
    "unused",
    { interval, versions: newerVersions },
    part.call,
  );
  // A kill submitted between the check and the mark (another ledger's, another tool's, Druid's own) could
  // delete the target while nothing is used: the newer versions are used again until it has ended.
  const killing = await activeKills(part, io);
  if (killing.length > 0) {
    await io.client.markSegments(datasource, "used", { interval, versions: newerVersions }, part.call);
    throw new TaskDefer(waitingFor(part, killing), io.settings.tickMs * 10);
  }
  await part.save({ step: "mark", unmarked });
}

/**
 * Between its marks a chunk has no used version, and a kill task deletes every unused segment it may: the
 * target too. Nothing serialises the rollback's marks (Coordinator calls, no Druid lock) with a kill of
 * another ledger, so the rollback waits while Druid runs any kill task of the datasource (its task list does
 * not say a task's interval).
 */
async function deferWhileKilling(part: RollbackPart, io: OpsIO): Promise<void> {
  const killing = await activeKills(part, io);
  if (killing.length > 0) throw new TaskDefer(waitingFor(part, killing), io.settings.tickMs * 10);
}

/** Kill tasks of the datasource Druid has not finished (pending, waiting or running). */
async function activeKills(part: RollbackPart, io: OpsIO): Promise<string[]> {
  // `max: 0`: no complete task, only the active ones (docs/druid-api.md §2.5).
  const tasks = await io.client.tasks(
    { datasource: part.payload.datasource, type: "kill", max: 0 },
    part.call,
  );
  return tasks.filter((t) => t.statusCode === "RUNNING").map((t) => t.id);
}

function waitingFor(part: RollbackPart, killing: readonly string[]): string {
  return `waiting for Druid's kill task(s) of ${part.payload.datasource} to end before leaving ${part.payload.interval} with no used version: ${killing.slice(0, 3).join(", ")}`;
}
