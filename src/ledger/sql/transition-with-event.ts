import type { Dialect } from "../store.js";
import type { TaskRef, Transition } from "../types.js";
import type { NewEvent } from "./append-events.js";
import type { Statement } from "./statement.js";
import { transition } from "./transition.js";

/**
 * Postgres only: the CAS update and its event in one statement (one round trip, one commit), via a
 * data-modifying CTE. The event is written only when the update matched, so a refused CAS leaves no trace.
 */
export function transitionWithEvent(
  d: Dialect,
  ref: TaskRef,
  change: Transition,
  now: number,
  event: Omit<NewEvent, "jobId" | "taskId" | "toState"> | null,
): Statement {
  if (d !== "postgres") throw new Error("transitionWithEvent needs data-modifying CTEs (Postgres)");
  const update = transition(d, ref, change, now);
  if (!event) return { ...update, prepare: true };
  const values = [...update.values];
  const add = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  return {
    text: `WITH u AS (${update.text}),
      e AS (INSERT INTO events (job_id, task_id, from_state, to_state, reason, actor, at, data)
            SELECT job_id, id, ${add(event.fromState)}, state, ${add(event.reason)}, ${add(event.actor)}, ${add(now)}, ${add(JSON.stringify(event.data ?? {}))} FROM u)
      SELECT * FROM u`,
    values,
    prepare: true,
  };
}
