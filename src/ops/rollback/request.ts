import { z } from "zod";
import { parseInstant } from "../../core/interval.js";
import type { KindRequest } from "../../driver/kind.js";
import {
  Datasource,
  InstantText,
  IntervalText,
  intervalField,
  intervalKey,
  requestField,
  requestKeyOf,
} from "../request.js";
import { rollbackCommand } from "./command.js";
import { inspectRollback, planRollback } from "./plan.js";

export const RollbackRequest = z
  .strictObject({
    datasource: Datasource,
    interval: IntervalText,
    /** Restore this version in every chunk (exactly one of toVersion and before). */
    toVersion: z.string().min(1, "must not be empty").max(200).optional(),
    /** Restore, in each chunk, the newest version written before this instant. */
    before: InstantText.optional(),
    /** @default false */
    dryRun: z.boolean().optional(),
  })
  .refine((r) => (r.toVersion === undefined) !== (r.before === undefined), {
    message: "give exactly one of toVersion and before",
    path: ["toVersion"],
  });
export type RollbackRequest = z.infer<typeof RollbackRequest>;

/** `POST /api/v1/rollbacks`: each chunk of an interval back to an earlier version. */
export const rollbackRequest: KindRequest<RollbackRequest> = {
  resource: "rollbacks",
  operationId: "createRollback",
  summary: "Roll time chunks back to an earlier version (markUsed / markUnused, checked served)",
  schema: RollbackRequest,
  command: rollbackCommand,
  key: (r, cluster) =>
    requestKeyOf(
      "rollback",
      { datasource: r.datasource, interval: intervalKey(r.interval), ...targetOf(r) },
      cluster,
    ),
  async plan(context, r) {
    const target = targetOf(r);
    const plan = planRollback(
      await inspectRollback(context.client, {
        datasource: r.datasource,
        interval: intervalField(r.interval),
        target,
        cluster: context.cluster,
      }),
    );
    return {
      job: plan.job,
      tasks: plan.tasks,
      items: plan.chunks.map((c) => ({
        interval: c.interval,
        what: `${c.newerVersions.length > 0 ? `mark ${c.newerVersions.join(", ")} unused, ` : ""}mark ${c.toVersion} used (${c.segmentIds.length} segment(s))`,
      })),
      detail: { chunks: plan.chunks },
    };
  },
};

/** The version to restore, or the instant to go back before (in one spelling). */
function targetOf(r: RollbackRequest): { version: string } | { before: string } {
  return r.toVersion !== undefined
    ? { version: r.toVersion }
    : { before: new Date(requestField("before", () => parseInstant(r.before ?? ""))).toISOString() };
}
