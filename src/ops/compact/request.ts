import { z } from "zod";
import { UsageError } from "../../core/errors.js";
import type { KindRequest } from "../../driver/kind.js";
import { Datasource, IntervalText, intervalField, intervalKey, MB, requestKeyOf } from "../request.js";
import { compactCommand } from "./command.js";
import { inspectCompaction, planCompaction } from "./plan.js";

export const CompactionRequest = z.strictObject({
  datasource: Datasource,
  /** ISO-8601 interval to compact. */
  interval: IntervalText,
  /** Every chunk with data, not only those the audit flags. @default false */
  all: z.boolean().optional(),
  /** Segments below this size (MiB) are small. @default 300 */
  minSegmentMb: z.number().int().min(1).max(1_000_000).optional(),
  /** Segments above this size (MiB) are large. @default 700 */
  maxSegmentMb: z.number().int().min(1).max(1_000_000).optional(),
  /** Rows per segment the compaction writes. @default the datasource's auto-compaction rows cap, else 5,000,000 */
  maxRowsPerSegment: z.number().int().min(1).max(2_147_483_647).optional(),
  /** Answer with the plan and change nothing. @default false */
  dryRun: z.boolean().optional(),
});
export type CompactionRequest = z.infer<typeof CompactionRequest>;

/** `POST /api/v1/compactions`: the flagged (or all) chunks of an interval, read from Druid and planned. */
export const compactRequest: KindRequest<CompactionRequest> = {
  resource: "compactions",
  operationId: "createCompaction",
  summary:
    "Compact a datasource's fragmented time chunks (one compact task per chunk, data checked unchanged)",
  schema: CompactionRequest,
  command: compactCommand,
  // The size band and rows cap as asked: what the datasource's compaction config fills in is the plan's.
  key: (r, cluster) =>
    requestKeyOf(
      "compact",
      {
        datasource: r.datasource,
        interval: intervalKey(r.interval),
        all: r.all === true,
        ...bandMbOf(r),
        maxRowsPerSegment: r.maxRowsPerSegment ?? null,
      },
      cluster,
    ),
  async plan(context, r) {
    const { minSegmentMb: min, maxSegmentMb: max } = bandMbOf(r);
    if (min >= max) {
      const problem = `must be below maxSegmentMb (${max})`;
      throw new UsageError(`minSegmentMb (${min}) ${problem}`, { path: "minSegmentMb", problem });
    }
    // Without the flag, the datasource's auto-compaction config may set the rows cap (planCompaction).
    const maxRows = r.maxRowsPerSegment;
    const plan = planCompaction(
      await inspectCompaction(context.client, {
        datasource: r.datasource,
        interval: intervalField(r.interval),
        all: r.all === true,
        sizeBand: { minBytes: min * MB, maxBytes: max * MB, maxRows: maxRows ?? 5_000_000 },
        ...(maxRows !== undefined ? { maxRowsPerSegment: maxRows } : {}),
        cluster: context.cluster,
      }),
    );
    return {
      job: plan.job,
      tasks: plan.tasks,
      items: [
        ...plan.chunks.map((c) => ({
          interval: c.interval,
          what: `compact ${c.inputs.length} segment(s), ${c.bytes} bytes (${c.reasons.join("; ") || "all"})`,
        })),
        ...plan.skipped.map((s) => ({
          interval: s.interval,
          what: `skipped: a running task holds a lock on ${s.lockedBy}`,
        })),
      ],
      detail: { chunks: plan.chunks, skipped: plan.skipped },
    };
  },
};

/** The size band the request asks for, in MiB, its defaults filled in. */
function bandMbOf(r: CompactionRequest): { minSegmentMb: number; maxSegmentMb: number } {
  return { minSegmentMb: r.minSegmentMb ?? 300, maxSegmentMb: r.maxSegmentMb ?? 700 };
}
