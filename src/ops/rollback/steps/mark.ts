import type { OpsIO } from "../../step-table.js";
import { type RollbackPart, stopOnUnplanned } from "./guard.js";

/**
 * Marks the target version used (Druid's markUsed refuses overshadowed segments: the newer versions went
 * first), and records when, for the handoff timeout.
 */
export async function markTarget(part: RollbackPart, io: OpsIO): Promise<void> {
  const { datasource, interval, toVersion } = part.payload;
  await stopOnUnplanned(part, await io.client.metadataSegments(datasource, [interval], part.call));
  const marked = await io.client.markSegments(
    datasource,
    "used",
    { interval, versions: [toVersion] },
    part.call,
  );
  await part.save({ step: "served", marked, markedAt: io.clock.now() });
}
