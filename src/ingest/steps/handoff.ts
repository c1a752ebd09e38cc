import { TaskAbort, TaskProgress } from "../../driver/signals.js";
import type { UnusedSegment } from "../../druid/client.js";
import type { DataSegment } from "../../druid/types.js";
import {
  type HandoffQuestion,
  type HandoffVerdict,
  proveSoleTask,
  supersededBeforeSeen,
} from "../../work/handoff.js";
import { toTimelineSegment } from "../../work/segments.js";
import { type Attempt, describeError, isFatal, rowsIngestedOf, type StepIO } from "./attempt.js";
import { endIfCompactedByDruid } from "./compacted.js";

/**
 * Waits until the data is queryable and provably ours (docs/architecture.md, "How ours is proven"): our
 * version live over the whole interval and every live segment served. Superseded, lost, not provably ours
 * or never loaded under the load rules end the partition with the evidence; past the handoff timeout it
 * fails "SUCCESS but never queryable". A `retry` after a timeout waits afresh.
 */
export async function awaitHandoff(a: Attempt, io: StepIO): Promise<void> {
  // Each round waits for the handoff checker's next tick: the loop is paced by the checker.
  while (await checkOnce(a, io)) {}
}

/**
 * What the handoff gate is asked about this attempt, from its checkpoint. The audit asks the same question of
 * its own reads, so the two steps judge "superseded" by one rule (work/handoff.ts, `handoffVerdict`).
 */
export function handoffQuestion(a: Attempt): HandoffQuestion {
  const p = a.progress();
  const created = p.druidCreatedTime ? Date.parse(p.druidCreatedTime) : Number.NaN;
  const lifetimeEnd =
    Number.isFinite(created) && typeof p.druidDurationMs === "number" && p.druidDurationMs >= 0
      ? new Date(created + p.druidDurationMs).toISOString()
      : null;
  return {
    interval: a.interval,
    mode: a.payload.mode,
    baseline: p.baseline ?? { versions: [], segmentIds: [] },
    baselineTrusted: p.baselineTrusted !== false,
    version: p.version ?? null,
    notBefore: p.druidCreatedTime ?? null,
    notAfter: lifetimeEnd,
    rowsIngested: rowsIngestedOf(p.rowStats),
  };
}

/**
 * Ends the partition superseded: someone else's newer version is live over ours, so waiting or auditing
 * cannot make it ours again. A failed partition in these words, wherever it is seen (`after` says when).
 */
export async function endSuperseded(
  a: Attempt,
  verdict: Extract<HandoffVerdict, { state: "superseded" }>,
  after = "",
  why = "",
): Promise<never> {
  await a.save({ outcome: "superseded" });
  throw new TaskAbort(
    `superseded: a newer version (${verdict.liveVersions.join(", ")}) replaced ours (${verdict.version}) in ${a.payload.interval}${after}${why ? ` (not a compaction of ours by Druid: ${why})` : ""}`,
  );
}

/**
 * A newer version over ours: done when Druid's own compaction wrote it from ours (steps/compacted.ts), else
 * superseded, saying why it is not such a compaction. Returns only when the partition ended done.
 */
export async function supersededOrCompacted(
  a: Attempt,
  io: StepIO,
  verdict: Extract<HandoffVerdict, { state: "superseded" }>,
  after = "",
): Promise<void> {
  const why = await endIfCompactedByDruid(a, io, verdict.version);
  if (why !== null) await endSuperseded(a, verdict, after, why);
}

/**
 * One handoff verdict; true when still waiting and the wait is already recorded: asked again inside this
 * handler run, with no ledger write per tick (the first wait is a progress transition, so status shows it).
 */
