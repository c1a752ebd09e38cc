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
