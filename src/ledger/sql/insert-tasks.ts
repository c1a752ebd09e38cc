import type { Dialect } from "../store.js";
import type { NewTask } from "../types.js";
import { Params, type Statement } from "./statement.js";

/** Rows per INSERT: keeps Postgres under its 65,535-parameter limit and SQLite under 32,766. */
export const TASK_CHUNK = 500;

/** Inserts up to `TASK_CHUNK` new tasks of one job, state `new`, due at `runAt` or now. */
export function insertTasks(d: Dialect, jobId: string, tasks: readonly NewTask[], now: number): Statement {
  const p = new Params(d);
  const rows = tasks.map(
    (t) =>
      `(${p.add(t.id)}, ${p.add(jobId)}, ${p.add(t.kind)}, ${p.add(t.exclusionKey ?? null)}, ${p.add(JSON.stringify(t.payload ?? {}))}, 'new', ${p.add(t.maxRetry ?? null)}, ${p.add(t.runAt ?? now)}, ${p.add(now)}, ${p.add(now)})`,
  );
  return p.statement(
    `INSERT INTO tasks (id, job_id, kind, exclusion_key, payload, state, max_retry, run_at, created_at, updated_at)
     VALUES ${rows.join(", ")}`,
  );
}
