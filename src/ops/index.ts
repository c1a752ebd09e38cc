export { killKind } from "./kill/kind.js";
export {
  inspectKill,
  KILL_KIND,
  type KillFacts,
  type KillPayload,
  type KillRequest,
  planKill,
} from "./kill/plan.js";
export { rollbackKind } from "./rollback/kind.js";
export {
  chunkRestored,
  inspectRollback,
  planRollback,
  ROLLBACK_KIND,
  type RollbackFacts,
  type RollbackPayload,
  type RollbackRequest,
} from "./rollback/plan.js";
