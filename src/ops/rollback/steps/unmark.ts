import { TaskAbort } from "../../../driver/signals.js";
import { segmentId } from "../../../work/segments.js";
import type { OpsIO } from "../../step-table.js";
import { type RollbackPart, stopOnUnplanned } from "./guard.js";

/**
 * Marks the planned newer versions unused, once the target is known to be all there still (used or
 * unused): a kill since the plan would leave nothing to restore, and then nothing is changed.
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
  const unmarked =
    newerVersions.length === 0
      ? 0
      : await io.client.markSegments(datasource, "unused", { interval, versions: newerVersions }, part.call);
  await part.save({ step: "mark", unmarked });
}
