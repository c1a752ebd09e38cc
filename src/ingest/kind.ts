import type { KindOfWork, PartitionView } from "../driver/kind.js";
import type { JsonObject, TaskRow } from "../ledger/types.js";
import type { DruidServices } from "../work/services.js";
import { type IngestJobInput, planIngestJob } from "./plan.js";
import { attemptOver, ingestRunner } from "./runner.js";
import { ingestPayloadSchema, ingestProgressSchema } from "./schemas.js";
import { INGEST_KIND, type IngestPayload, type IngestProgress } from "./types.js";

/** Native batch ingestion (`index_parallel`): one partition = one interval = one Druid task per attempt. */
export const ingestKind: KindOfWork<DruidServices, IngestJobInput> = {
  name: INGEST_KIND,
  jobKinds: ["run", "backfill"],
  plan: planIngestJob,
  payload: ingestPayloadSchema,
  progress: ingestProgressSchema,
  runner: (services) => ingestRunner(services),
  describe(task: TaskRow): PartitionView {
    const p = task.progress as IngestProgress;
    const payload = task.payload as Partial<IngestPayload>;
    return {
      interval: payload.interval ?? "",
      step: p.step ?? null,
      druidTaskId: p.taskId ?? null,
      druidState: p.druidState ?? null,
      version: p.version ?? null,
      rows: p.summary ? (p.summary.rows ?? p.summary.rowsIngested) : null,
      segments: p.summary?.segments ?? null,
      bytes: p.summary?.bytes ?? null,
      rowStats: p.rowStats ?? null,
      parseErrors: p.parseErrors ?? [],
      failures: (p.failures ?? []) as unknown as JsonObject[],
      outcome: p.outcome ?? null,
      sourceVersion: payload.source?.version ?? null,
    };
  },
  activeDruidTasks(task: TaskRow): string[] {
    const p = task.progress as IngestProgress;
    return p.taskId && p.step === "running" && !attemptOver(p) ? [p.taskId] : [];
  },
};
