import type { Dialect } from "../store.js";
import type { NewJob } from "../types.js";
import { Params, type Statement } from "./statement.js";

/** Inserts a job unless its id exists; returns the row only when inserted (idempotent create). */
export function insertJob(d: Dialect, job: NewJob, now: number): Statement {
  const p = new Params(d);
  return p.statement(
    `INSERT INTO jobs (id, kind, options, state, canceled, created_at, updated_at)
     VALUES (${p.add(job.id)}, ${p.add(job.kind)}, ${p.add(JSON.stringify(job.options ?? {}))}, 'open', FALSE, ${p.add(now)}, ${p.add(now)})
     ON CONFLICT (id) DO NOTHING RETURNING *`,
  );
}
