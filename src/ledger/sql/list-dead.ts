import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

export function listDead(d: Dialect, jobId?: string): Statement {
  const p = new Params(d);
  const byJob = jobId === undefined ? "" : `AND job_id = ${p.add(jobId)}`;
  return p.statement(`SELECT * FROM tasks WHERE state = 'dead' ${byJob} ORDER BY updated_at, id`);
}
