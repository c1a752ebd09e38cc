import { z } from "zod";
import type { KindEncoding } from "../../driver/kind.js";
import { KILL_KIND, type KillPayload } from "./plan.js";

/** How a kill partition's rows are encoded (checked when read). */

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
  /** The attempt whose kill task the steps below follow; a new attempt submits again. */
  attempt: z.number().int().optional(),
  /** The kill task submitted for that attempt (absent: the first attempt's, `payload.taskId`). */
  druidTaskId: z.string().nullable().optional(),
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

/**
 * The Druid task id of one attempt of a kill batch: the plan's pinned id for the first (what every kill
 * before attempts existed was submitted as), `_a<attempt>` after it for a later one. A FAILED id can never
 * be submitted again; the same batch and attempt are the same task (a resubmit after a crash reattaches).
 * The suffix cannot meet another batch's id: those end in the hash or `_<part>`.
 */
export function killTaskId(payload: Pick<KillPayload, "taskId">, attempt: number): string {
  return attempt <= 1 ? payload.taskId : `${payload.taskId}_a${attempt}`;
}
