import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

/** dead → failed: never run again, kept (with its events) for the audit trail. */
export function dropDead(d: Dialect, id: string, now: number): Statement {
  const p = new Params(d);
  return p.statement(
    `UPDATE tasks SET state = 'failed', reason = 'dropped from dead letter', version = version + 1,
       updated_at = ${p.add(now)}
     WHERE id = ${p.add(id)} AND state = 'dead' RETURNING *`,
  );
}
