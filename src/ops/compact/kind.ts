import type { KindOfWork, PartitionView } from "../../driver/kind.js";
import type { TaskRow } from "../../ledger/types.js";
import type { DruidServices } from "../../work/services.js";
import { COMPACT_KIND, type CompactFacts, type CompactPayload, planCompaction } from "./plan.js";
import { compactRunner } from "./runner.js";
import { type CompactProgress, compactPayloadSchema, compactProgressSchema } from "./types.js";

/** Compacting fragmented time chunks: one partition per chunk, one `compact` task per attempt. */
export const compactKind: KindOfWork<DruidServices, CompactFacts> = {
  name: COMPACT_KIND,
  plan: (facts) => {
    const { job, tasks } = planCompaction(facts);
    return { job, tasks };
  },
  payload: compactPayloadSchema,
  progress: compactProgressSchema,
  runner: (services) => compactRunner(services),
  describe(task: TaskRow): PartitionView {
    const payload = task.payload as Partial<CompactPayload>;
    const p = task.progress as CompactProgress;
    return {
      interval: payload.interval ?? "",
      step: p.step ?? null,
      druidTaskId: p.druidTaskId ?? null,
      druidState: p.druidState ?? null,
      version: p.liveVersion ?? null,
      rows: p.after?.rows ?? p.before?.rows ?? null,
      segments: p.segmentsAfter ?? payload.inputs?.length ?? null,
      bytes: payload.bytes ?? null,
      rowStats: null,
      parseErrors: [],
      failures: p.errorMsg ? [{ taskId: p.druidTaskId ?? "", errorMsg: p.errorMsg }] : [],
      // `superseded`: another writer replaced the chunk after it was measured.
      outcome: p.outcome ?? null,
    };
  },
  activeDruidTasks(task: TaskRow): string[] {
    const p = task.progress as CompactProgress;
    return p.step === "running" && p.druidTaskId ? [p.druidTaskId] : [];
  },
};
