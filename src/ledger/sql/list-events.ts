import type { Dialect, ListEventsOptions } from "../store.js";
import { Params, type Statement } from "./statement.js";

/** Oldest first (the order their ids were taken), or newest first. */
export function listEvents(d: Dialect, o: ListEventsOptions): Statement {
  const p = new Params(d);
  const where: string[] = [];
  if (o.jobId !== undefined) where.push(`job_id = ${p.add(o.jobId)}`);
  if (o.taskId !== undefined) where.push(`task_id = ${p.add(o.taskId)}`);
  if (o.afterId !== undefined) where.push(`id > ${p.add(o.afterId)}`);
  if (o.ids !== undefined) where.push(p.inNumbers("id", o.ids));
  return p.statement(
    `SELECT * FROM events ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id ${o.newestFirst ? "DESC" : ""} LIMIT ${p.add(o.limit ?? 1000)}`,
  );
}
