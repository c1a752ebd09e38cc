import type { Runner } from "../../driver/runner.js";
import type { DruidServices } from "../../work/services.js";
import { type TaskIO, taskIO } from "../druid-task.js";
import { readKillBudget } from "../slots.js";
import { type StepTable, stepRunner } from "../step-table.js";
import type { KillPayload } from "./plan.js";
import { awaitKill, startKillAttempt, submitKill, verifyKill } from "./steps.js";
import { KILL_ENCODING, type KillProgress } from "./types.js";

/**
 * One kill batch as steps: `submit` the kill task under its pinned id (a crash after the submit resubmits
 * it: Druid's duplicate answer is a reattach), follow it while `running` (bulk status, one slot admitted
 * like any task), then `verify` that every planned segment is gone and nothing used was touched. A kill
 * task whose lock another writer took is submitted again in a new attempt, under that attempt's id.
 */
export const KILL_STEPS: StepTable<KillPayload, KillProgress, TaskIO> = {
  encoding: KILL_ENCODING,
  first: "submit",
  prepare: startKillAttempt,
  steps: [
    ["submit", submitKill],
    ["running", awaitKill],
    ["verify", verifyKill],
  ],
};

export function killRunner(services: DruidServices): Runner {
  // Druid's budget for kill tasks (killTaskSlotRatio of the slots, at most maxKillTaskSlots) caps how
  // many of ours run at Druid at once, in every process that runs kills (the CLI and serve alike).
  const io = taskIO(services, readKillBudget, { budgetName: "kill task budget", taskType: "kill" });
  return stepRunner(services, KILL_STEPS, io, io.tasks.hooks("submit", "submit"));
}
