import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

/** Records a key unless it exists; returns the row only when inserted. */
export function insertIdempotencyKey(
  d: Dialect,
  key: string,
  requestHash: string,
  jobId: string,
  now: number,
): Statement {
  const p = new Params(d);
  return p.statement(
    `INSERT INTO idempotency_keys (key, request_hash, job_id, created_at)
     VALUES (${p.add(key)}, ${p.add(requestHash)}, ${p.add(jobId)}, ${p.add(now)})
     ON CONFLICT (key) DO NOTHING RETURNING *`,
  );
}

export function getIdempotencyKey(d: Dialect, key: string): Statement {
  const p = new Params(d);
  return p.statement(`SELECT * FROM idempotency_keys WHERE key = ${p.add(key)}`);
}
