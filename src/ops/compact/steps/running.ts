import { TaskRetry } from "../../../driver/signals.js";
import { compactTaskId } from "../types.js";
import type { CompactIO, CompactPart } from "./chunk.js";

/**
 * Follows the compact task to its end. A failure because the chunk's data went away since planning
 * (dropped, marked unused) leaves nothing to compact: done. Any other failure (an ingestion took the lock:
 * it has the higher priority) is tried again later, in a new attempt.
 */
export async function awaitCompaction(part: CompactPart, io: CompactIO): Promise<void> {
  const taskId = compactTaskId(part.payload, part.task.attempt);
  const { state, errorMsg } = await io.tasks.ended(part.task.id, taskId, part.call.signal);
  if (state === "FAILED") {
    await part.save({ druidState: state, errorMsg });
    if (
      errorMsg?.includes("No segments found for compaction") ||
      errorMsg?.startsWith("Can't find segments")
    ) {
      await part.save({ step: "done", note: "no segments left to compact" });
      return;
    }
    throw new TaskRetry(`compact task ${taskId} FAILED: ${errorMsg ?? "no errorMsg"}`, { newAttempt: true });
  }
  await part.save({ step: "served", druidState: state, succeededAt: io.clock.now() });
}
