export * from "./gates.js";
export { ingestKind } from "./kind.js";
export {
  AttemptFailed,
  INGEST_KIND,
  type IngestPayload,
  type IngestProgress,
  type IngestRunnerOptions,
  type IngestStep,
  type IngestSummary,
  ingestRunner,
} from "./runner.js";
export { ingestPayloadSchema, ingestProgressSchema } from "./schemas.js";
export { slotsForSpec } from "./slots.js";
export type { Attempt, Step, StepIO } from "./steps/attempt.js";
export { submitNative } from "./steps/submit.js";
