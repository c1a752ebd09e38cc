import { parseInterval } from "../../../core/interval.js";
import { TaskAbort } from "../../../driver/signals.js";
import { auditTimeline } from "../../../work/audit.js";
import { toTimelineSegment } from "../../../work/segments.js";
import { type OpsIO, usedAndServed } from "../../step-table.js";
import type { RollbackPart } from "./guard.js";

/** The target is the chunk's one live version, served, with nothing else wrong in the chunk's timeline. */
export async function auditRollback(part: RollbackPart, io: OpsIO): Promise<void> {
  const { datasource, interval, toVersion } = part.payload;
  const { used, served } = await usedAndServed(io, datasource, interval, part.call);
  const report = auditTimeline({
    datasource,
    interval: parseInterval(interval),
    segments: used.map((s) => toTimelineSegment(s, served)),
  });
  const live = [...new Set(report.chunks.flatMap((c) => c.liveVersions))];
  const ok = report.ok && live.length === 1 && live[0] === toVersion;
  await part.save({ step: ok ? "done" : "audit", audit: { ok, liveVersions: live } });
  if (!ok) {
    throw new TaskAbort(
      `after the rollback ${interval} serves ${live.join(", ") || "no version"}, not only ${toVersion}: ${report.violations.map((v) => v.message).join("; ")}`,
    );
  }
}
