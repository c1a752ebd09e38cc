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
    version: p.step === "done" ? (payload.toVersion ?? null) : null,
    segments: payload.segmentIds?.length ?? null,
    // Stopped because newer data appeared during it: that data is live, not the rollback's.
    outcome: p.stopped ? "superseded" : null,
  }),
  // Segment marks are metadata updates, not Druid tasks: nothing to shut down.
  request: rollbackRequest,
  activeDruidTasks: () => [],
});
