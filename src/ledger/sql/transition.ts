import type { Dialect } from "../store.js";
import type { TaskRef, Transition } from "../types.js";
import { Params, type Statement } from "./statement.js";

/**
 * Commits one outcome as a compare-and-set on the row the owner holds (id + owner + version, state
 * running — so a terminal row is always refused). Non-terminal outcomes also require `NOT canceled`:
 * a late defer/retry/progress can never resurrect a canceled task. Never writes a whole row.
 */
export function transition(d: Dialect, ref: TaskRef, change: Transition, now: number): Statement {
  const p = new Params(d);
  const t = p.add(now);
  const reason = p.add(change.reason);
  const release = "lease_owner = NULL, lease_expires_at = NULL";
  let set: string;
  let nonTerminal = true;
  switch (change.to) {
    case "done":
      set = `state = 'done', ${release}, reason = ${reason}`;
      nonTerminal = false;
      break;
    case "failed":
    case "dead":
      set = `state = ${p.add(change.to)}, ${release}, reason = ${reason}, last_error = ${reason}`;
      nonTerminal = false;
      break;
    case "suspended":
      set = `state = 'suspended', ${release}, run_at = ${p.add(change.runAt)}, reason = ${reason}`;
      break;
    case "retry": {
      // retry + 1 is computed on the committed row, and so is the ceiling check.
      const ceiling = p.add(change.ceiling);
      set = `state = CASE WHEN ${ceiling} >= 0 AND retry + 1 > ${ceiling} THEN 'failed' ELSE 'suspended' END,
        retry = retry + 1, attempt = attempt + ${p.add(change.newAttempt ? 1 : 0)}, ${release},
        run_at = ${p.add(change.runAt)}, reason = ${reason}, last_error = ${reason}`;
      break;
    }
    case "progress":
      set = `run_at = ${p.add(change.runAt)}, lease_expires_at = ${p.add(change.leaseExpiresAt)}, reason = ${reason}`;
      break;
  }
  return p.statement(
    `UPDATE tasks SET ${set}, version = version + 1, updated_at = ${t}
     WHERE id = ${p.add(ref.id)} AND lease_owner = ${p.add(ref.owner)} AND version = ${p.add(ref.version)}
       AND state = 'running' ${nonTerminal ? "AND NOT canceled" : ""} RETURNING *`,
  );
}
