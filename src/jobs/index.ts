export { type EngineOptions, type EngineResult, runIngestJob, statusLookupFor } from "./engine.js";
export { type IngestJobInput, jobIdFor, type PlannedJob, planIngestJob } from "./plan.js";
export { type PolledTask, type PollOptions, type PollOutcome, pollTasks } from "./poll.js";
export {
  exitCodeFor,
  formatJobReport,
  type JobReport,
  jobReport,
  type PartitionReport,
  partitionReport,
} from "./report.js";
