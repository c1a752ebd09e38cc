import type { Dialect } from "../store.js";
import type { TaskRef } from "../types.js";
import { Params, type Statement } from "./statement.js";

/**
 * Extends the lease of the exact row the owner holds. No version bump (a heartbeat is not a transition),
 * and allowed on a canceled row so the owner keeps it while it winds the handler down.
 */
export function renewLease(d: Dialect, ref: TaskRef, expiresAt: number): Statement {
  const p = new Params(d);
  return p.prepared(
    `UPDATE tasks SET lease_expires_at = ${p.add(expiresAt)}
     WHERE id = ${p.add(ref.id)} AND lease_owner = ${p.add(ref.owner)} AND version = ${p.add(ref.version)}
       AND state = 'running' RETURNING *`,
  );
}
