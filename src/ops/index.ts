export { compactKind } from "./compact/kind.js";
export {
  type ChunkVerdict,
  COMPACT_KIND,
  type CompactFacts,
  type CompactPayload,
  type CompactPlan,
  type CompactRequest,
  chunkVerdicts,
  inspectCompaction,
  judgeChunks,
  planCompaction,
} from "./compact/plan.js";
export { type CompactionVerdict, chunkTotals, compactionVerdict, sameData } from "./compact/totals.js";
export { compactTaskId } from "./compact/types.js";
export { killKind } from "./kill/kind.js";
export {
  inspectKill,
  KILL_KIND,
  type KillFacts,
  type KillLedger,
  type KillPayload,
  type KillRequest,
  planKill,
  type UnfinishedRollback,
  unfinishedRollbacks,
} from "./kill/plan.js";
export { rollbackKind } from "./rollback/kind.js";
export {
  chunkRestored,
  inspectRollback,
  newerPublished,
  planRollback,
  ROLLBACK_KIND,
  type RollbackFacts,
  type RollbackPayload,
  type RollbackRequest,
  unplannedNewer,
} from "./rollback/plan.js";
export {
  compactionSlotBudget,
  killSlotBudget,
  readCompactionBudget,
  readKillBudget,
  taskSlotBudget,
} from "./slots.js";