async function checkOnce(a: Attempt, io: StepIO): Promise<boolean> {
  const { taskId, payload } = a;
  // Reached again after a handoff timeout: only `segops retry` brings a task back from that, and it means
  // "wait again", so the window starts now.
  if (a.progress().handoffTimedOut)
    await a.save({ handoffTimedOut: false, handoffSince: io.clock.now(), outcome: null });
  const p = a.progress();
  const verdict = await io.handoff.check(payload.datasource, handoffQuestion(a), a.call.signal);
  switch (verdict.state) {
    case "superseded":
      await supersededOrCompacted(a, io, verdict);
      return false;
    case "never-loaded":
      await a.save({ outcome: "never-loaded", version: verdict.version });
      throw new TaskAbort(
        `never queryable under the load rules: ${taskId} SUCCEEDED but ${verdict.reason}; change the datasource's rules (Coordinator /druid/coordinator/v1/rules/${payload.datasource}) and retry`,
      );
    case "lost":
      await a.save({ outcome: "lost" });
      throw new TaskAbort(`not done: ${taskId} SUCCEEDED but its data is gone: ${verdict.reason}`);
    case "unproven": {
      let proven: true | string | null = null;
      if (verdict.candidate !== null && p.druidCreatedTime) {
        try {
          proven = await proveSoleTask(
            io.client,
            {
              datasource: payload.datasource,
              taskId,
              createdTime: p.druidCreatedTime,
              version: verdict.candidate,
              now: io.clock.now(),
            },
            a.call.signal,
          );
        } catch (error) {
          if (!isFatal(error)) throw error;
          proven = `the task list could not be read: ${describeError(error)}`;
        }
      }
      if (proven === true && verdict.candidate) {
        // Nothing else could have locked in between: the version is ours. Record it, then check handoff.
        await a.save({ version: verdict.candidate, versionProof: "sole-task" });
        throw new TaskProgress(`version ${verdict.candidate} of ${payload.interval} proven ours`, 0);
      }
      const replaced = verdict.candidate !== null ? await replacedBeforeSeen(a, io) : null;
      if (replaced) {
        await supersededOrCompacted(a, io, replaced);
        return false;
      }
      await a.save({ outcome: "unproven" });
      throw new TaskAbort(
        `not done: cannot prove that the data in ${payload.interval} came from ${taskId}: ${verdict.reason}${typeof proven === "string" ? `; ${proven}` : ""}. Check it with \`segops audit ${payload.datasource} --interval ${payload.interval}\``,
      );
    }
    case "waiting": {
      if (verdict.version && !p.version)
        await a.save({ version: verdict.version, versionProof: verdict.proof });
      const waited = io.clock.now() - (p.handoffSince ?? p.succeededAt ?? io.clock.now());
      if (waited >= io.settings.handoffTimeoutMs) {
        await a.save({ handoffTimedOut: true, outcome: "handoff-timeout" });
        const more = verdict.missing.length > 5 ? ` (+${verdict.missing.length - 5} more)` : "";
        throw new TaskAbort(
          `SUCCESS but never queryable: ${taskId} succeeded and ${payload.interval} is still not served after ${Math.round(waited / 1000)}s; missing: ${verdict.missing.slice(0, 5).join("; ")}${more}`,
        );
      }
      const recorded = p.missing !== undefined;
      if (JSON.stringify(p.missing) !== JSON.stringify(verdict.missing))
        await a.save({ missing: verdict.missing });
      if (recorded) return true;
      throw new TaskProgress(`waiting for handoff of ${payload.interval}`, io.settings.tickMs);
    }
    case "handed-off":
      if (verdict.seen) a.handoffSeen = verdict.seen;
      a.note("handed-off", payload.interval);
      await a.save({
        step: "audit",
        version: verdict.version,
        versionProof: verdict.proof,
        handedOffAt: io.clock.now(),
        missing: [],
      });
  }
  return false;
}

/**
 * Ours published, replaced by another writer and already marked unused before the gate first looked
 * (`supersededBeforeSeen`): read the interval's unused versions and what is used now, only on this rare path.
 */
async function replacedBeforeSeen(
  a: Attempt,
  io: StepIO,
): Promise<Extract<HandoffVerdict, { state: "superseded" }> | null> {
  const { datasource, interval } = a.payload;
  let reads: [UnusedSegment[], DataSegment[]];
  try {
    reads = await Promise.all([
      io.client.unusedSegments(datasource, interval, a.call),
      io.client.metadataSegments(datasource, [interval], a.call),
    ]);
  } catch (error) {
    if (!isFatal(error)) throw error;
    return null; // the Coordinator refused the read: the partition ends unproven, as it would have
  }
  const [unused, used] = reads;
  return supersededBeforeSeen(
    handoffQuestion(a),
    used.map((s) => toTimelineSegment(s, new Set())),
    unused.map((u) => u.segment.version),
  );
}
