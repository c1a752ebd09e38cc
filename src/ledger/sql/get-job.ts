import type { Dialect } from "../store.js";
import { Params, type Statement } from "./statement.js";

export function getJob(d: Dialect, id: string): Statement {
  const p = new Params(d);
  return p.statement(`SELECT * FROM jobs WHERE id = ${p.add(id)}`);
}
