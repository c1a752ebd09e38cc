import { TaskAbort } from "../../driver/signals.js";
import type { TaskSpec } from "../../druid/client.js";
import { type Attempt, describeError, isFatal, type Step, type StepIO } from "./attempt.js";

/**
 * Submits the native task under its pinned id. Druid's "duplicate id" answer means the task is already
 * there (ours, from an earlier try whose answer was lost): reattach. A rejection retrying cannot fix aborts
 * with Druid's words; anything retryable was already retried by the client and goes to the driver's backoff.
 * Other kinds of submission (MSQ's `/druid/v2/sql/task`) plug in here with the same contract.
 */
export const submitNative: Step = async (a: Attempt, io: StepIO): Promise<void> => {
  io.admission?.track(a.task.id, a.payload.slots, a.taskId);
  try {
    const result = await io.client.submitTask({ ...(a.payload.spec as TaskSpec), id: a.taskId }, a.call);
    a.note("submitted", `${a.taskId}${result.outcome === "duplicate" ? " (reattached)" : ""}`);
    await a.save({
      step: "running",
      submittedAt: io.clock.now(),
      reattached: result.outcome === "duplicate",
      ...(result.outcome === "accepted" ? { forgotten: 0 } : {}),
    });
  } catch (error) {
    if (isFatal(error)) throw new TaskAbort(`Druid rejected ${a.taskId}: ${describeError(error)}`);
    throw error;
  }
};
