import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

/**
 * A partition planned anew (its input changed): the new payload, progress started over, back to `new`
 * and due now, the attempt number moved on, retry budget reset and cancel cleared. A CAS on the version
 * read, and never while a driver runs it: a refused write changes nothing.
 */
export function replanTask(
  d: Dialect,
  ref: { id: string; version: number },
  payloadJson: string,
  reason: string,
  now: number,
): Statement {
  const p = new Params(d);
  const t = p.add(now);
  return p.statement(
    `UPDATE tasks SET payload = ${p.add(payloadJson)}, progress = ${p.add("{}")}, state = 'new', retry = 0,
       canceled = FALSE, attempt = attempt + 1, run_at = ${t}, reason = ${p.add(reason)},
       lease_owner = NULL, lease_expires_at = NULL, version = version + 1, updated_at = ${t}
     WHERE id = ${p.add(ref.id)} AND version = ${p.add(ref.version)} AND state <> 'running' RETURNING *`,
  );
}
