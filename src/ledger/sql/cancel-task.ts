import type { Dialect } from "../store.js";
import { NON_TERMINAL, Params, type Statement } from "./statement.js";

/**
 * Sets the cancel flag on a non-terminal task. The version is deliberately not bumped: the owner may
 * still commit a terminal outcome, while its non-terminal writes are refused by their `NOT canceled`.
 */
export function cancelTask(d: Dialect, id: string, reason: string, now: number): Statement {
  const p = new Params(d);
  return p.statement(
    `UPDATE tasks SET canceled = TRUE, reason = ${p.add(reason)}, updated_at = ${p.add(now)}
     WHERE id = ${p.add(id)} AND state IN ${NON_TERMINAL} AND NOT canceled RETURNING *`,
  );
}
