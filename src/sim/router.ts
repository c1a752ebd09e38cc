import type { IncomingMessage } from "node:http";
import FindMyWay from "find-my-way";
import type { SimEngine } from "./engine.js";
import type { Reply } from "./reply.js";

/** What every route handler gets. `params` are URL-decoded path parameters. */
export interface RouteContext {
  req: IncomingMessage;
  params: Record<string, string>;
  query: URLSearchParams;
  body: () => Promise<string>;
  engine: SimEngine;
  /** The emulator's base URL (for `/leader` and redirects). */
  url: string;
  druidVersion: number;
}

export type Handler = (ctx: RouteContext) => Reply | Promise<Reply>;

export interface Route {
  method: "GET" | "POST" | "DELETE";
  path: string;
  handler: Handler;
}

export interface Match {
  handler: Handler;
  params: Record<string, string>;
  /** The route pattern, e.g. `/druid/indexer/v1/task/:taskId/status` (used for request accounting). */
  pattern: string;
}

/** A find-my-way router that also reports which pattern matched. */
export class SimRouter {
  #fmw = FindMyWay({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true });

  constructor(routes: Route[]) {
    for (const r of routes) this.#fmw.on(r.method, r.path, () => {}, { handler: r.handler, pattern: r.path });
  }

  find(method: string, path: string): Match | null {
    const found = this.#fmw.find(method as "GET", path);
    if (!found) return null;
    const store = found.store as { handler: Handler; pattern: string };
    const params: Record<string, string> = {};
    for (const [k, v] of Object.entries(found.params)) if (typeof v === "string") params[k] = v;
    return { handler: store.handler, params, pattern: store.pattern };
  }
}
