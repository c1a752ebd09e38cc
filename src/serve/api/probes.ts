import { z } from "zod";
import type { ApiDeps } from "../deps.js";
import { jsonResponse } from "../http.js";
import { ProblemError, problemFor } from "../problems.js";
import { druidReachability, workerReadiness } from "../readiness.js";
import { type Route, route } from "../routes.js";
import * as S from "../schemas.js";

/** Liveness, readiness (each dependency named) and Prometheus metrics. */
export function probeRoutes(deps: ApiDeps): Route[] {
  return [
    route(
      {
        method: "get",
        path: "/healthz",
        operationId: "health",
        summary: "The process is up",
        tags: ["probes"],
        auth: false,
        responses: { 200: { description: "Up", schema: S.Health } },
        problems: [],
      },
      ({ c }) => jsonResponse(c, 200, { status: "ok" }),
    ),
    route(
      {
        method: "get",
        path: "/readyz",
        operationId: "ready",
        summary: "The ledger and Druid are reachable and the worker is not stalled (each check named)",
        tags: ["probes"],
        auth: false,
        responses: {
          200: { description: "Ready", schema: S.Readiness },
          503: {
            description: "Not ready: which dependency failed, or the worker is stalled",
            schema: S.Readiness,
          },
        },
        problems: [],
      },
      async ({ c }) => {
        const [ledger, answer] = await Promise.all([
          check(() => deps.store.listJobs({ limit: 1 })),
          check(() => deps.client.totalWorkerCapacity()),
        ]);
        // During an outage the call is refused at once (or is the probe); the monitor says since when.
        const state = druidReachability(deps.outage, deps.worker, deps.clock.now());
        const druid = !answer.ok && state.since ? { ...answer, since: state.since } : answer;
        const worker = workerReadiness(deps.worker);
        const ready = ledger.ok && druid.ok && worker.ok;
        return jsonResponse(c, ready ? 200 : 503, { ready, ledger, druid, worker: worker.view });
      },
    ),
    route(
      {
        method: "get",
        path: "/metrics",
        operationId: "metrics",
        summary: "Prometheus metrics (text exposition format)",
        tags: ["probes"],
        auth: true,
        responses: {
          200: { description: "Metrics", schema: z.string(), contentType: "text/plain; version=0.0.4" },
        },
        problems: [401],
      },
      async ({ c }) => {
        if (!deps.metrics) throw new ProblemError("not-found", "metrics are off");
        return c.body(await deps.metrics.text(), 200, { "content-type": deps.metrics.contentType });
      },
    ),
  ];
}

/** One dependency's answer to readiness: ok, or the problem it failed with. */
async function check(fn: () => Promise<unknown>): Promise<{ ok: boolean; error?: string }> {
  try {
    await fn();
    return { ok: true };
  } catch (error) {
    return { ok: false, error: problemFor(error).problem.detail ?? "unavailable" };
  }
}
