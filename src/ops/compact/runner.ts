import type { Runner } from "../../driver/runner.js";
import type { DruidServices } from "../../work/services.js";
import { taskIO } from "../druid-task.js";
import { readCompactionBudget } from "../slots.js";
import { type StepTable, stepRunner } from "../step-table.js";
import type { CompactPayload } from "./plan.js";
import { auditCompaction } from "./steps/audit.js";
import type { CompactIO } from "./steps/chunk.js";
import { measureChunk, startAttempt } from "./steps/measure.js";
import { awaitCompaction } from "./steps/running.js";
import { awaitServed } from "./steps/served.js";
import { submitCompaction } from "./steps/submit.js";
import { COMPACT_ENCODING, type CompactProgress } from "./types.js";

/**
 * One chunk's compaction as steps, each safe to repeat after a crash: `measure` the chunk's rows and
 * column totals through the Broker (once every live segment is served, or the totals would be partial),
 * `submit` the `compact` task under its pinned id (input segments + attempt: a duplicate is a reattach),
 * follow it while `running`, wait until its segments are `served`, then `audit`: the same rows and totals
 * (compaction must never change data), one live version, no segment still flagged.
 */
export const COMPACT_STEPS: StepTable<CompactPayload, CompactProgress, CompactIO> = {
  encoding: COMPACT_ENCODING,
  first: "measure",
  prepare: startAttempt,
  steps: [
    ["measure", measureChunk],
    ["submit", submitCompaction],
    ["running", awaitCompaction],
    ["served", awaitServed],
    ["audit", auditCompaction],
  ],
};

export function compactRunner(services: DruidServices): Runner {
  // Druid's own budget for compaction tasks (compactionTaskSlotRatio of the slots, at most
  // maxCompactionTaskSlots) caps how many of ours run at Druid at once.
  const io = taskIO(services, readCompactionBudget, { budgetName: "compaction budget", taskType: "compact" });
  return stepRunner(services, COMPACT_STEPS, io, io.tasks.hooks("submit", "measure"));
}
