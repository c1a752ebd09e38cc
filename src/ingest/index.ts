export {
  type AdmissionDecision,
  type AdmissionInput,
  decideAdmission,
  slotsForSpec,
  type WorkerSnapshot,
} from "./admission.js";
export { AdmissionTracker } from "./admission-tracker.js";
export {
  type AuditExpectation,
  type AuditInput,
  type AuditReport,
  auditTimeline,
  type ChunkAudit,
  type CompactionCandidate,
  DEFAULT_SIZE_BAND,
  type SizeBand,
  type Violation,
  type ViolationKind,
} from "./audit.js";
export { type AttemptFailure, classifyTaskFailure, type FailureClass, isPoisoned } from "./failure.js";
export * from "./gates.js";
export {
  type Baseline,
  HandoffChecker,
  type HandoffCheckerOptions,
  type HandoffQuestion,
  type HandoffVerdict,
  handoffVerdict,
  identifyOurs,
  readBaseline,
} from "./handoff.js";
export { type DruidServices, ingestKind } from "./kind.js";
export * from "./load-rules.js";
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
export { segmentId, toTimelineSegment } from "./segments.js";
export {
  StatusBatcher,
  type StatusBatcherOptions,
  type StatusLookup,
  type StatusResult,
  type TaskStatusSnapshot,
} from "./status-batcher.js";
export type { Attempt, Step, StepIO } from "./steps/attempt.js";
export { submitNative } from "./steps/submit.js";
export { liveTimeline, type TimelinePiece, type TimelineSegment } from "./timeline.js";
