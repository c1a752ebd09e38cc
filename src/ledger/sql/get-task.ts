import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

export function getTask(d: Dialect, id: string): Statement {
  const p = new Params(d);
  return p.statement(`SELECT * FROM tasks WHERE id = ${p.add(id)}`);
}
