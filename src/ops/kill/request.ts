import { z } from "zod";
import { parsePeriodMs } from "../../core/interval.js";
import type { KindRequest } from "../../driver/kind.js";
import { segmentId } from "../../work/segments.js";
import {
  Datasource,
  IntervalText,
  intervalField,
  intervalKey,
  PeriodText,
  requestField,
  requestKeyOf,
} from "../request.js";
import { killCommand } from "./command.js";
import { druidAutoKills } from "./druid-kills.js";
import { inspectKill, planKill } from "./plan.js";

export const KillRequest = z.strictObject({
  datasource: Datasource,
  interval: IntervalText,
  /** Only segments marked unused at least this long ago (ISO-8601 period, e.g. P30D). @default any */
  olderThan: PeriodText.optional(),
  /** Only these versions. @default every version */
  versions: z.array(z.string().min(1).max(200)).max(1000).optional(),
  /** Segments per kill task. @default 100 */
  batchSize: z.number().int().min(1).max(10_000).optional(),
  /** A kill deletes for good: without `"dryRun": false` it only answers with what would go. @default true */
  dryRun: z.boolean().optional(),
});
export type KillRequest = z.infer<typeof KillRequest>;

/** `POST /api/v1/kills`: unused segments deleted for good (a dry run unless asked otherwise). */
export const killRequest: KindRequest<KillRequest> = {
  resource: "kills",
  operationId: "createKill",
  summary: "Delete unused segments for good (kill tasks); a dry run unless dryRun is false",
  schema: KillRequest,
  dryRunByDefault: true,
  command: killCommand,
  key: (r, cluster) =>
    requestKeyOf(
      "kill",
      {
        datasource: r.datasource,
        interval: intervalKey(r.interval),
        versions: r.versions && r.versions.length > 0 ? [...r.versions].sort() : null,
        olderThanMs: r.olderThan !== undefined ? parsePeriodMs(r.olderThan) : 0,
        batchSize: r.batchSize ?? 100,
      },
      cluster,
    ),
  async plan(context, r) {
    const facts = await inspectKill(
      context.client,
      {
        datasource: r.datasource,
        interval: intervalField(r.interval),
        olderThanMs:
          r.olderThan !== undefined ? requestField("olderThan", () => parsePeriodMs(r.olderThan ?? "")) : 0,
        ...(r.versions && r.versions.length > 0 ? { versions: r.versions } : {}),
        batchSize: r.batchSize ?? 100,
        cluster: context.cluster,
      },
      context.now(),
      context.store,
    );
    const plan = planKill(facts);
    // Said before anything is deleted: with Druid's own auto-kill on, this kill only makes the deletion sooner.
    const druidKills = await druidAutoKills(context.client);
    const segmentIds = plan.batches.flatMap((b) => b.segmentIds);
    const bytes = plan.batches.reduce((n, b) => n + b.bytes, 0);
    const planned = new Set(segmentIds);
    const versions = [
      ...new Set(facts.unused.filter((u) => planned.has(segmentId(u.segment))).map((u) => u.segment.version)),
    ].sort();
    return {
      job: plan.job,
      tasks: plan.tasks,
      items: plan.batches.map((b) => ({
        interval: b.interval,
        what: `kill ${b.segmentIds.length} unused segment(s), ${b.bytes} bytes`,
      })),
      detail: {
        segments: segmentIds.length,
        bytes,
        batches: plan.batches.map((b) => ({
          interval: b.interval,
          segments: b.segmentIds.length,
          bytes: b.bytes,
          taskId: b.taskId,
        })),
        keptUsed: facts.used.length,
        segmentIds,
        druidKills: druidKills.killers
          .filter((k) => k.enabled)
          .map((k) => ({ property: k.property, bufferPeriod: k.bufferPeriod })),
      },
      // Every segment that would go, by id: what a dry run is read for.
      notes: [
        ...(druidKills.note ? [druidKills.note] : []),
        `${segmentIds.length} unused segment(s), ${bytes} bytes, versions ${versions.join(", ") || "-"}`,
        `${facts.used.length} used segment(s) stay`,
        ...segmentIds.map((id) => `- ${id}`),
      ],
    };
  },
};
