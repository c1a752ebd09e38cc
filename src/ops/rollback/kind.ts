import type { KindOfWork, PartitionView } from "../../driver/kind.js";
import type { TaskRow } from "../../ledger/types.js";
import type { DruidServices } from "../../work/services.js";
import { planRollback, ROLLBACK_KIND, type RollbackFacts, type RollbackPayload } from "./plan.js";
import {
  type RollbackProgress,
  rollbackPayloadSchema,
  rollbackProgressSchema,
  rollbackRunner,
} from "./runner.js";

/** Rolling a datasource's interval back to an earlier version: one partition per time chunk of it. */
export const rollbackKind: KindOfWork<DruidServices, RollbackFacts> = {
  name: ROLLBACK_KIND,
  plan: (facts) => {
    const { job, tasks } = planRollback(facts);
    return { job, tasks };
  },
  payload: rollbackPayloadSchema,
  progress: rollbackProgressSchema,
  runner: (services) => rollbackRunner(services),
  describe(task: TaskRow): PartitionView {
    const payload = task.payload as Partial<RollbackPayload>;
    const p = task.progress as RollbackProgress;
    return {
      interval: payload.interval ?? "",
      step: p.step ?? null,
      druidTaskId: null,
      druidState: null,
      version: p.step === "done" ? (payload.toVersion ?? null) : null,
      rows: null,
      segments: payload.segmentIds?.length ?? null,
      bytes: null,
      rowStats: null,
      parseErrors: [],
      failures: [],
      // Stopped because newer data appeared during it: that data is live, not the rollback's.
      outcome: p.stopped ? "superseded" : null,
    };
  },
  // Segment marks are metadata updates, not Druid tasks: nothing to shut down.
  activeDruidTasks: () => [],
};
