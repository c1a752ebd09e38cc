import { z } from "zod";
import type { KindEncoding } from "../../driver/kind.js";
import { KILL_KIND } from "./plan.js";

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
