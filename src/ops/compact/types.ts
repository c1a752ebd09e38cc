import { z } from "zod";
import type { KindEncoding } from "../../driver/kind.js";
import { COMPACT_KIND, type CompactPayload } from "./plan.js";

/** How a compact partition's rows are encoded (checked when read). */

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
