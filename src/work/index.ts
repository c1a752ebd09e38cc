export {
  type AdmissionDecision,
  type AdmissionInput,
  decideAdmission,
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
export { chunkExclusionKey } from "./chunk.js";
export { type AttemptFailure, classifyTaskFailure, type FailureClass, isPoisoned } from "./failure.js";
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
export * from "./load-rules.js";
export { segmentId, toTimelineSegment } from "./segments.js";
export { type DruidServices, handlerConcurrency, type JobSettings, jobSettingsOf } from "./services.js";
export {
  StatusBatcher,
  type StatusBatcherOptions,
  type StatusLookup,
  type StatusResult,
  type TaskStatusSnapshot,
} from "./status-batcher.js";
export {
  type LiveData,
  liveDataOf,
  liveTimeline,
  type TimelinePiece,
  type TimelineSegment,
} from "./timeline.js";
