import type { ApiDeps } from "../deps.js";
import type { Route } from "../routes.js";
import { jobListStreamRoutes } from "./job-stream.js";
import { loadRoutes } from "./load.js";
import { partitionRoutes } from "./partitions.js";
import { sessionRoutes } from "./session.js";
import { timelineRoutes } from "./timeline.js";

/**
 * The routes the dashboard needs beyond the API's own: a login that turns the token into an HttpOnly
 * cookie, a stream of the job list, a backfill's partitions as grid cells, one partition in full (with
 * per-partition retry and cancel), a datasource's segment timeline and the Druid load this host sees.
 * All of them read the same ledger and Druid as the rest of the API; none keeps state.
 */
export function dashboardRoutes(deps: ApiDeps): Route[] {
  return [
    ...sessionRoutes(deps),
    ...jobListStreamRoutes(deps),
    ...partitionRoutes(deps),
    ...timelineRoutes(deps),
    ...loadRoutes(deps, deps.load ?? null),
  ];
}
