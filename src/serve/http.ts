import type { Context } from "hono";
import type { z } from "zod";
import type { Store } from "../ledger/store.js";
import type { EventRow, JobRow } from "../ledger/types.js";
import { type Problem, ProblemError } from "./problems.js";
import type * as S from "./schemas.js";

/** The small pieces every resource's handlers answer with. */

export const iso = (ms: number): string => new Date(ms).toISOString();

export const jsonResponse = (
  c: Context,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response =>
  c.body(JSON.stringify(body), status as 200, { "content-type": "application/json", ...headers });

export function problemResponse(c: Context, p: Problem): Response {
  const headers: Record<string, string> = { "content-type": "application/problem+json" };
  if (p.status === 401) headers["www-authenticate"] = 'Bearer realm="segops"';
  return c.body(JSON.stringify(p), p.status as 400, headers);
}

/** Where a job lives: the `Location` of a created one. */
export const location = (id: string): { location: string } => ({
  location: `/api/v1/jobs/${encodeURIComponent(id)}`,
});

export async function mustGetJob(store: Store, id: string): Promise<JobRow> {
  const job = await store.getJob(id);
  if (!job) throw new ProblemError("not-found", `no job ${id}`);
  return job;
}

export function eventView(e: EventRow): z.infer<typeof S.Event> {
  return { ...e, at: iso(e.at) };
}
