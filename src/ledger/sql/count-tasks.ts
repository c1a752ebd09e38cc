import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

export function countTasks(d: Dialect, jobId: string): Statement {
  const p = new Params(d);
  return p.statement(`SELECT state, COUNT(*) AS n FROM tasks WHERE job_id = ${p.add(jobId)} GROUP BY state`);
}

/** Every kind's tasks per state (the metrics' partitions gauge). */
export function countByKind(d: Dialect): Statement {
  return new Params(d).statement("SELECT kind, state, COUNT(*) AS n FROM tasks GROUP BY kind, state");
}
