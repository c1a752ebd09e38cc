import type { ClaimOptions, Dialect, ListDueOptions } from "../store.js";
import { CLAIMABLE, NON_TERMINAL, Params, type Statement } from "./statement.js";

/**
 * Named tasks (the driver's eligible ones: a hundred at most) that are still claimable: due (or canceled,
 * so the driver can finish it promptly), new/suspended or running with an expired lease (lease expiry lives
 * here: no sweeper), and no other running task holds its key. SQLite: read by primary key; the unary `+`
 * keeps its planner (which has no statistics) from walking an index on kind or job instead, every waiting
 * row of the kind (11 ms at 100,000). The `NOT EXISTS` only avoids wasted work; the unique index
 * `tasks_running_key` is what makes exclusion race-safe across hosts.
 */
function namedClaimable(
  p: Params,
  columns: string,
  kind: string,
  now: number,
  ids: readonly string[],
  jobIds?: readonly string[],
): string {
  const t = p.add(now);
  // A driver runs only the jobs it was asked to run: a shared ledger holds other jobs, maybe for other clusters.
  return `SELECT ${columns} FROM tasks c WHERE ${p.inList("c.id", ids)} AND +c.kind = ${p.add(kind)}
    ${jobIds ? `AND ${p.inList("+c.job_id", jobIds)}` : ""}
    AND (c.run_at <= ${t} OR c.canceled)
    AND (c.state IN ${CLAIMABLE} OR (c.state = 'running' AND c.lease_expires_at <= ${t}))
    AND (c.exclusion_key IS NULL OR NOT EXISTS (
      SELECT 1 FROM tasks r WHERE r.exclusion_key = c.exclusion_key AND r.state = 'running' AND r.id <> c.id))`;
}

/**
 * Claim order: canceled first (finish them promptly), then work already started (suspended, or running
 * under an expired lease) before new work — after a crash the interrupted tasks are resumed first, and
 * a window of new tasks that are not yet eligible cannot hide them — then by due time.
 */
const CLAIM_ORDER = "c.canceled DESC, CASE WHEN c.state = 'new' THEN 1 ELSE 0 END, c.run_at, c.id";

/**
 * The first `limit` claimable tasks in claim order, read so that the cost follows `limit`, not the number
 * due: one select per rank of the order (canceled; suspended; running under an expired lease; new), each
 * walking an index in (run_at, id) order (`tasks_canceled`, `tasks_waiting_order`, `tasks_leased`) and
 * stopping after `limit` rows, then the few rows they return sorted once. One select over all of them
 * read and sorted every due row: 160 ms on PostgreSQL with 100,000 due (docs/benchmarks.md). Each
 * select repeats the literal state terms of the partial index it reads, which is how SQLite (and
 * PostgreSQL) see that the index covers it.
 */
function claimableInOrder(
  p: Params,
  columns: string,
  limit: number,
  kind: string,
  now: number,
  jobIds?: readonly string[],
): string {
  const t = p.add(now);
  const n = p.add(limit);
  const common = `c.kind = ${p.add(kind)}
    ${jobIds ? `AND ${p.inList("c.job_id", jobIds)}` : ""}
    AND (c.exclusion_key IS NULL OR NOT EXISTS (
      SELECT 1 FROM tasks r WHERE r.exclusion_key = c.exclusion_key AND r.state = 'running' AND r.id <> c.id))`;
  const rank = (where: string, order = "c.run_at, c.id") =>
    `SELECT * FROM (SELECT ${columns} FROM tasks c WHERE ${where} AND ${common} ORDER BY ${order} LIMIT ${n}) c`;
  return `SELECT * FROM (
    ${rank(
      `c.canceled AND c.state IN ${NON_TERMINAL} AND (c.state <> 'running' OR c.lease_expires_at <= ${t})`,
      CLAIM_ORDER,
    )}
    UNION ALL ${rank(`c.state IN ${CLAIMABLE} AND c.state = 'suspended' AND NOT c.canceled AND c.run_at <= ${t}`)}
    UNION ALL ${rank(`c.state = 'running' AND c.lease_expires_at <= ${t} AND NOT c.canceled AND c.run_at <= ${t}`)}
    UNION ALL ${rank(`c.state IN ${CLAIMABLE} AND c.state = 'new' AND NOT c.canceled AND c.run_at <= ${t}`)}
  ) c ORDER BY ${CLAIM_ORDER} LIMIT ${n}`;
}

/** Due tasks, read only (for `isEligible` pre-filtering), in claim order. */
export function listDue(d: Dialect, o: ListDueOptions, now: number): Statement {
  const p = new Params(d);
  return p.statement(claimableInOrder(p, "c.*", o.limit, o.kind, now, o.jobIds));
}

/**
 * Step 1 of a claim (inside its transaction): lock the candidates. Postgres skips rows other claimers
 * hold (`FOR UPDATE SKIP LOCKED`) and keeps the predicate on the locked rows themselves: a row another
 * claimer took after this statement's snapshot is re-checked against it once unlocked (a UNION cannot carry
 * the lock, so the ranks only find the candidates). SQLite needs no row lock because `BEGIN IMMEDIATE`
 * serialises writers.
 */
