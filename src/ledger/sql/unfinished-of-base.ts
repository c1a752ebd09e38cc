import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

/**
 * Serialises the creation of jobs over the same inputs on PostgreSQL: a transaction-scoped advisory lock
 * on the base id, so two hosts creating jobs over the same inputs at once check one after the other. SQLite needs none
 * (`BEGIN IMMEDIATE` already serialises every writer).
 */
export function lockBase(d: Dialect, baseId: string): Statement | null {
  if (d !== "postgres") return null;
  const p = new Params(d);
  return p.statement(`SELECT pg_advisory_xact_lock(hashtext(${p.add(`segops-job-base:${baseId}`)}))`);
}

/** Open jobs over the same inputs (the base id, or a `new` job of it) with partitions left to run. */
export function unfinishedOfBase(d: Dialect, baseId: string): Statement {
  const p = new Params(d);
  const base = p.add(baseId);
  const baseOf = d === "postgres" ? "(j.options::jsonb ->> 'baseId')" : "json_extract(j.options, '$.baseId')";
  return p.statement(
    `SELECT j.id FROM jobs j
     WHERE j.state = 'open' AND (j.id = ${base} OR ${baseOf} = ${base})
       AND EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = j.id AND t.state IN ('new', 'running', 'suspended'))
     ORDER BY j.id`,
  );
}
