import { z } from "zod";
import { DEFAULTS } from "../../core/defaults.js";
import { overlaps, parseInterval } from "../../core/interval.js";
import { decodedForHandler, type KindEncoding } from "../../driver/kind.js";
import type { Runner, TaskContext } from "../../driver/runner.js";
import { TaskAbort, TaskDefer, TaskProgress, TaskRetry } from "../../driver/signals.js";
import { isDruidError } from "../../druid/errors.js";
import type { JsonObject, TaskRow } from "../../ledger/types.js";
import { segmentId } from "../../work/segments.js";
import type { DruidServices } from "../../work/services.js";
import { cachedBudget, readKillBudget } from "../slots.js";
import { KILL_KIND, type KillPayload } from "./plan.js";

/**
 * One kill batch as steps: `submit` the kill task under its pinned id (a duplicate is the same task:
 * reattach), follow it while `running` (bulk status, one slot admitted like any task), then `verify` that
 * every planned segment is gone and nothing used was touched.
 */

export const killPayloadSchema = z.object({
  datasource: z.string().min(1),
  interval: z.string().min(1),
  versions: z.array(z.string()).nullable(),
  maxUsedStatusLastUpdatedTime: z.number(),
  segmentIds: z.array(z.string()).min(1),
  bytes: z.number(),
  taskId: z.string().min(1),
});

export const killProgressSchema = z.looseObject({
  step: z.enum(["submit", "running", "verify", "done"]).optional(),
  druidState: z.string().nullable().optional(),
  errorMsg: z.string().nullable().optional(),
  left: z.array(z.string()).optional(),
});
export type KillProgress = z.infer<typeof killProgressSchema>;

export const KILL_ENCODING: KindEncoding = {
  name: KILL_KIND,
  payload: killPayloadSchema,
  progress: killProgressSchema,
};

