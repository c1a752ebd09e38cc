import { TaskAbort, TaskProgress } from "../../../driver/signals.js";
import { abortWhenOverdue, type OpsIO, usedAndServed } from "../../step-table.js";
import { chunkRestored } from "../plan.js";
import { type RollbackPart, stopOnUnplanned } from "./guard.js";

/**
 * Waits until the target is served and no newer version is used: while the newer version is still
 * announced, queries read it and not the restored one, so the restored version shows in the served view
 * only once the newer one is dropped. A newer version used again means an ingestion ran meanwhile.
 */
export async function awaitRestored(part: RollbackPart, io: OpsIO): Promise<void> {
  const { datasource, interval, toVersion } = part.payload;
  const { used, served } = await usedAndServed(io, datasource, interval, part.call);
  await stopOnUnplanned(part, used);
  const check = chunkRestored(part.payload, used, served);
  if (check.stillUsedNewer.length > 0) {
    throw new TaskAbort(
      `a newer version is used again in ${interval} (${check.stillUsedNewer.join(", ")}): an ingestion ran during the rollback; roll back again once it has finished`,
    );
  }
  if (!check.restored) {
    abortWhenOverdue(
      io,
      part.progress().markedAt,
      (s) =>
        `version ${toVersion} of ${interval} not served ${s} s after it was marked used: ${check.waitingFor.join(", ")}`,
    );
    // Marked used but not loaded yet (the Coordinator assigns it at its next run): keep waiting.
    if ((part.progress().waitingFor ?? []).join() !== check.waitingFor.join())
      await part.save({ waitingFor: check.waitingFor });
    throw new TaskProgress(
      `waiting for ${check.waitingFor.length} segment(s) of ${toVersion} to be served`,
      io.settings.tickMs,
    );
  }
  await part.save({ step: "audit", servedAt: io.clock.now(), waitingFor: [] });
}
