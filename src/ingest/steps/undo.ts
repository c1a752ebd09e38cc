import { formatInterval } from "../../core/interval.js";
import { TaskAbort, TaskProgress } from "../../driver/signals.js";
import { servedIdsIn, toTimelineSegment } from "../../work/segments.js";
import { liveDataOf, liveTimeline } from "../../work/timeline.js";
import type { IngestProgress } from "../types.js";
import { type Attempt, rowsIngestedOf, type StepIO } from "./attempt.js";

/**
 * The undo of a replace that failed its data gates after Druid published it: the interval goes back to
 * what it served before the attempt (the baseline read in prepare). Each phase is an idempotent Druid call
 * or a read, checkpointed, so a crash anywhere resumes the undo and finishes it exactly once:
 *
 *   unmark ─► mark ─► served ─► rolled back (the partition ends failed, outcome `rolled-back`)
 *   (our       (the     (the earlier version live and
 *   versions   earlier  served, none of ours used)
 *   unused)    used)
 *
 * Druid's markUsed leaves overshadowed segments unused, which is why ours go first; between the two marks
 * the interval may serve nothing for a moment. Only the versions this attempt wrote are unmarked — never a
 * version already there before, nor one another writer published after ours.
 */

export type UndoState = NonNullable<IngestProgress["undo"]>;

export async function undoReplace(a: Attempt, io: StepIO): Promise<void> {
  const ds = a.payload.datasource;
  const interval = formatInterval(a.interval);
  const p = a.progress();
  const undo = p.undo as UndoState;
  if (undo.phase === "unmark") {
    const used = await io.client.metadataSegments(ds, [interval], a.call);
    const before = new Set(p.baseline?.versions ?? []);
    // Ours: written after our task was created and not in the baseline. A later writer's version (newer
    // than our task's end) is left alone: it is not ours to take back.
    const notBefore = p.druidCreatedTime ?? "";
    const notAfter = oursUntil(p);
    const ours = [
      ...new Set(
        used
          .map((s) => s.version)
          .filter((v) => !before.has(v) && v >= notBefore && (notAfter === null || v <= notAfter)),
      ),
    ].sort();
    if (ours.length > 0) await io.client.markSegments(ds, "unused", { interval, versions: ours }, a.call);
    await a.save({ undo: { ...undo, phase: "mark", unmarked: ours } });
  }
  if (a.progress().undo?.phase === "mark") {
    const restore = p.liveBefore?.versions ?? [];
    if (restore.length > 0) await io.client.markSegments(ds, "used", { interval, versions: restore }, a.call);
    await a.save({
      undo: { ...(a.progress().undo as UndoState), phase: "served", markedAt: io.clock.now() },
    });
  }
  if (a.progress().undo?.phase === "served") await awaitRestored(a, io);
}

/** The latest version our task could have written: its lock time, at the latest when it ended. */
function oursUntil(p: IngestProgress): string | null {
  const created = p.druidCreatedTime ? Date.parse(p.druidCreatedTime) : Number.NaN;
  if (!Number.isFinite(created) || typeof p.druidDurationMs !== "number") return null;
  return new Date(created + Math.max(p.druidDurationMs, 0) + 1).toISOString();
}

