import { compactTaskId } from "../types.js";
import type { CompactIO, CompactPart } from "./chunk.js";

/**
 * Submits the chunk's `compact` task under its pinned id (input segments + attempt: a duplicate is a
 * reattach), within Druid's compaction budget and a worker slot.
 */
export async function submitCompaction(part: CompactPart, io: CompactIO): Promise<void> {
  const { payload } = part;
  const taskId = compactTaskId(payload, part.task.attempt);
  await io.tasks.submit(part.task.id, taskId, part.call.signal, () =>
    io.client.submitTask(
      {
        type: "compact",
        id: taskId,
        dataSource: payload.datasource,
        ioConfig: { type: "compact", inputSpec: { type: "interval", interval: payload.interval } },
        tuningConfig: {
          type: "index_parallel",
          partitionsSpec: { type: "dynamic", maxRowsPerSegment: payload.maxRowsPerSegment },
        },
      } as never,
      part.call,
    ),
  );
  await part.save({ step: "running", druidTaskId: taskId });
}
