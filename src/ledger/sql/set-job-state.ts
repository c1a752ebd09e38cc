import type { Dialect } from "../store.js";
import type { JobState } from "../types.js";
import { Params, type Statement } from "./statement.js";

export function setJobState(d: Dialect, id: string, state: JobState, now: number): Statement {
  const p = new Params(d);
  return p.statement(
    `UPDATE jobs SET state = ${p.add(state)}, updated_at = ${p.add(now)} WHERE id = ${p.add(id)} RETURNING *`,
  );
}
