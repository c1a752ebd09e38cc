export { type IngestJobInput, jobIdFor, type PlannedJob, planIngestJob } from "../ingest/plan.js";
export {
  type EngineOptions,
  type EngineResult,
  jobStateFor,
  runIngestJob,
  runJob,
  settleJob,
  statusLookupFor,
} from "./engine.js";
export { KINDS } from "./kinds.js";
export { type PolledTask, type PollOptions, type PollOutcome, pollTasks } from "./poll.js";
export {
  exitCodeFor,
  formatJobReport,
  type JobReport,
  jobReport,
  type PartitionReport,
  partitionReport,
} from "./report.js";
