import { TaskProgress } from "../../../driver/signals.js";
import { abortWhenOverdue } from "../../step-table.js";
import { type CompactIO, type CompactPart, judgedChunk, notServed } from "./chunk.js";

/** Waits until the compacted segments are served (the audit reads through the Broker), or gives up. */
export async function awaitServed(part: CompactPart, io: CompactIO): Promise<void> {
  const unserved = notServed((await judgedChunk(part, io)).report);
  if (unserved !== null) {
    abortWhenOverdue(
      io,
      part.progress().succeededAt,
      (s) =>
        `the compacted segments of ${part.payload.interval} are not served ${s} s after the task succeeded: ${unserved}`,
    );
    throw new TaskProgress(`waiting for the compacted segments to be served`, io.settings.tickMs);
  }
  await part.save({ step: "audit" });
}
