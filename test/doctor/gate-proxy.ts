import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";

/**
 * A test front for the emulator, standing in for what a real cluster answers and the emulator does not: an
 * authorizer that refuses some APIs (401/403 by path), a Router without its management proxy (its web console's
 * 404 for `/druid/coordinator/*` and `/druid/indexer/*`), a gateway that serves Druid under a path prefix, and
 * fixed answers for chosen paths (a compaction config). Everything else is forwarded as it came.
 */
export interface GateRules {
  /** Exact paths (no query) answered with this status, as Druid's authorizer does (an empty JSON error). */
  refuse?: Record<string, 401 | 403>;
  /** Answer the management paths like a Router with `druid.router.managementProxy.enabled=false`. */
  noManagementProxy?: boolean;
  /** Serve Druid under this path prefix only (e.g. `/druid-gw`); other paths 404. */
  prefix?: string;
  /** Exact paths answered 200 with this JSON instead of the emulator's. */
  answers?: Record<string, unknown>;
}

export interface GateProxy {
  readonly url: string;
  /** Paths the proxy saw, in order (without the prefix). */
  readonly seen: string[];
  close(): Promise<void>;
}

export async function startGateProxy(target: string, rules: GateRules): Promise<GateProxy> {
  const seen: string[] = [];
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? "/", "http://proxy");
    let path = url.pathname;
    const send = (status: number, body: string, type = "application/json") => {
      res.writeHead(status, { "content-type": type });
      res.end(body);
    };
    if (rules.prefix !== undefined) {
      if (!path.startsWith(`${rules.prefix}/`)) return send(404, "Not Found", "text/plain");
      path = path.slice(rules.prefix.length);
    }
    seen.push(path);
    const refused = rules.refuse?.[path];
    if (refused !== undefined) return send(refused, JSON.stringify({ error: "Unauthorized" }));
    if (rules.noManagementProxy && /^\/druid\/(coordinator|indexer)\//.test(path)) {
      return send(
        404,
        "<html><body><h2>HTTP ERROR 404 Not Found</h2></body></html>",
        "text/html;charset=iso-8859-1",
      );
    }
    if (rules.answers && Object.hasOwn(rules.answers, path))
      return send(200, JSON.stringify(rules.answers[path]));
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === "string" && !["host", "connection", "content-length"].includes(k)) headers[k] = v;
    const body = Buffer.concat(chunks);
    const answer = await request(`${target}${path}${url.search}`, {
      method: (req.method ?? "GET") as "GET",
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    // The body goes on as it came, gzipped when the client asked for it (as Druid's Jetty answers): its encoding too.
    const encoding = answer.headers["content-encoding"];
    res.writeHead(answer.statusCode, {
      "content-type": String(answer.headers["content-type"] ?? "text/plain"),
      ...(typeof encoding === "string" ? { "content-encoding": encoding } : {}),
    });
    res.end(Buffer.from(await answer.body.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${rules.prefix ?? ""}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
