import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { z } from "zod";
import type { EventRow } from "../../ledger/types.js";
import type { ApiDeps } from "../deps.js";
import { hasEnded, jobProgress } from "../feed.js";
import { eventView, mustGetJob } from "../http.js";
import { jobSummary } from "../job-view.js";
import { type Route, route } from "../routes.js";
import * as S from "../schemas.js";

/** A job's events as server-sent events, then `end` once it has ended. */
export function jobStreamRoutes(deps: ApiDeps): Route[] {
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  return [
    route(
      {
        method: "get",
        path: "/api/v1/jobs/{id}/stream",
        operationId: "streamJobEvents",
        summary: "Server-sent events: the job's events as they are committed, then `end` once it has ended",
        tags: ["jobs"],
        auth: true,
        params: S.JobId,
        query: S.StreamQuery,
        headers: [
          {
            name: "Last-Event-ID",
            description:
              "What an EventSource sends when it reconnects: replay after this event id (`after` wins)",
            schema: z.string(),
          },
        ],
        responses: {
          200: {
            description: "An event stream: `event` messages carry an Event as data; `end` a WaitResult",
            events: { event: { schema: S.Event, id: true }, end: { schema: S.WaitResult, id: false } },
            contentType: "text/event-stream",
          },
        },
        problems: [400, 401, 404, 503],
      },
      async ({ c, params, query }) => {
        const job = await mustGetJob(deps.store, params.id);
        const header = Number(c.req.header("last-event-id"));
        const after = query.after ?? (Number.isInteger(header) ? header : 0);
        return streamJob(c, deps, job.id, after, heartbeatMs);
      },
    ),
  ];
}

/** The SSE stream of one job: replay after `after`, then live events, then `end` once it has ended. */
function streamJob(c: Context, deps: ApiDeps, jobId: string, after: number, heartbeatMs: number): Response {
  return streamSSE(c, async (stream) => {
    const queue: EventRow[] = [];
    let wake: (() => void) | null = null;
    const unsubscribe = deps.feed.subscribe(jobId, (events) => {
      queue.push(...events);
      wake?.();
    });
    let onShutdown = () => {};
    const closed = new Promise<void>((resolve) => {
      onShutdown = () => resolve();
      stream.onAbort(resolve);
      if (deps.shutdown?.aborted) resolve();
      deps.shutdown?.addEventListener("abort", onShutdown, { once: true });
    });
    let aborted = false;
    void closed.then(() => {
      aborted = true;
      wake?.();
    });
    const sent = new Set<number>();
    const send = async (e: EventRow) => {
      if (sent.has(e.id)) return;
      sent.add(e.id);
      await stream.writeSSE({ event: "event", id: String(e.id), data: JSON.stringify(eventView(e)) });
    };
    deps.streams.open++;
    try {
      // Replay what is committed already (the live queue holds anything committed meanwhile).
      for (let cursor = after; !aborted; ) {
        const page = await deps.store.listEvents({ jobId, afterId: cursor, limit: 500 });
        for (const e of page) await send(e);
        if (page.length < 500) break;
        cursor = page.at(-1)?.id ?? cursor;
      }
      while (!aborted) {
        const progress = await jobProgress(deps.store, jobId);
        if (!progress || hasEnded(progress.job)) {
          // Events committed with the end may still be on their way through the feed: flush them.
          for (const e of await deps.store.listEvents({ jobId, afterId: after, limit: 100_000 }))
            await send(e);
          if (progress)
            await stream.writeSSE({
              event: "end",
              data: JSON.stringify({ ended: true, job: jobSummary(progress.job, progress.counts) }),
            });
          return;
        }
        if (queue.length === 0) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            const timer = setTimeout(resolve, heartbeatMs);
            timer.unref?.();
          });
          wake = null;
          if (queue.length === 0 && !aborted) await stream.write(": keep-alive\n\n");
        }
        const batch = queue.splice(0).sort((a, b) => a.id - b.id);
        for (const e of batch) await send(e);
      }
    } finally {
      deps.streams.open--;
      unsubscribe();
      // The service's signal outlives every stream: a listener left on it would keep this one alive.
      deps.shutdown?.removeEventListener("abort", onShutdown);
    }
  });
}
