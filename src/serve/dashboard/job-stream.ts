import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { z } from "zod";
import type { Store } from "../../ledger/store.js";
import * as D from "../dashboard-schemas.js";
import type { ApiDeps } from "../deps.js";
import { ALL_JOBS } from "../feed.js";
import { type Route, route } from "../routes.js";
import { dashboardJobOf } from "./views.js";

/** The job list as server-sent events, for the dashboard's first page. */
export function jobListStreamRoutes(deps: ApiDeps): Route[] {
  return [
    route(
      {
        method: "get",
        path: "/api/v1/stream",
        operationId: "streamJobs",
        summary:
          "Server-sent events of the job list: the newest jobs, `ready`, then each job again as it changes; `end` once no job has work left (an EventSource reconnects)",
        tags: ["dashboard"],
        auth: true,
        query: D.JobStreamQuery,
        responses: {
          200: {
            description:
              "An event stream: `job` messages carry a DashboardJob, `ready` ends the first snapshot, `end` says no job is unfinished",
            events: {
              job: { schema: D.DashboardJob, id: false },
              ready: { schema: D.StreamReady, id: false },
              end: { schema: D.StreamEnd, id: false },
            },
            contentType: "text/event-stream",
          },
        },
        problems: [400, 401, 503],
      },
      ({ c, query }) => streamJobs(c, deps, query),
    ),
  ];
}

/** Work is left somewhere in the ledger (a partition new, running or suspended). */
async function unfinished(store: Store): Promise<number> {
  let open = 0;
  for (const c of await store.countByKind())
    if (c.state === "new" || c.state === "running" || c.state === "suspended") open += c.count;
  return open;
}

/** The job list as a stream: a snapshot, `ready`, then every change of a job the filters take. */
function streamJobs(c: Context, deps: ApiDeps, q: z.infer<typeof D.JobStreamQuery>): Response {
  const jobOf = (row: Parameters<typeof dashboardJobOf>[1]) => dashboardJobOf(deps.store, row);
  const takes = (j: D.DashboardJob) =>
    (!q.kind || j.kind === q.kind) && (!q.datasource || j.datasource === q.datasource);
  return streamSSE(c, async (stream) => {
    const changed = new Set<string>();
    let wake: (() => void) | null = null;
    // Subscribed before the snapshot is read: a change committed meanwhile is sent again, never lost.
    const unsubscribe = deps.feed.subscribe(ALL_JOBS, (events) => {
      for (const e of events) changed.add(e.jobId);
      wake?.();
    });
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      wake?.();
    };
    stream.onAbort(onAbort);
    deps.shutdown?.addEventListener("abort", onAbort, { once: true });
    if (deps.shutdown?.aborted) aborted = true;
    deps.streams.open++;
    try {
      const limit = q.limit ?? 100;
      const rows = await deps.store.listJobs({ limit: 500, ...(q.kind ? { kind: q.kind } : {}) });
      let sent = 0;
      for (const row of rows) {
        if (sent >= limit || aborted) break;
        const job = await jobOf(row);
        if (!takes(job) || (q.state && job.state !== q.state)) continue;
        await stream.writeSSE({ event: "job", data: JSON.stringify(job) });
        sent++;
      }
      // `retry`: an EventSource reconnects 2 s after an `end` (or a cut connection).
      await stream.writeSSE({ event: "ready", data: JSON.stringify({ jobs: sent }), retry: 2000 });
      while (!aborted) {
        if (changed.size === 0) {
          const open = await unfinished(deps.store);
          if (open === 0) {
            await stream.writeSSE({ event: "end", data: JSON.stringify({ open }) });
            return;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
            const timer = setTimeout(resolve, deps.heartbeatMs ?? 15_000);
            timer.unref?.();
          });
          wake = null;
          if (changed.size === 0 && !aborted) await stream.write(": keep-alive\n\n");
        }
        const ids = [...changed];
        changed.clear();
        for (const id of ids) {
          const row = await deps.store.getJob(id);
          if (!row || aborted) continue;
          const job = await jobOf(row);
          if (takes(job)) await stream.writeSSE({ event: "job", data: JSON.stringify(job) });
        }
      }
    } finally {
      deps.streams.open--;
      unsubscribe();
      deps.shutdown?.removeEventListener("abort", onAbort);
    }
  });
}
