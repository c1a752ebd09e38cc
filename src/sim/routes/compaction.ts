import { updateClusterCompaction } from "../auto-compact.js";
import { empty, json, type Reply, text } from "../reply.js";
import type { Route, RouteContext } from "../router.js";

/**
 * `CoordinatorCompactionConfigsResource` (docs/druid-api.md §3.9): add or replace one datasource's auto-compaction
 * config, read it, delete it. The emulator's duty that acts on them is auto-compact.ts.
 */

const BASE = "/druid/coordinator/v1";

export function compactionConfigRoutes(): Route[] {
  return [
    { method: "POST", path: `${BASE}/config/compaction`, handler: setCompactionConfig },
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
  return json(200, { success: true });
}

/**
 * The Overlord's supervisors as far as compaction goes (`SupervisorResource`), as a real Druid 33 answered
 * (observed): `POST /supervisor` with an `autocompact` spec answers `{"id": "autocompact__<dataSource>"}` (also
 * while `useSupervisors` is off), `GET /supervisor` lists the ids, `GET /supervisor/{id}` the spec with Druid's
 * defaults, `POST /supervisor/{id}/suspend|resume|terminate` change it; an unknown id is a 404 in text. And the
 * cluster compaction config on the Overlord (`GET`/`POST /compaction/config/cluster`, `ClusterCompactionConfig`:
 * apache/druid #16803, `useSupervisors` #17782; Druid 33's Coordinator answers 405 to a POST of it).
 */
export function supervisorRoutes(base: string): Route[] {
  const missing = (id: string | undefined) => text(404, `Cannot find any supervisor with id: [${id ?? ""}]`);
  return [
    {
      method: "GET",
      path: `${base}/compaction/config/cluster`,
      handler: ({ engine }) =>
        json(200, {
          compactionTaskSlotRatio: engine.clusterCompaction.compactionTaskSlotRatio,
          maxCompactionTaskSlots: engine.clusterCompaction.maxCompactionTaskSlots,
          compactionPolicy: { type: "newestSegmentFirst", priorityDatasource: null },
          useSupervisors: engine.clusterCompaction.useSupervisors,
          engine: engine.clusterCompaction.engine,
        }),
    },
    { method: "POST", path: `${base}/compaction/config/cluster`, handler: setClusterCompaction },
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
