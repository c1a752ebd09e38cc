import type { Dialect, ListJobsOptions } from "../store.js";
import { Params, type Statement } from "./statement.js";

/** Newest first. */
export function listJobs(d: Dialect, o: ListJobsOptions): Statement {
  const p = new Params(d);
  const where: string[] = [];
  if (o.kind !== undefined) where.push(`kind = ${p.add(o.kind)}`);
  if (o.state !== undefined) where.push(`state = ${p.add(o.state)}`);
  if (o.after !== undefined) {
    const at = p.add(o.after.createdAt);
    where.push(`(created_at < ${at} OR (created_at = ${at} AND id > ${p.add(o.after.id)}))`);
  }
  return p.statement(
    `SELECT * FROM jobs ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
     ORDER BY created_at DESC, id LIMIT ${p.add(o.limit ?? 100)}`,
  );
}
