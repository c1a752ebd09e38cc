import type { KindOfWork, PartitionView } from "../../driver/kind.js";
import type { TaskRow } from "../../ledger/types.js";
import type { DruidServices } from "../../work/services.js";
import { KILL_KIND, type KillFacts, type KillPayload, planKill } from "./plan.js";
import { type KillProgress, killPayloadSchema, killProgressSchema, killRunner } from "./runner.js";

/** Deleting unused segments: one partition per batch, one pinned kill task each. */
export const killKind: KindOfWork<DruidServices, KillFacts> = {
  name: KILL_KIND,
  plan: (facts) => {
    const { job, tasks } = planKill(facts);
    return { job, tasks };
  },
  payload: killPayloadSchema,
  progress: killProgressSchema,
  runner: (services) => killRunner(services),
  describe(task: TaskRow): PartitionView {
    const payload = task.payload as Partial<KillPayload>;
    const p = task.progress as KillProgress;
    return {
      interval: payload.interval ?? "",
      step: p.step ?? null,
      druidTaskId: p.step && p.step !== "submit" ? (payload.taskId ?? null) : null,
      druidState: p.druidState ?? null,
      version: null,
      rows: null,
      segments: payload.segmentIds?.length ?? null,
      bytes: payload.bytes ?? null,
      rowStats: null,
      parseErrors: [],
      failures: [],
    };
  },
  activeDruidTasks(task: TaskRow): string[] {
    const p = task.progress as KillProgress;
    const payload = task.payload as Partial<KillPayload>;
    return p.step === "running" && payload.taskId ? [payload.taskId] : [];
  },
};
