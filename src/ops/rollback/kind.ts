import { opsKind } from "../kind.js";
import { planRollback, type RollbackFacts, type RollbackPayload } from "./plan.js";
import { rollbackRequest } from "./request.js";
import { rollbackRunner } from "./runner.js";
import { ROLLBACK_ENCODING, type RollbackProgress } from "./types.js";

/** Rolling a datasource's interval back to an earlier version: one partition per time chunk of it. */
export const rollbackKind = opsKind<RollbackFacts, RollbackPayload, RollbackProgress>({
  encoding: ROLLBACK_ENCODING,
  plan: planRollback,
  runner: rollbackRunner,
  view: (payload, p) => ({
    ...(inRollback(p)
      ? {
          step: `${p.step}: in rollback, the chunk between its marks (newer versions unused, ${payload.toVersion ?? "the target"} not used again yet); resume the job to finish it before anything else touches the chunk`,
        }
      : {}),
    version: p.step === "done" ? (payload.toVersion ?? null) : null,
    segments: payload.segmentIds?.length ?? null,
    // Stopped because newer data appeared during it: that data is live, not the rollback's.
    outcome: p.stopped ? "superseded" : null,
  }),
  // Segment marks are metadata updates, not Druid tasks: nothing to shut down.
  request: rollbackRequest,
  activeDruidTasks: () => [],
});

/**
 * Between the marks: some newer version already unused, the target not yet used again, so the chunk may
 * serve nothing (a kill refuses it; `status` and the dashboard say so).
 */
function inRollback(p: RollbackProgress): boolean {
  return (p.step === "unmark" && (p.unmarked ?? 0) > 0) || p.step === "mark";
}
