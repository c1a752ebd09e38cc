import { updateClusterCompaction } from "../auto-compact.js";
import { empty, json, type Reply } from "../reply.js";
import type { Route, RouteContext } from "../router.js";

/**
 * `CoordinatorCompactionConfigsResource` (docs/druid-api.md §3.9): add or replace one datasource's auto-compaction
 * config, read it, delete it. The emulator's duty that acts on them is auto-compact.ts.
 */

const BASE = "/druid/coordinator/v1";

export function compactionConfigRoutes(): Route[] {
  return [
    { method: "POST", path: `${BASE}/config/compaction`, handler: setCompactionConfig },
    // The cluster-level config (`ClusterCompactionConfig`, apache/druid #16803; `useSupervisors` from #17782).
    {
      method: "GET",
      path: `${BASE}/config/compaction/cluster`,
      handler: ({ engine }) => json(200, engine.clusterCompaction),
    },
    { method: "POST", path: `${BASE}/config/compaction/cluster`, handler: setClusterCompaction },
    {
      method: "GET",
      path: `${BASE}/config/compaction/:dataSource`,
      handler: ({ engine, params }) => {
        const config = engine.compactionConfigs.get(params.dataSource ?? "");
        return config
          ? json(200, config)
          : json(404, { error: `Datasource compaction config does not exist for [${params.dataSource}]` });
      },
    },
    {
      method: "DELETE",
      path: `${BASE}/config/compaction/:dataSource`,
      handler: ({ engine, params }) =>
        engine.compactionConfigs.delete(params.dataSource ?? "", engine.now)
          ? empty(200)
          : json(404, { error: `Datasource compaction config does not exist for [${params.dataSource}]` }),
    },
  ];
}

async function setCompactionConfig(ctx: RouteContext): Promise<Reply> {
  let body: unknown;
  try {
    body = JSON.parse(await ctx.body());
  } catch (error) {
    return json(400, { error: `Unexpected character in request body: ${(error as Error).message}` });
  }
  const problem = ctx.engine.compactionConfigs.set(body, ctx.engine.now);
  if (problem) return json(400, { error: problem });
  ctx.engine.onChange();
  return empty(200);
}

async function setClusterCompaction(ctx: RouteContext): Promise<Reply> {
  let body: unknown;
  try {
    body = JSON.parse(await ctx.body());
  } catch (error) {
    return json(400, { error: `Unexpected character in request body: ${(error as Error).message}` });
  }
  const next = updateClusterCompaction(ctx.engine.clusterCompaction, body);
  if (typeof next === "string") return json(400, { error: next });
  ctx.engine.clusterCompaction = next;
  ctx.engine.onChange();
  return empty(200);
}

/**
 * The Overlord's supervisors as far as compaction goes (`SupervisorResource`): `POST /supervisor` with an
 * `autocompact` spec answers `{"id": "autocompact__<dataSource>"}`, `GET /supervisor` lists the ids, `GET
 * /supervisor/{id}` the spec, `POST /supervisor/{id}/suspend|resume|terminate` change it (404 for an unknown id).
 */
export function supervisorRoutes(base: string): Route[] {
  const missing = (id: string | undefined) =>
    json(404, { error: `Cannot find any supervisor with id: [${id ?? ""}]` });
  return [
    {
      method: "GET",
      path: `${base}/supervisor`,
      handler: ({ engine }) => json(200, engine.compactionSupervisors.ids()),
    },
    {
      method: "POST",
      path: `${base}/supervisor`,
      handler: async (ctx) => {
        let body: unknown;
        try {
          body = JSON.parse(await ctx.body());
        } catch (error) {
          return json(400, { error: `Unexpected character in request body: ${(error as Error).message}` });
        }
        const result = ctx.engine.compactionSupervisors.set(body);
        if ("error" in result) return json(400, { error: result.error });
        ctx.engine.onChange();
        return json(200, result);
      },
    },
    {
      method: "GET",
      path: `${base}/supervisor/:id`,
      handler: ({ engine, params }) => {
        const spec = engine.compactionSupervisors.get(params.id ?? "");
        return spec ? json(200, spec) : missing(params.id);
      },
    },
    ...(["suspend", "resume", "terminate"] as const).map((action) => ({
      method: "POST" as const,
      path: `${base}/supervisor/:id/${action}`,
      handler: ({ engine, params }: RouteContext) => {
        const id = params.id ?? "";
        const ok =
          action === "terminate"
            ? engine.compactionSupervisors.terminate(id)
            : engine.compactionSupervisors.setSuspended(id, action === "suspend");
        if (!ok) return missing(id);
        engine.onChange();
        return json(200, { id });
      },
    })),
  ];
}
