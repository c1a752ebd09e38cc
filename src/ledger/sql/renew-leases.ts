import type { Dialect, HeldLease } from "../store.js";
import { Params, type Statement } from "./statement.js";

/**
 * Extends every lease one owner holds, in one statement: the heartbeat of a driver holding 10,000
 * partitions is one write a period, not 10,000. Each row is still a compare-and-set on
 * (id, owner, version, running): a row another owner took over, or one we moved past, is left alone and
 * missing from the answer. No version bump (a heartbeat is not a transition), and canceled rows are
 * renewed too, so the owner keeps them while it winds the handler down; the answer carries the flag and
 * the cancel's reason.
 */
export function renewLeases(
  d: Dialect,
  owner: string,
  leases: readonly HeldLease[],
  expiresAt: number,
): Statement {
  const p = new Params(d);
  if (d === "postgres") {
    return p.prepared(
      `UPDATE tasks t SET lease_expires_at = ${p.add(expiresAt)}
       FROM unnest(${p.add(leases.map((l) => l.id))}::text[], ${p.add(leases.map((l) => l.version))}::integer[])
         AS held(id, version)
       WHERE t.id = held.id AND t.version = held.version AND t.lease_owner = ${p.add(owner)}
         AND t.state = 'running'
       RETURNING t.id, t.canceled, CASE WHEN t.canceled THEN t.reason END AS reason`,
    );
  }
  // SQLite: the ids drive primary-key lookups; the id-and-version key (a version is digits after the last
  // space, so the pair is unambiguous) is the compare-and-set, against an index SQLite builds once.
  return p.statement(
    `UPDATE tasks SET lease_expires_at = ${p.add(expiresAt)}
     WHERE ${p.inList(
       "id",
       leases.map((l) => l.id),
     )}
       AND (id || ' ' || version) IN (SELECT value FROM json_each(${p.add(
         JSON.stringify(leases.map((l) => `${l.id} ${l.version}`)),
       )}))
       AND lease_owner = ${p.add(owner)} AND state = 'running'
     RETURNING id, canceled, CASE WHEN canceled THEN reason END AS reason`,
  );
}
