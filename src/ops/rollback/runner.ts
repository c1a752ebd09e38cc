import { z } from "zod";
import { DEFAULTS } from "../../core/defaults.js";
import { parseInterval } from "../../core/interval.js";
import { decodedForHandler, type KindEncoding } from "../../driver/kind.js";
import type { Runner, TaskContext } from "../../driver/runner.js";
import { TaskAbort, TaskProgress } from "../../driver/signals.js";
import { isDruidError } from "../../druid/errors.js";
import type { DataSegment } from "../../druid/types.js";
import type { JsonObject, TaskRow } from "../../ledger/types.js";
import { auditTimeline } from "../../work/audit.js";
import { segmentId, servedIdsIn, toTimelineSegment } from "../../work/segments.js";
import type { DruidServices } from "../../work/services.js";
import {
  chunkRestored,
  newerPublished,
  ROLLBACK_KIND,
  type RollbackPayload,
  unplannedNewer,
} from "./plan.js";

/**
 * One chunk's rollback as steps, each safe to repeat after a crash (every Druid call is idempotent: a
 * second markUnused/markUsed changes nothing): `unmark` the newer versions, `mark` V used, wait until V is
 * `served` (and no newer version is used), `audit` that V is the one live version.
 */

export const rollbackPayloadSchema = z.object({
  datasource: z.string().min(1),
  interval: z.string().min(1),
  toVersion: z.string().min(1),
  segmentIds: z.array(z.string()).min(1),
  newerVersions: z.array(z.string()),
});

export const rollbackProgressSchema = z.looseObject({
  step: z.enum(["unmark", "mark", "served", "audit", "done"]).optional(),
  unmarked: z.number().int().optional(),
  marked: z.number().int().optional(),
  markedAt: z.number().optional(),
  servedAt: z.number().optional(),
  waitingFor: z.array(z.string()).optional(),
  audit: z.looseObject({ ok: z.boolean(), liveVersions: z.array(z.string()) }).optional(),
  /** Why the rollback stopped short: newer data was published after it was planned. */
  stopped: z.string().optional(),
});
export type RollbackProgress = z.infer<typeof rollbackProgressSchema>;

export const ROLLBACK_ENCODING: KindEncoding = {
  name: ROLLBACK_KIND,
  payload: rollbackPayloadSchema,
  progress: rollbackProgressSchema,
};

