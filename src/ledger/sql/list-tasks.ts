import type { Dialect, TaskPage } from "../store.js";
import { Params, type Statement } from "./statement.js";

/** A job's tasks in id order: all of them, or a page after an id (read through `tasks_job_order`). */
export function listTasks(d: Dialect, jobId: string, page: TaskPage = {}): Statement {
  const p = new Params(d);
  const after = page.afterId !== undefined ? `AND id > ${p.add(page.afterId)}` : "";
  const limit = page.limit !== undefined ? `LIMIT ${p.add(page.limit)}` : "";
  return p.statement(`SELECT * FROM tasks WHERE job_id = ${p.add(jobId)} ${after} ORDER BY id ${limit}`);
}
