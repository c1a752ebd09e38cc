/**
 * The Druid emulator: a faithful-enough Overlord + Coordinator + Broker SQL on one port (like a Router),
 * driven by an injectable clock, for testing segops without a cluster. See docs/emulator.md.
 */
export type { SimEngine } from "./engine.js";
export type { FaultRule } from "./faults.js";
export type { SimOptions } from "./options.js";
export { LOST_WORKER_MESSAGE } from "./persistence.js";
export { type SimHandle, startSim } from "./server.js";
export type { SimStatsSnapshot, SubmissionRecord, TaskEvent } from "./stats.js";
export type { SimTask, TaskPhase } from "./task.js";
