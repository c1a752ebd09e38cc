import { z } from "zod";
import { DEFAULTS } from "../../core/defaults.js";
import { type Interval, overlaps, parseInterval } from "../../core/interval.js";
import { decodedForHandler, type KindEncoding } from "../../driver/kind.js";
import type { Runner, TaskContext } from "../../driver/runner.js";
import { TaskAbort, TaskDefer, TaskProgress, TaskRetry } from "../../driver/signals.js";
import type { DruidClient } from "../../druid/client.js";
import { isDruidError } from "../../druid/errors.js";
import type { DataSegment } from "../../druid/types.js";
import type { JsonObject, TaskRow } from "../../ledger/types.js";
import { segmentId, servedIdsIn } from "../../work/segments.js";
import type { DruidServices } from "../../work/services.js";
import { cachedBudget, readCompactionBudget } from "../slots.js";
import { COMPACT_KIND, type CompactPayload, judgeChunks } from "./plan.js";

/**
 * One chunk's compaction as steps, each safe to repeat after a crash: `measure` the chunk's rows and
 * column totals through the Broker (once every live segment is served, or the totals would be partial),
 * `submit` the `compact` task under its pinned id (input segments + attempt: a duplicate is a reattach),
 * follow it while `running`, wait until its segments are `served`, then `audit`: the same rows and totals
 * (compaction must never change data), one live version, no segment still flagged.
 */

export const compactPayloadSchema = z.object({
  datasource: z.string().min(1),
  interval: z.string().min(1),
  maxRowsPerSegment: z.number().int().positive(),
  sizeBand: z.object({ minBytes: z.number(), maxBytes: z.number(), maxRows: z.number() }),
  reasons: z.array(z.string()),
  inputs: z.array(z.string()).min(1),
  bytes: z.number(),
  taskIdBase: z.string().min(1),
});

const totalsSchema = z.object({ rows: z.number(), sums: z.record(z.string(), z.number().nullable()) });
export type ChunkTotals = z.infer<typeof totalsSchema>;

export const compactProgressSchema = z.looseObject({
  step: z.enum(["measure", "submit", "running", "served", "audit", "done"]).optional(),
  /** The attempt the steps below belong to; a new attempt measures again. */
  attempt: z.number().int().optional(),
  druidTaskId: z.string().nullable().optional(),
  druidState: z.string().nullable().optional(),
  errorMsg: z.string().nullable().optional(),
  before: totalsSchema.optional(),
  after: totalsSchema.optional(),
  succeededAt: z.number().optional(),
  liveVersion: z.string().nullable().optional(),
  segmentsAfter: z.number().int().optional(),
  note: z.string().optional(),
  /** The versions live when the chunk was measured (what `before` is the totals of). */
  measured: z.array(z.string()).optional(),
  /** `superseded`: another writer replaced the chunk after it was measured (done, nothing to judge). */
  outcome: z.string().optional(),
});
export type CompactProgress = z.infer<typeof compactProgressSchema>;

export const COMPACT_ENCODING: KindEncoding = {
  name: COMPACT_KIND,
  payload: compactPayloadSchema,
  progress: compactProgressSchema,
};

/** The Druid task id of one attempt: the same input and attempt are the same task. */
export function compactTaskId(payload: CompactPayload, attempt: number): string {
  return `${payload.taskIdBase}_${attempt}`;
}

const NUMERIC = new Set(["BIGINT", "DOUBLE", "FLOAT", "DECIMAL", "INTEGER", "REAL"]);

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Rows and the sum of every numeric column of `interval`, as the Broker answers them. */
export async function chunkTotals(
  client: DruidClient,
  datasource: string,
  interval: Interval,
  signal: AbortSignal,
): Promise<ChunkTotals> {
  const columns = await client.sql<{ COLUMN_NAME: string; DATA_TYPE: string }>(
    `SELECT "COLUMN_NAME", "DATA_TYPE" FROM INFORMATION_SCHEMA.COLUMNS WHERE "TABLE_SCHEMA" = 'druid' AND "TABLE_NAME" = ?`,
    { parameters: [{ type: "VARCHAR", value: datasource }], signal },
  );
  const numeric = columns.rows
    .filter((c) => c.COLUMN_NAME !== "__time" && NUMERIC.has(c.DATA_TYPE))
    .map((c) => c.COLUMN_NAME)
    .sort();
  const sums = numeric.map((c, i) => `, SUM(${quoted(c)}) AS "s${i}"`).join("");
  const result = await client.sql<Record<string, unknown>>(
    `SELECT COUNT(*) AS "rows"${sums} FROM ${quoted(datasource)} WHERE "__time" >= ? AND "__time" < ?`,
    {
      // TIMESTAMP parameters are epoch milliseconds: Druid 33 fails on strings (docs/druid-api.md §3.6).
      parameters: [
        { type: "TIMESTAMP", value: interval.start },
        { type: "TIMESTAMP", value: interval.end },
      ],
      signal,
    },
  );
  const row = result.rows[0] ?? {};
  return {
    rows: Number(row.rows ?? 0),
    sums: Object.fromEntries(
      numeric.map((c, i) => {
        const v = row[`s${i}`];
        return [c, v === null || v === undefined ? null : Number(v)];
      }),
    ),
  };
}

