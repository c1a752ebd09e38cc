import type { Dialect } from "../store.js";
import { NON_TERMINAL, Params, type Statement } from "./statement.js";

/** Flags the job itself as canceled (its tasks are flagged by `cancelJobTasks`). */
export function cancelJob(d: Dialect, id: string, now: number): Statement {
  const p = new Params(d);
  return p.statement(
    `UPDATE jobs SET canceled = TRUE, updated_at = ${p.add(now)} WHERE id = ${p.add(id)} RETURNING *`,
  );
}

/**
 * Rows one statement of a job's cancel changes at most: the cancel runs it until it changes fewer, and the
 * process serves others in between (one UPDATE of a 36,525-partition job held SQLite, and the service, 1.1 s).
 */
export const CANCEL_CHUNK = 1000;

/**
 * Flags up to `CANCEL_CHUNK` non-terminal, not yet canceled tasks of a job (version untouched, as in
 * `cancelTask`). Returns ids and states only: parsing every payload cost as much again.
 */
export function cancelJobTasks(d: Dialect, jobId: string, reason: string, now: number): Statement {
  const p = new Params(d);
  const job = p.add(jobId);
  return p.statement(
    `UPDATE tasks SET canceled = TRUE, reason = ${p.add(reason)}, updated_at = ${p.add(now)}
     WHERE id IN (SELECT id FROM tasks WHERE job_id = ${job} AND state IN ${NON_TERMINAL} AND NOT canceled
       ORDER BY id LIMIT ${CANCEL_CHUNK})
     RETURNING id, state`,
  );
}

/**
 * Ends up to `CANCEL_CHUNK` canceled tasks no driver holds (waiting to run or handed back) as failed at once, as a driver
 * finishing them would (`canceled: <reason>`): a canceled job of 36,000 partitions otherwise filled every
 * claim for minutes, each partition a claim and a transition, while other jobs waited.
 */
export function finishCanceledUnheld(d: Dialect, jobId: string, reason: string, now: number): Statement {
  const p = new Params(d);
  const why = p.add(`canceled: ${reason}`);
  return p.statement(
    `UPDATE tasks SET state = 'failed', reason = ${why}, last_error = ${why}, lease_owner = NULL,
       lease_expires_at = NULL, version = version + 1, updated_at = ${p.add(now)}
     WHERE id IN (SELECT id FROM tasks WHERE job_id = ${p.add(jobId)} AND canceled
       AND state IN ('new', 'suspended') ORDER BY id LIMIT ${CANCEL_CHUNK})
     RETURNING id`,
  );
}
