import * as D from "../dashboard-schemas.js";
import type { ApiDeps } from "../deps.js";
import { iso, jsonResponse } from "../http.js";
import type { LoadHistory } from "../load-history.js";
import { type Route, route } from "../routes.js";

const noQuantiles = { count: 0, p50: null, p90: null, p99: null };

/** What this host saw of Druid over time, for the dashboard's Druid view. */
export function loadRoutes(deps: ApiDeps, load: LoadHistory | null): Route[] {
  return [
    route(
      {
        method: "get",
        path: "/api/v1/druid/load",
        operationId: "druidLoad",
        summary:
          "What this host saw of Druid over time: worker slots (segops', others', free), requests and response bytes per minute by endpoint, detection and handoff latency; and whether the cluster blocks it now",
        tags: ["dashboard"],
        auth: true,
        responses: { 200: { description: "The samples", schema: D.DruidLoad } },
        problems: [401, 503],
      },
      async ({ c }) => {
        const samples = load?.samples ?? [];
        const endpoints = new Set<string>();
        for (const s of samples) for (const e of s.requests.keys()) endpoints.add(e);
        const minutes = (load?.sampleMs ?? 10_000) / 60_000;
        const latency = deps.metrics
          ? await deps.metrics.latencyQuantiles()
          : { detection: noQuantiles, handoff: noQuantiles };
        const blocked = deps.blocked?.() ?? null;
        return jsonResponse(c, 200, {
          blocked: blocked ? { since: iso(blocked.since), reason: blocked.reason } : null,
          sampleMs: load?.sampleMs ?? 10_000,
          samples: samples.map((s) => ({ at: iso(s.at), ours: s.ours, used: s.used, capacity: s.capacity })),
          requestsPerMinute: [...endpoints].sort().map((endpoint) => ({
            endpoint,
            values: samples.map((s) => Math.round(((s.requests.get(endpoint) ?? 0) / minutes) * 10) / 10),
          })),
          bytesPerMinute: [...endpoints].sort().map((endpoint) => ({
            endpoint,
            values: samples.map((s) => Math.round((s.bytes.get(endpoint) ?? 0) / minutes)),
          })),
          latency,
        });
      },
    ),
  ];
}
