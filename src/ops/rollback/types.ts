import { z } from "zod";
import type { KindEncoding } from "../../driver/kind.js";
import { ROLLBACK_KIND } from "./plan.js";

/** How a rollback partition's rows are encoded (checked when read). */

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
