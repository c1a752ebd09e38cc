import type { Dialect } from "../store.js";
import type { TaskRef } from "../types.js";
import { Params, type Statement } from "./statement.js";

const held = (p: Params, ref: TaskRef) =>
  `id = ${p.add(ref.id)} AND lease_owner = ${p.add(ref.owner)} AND version = ${p.add(ref.version)}
   AND state = 'running' AND NOT canceled`;

/** Step 1 of a checkpoint: read (and on Postgres lock) the held row's progress. */
export function readHeldProgress(d: Dialect, ref: TaskRef): Statement {
  const p = new Params(d);
  return p.statement(
    `SELECT progress FROM tasks WHERE ${held(p, ref)} ${d === "postgres" ? "FOR UPDATE" : ""}`,
  );
}

/** Step 2: write the merged progress with the same CAS, bumping the version. */
export function writeProgress(d: Dialect, ref: TaskRef, progressJson: string, now: number): Statement {
  const p = new Params(d);
  return p.statement(
    `UPDATE tasks SET progress = ${p.add(progressJson)}, version = version + 1, updated_at = ${p.add(now)}
     WHERE ${held(p, ref)} RETURNING *`,
  );
}
