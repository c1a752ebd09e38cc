import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

export function listTasks(d: Dialect, jobId: string): Statement {
  const p = new Params(d);
  return p.statement(`SELECT * FROM tasks WHERE job_id = ${p.add(jobId)} ORDER BY id`);
}
