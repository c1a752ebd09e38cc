export * from "./gates.js";
export { ingestKind } from "./kind.js";
export { AttemptFailed, type IngestRunnerOptions, ingestRunner } from "./runner.js";
export { ingestPayloadSchema, ingestProgressSchema } from "./schemas.js";
export { slotsForSpec } from "./slots.js";
export type { Attempt, Step, StepIO } from "./steps/attempt.js";
export { submitNative } from "./steps/submit.js";
export {
  INGEST_KIND,
  type IngestPayload,
  type IngestProgress,
  type IngestStep,
  type IngestSummary,
} from "./types.js";