export function selectClaimable(d: Dialect, o: ClaimOptions, now: number): Statement {
  const p = new Params(d);
  if (d === "sqlite") {
    const columns = "c.id, c.job_id, c.state, c.lease_owner, c.exclusion_key, c.canceled, c.run_at";
    // Named ids (the driver's eligible ones) are few: read them directly; else the first in claim order.
    return p.statement(
      o.ids
        ? `SELECT id, job_id, state, lease_owner, exclusion_key FROM (${namedClaimable(p, columns, o.kind, now, o.ids, o.jobIds)}) c
           ORDER BY ${CLAIM_ORDER} LIMIT ${p.add(o.limit)}`
        : `SELECT id, job_id, state, lease_owner, exclusion_key FROM (${claimableInOrder(p, columns, o.limit, o.kind, now, o.jobIds)}) c`,
    );
  }
  const jobs = o.jobIds ? `AND ${p.inList("c.job_id", o.jobIds)}` : "";
  // Without named ids, the candidates are the first in claim order, found as `listDue` finds them, and
  // more of them than the limit: a claimer that meets another's locked rows takes the next ones, as one
  // select over every due row did. The locking select re-checks each against the whole predicate.
  // ARRAY(…) is computed once, the rows then found by primary key: as `IN (subquery)`, a planner without
  // statistics yet (a backfill's 100,000 rows just inserted) joined it against every waiting row.
  const candidates = Math.min(o.limit * 4, o.limit + 1000);
  const ids = o.ids
    ? `AND ${p.inList("c.id", o.ids)}`
    : `AND c.id = ANY(ARRAY(SELECT id FROM (${claimableInOrder(p, "c.id, c.canceled, c.state, c.run_at", candidates, o.kind, now, o.jobIds)}) candidates))`;
  const t = p.add(now);
  return p.statement(
    `SELECT c.id, c.job_id, c.state, c.lease_owner, c.exclusion_key FROM tasks c
     WHERE c.kind = ${p.add(o.kind)} ${jobs} ${ids}
       AND (c.run_at <= ${t} OR c.canceled)
       AND (c.state IN ${CLAIMABLE} OR (c.state = 'running' AND c.lease_expires_at <= ${t}))
       AND (c.exclusion_key IS NULL OR NOT EXISTS (
         SELECT 1 FROM tasks r WHERE r.exclusion_key = c.exclusion_key AND r.state = 'running' AND r.id <> c.id))
     ORDER BY ${CLAIM_ORDER} LIMIT ${p.add(o.limit)}
     FOR UPDATE SKIP LOCKED`,
  );
}

/**
 * Advisory-lock space of exclusion keys (the two-int4 form, which never meets the one-bigint form the
 * migrations lock with): "SegO".
 */
const KEY_LOCK_SPACE = 0x5365674f;

/**
 * Step 2: take the picked candidates: running, leased to `owner`, version bumped.
 *
 * On Postgres a candidate with an exclusion key is taken only if this transaction gets the key's advisory
 * lock at once (`pg_try_advisory_xact_lock`, before the row's `tasks_running_key` entry is written).
 * Without it, two hosts claiming tasks of the same keys at once each wrote index entries the other had
 * written uncommitted, in different orders, and waited on each other until the deadlock detector
 * (`deadlock_timeout`, 1 s by default) rolled one back: a second of both claims, and leases dated from
 * before the wait. Now a key another claim is taking is left for the next cycle, and the unique index
 * only ever meets committed entries (an instant refusal, retried on a fresh snapshot). A hash collision
 * of two keys only defers one of them.
 */
export function markClaimed(d: Dialect, ids: readonly string[], o: ClaimOptions, now: number): Statement {
  const p = new Params(d);
  const t = p.add(now);
  const keyLock =
    d === "postgres"
      ? `AND (exclusion_key IS NULL OR pg_try_advisory_xact_lock(${KEY_LOCK_SPACE}, hashtext(exclusion_key)))`
      : "";
  return p.statement(
    `UPDATE tasks SET state = 'running', lease_owner = ${p.add(o.owner)}, lease_expires_at = ${p.add(now + o.leaseMs)},
       version = version + 1, updated_at = ${t}
     WHERE ${p.inList("id", ids)} ${keyLock} RETURNING *`,
  );
}

export interface Candidate {
  readonly id: string;
  readonly exclusionKey: string | null;
}

/** Keeps the first candidate per exclusion key (candidates come in claim order). Pure. */
export function pickDistinctKeys<T extends Candidate>(candidates: readonly T[]): T[] {
  const seen = new Set<string>();
  return candidates.filter((c) => {
    if (c.exclusionKey === null) return true;
    if (seen.has(c.exclusionKey)) return false;
    seen.add(c.exclusionKey);
    return true;
  });
}
