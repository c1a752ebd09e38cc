import type { Dialect } from "../store.js";
import type { EventRow, JsonObject } from "../types.js";
import { Params, type Statement } from "./statement.js";

/** An event to append: what an `EventRow` holds before the database gives it an id and a time. */
export type NewEvent = Omit<EventRow, "id" | "at" | "data"> & { readonly data?: JsonObject };

/** Appends events (the audit trail is insert-only: nothing ever updates or deletes an event). */
export function appendEvents(d: Dialect, events: readonly NewEvent[], now: number): Statement {
  const p = new Params(d);
  const rows = events.map(
    (e) =>
      `(${p.add(e.jobId)}, ${p.add(e.taskId)}, ${p.add(e.fromState)}, ${p.add(e.toState)}, ${p.add(e.reason)}, ${p.add(e.actor)}, ${p.add(now)}, ${p.add(JSON.stringify(e.data ?? {}))})`,
  );
  return p.statement(
    `INSERT INTO events (job_id, task_id, from_state, to_state, reason, actor, at, data) VALUES ${rows.join(", ")}`,
  );
}
