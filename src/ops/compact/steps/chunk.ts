import { parseInterval } from "../../../core/interval.js";
import type { TaskIO } from "../../druid-task.js";
import { type Partition, usedAndServed } from "../../step-table.js";
import { type CompactPayload, judgeChunks } from "../plan.js";
import type { CompactProgress } from "../types.js";

/** One chunk's compaction as its steps see it. */
export type CompactPart = Partition<CompactPayload, CompactProgress>;

/** What a compaction's steps use: a budget at Druid for its compact tasks (compactionTaskSlotRatio). */
export type CompactIO = TaskIO;

/** The chunk's used segments, audited and judged with which ones are served (what measure, served and audit read). */
export async function judgedChunk(part: CompactPart, io: CompactIO) {
  const { datasource, interval, sizeBand } = part.payload;
  const { used, served } = await usedAndServed(io, datasource, interval, part.call);
  return { used, ...judgeChunks(datasource, parseInterval(interval), used, served, sizeBand) };
}

/** The first reason the chunk is not fully served yet (Broker SQL counts only served data), if any. */
export function notServed(report: { violations: ReadonlyArray<{ kind: string; message: string }> }) {
  return report.violations.find((v) => v.kind === "not-served")?.message ?? null;
}
