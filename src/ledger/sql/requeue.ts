import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

/**
 * A finished task back to `new`, due now (from `fromState`, as a CAS on it): the retry budget starts over,
 * a cancel flag is cleared, the attempt number is kept (the handler moves to a new attempt when that
 * attempt's Druid id already failed, so ids stay unique).
 */
export function requeue(
  d: Dialect,
  id: string,
  fromState: "dead" | "failed",
  reason: string,
  now: number,
): Statement {
  const p = new Params(d);
  const t = p.add(now);
  return p.statement(
    `UPDATE tasks SET state = 'new', retry = 0, canceled = FALSE, run_at = ${t}, reason = ${p.add(reason)},
       lease_owner = NULL, lease_expires_at = NULL, version = version + 1, updated_at = ${t}
     WHERE id = ${p.add(id)} AND state = ${p.add(fromState)} RETURNING *`,
  );
}
