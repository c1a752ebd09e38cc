import { opsKind } from "../kind.js";
import { type KillFacts, type KillPayload, planKill } from "./plan.js";
import { killRequest } from "./request.js";
import { killRunner } from "./runner.js";
import { KILL_ENCODING, type KillProgress, killTaskId } from "./types.js";

/** The kill task of the partition's current attempt (rows from before attempts were recorded: the first). */
const currentTaskId = (payload: Partial<KillPayload>, p: KillProgress): string | null =>
  p.druidTaskId ?? (payload.taskId ? killTaskId({ taskId: payload.taskId }, p.attempt ?? 1) : null);

/** Deleting unused segments: one partition per batch, one pinned kill task per attempt. */
export const killKind = opsKind<KillFacts, KillPayload, KillProgress>({
  encoding: KILL_ENCODING,
  plan: planKill,
  runner: killRunner,
  view: (payload, p) => ({
    druidTaskId: p.step && p.step !== "submit" ? currentTaskId(payload, p) : null,
    druidState: p.druidState ?? null,
    segments: payload.segmentIds?.length ?? null,
    bytes: payload.bytes ?? null,
  }),
  request: killRequest,
  activeDruidTasks: (payload, p) => {
    const taskId = currentTaskId(payload, p);
    // A FAILED kill task (its attempt over, the next one not yet submitted) has nothing left to stop.
    return p.step === "running" && p.druidState !== "FAILED" && taskId ? [taskId] : [];
  },
});
