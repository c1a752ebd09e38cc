import type { Dialect } from "../store.js";
import type { JobState } from "../types.js";
import { Params, type Statement } from "./statement.js";

/**
 * Moves a job to `state`. Reopening clears the cancel flag: a job is reopened only when its partitions are
 * sent back to run (a retry), which asks for the work again, so it is no longer canceled.
 */
export function setJobState(d: Dialect, id: string, state: JobState, now: number): Statement {
  const p = new Params(d);
  const reopen = state === "open" ? ", canceled = FALSE" : "";
  return p.statement(
    `UPDATE jobs SET state = ${p.add(state)}${reopen}, updated_at = ${p.add(now)} WHERE id = ${p.add(id)} RETURNING *`,
  );
}
