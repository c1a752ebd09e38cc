import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

/** dead → new, due now: the retry budget starts over, the attempt number is kept (ids stay unique). */
export function retryDead(d: Dialect, id: string, now: number): Statement {
  const p = new Params(d);
  const t = p.add(now);
  return p.statement(
    `UPDATE tasks SET state = 'new', retry = 0, canceled = FALSE, run_at = ${t}, reason = 'retried from dead letter',
       version = version + 1, updated_at = ${t}
     WHERE id = ${p.add(id)} AND state = 'dead' RETURNING *`,
  );
}
