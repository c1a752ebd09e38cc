import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

/**
 * Fresh planner statistics for `tasks` after a bulk insert (PostgreSQL's "Populating a Database": run
 * ANALYZE afterwards). Until autovacuum gets to a just-created backfill of 100,000 rows, the planner
 * guesses one row per index and can pick a plan that visits every waiting row; SQLite plans without
 * statistics by design, so it has nothing to do.
 */
export function analyzeTasks(d: Dialect): Statement | null {
  return d === "postgres" ? new Params(d).statement("ANALYZE tasks") : null;
}