export function rollbackRunner(services: DruidServices): Runner {
  const { client, clock } = services;
  const tickMs = services.tickMs ?? DEFAULTS.tickMs;
  const handoffTimeoutMs = services.handoffTimeoutMs ?? DEFAULTS.handoffTimeoutMs;

  async function step(task: TaskRow, ctx: TaskContext): Promise<void> {
    const payload = decodedForHandler<RollbackPayload>(ROLLBACK_ENCODING, task, "payload");
    let p = decodedForHandler<RollbackProgress>(ROLLBACK_ENCODING, task, "progress");
    const ds = payload.datasource;
    const save = async (patch: RollbackProgress) => {
      const row = await ctx.checkpoint(patch as JsonObject);
      if (!row) throw new TaskAbort("canceled or taken over while rolling back");
      p = { ...p, ...patch };
    };
    // The chunk re-read before each mark: only the versions planned are marked unused, and a version
    // newer than the target that the plan did not name (an ingestion published it since) stops the
    // rollback, which would otherwise hide new data and report done.
    const stopOnUnplanned = async (used: readonly DataSegment[]) => {
      const unplanned = unplannedNewer(payload, used);
      if (unplanned.length === 0) return;
      const message = newerPublished(payload, unplanned);
      // Recorded, so the chunk is not taken for one a rollback left between its marks: newer data is live.
      await save({ stopped: message });
      throw new TaskAbort(message);
    };
    if ((p.step ?? "unmark") === "unmark") {
      const [used, unused] = await Promise.all([
        client.metadataSegments(ds, [payload.interval], { signal: ctx.signal }),
        client.unusedSegments(ds, payload.interval, { signal: ctx.signal }),
      ]);
      await stopOnUnplanned(used);
      // The target must still exist (used or unused): a kill since the plan would leave nothing to restore.
      const present = new Set([...used.map(segmentId), ...unused.map((u) => segmentId(u.segment))]);
      const gone = payload.segmentIds.filter((id) => !present.has(id));
      if (gone.length > 0)
        throw new TaskAbort(
          `version ${payload.toVersion} of ${payload.interval} lost ${gone.length} segment(s) since the rollback was planned (killed?): ${gone.slice(0, 3).join(", ")}; nothing was changed`,
        );
      const unmarked =
        payload.newerVersions.length === 0
          ? 0
          : await client.markSegments(
              ds,
              "unused",
              { interval: payload.interval, versions: payload.newerVersions },
              { signal: ctx.signal },
            );
      await save({ step: "mark", unmarked });
    }
    if (p.step === "mark") {
      await stopOnUnplanned(await client.metadataSegments(ds, [payload.interval], { signal: ctx.signal }));
      const marked = await client.markSegments(
        ds,
        "used",
        { interval: payload.interval, versions: [payload.toVersion] },
        { signal: ctx.signal },
      );
      await save({ step: "served", marked, markedAt: clock.now() });
    }
    if (p.step === "served") {
      // The served view of the chunk: while the newer version is still announced, queries read it and not
      // the restored one, so the restored version shows there only once the newer one is dropped.
      const [used, served] = await Promise.all([
        client.metadataSegments(ds, [payload.interval], { signal: ctx.signal }),
        servedIdsIn(client, ds, payload.interval, { signal: ctx.signal }),
      ]);
      await stopOnUnplanned(used);
      const check = chunkRestored(payload, used, served);
      if (check.stillUsedNewer.length > 0) {
        throw new TaskAbort(
          `a newer version is used again in ${payload.interval} (${check.stillUsedNewer.join(", ")}): an ingestion ran during the rollback; roll back again once it has finished`,
        );
      }
      if (!check.restored) {
        const waited = clock.now() - (p.markedAt ?? clock.now());
        if (waited > handoffTimeoutMs) {
          throw new TaskAbort(
            `version ${payload.toVersion} of ${payload.interval} not served ${Math.round(waited / 1000)} s after it was marked used: ${check.waitingFor.join(", ")}`,
          );
        }
        // Marked used but not loaded yet (the Coordinator assigns it at its next run): keep waiting.
        if ((p.waitingFor ?? []).join() !== check.waitingFor.join())
          await save({ waitingFor: check.waitingFor });
        throw new TaskProgress(
          `waiting for ${check.waitingFor.length} segment(s) of ${payload.toVersion} to be served`,
          tickMs,
        );
      }
      await save({ step: "audit", servedAt: clock.now(), waitingFor: [] });
    }
    if (p.step === "audit") {
      const [used, servedIds] = await Promise.all([
        client.metadataSegments(ds, [payload.interval], { signal: ctx.signal }),
        servedIdsIn(client, ds, payload.interval, { signal: ctx.signal }),
      ]);
      const report = auditTimeline({
        datasource: ds,
        interval: parseInterval(payload.interval),
        segments: used.map((s) => toTimelineSegment(s, servedIds)),
      });
      const live = [...new Set(report.chunks.flatMap((c) => c.liveVersions))];
      const ok = report.ok && live.length === 1 && live[0] === payload.toVersion;
      await save({ step: ok ? "done" : "audit", audit: { ok, liveVersions: live } });
      if (!ok) {
        throw new TaskAbort(
          `after the rollback ${payload.interval} serves ${live.join(", ") || "no version"}, not only ${payload.toVersion}: ${report.violations.map((v) => v.message).join("; ")}`,
        );
      }
    }
  }

  return {
    kind: ROLLBACK_KIND,
    concurrency: services.concurrency ?? DEFAULTS.maxConcurrency,
    maxRetry: services.maxRetry ?? DEFAULTS.maxRetry,
    handler: async (task, ctx) => {
      try {
        await step(task, ctx);
      } catch (error) {
        // Druid refusing the request (400: a version string it cannot take) will refuse it again.
        if (isDruidError(error) && !error.retryable) throw new TaskAbort(`Druid refused: ${error.message}`);
        throw error;
      }
    },
  };
}
