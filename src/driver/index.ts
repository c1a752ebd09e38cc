export { defaultTaskBackoff, TASK_BACKOFF, taskBackoff } from "./backoff.js";
export { type DrainOptions, type DrainResult, drain } from "./drain.js";
export { Driver, type DriverLog, type DriverOptions, type DriverState } from "./driver.js";
export { type StopReason, TaskStopped } from "./in-flight.js";
export { type KindOfWork, kindOf, type PartitionView, payloadOf, progressOf } from "./kind.js";
export { decide, type RunResult } from "./outcome.js";
export { DriverConfigError, type Runner, type TaskContext } from "./runner.js";
export {
  asSignal,
  type RetryOptions,
  type Signal,
  type SignalKind,
  TaskAbort,
  TaskDefer,
  TaskProgress,
  TaskRetry,
} from "./signals.js";
