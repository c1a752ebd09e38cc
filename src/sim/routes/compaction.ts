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
