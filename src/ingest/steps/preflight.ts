import { TaskAbort } from "../../driver/signals.js";
import { isDruidError } from "../../druid/errors.js";
import type { LiveData } from "../../work/timeline.js";
import {
  describeInputSource,
  judgeSample,
  needsPreflight,
  type PreflightEvidence,
  refusal,
  type SampleAnswer,
  samplerSpecOf,
} from "../preflight.js";
import { type Attempt, describeError, type StepIO } from "./attempt.js";

/**
 * Before a new attempt of a replace over live data is submitted: Druid's sampler reads the partition's
 * input, and an input that provably yields no row of the interval is refused — nothing submitted, the live
 * data untouched, the evidence in the partition's progress (`outcome: "refused-empty"`, `preflight`). A
 * sampler that is unavailable or refuses the sample falls back to the gates; one that fails for a while
 * (5xx, unreachable) is retried like any Druid call.
 */
export async function preflight(a: Attempt, io: StepIO, live: LiveData): Promise<PreflightEvidence | null> {
  if (!needsPreflight(a.payload, live)) return null;
  const request = samplerSpecOf(a.payload);
  const state = io.preflight;
  if (!request || !state || state.unavailable !== null) return null;
  const started = io.clock.now();
  let answer: SampleAnswer;
  try {
    answer = await io.client.sample(request.spec as never, a.call);
  } catch (error) {
    // Druid stops reading at its own budget and answers; one that does not answer well past it is not
    // made to hold the partition (the gates still decide), while an unreachable Druid is retried as usual.
    const noAnswer = isDruidError(error) && error.code === "Transient" && error.status === undefined;
    const timedOut = noAnswer && /did not answer within/.test(error.druidMessage ?? "");
    if (!isDruidError(error) || (error.retryable && !timedOut)) throw error;
    const unavailable =
      error.code === "NotFound" ||
      error.code === "Unauthorized" ||
      error.code === "Forbidden" ||
      error.status === 405;
    if (unavailable) {
      state.unavailable = describeError(error);
      a.note(
        "preflight",
        `Druid's sampler is unavailable (${state.unavailable}): replaces are checked by the data gates only`,
      );
    } else {
      a.note(
        "preflight",
        `Druid could not sample the input (${describeError(error)}): the data gates decide`,
      );
    }
    return null;
  }
  const evidence = judgeSample(answer, a.interval, live, io.clock.now() - started, request.timed);
  const refused = refusal(evidence, a.interval, describeInputSource(a.payload));
  if (refused) {
    await a.save({ outcome: "refused-empty", preflight: evidence });
    a.note("refused", refused);
    throw new TaskAbort(refused);
  }
  return evidence;
}