/**
 * Whether compaction kept the data: the same column totals (floating sums to 1e-9 relative: compaction
 * adds rows in another order) and the same rows — or fewer, where the compacted segments are rolled up
 * (rows with equal dimensions in two segments become one; their metrics add up).
 */
export function sameData(before: ChunkTotals, after: ChunkTotals, rolledUp: boolean): string | null {
  if (after.rows > before.rows || (!rolledUp && after.rows !== before.rows))
    return `rows ${before.rows} → ${after.rows}`;
  const names = new Set([...Object.keys(before.sums), ...Object.keys(after.sums)]);
  for (const name of [...names].sort()) {
    const a = before.sums[name] ?? null;
    const b = after.sums[name] ?? null;
    if (a === b) continue;
    if (a === null || b === null) return `SUM(${name}) ${a} → ${b}`;
    if (Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))) return `SUM(${name}) ${a} → ${b}`;
  }
  return null;
}

/** What the audit concludes from the totals and the chunk's segments (see {@link compactionVerdict}). */
export type CompactionVerdict =
  | { kind: "same" }
  | { kind: "superseded"; versions: string[]; changed: string }
  | { kind: "rewritten"; changed: string }
  | { kind: "changed"; changed: string };

/**
 * Tells "compaction changed the data" from "another writer changed the chunk" (pure). The measured totals
 * are of the versions live at `measure`; a version newer than those that is not the compaction's own (its
 * output carries `lastCompactionState`), found used or unused in the chunk, is another writer's: it replaced
 * the chunk after it was measured, so the totals cannot be compared (the compaction may well have run on
 * its data). Live segments not written by a compaction with no such version are an append into the chunk:
 * measure and compact again. Only totals that differ under the compaction's own version are an alarm.
 * @param live the chunk's live segments now. @param seen every segment of the chunk now, used or unused.
 */
export function compactionVerdict(o: {
  before: ChunkTotals;
  after: ChunkTotals;
  measured: readonly string[];
  live: readonly DataSegment[];
  seen: readonly DataSegment[];
}): CompactionVerdict {
  const changed = sameData(o.before, o.after, rolledUp(o.live));
  if (changed === null) return { kind: "same" };
  const newest = [...o.measured].sort().at(-1) ?? "";
  const own = new Set(
    [...o.live, ...o.seen].filter((s) => s.lastCompactionState && s.version > newest).map((s) => s.version),
  );
  const foreign = [
    ...new Set(o.seen.filter((s) => s.version > newest && !own.has(s.version)).map((s) => s.version)),
  ].sort();
  if (foreign.length > 0) return { kind: "superseded", versions: foreign, changed };
  if (!o.live.every((s) => s.lastCompactionState)) return { kind: "rewritten", changed };
  return { kind: "changed", changed };
}

function rolledUp(segments: readonly DataSegment[]): boolean {
  return (
    segments.length > 0 &&
    segments.every((s) => {
      const g = (s.lastCompactionState as { granularitySpec?: { rollup?: unknown } } | undefined)
        ?.granularitySpec;
      return g?.rollup === true;
    })
  );
}

