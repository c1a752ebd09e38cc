import { TaskAbort, TaskDefer } from "../../driver/signals.js";
import type { TaskSpec } from "../../druid/client.js";
import { isDruidError } from "../../druid/errors.js";
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
    if (isDruidError(error) && error.code === "Capacity") {
      // 429 "task queue full" is backpressure, not a failure: admission pauses, this partition waits its
      // turn again (no retry used), and the ones behind it are not submitted into a full queue.
      const delay = error.retryAfterMs ?? io.settings.tickMs * 5;
      io.admission?.untrack(a.task.id);
      io.admission?.pause(io.clock.now() + delay);
      a.note("backpressure", `Druid's task queue is full (429); waiting ${Math.round(delay)} ms`);
      throw new TaskDefer(`Druid's task queue is full (429): submission deferred`, delay);
    }
    throw error;
  }
};