async function awaitRestored(a: Attempt, io: StepIO): Promise<void> {
  const ds = a.payload.datasource;
  const interval = formatInterval(a.interval);
  // Back after a timeout (only `segops retry` brings it back): wait afresh.
  if (a.progress().undo?.timedOut)
    await a.save({
      undo: { ...(a.progress().undo as UndoState), timedOut: false, markedAt: io.clock.now() },
      outcome: null,
    });
  const p = a.progress();
  const undo = p.undo as UndoState;
  const [used, served] = await Promise.all([
    io.client.metadataSegments(ds, [interval], a.call),
    servedIdsIn(io.client, ds, interval, a.call),
  ]);
  const segments = used.map((s) => toTimelineSegment(s, served));
  const ours = new Set(undo.unmarked ?? []);
  const restore = new Set(p.liveBefore?.versions ?? []);
  const stillOurs = segments.filter((s) => ours.has(s.version)).map((s) => s.id);
  const live = liveTimeline(segments, a.interval).flatMap((piece) => piece.live);
  const waiting = live.filter((s) => !s.tombstone && !s.served).map((s) => `${s.id} not served`);
  const missing = [...restore].filter((v) => !segments.some((s) => s.version === v));
  // A live version that is neither ours nor the one live before: a writer after ours, or a version of ours
  // that could not be told apart. Nothing here may take it back; say so instead of calling it restored.
  const foreign = [...new Set(live.filter((s) => !s.tombstone).map((s) => s.version))].filter(
    (v) => !restore.has(v) && !ours.has(v),
  );
  // Newer than every version of ours: another writer published after us, and what it wrote stands.
  const newest = [...ours].sort().at(-1);
  const later = newest !== undefined && foreign.every((v) => v > newest);
  if (stillOurs.length === 0 && foreign.length > 0 && !later) {
    const message = `data gate failed after Druid published ${a.taskId}: ${undo.reason}. The replace could not be undone: ${a.payload.interval} serves version ${foreign.join(", ")}, neither ours (${[...ours].join(", ") || "none found"}) nor the one live before (${[...restore].join(", ") || "none"}); check it with \`segops audit ${ds} --interval ${a.payload.interval}\` and roll back with \`segops rollback\` if it is ours`;
    await a.save({
      outcome: "undo-failed",
      undo: { ...undo, phase: "done" },
      failures: [...(p.failures ?? []), gateFailure(a, undo.reason)],
    });
    a.note("undo-failed", message);
    throw new TaskAbort(message);
  }
  if (stillOurs.length === 0 && waiting.length === 0 && ours.size === 0 && restore.size === 0) {
    // Nothing of ours is used and nothing was live before: there was nothing to undo.
    const message = `data gate failed after Druid published ${a.taskId}: ${undo.reason}. Nothing of it is served in ${a.payload.interval}, which held no data before either: nothing to undo`;
    await a.save({
      undo: { ...undo, phase: "done", restoredAt: io.clock.now() },
      failures: [...(p.failures ?? []), gateFailure(a, undo.reason)],
    });
    a.note("failed", message);
    throw new TaskAbort(message);
  }
  if (stillOurs.length === 0 && waiting.length === 0) {
    const now = liveDataOf(segments, a.interval);
    const killed = missing.length > 0;
    const restored =
      later && foreign.length > 0
        ? `${a.payload.interval} serves version ${foreign.join(", ")}, which another writer published after ours`
        : killed
          ? `the version live before (${missing.join(", ")}) is gone (killed), so ${a.payload.interval} now serves ${now.segments > 0 ? `version ${now.versions.join(", ")}` : "no data"}`
          : restore.size === 0
            ? `${a.payload.interval} held no data before and holds none now`
            : `version ${[...restore].join(", ")} (${describeLive(p.liveBefore)}) is live and served again`;
    const ingested = rowsIngestedOf(p.rowStats);
    const message = `data gate failed after Druid published ${a.taskId}: ${undo.reason}. The replace was undone: our version ${(undo.unmarked ?? []).join(", ") || "(none found)"}${ingested !== null ? ` (${ingested} row(s) ingested)` : ""} is marked unused and ${restored}. Fix the input and rerun (changed input is new work)`;
    await a.save({
      outcome: "rolled-back",
      undo: { ...undo, phase: "done", restoredAt: io.clock.now(), killed },
      failures: [...(p.failures ?? []), gateFailure(a, undo.reason)],
    });
    a.note("rolled-back", message);
    throw new TaskAbort(message);
  }
  const waited = io.clock.now() - (undo.markedAt ?? io.clock.now());
  if (waited > io.settings.handoffTimeoutMs) {
    await a.save({ undo: { ...undo, timedOut: true }, outcome: "undo-timeout" });
    throw new TaskAbort(
      `the undo of ${a.taskId} did not finish ${Math.round(waited / 1000)} s after the marks: ${[...stillOurs.map((id) => `${id} still used`), ...waiting].slice(0, 5).join("; ")}; \`segops retry\` waits again`,
    );
  }
  throw new TaskProgress(
    `undoing ${a.payload.interval}: waiting for ${stillOurs.length + waiting.length} segment(s)`,
    io.settings.tickMs,
  );
}

/** The attempt's failure as the poison rule and reports read it. */
function gateFailure(a: Attempt, reason: string) {
  return {
    attempt: a.task.attempt,
    taskId: a.taskId,
    failureClass: "data-gate",
    deterministic: true,
    errorMsg: reason,
  };
}

function describeLive(live: IngestProgress["liveBefore"]): string {
  if (!live) return "as before";
  const rows = live.rows !== null ? `${live.rows} row(s) in ` : "";
  return `${rows}${live.segments} segment(s)`;
}