export function compactRunner(services: DruidServices): Runner {
  const { client, batcher, admission, clock } = services;
  const tickMs = services.tickMs ?? DEFAULTS.tickMs;
  const handoffTimeoutMs = services.handoffTimeoutMs ?? DEFAULTS.handoffTimeoutMs;
  // Druid's own budget for compaction tasks (compactionTaskSlotRatio of the slots, at most
  // maxCompactionTaskSlots) caps how many of ours run at Druid at once; re-read once a minute. A chunk
  // waiting for its handoff holds no slot, so it does not count.
  const atDruid = new Set<string>();
  const compactionBudget = cachedBudget((signal) => readCompactionBudget(client, signal), clock);

  async function step(task: TaskRow, ctx: TaskContext): Promise<void> {
    const payload = decodedForHandler<CompactPayload>(COMPACT_ENCODING, task, "payload");
    let p = decodedForHandler<CompactProgress>(COMPACT_ENCODING, task, "progress");
    const ds = payload.datasource;
    const chunk = parseInterval(payload.interval);
    const save = async (patch: CompactProgress) => {
      if (!(await ctx.checkpoint(patch as JsonObject))) throw new TaskAbort("canceled or taken over");
      p = { ...p, ...patch };
    };
    const call = { signal: ctx.signal };
    const taskId = compactTaskId(payload, task.attempt);
    // A new attempt (the last one's lock was taken, or the chunk changed under it) starts over.
    if (p.attempt !== task.attempt && p.step !== undefined && p.step !== "measure")
      await save({ step: "measure", attempt: task.attempt, druidTaskId: null, druidState: null });

    // The chunk's used segments, judged with which ones are served (two requests, in parallel).
    const usedAndServed = async () => {
      const [used, served] = await Promise.all([
        client.metadataSegments(ds, [payload.interval], call),
        servedIdsIn(client, ds, payload.interval, call),
      ]);
      return { used, ...judgeChunks(ds, chunk, used, served, payload.sizeBand) };
    };

    if ((p.step ?? "measure") === "measure") {
      const locked = await client.lockedIntervals(ds, { intervals: [payload.interval], ...call });
      if (locked.some((l) => overlaps(parseInterval(l), chunk)))
        throw new TaskDefer(`a running task holds a lock on ${payload.interval}`, tickMs * 10);
      const { report } = await usedAndServed();
      const unserved = report.violations.filter((v) => v.kind === "not-served");
      if (unserved.length > 0)
        throw new TaskDefer(
          `waiting until the chunk is served to measure it: ${unserved[0]?.message}`,
          tickMs,
        );
      const before = await chunkTotals(client, ds, chunk, ctx.signal);
      const measured = [...new Set(report.chunks.flatMap((c) => c.liveVersions))].sort();
      await save({ step: "submit", attempt: task.attempt, before, measured });
    }
    if (p.step === "submit") {
      const cap = await compactionBudget(ctx.signal);
      if (cap !== null && !atDruid.has(task.id) && atDruid.size >= cap)
        throw new TaskDefer(`Druid's compaction budget (${cap} task(s)) is in use`, tickMs);
      // Reserved before the next await, so partitions reaching this point together cannot all pass.
      atDruid.add(task.id);
      if (admission && !admission.admit(task.id, 1)) {
        atDruid.delete(task.id);
        throw new TaskDefer("waiting for a free worker slot", tickMs);
      }
      try {
        await client.submitTask(
          {
            type: "compact",
            id: taskId,
            dataSource: ds,
            ioConfig: { type: "compact", inputSpec: { type: "interval", interval: payload.interval } },
            tuningConfig: {
              type: "index_parallel",
              partitionsSpec: { type: "dynamic", maxRowsPerSegment: payload.maxRowsPerSegment },
            },
          } as never,
          call,
        );
      } catch (error) {
        atDruid.delete(task.id); // not submitted (or not known to be): the next try reserves again
        throw error;
      }
      admission?.track(task.id, 1, taskId);
      await save({ step: "running", druidTaskId: taskId });
    }
    if (p.step === "running") {
      atDruid.add(task.id); // also after a restart, for a compaction submitted by the run that crashed
      const status = await batcher.get(taskId, ctx.signal);
      if (status.state === "RUNNING" || status.state === "UNKNOWN")
        throw new TaskProgress(`compact task ${taskId} ${status.state}`, tickMs);
      admission?.untrack(task.id);
      atDruid.delete(task.id);
      const errorMsg = "errorMsg" in status ? (status.errorMsg ?? null) : null;
      if (status.state === "FAILED") {
        await save({ druidState: status.state, errorMsg });
        if (
          errorMsg?.includes("No segments found for compaction") ||
          errorMsg?.startsWith("Can't find segments")
        ) {
          // The chunk's data went away since planning (dropped, marked unused): nothing left to compact.
          await save({ step: "done", note: "no segments left to compact" });
          return;
        }
        // An ingestion took the lock (it has the higher priority) or the task failed: later, anew.
        throw new TaskRetry(`compact task ${taskId} FAILED: ${errorMsg ?? "no errorMsg"}`, {
          newAttempt: true,
        });
      }
      await save({ step: "served", druidState: status.state, succeededAt: clock.now() });
    }
    if (p.step === "served") {
      const { report } = await usedAndServed();
      const unserved = report.violations.filter((v) => v.kind === "not-served");
      if (unserved.length > 0) {
        const waited = clock.now() - (p.succeededAt ?? clock.now());
        if (waited > handoffTimeoutMs)
          throw new TaskAbort(
            `the compacted segments of ${payload.interval} are not served ${Math.round(waited / 1000)} s after the task succeeded: ${unserved[0]?.message}`,
          );
        throw new TaskProgress(`waiting for the compacted segments to be served`, tickMs);
      }
      await save({ step: "audit" });
    }
    if (p.step === "audit") {
      const { used, report, verdicts } = await usedAndServed();
      const live = new Set(verdicts.flatMap((v) => v.inputs));
      const liveSegments = used.filter((s) => live.has(segmentId(s)));
      const versions = [...new Set(report.chunks.flatMap((c) => c.liveVersions))];
      const after = await chunkTotals(client, ds, chunk, ctx.signal);
      const before = p.before ?? after;
      await save({
        after,
        liveVersion: versions.length === 1 ? (versions[0] ?? null) : null,
        segmentsAfter: live.size,
      });
      let verdict: CompactionVerdict = { kind: "same" };
      if (sameData(before, after, rolledUp(liveSegments)) !== null) {
        const unused = await client.unusedSegments(ds, payload.interval, call);
        const seen = [...used, ...unused.map((u) => u.segment)].filter((s) =>
          overlaps(parseInterval(s.interval), chunk),
        );
        // Before measure recorded its versions, the planned inputs' versions stand for them.
        const inputs = new Set(payload.inputs);
        const measured = p.measured ?? [
          ...new Set(seen.filter((s) => inputs.has(segmentId(s))).map((s) => s.version)),
        ];
        verdict = compactionVerdict({ before, after, measured, live: liveSegments, seen });
      }
      if (verdict.kind === "superseded") {
        // Not the compaction's doing: the data served is the other writer's, which is theirs to answer for.
        await save({
          step: "done",
          outcome: "superseded",
          note: `the chunk was replaced by another writer since it was measured (version ${verdict.versions.join(", ")}; ${verdict.changed}): nothing to compare the compaction with`,
        });
        return;
      }
      if (verdict.kind === "rewritten") {
        // Another task appended to the chunk after it was measured: measure and compact again.
        throw new TaskRetry(
          `${payload.interval} was rewritten by another task during the compaction (${verdict.changed})`,
          { newAttempt: true },
        );
      }
      if (verdict.kind === "changed")
        throw new TaskAbort(`the compaction of ${payload.interval} changed the data: ${verdict.changed}`);
      const still = verdicts.flatMap((v) => v.reasons);
      if (versions.length !== 1 || still.length > 0) {
        throw new TaskAbort(
          `after the compaction ${payload.interval} has ${versions.length} live version(s)${still.length > 0 ? `; ${still.join("; ")}` : ""}`,
        );
      }
      await save({ step: "done" });
    }
  }

  return {
    kind: COMPACT_KIND,
    concurrency: services.concurrency ?? DEFAULTS.maxConcurrency,
    maxRetry: services.maxRetry ?? DEFAULTS.maxRetry,
    // A chunk ready to submit is not claimed while the budget is known to be in use: claimed, it would
    // only be deferred a tick and claimed again, a ledger write and event each time (about 1,000 a second
    // with a budget of one). Read from the due row, unvalidated: the handler decodes and checks it.
    isEligible: (task) => {
      if ((task.progress as { step?: unknown }).step !== "submit" || atDruid.has(task.id)) return true;
      const cap = compactionBudget.peek();
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
        await step(task, ctx);
      } catch (error) {
        // Druid refusing the compact spec (400) will refuse it again.
        if (isDruidError(error) && !error.retryable) throw new TaskAbort(`Druid refused: ${error.message}`);
        throw error;
      }
    },
  };
}
