import { TaskAbort } from "../../driver/signals.js";
import { type Baseline, readBaselineAndLive } from "../handoff.js";
import type { LiveData } from "../preflight.js";
import { type Attempt, describeError, isFatal, type StepIO } from "./attempt.js";
import { preflight } from "./preflight.js";

/**
 * Before anything is submitted: record this attempt's id with the baseline (what the interval holds
 * now), so that a resubmit after a crash is a duplicate that reattaches, never a second ingestion, and our
 * segments can later be told apart. A baseline proves what is ours only if it was read before the task
 * existed, so Druid is asked first: an id it already knows was submitted by someone else with the same
 * spec (another job or ledger), and the baseline is then marked untrusted. A new attempt of a replace over
 * live data passes the pre-flight first (steps/preflight.ts): an input that yields nothing is refused here.
 */
export async function prepareAttempt(a: Attempt, io: StepIO): Promise<void> {
  const p = a.progress();
  if (p.taskId === a.taskId) return;
  const known = await io.batcher.get(a.taskId, a.call.signal);
  let baseline: Baseline;
  let live: LiveData;
  try {
    ({ baseline, live } = await readBaselineAndLive(
      io.client,
      a.payload.datasource,
      a.interval,
      a.call.signal,
    ));
  } catch (error) {
    if (isFatal(error)) throw new TaskAbort(`cannot read existing segments: ${describeError(error)}`);
    throw error;
  }
  // An id Druid knows is already at work there: nothing to check before it; only new work is sampled.
  const evidence = known.state === "UNKNOWN" ? await preflight(a, io, live) : null;
  await a.save({
    step: "submit",
    taskId: a.taskId,
    attempt: a.task.attempt,
    baseline,
    baselineTrusted: known.state === "UNKNOWN",
    taskIds: [...(p.taskIds ?? []), a.taskId],
    version: null,
    versionProof: null,
    reattached: false,
    druidState: null,
    forgotten: 0,
    liveBefore: live,
    ...(evidence ? { preflight: evidence } : {}),
  });
}