export function killRunner(services: DruidServices): Runner {
  const { client, batcher, admission, clock } = services;
  const tickMs = services.tickMs ?? DEFAULTS.tickMs;
  // Druid's budget for kill tasks (killTaskSlotRatio of the slots, at most maxKillTaskSlots) caps how
  // many of ours run at Druid at once, in every process that runs kills (the CLI and serve alike).
  const atDruid = new Set<string>();
  const killBudget = cachedBudget((signal) => readKillBudget(client, signal), clock);

  async function step(task: TaskRow, ctx: TaskContext): Promise<void> {
    const payload = decodedForHandler<KillPayload>(KILL_ENCODING, task, "payload");
    let p = decodedForHandler<KillProgress>(KILL_ENCODING, task, "progress");
    const save = async (patch: KillProgress) => {
      if (!(await ctx.checkpoint(patch as JsonObject))) throw new TaskAbort("canceled or taken over");
      p = { ...p, ...patch };
    };
    if ((p.step ?? "submit") === "submit") {
      const cap = await killBudget(ctx.signal);
      if (cap !== null && !atDruid.has(task.id) && atDruid.size >= cap)
        throw new TaskDefer(`Druid's kill task budget (${cap} task(s)) is in use`, tickMs);
      // Reserved before the next await, so batches reaching this point together cannot all pass.
      atDruid.add(task.id);
      // A kill task takes a worker slot: it waits for one like an ingestion (never all slots at once).
      if (admission && !admission.admit(task.id, 1)) {
        atDruid.delete(task.id);
        throw new TaskDefer("waiting for a free worker slot", tickMs);
      }
      try {
        if (payload.versions === null) {
          // Checked again just before the kill: a rollback (of another ledger, or one that started after the
          // plan) may since have left the chunk with no used version, its unused versions its only copies.
          const used = await client.metadataSegments(payload.datasource, [payload.interval], {
            signal: ctx.signal,
          });
          const chunk = parseInterval(payload.interval);
          if (!used.some((s) => overlaps(parseInterval(s.interval), chunk)))
            throw new TaskAbort(
              `refused to kill in ${payload.interval}: no version of it is used any more (a rollback between its marks?), so its unused versions are its only copies; finish the rollback, or name the versions with --version V`,
            );
        }
        await client.submitTask(
          {
            type: "kill",
            id: payload.taskId,
            dataSource: payload.datasource,
            interval: payload.interval,
            ...(payload.versions ? { versions: payload.versions } : {}),
            maxUsedStatusLastUpdatedTime: new Date(payload.maxUsedStatusLastUpdatedTime).toISOString(),
          } as never,
          { signal: ctx.signal },
        );
      } catch (error) {
        atDruid.delete(task.id); // not submitted (or not known to be): the next try reserves again
        throw error;
      }
      admission?.track(task.id, 1, payload.taskId);
      await save({ step: "running" });
    }
    if (p.step === "running") {
      atDruid.add(task.id); // also after a restart, for a kill submitted by the run that crashed
      const status = await batcher.get(payload.taskId, ctx.signal);
      if (status.state === "RUNNING" || status.state === "UNKNOWN") {
        throw new TaskProgress(`kill task ${payload.taskId} ${status.state}`, tickMs);
      }
      admission?.untrack(task.id);
      atDruid.delete(task.id);
      if (status.state === "FAILED") {
        const errorMsg = "errorMsg" in status ? status.errorMsg : null;
        await save({ druidState: status.state, errorMsg });
        throw new TaskAbort(`kill task ${payload.taskId} FAILED: ${errorMsg ?? "no errorMsg"}`);
      }
      await save({ step: "verify", druidState: status.state });
    }
    if (p.step === "verify") {
      const [unused, used] = await Promise.all([
        client.unusedSegments(payload.datasource, payload.interval, { signal: ctx.signal }),
        client.metadataSegments(payload.datasource, [payload.interval], { signal: ctx.signal }),
      ]);
      const remaining = new Set(unused.map((u) => segmentId(u.segment)));
      const usedIds = new Set(used.map(segmentId));
      const left = payload.segmentIds.filter((id) => remaining.has(id));
      const revived = payload.segmentIds.filter((id) => usedIds.has(id));
      if (revived.length > 0) {
        // Marked used again since planning: Druid's kill skipped it, as it must; nothing to do for it.
        await save({ left: [] });
      }
      if (left.length > 0) {
        await save({ left });
        throw new TaskRetry(
          `${left.length} planned segment(s) still unused after the kill task: ${left.slice(0, 3).join(", ")}`,
        );
      }
      await save({ step: "done", left: [] });
    }
  }

  return {
    kind: KILL_KIND,
    concurrency: services.concurrency ?? DEFAULTS.maxConcurrency,
    maxRetry: services.maxRetry ?? DEFAULTS.maxRetry,
    // Not claimed while the kill budget is known to be in use (see the compaction runner's).
    isEligible: (task) => {
      const step = (task.progress as { step?: unknown }).step ?? "submit";
      if (step !== "submit" || atDruid.has(task.id)) return true;
      const cap = killBudget.peek();
      return cap === undefined || cap === null || atDruid.size < cap;
    },
    // Listed eligible but not claimed (isEligible reserves nothing): a task of ours still at Druid keeps
    // its place in the budget; admission keeps submitted tasks and drops only bare reservations.
    release: (taskId) => admission?.release(taskId),
    onFinish: (task) => {
      atDruid.delete(task.id);
      admission?.untrack(task.id);
    },
    // Another host holds it now, or it was handed back: its place in the budget is no longer this host's
    // (one put back to wait keeps it: its Druid task may still run).
    abandon: (taskId, why) => {
      if (why === "waiting") return;
      atDruid.delete(taskId);
      admission?.untrack(taskId);
    },
    handler: async (task, ctx) => {
      try {
        // A crash after the submit resubmits the pinned id: Druid's duplicate answer is a reattach.
        await step(task, ctx);
      } catch (error) {
        if (isDruidError(error) && !error.retryable) throw new TaskAbort(`Druid refused: ${error.message}`);
        throw error;
      }
    },
  };
}
