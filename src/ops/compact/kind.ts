import { opsKind } from "../kind.js";
import { type CompactFacts, type CompactPayload, planCompaction } from "./plan.js";
import { compactRequest } from "./request.js";
import { compactRunner } from "./runner.js";
import { COMPACT_ENCODING, type CompactProgress } from "./types.js";

/** Compacting fragmented time chunks: one partition per chunk, one `compact` task per attempt. */
export const compactKind = opsKind<CompactFacts, CompactPayload, CompactProgress>({
  encoding: COMPACT_ENCODING,
  plan: planCompaction,
  runner: compactRunner,
  view: (payload, p) => ({
    druidTaskId: p.druidTaskId ?? null,
    druidState: p.druidState ?? null,
    version: p.liveVersion ?? null,
    rows: p.after?.rows ?? p.before?.rows ?? null,
    segments: p.segmentsAfter ?? payload.inputs?.length ?? null,
    bytes: payload.bytes ?? null,
    failures: p.errorMsg ? [{ taskId: p.druidTaskId ?? "", errorMsg: p.errorMsg }] : [],
    // `superseded`: another writer replaced the chunk after it was measured.
    outcome: p.outcome ?? null,
  }),
  request: compactRequest,
  activeDruidTasks: (_payload, p) => (p.step === "running" && p.druidTaskId ? [p.druidTaskId] : []),
});
