import { opsKind } from "../kind.js";
import { type KillFacts, type KillPayload, planKill } from "./plan.js";
import { killRequest } from "./request.js";
import { killRunner } from "./runner.js";
import { KILL_ENCODING, type KillProgress } from "./types.js";

/** Deleting unused segments: one partition per batch, one pinned kill task each. */
export const killKind = opsKind<KillFacts, KillPayload, KillProgress>({
  encoding: KILL_ENCODING,
  plan: planKill,
  runner: killRunner,
  view: (payload, p) => ({
    druidTaskId: p.step && p.step !== "submit" ? (payload.taskId ?? null) : null,
    druidState: p.druidState ?? null,
    segments: payload.segmentIds?.length ?? null,
    bytes: payload.bytes ?? null,
  }),
  request: killRequest,
  activeDruidTasks: (payload, p) => (p.step === "running" && payload.taskId ? [payload.taskId] : []),
});
