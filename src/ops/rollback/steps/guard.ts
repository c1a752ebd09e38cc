import { TaskAbort } from "../../../driver/signals.js";
import type { DataSegment } from "../../../druid/types.js";
import type { Partition } from "../../step-table.js";
import { newerPublished, type RollbackPayload, unplannedNewer } from "../plan.js";
import type { RollbackProgress } from "../types.js";

/** One chunk's rollback as its steps see it. */
export type RollbackPart = Partition<RollbackPayload, RollbackProgress>;

/**
 * The chunk re-read before each mark: only the versions planned are marked unused, and a version newer
 * than the target that the plan did not name (an ingestion published it since) stops the rollback, which
 * would otherwise hide new data and report done.
 */
export async function stopOnUnplanned(part: RollbackPart, used: readonly DataSegment[]): Promise<void> {
  const unplanned = unplannedNewer(part.payload, used);
  if (unplanned.length === 0) return;
  const message = newerPublished(part.payload, unplanned);
  // Recorded, so the chunk is not taken for one a rollback left between its marks: newer data is live.
  await part.save({ stopped: message });
  throw new TaskAbort(message);
}
