import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { matchedRoutes } from "hono/route";
import type { z } from "zod";
import { tooDeepAt } from "../core/canonical-json.js";
import { jsonSyntaxProblem } from "../core/json-text.js";
import { KINDS } from "../jobs/kinds.js";
import { auditRoutes } from "./api/audit.js";
import { deadLetterRoutes } from "./api/dead-letters.js";
import { gateRoutes } from "./api/gates.js";
import { jobStreamRoutes } from "./api/job-stream.js";
import { jobRoutes } from "./api/jobs.js";
import { planRoutes } from "./api/plans.js";
import { probeRoutes } from "./api/probes.js";
import { startWorkRoutes } from "./api/start-work.js";
import { endSession, sessionCookie, sessionMatches, tokenMatches } from "./auth.js";
import { dashboardRoutes } from "./dashboard/index.js";
import type { ApiDeps } from "./deps.js";
import { jsonResponse, problemResponse } from "./http.js";
import { jobView } from "./job-view.js";
import { openApiDocument } from "./openapi.js";
import {
  bodyTooDeep,
  invalidRequest,
  MAX_BODY_DEPTH,
  ProblemError,
  problem,
  problemFor,
} from "./problems.js";
import { honoPath, type Route, type RouteInput, type RouteSpec } from "./routes.js";
import { segmentOpRoutes } from "./segment-ops.js";
import { registerWeb } from "./web.js";

/**
 * The HTTP API (`/api/v1`), the probes and `/metrics`, as a hono app over injected parts (ledger, Druid
 * client, change feed, waiters, worker), so tests drive it in-process with `app.request` and the server
 * (server.ts) only adds a socket. Handlers hold no state of their own: every change is a ledger
 * operation, so any host of a shared ledger answers the same.
 */

const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;
/** The dashboard's logout route (dashboard/session.ts): the session it carries ends here first. */
const LOGOUT_PATH = "/api/v1/logout";

/** Builds the app and the route table it serves (the OpenAPI document is made from the same table). */
export function buildApp(deps: ApiDeps): { app: Hono; routes: RouteSpec[] } {
  const routes = apiRoutes(deps);
  const app = new Hono();
  app.use("*", logRequests(deps));
  app.onError((error, c) => {
    const { problem: p, internal } = problemFor(error);
    if (internal) deps.log.error({ err: error, path: c.req.path }, "internal error");
    return problemResponse(c, p);
  });
  app.notFound((c) => problemResponse(c, problem("not-found", `no route ${c.req.method} ${c.req.path}`)));
  // Logging out ends the session on the server, not only in the browser (which may keep or have leaked
  // the cookie): its id is refused from now on. Runs before the logout route, which clears the cookie.
  if (deps.token !== null) {
    const token = deps.token;
    app.post(LOGOUT_PATH, async (c, next) => {
      const cookie = sessionCookie(c.req.header("cookie"));
      if (cookie !== undefined) endSession(token, cookie);
      await next();
    });
  }
  const maxBody = deps.maxBodyBytes ?? DEFAULT_BODY_LIMIT;
  for (const route of routes) registerRoute(app, route, deps.token, maxBody);
  refuseOtherMethods(app, routes);
  const specs = routes.map((r) => r.spec);
  const document = JSON.stringify(
    openApiDocument(specs, { version: deps.version ?? "0.0.0", auth: deps.token !== null }),
  );
  app.get("/openapi.json", (c) => c.body(document, 200, { "content-type": "application/json" }));
  registerWeb(
    app,
    deps.webDir ?? null,
    (c) =>
      problemResponse(
        c,
        problem("unavailable", "the dashboard is not built: run `npm run build` in segops' checkout"),
      ),
    (c) => problemResponse(c, problem("not-found", `no asset ${c.req.path}`)),
  );
  return { app, routes: specs };
}

/** One log line and one metric per request; the route pattern keeps labels to one per endpoint. */
function logRequests(deps: ApiDeps): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const responder = matchedRoutes(c)[c.req.routeIndex]?.path;
    const route = !responder || responder === "/*" || responder === "*" ? "(unmatched)" : responder;
    deps.metrics?.httpRequest(route, c.req.method, c.res.status);
    const jobId = /^\/api\/v1\/jobs\/([^/]+)/.exec(c.req.path)?.[1];
    deps.log.info(
      {
        method: c.req.method,
        path: c.req.path,
        route,
        status: c.res.status,
        ms: Math.round(performance.now() - started),
        ...(jobId ? { jobId: safeDecode(jobId) } : {}),
      },
      "request",
    );
  };
}

/** A route of the table on the app: its authentication, its body limit, then its parsed input's handler. */
function registerRoute(app: Hono, route: Route, token: string | null, maxBody: number): void {
  const { spec } = route;
  const handlers: MiddlewareHandler[] = [];
  if (spec.auth && token !== null) handlers.push(authenticate(token, spec.method));
  if (spec.body) {
    handlers.push(
      bodyLimit({
        maxSize: maxBody,
        onError: (c) =>
          problemResponse(c, problem("payload-too-large", `the body limit is ${maxBody} bytes`)),
      }),
    );
  }
  const handler: MiddlewareHandler = async (c) => {
    const params = spec.params ? parseWith(spec.params, c.req.param(), "path") : {};
    const query = spec.query ? parseWith(spec.query, queryOf(c), "query") : {};
    const body = spec.body ? await readBody(c, spec.body, spec.bodyOptional === true) : undefined;
    // Parsed by the spec's own schemas: the input the route's typed handler was written for.
    return route.handle({ c, params, query, body } as RouteInput);
  };
  app.on([spec.method.toUpperCase()], [honoPath(spec.path)], ...handlers, handler);
}

/** The bearer token, or the dashboard's session cookie (made from the same token) for same-origin calls. */
function authenticate(token: string, method: RouteSpec["method"]): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (header !== undefined) {
      if (!tokenMatches(token, header))
        return problemResponse(c, problem("unauthorized", "send Authorization: Bearer <token>"));
      return next();
    }
    const cookie = sessionCookie(c.req.header("cookie"));
    if (cookie === undefined || !sessionMatches(token, cookie))
      return problemResponse(c, problem("unauthorized", "send Authorization: Bearer <token>"));
    // A cookie rides along on any request the browser makes: a change must come from this origin.
    if (method !== "get" && !sameOrigin(c))
      return problemResponse(
        c,
        problem("unauthorized", "a cookie session changes nothing from another origin; send the token"),
      );
    await next();
  };
}

/** The methods a path has, for a 405 on the others instead of a misleading 404. */
function refuseOtherMethods(app: Hono, routes: readonly Route[]): void {
  const byPath = new Map<string, Set<string>>();
  for (const r of routes) {
    const set = byPath.get(r.spec.path) ?? new Set();
    set.add(r.spec.method.toUpperCase());
    byPath.set(r.spec.path, set);
  }
  for (const [path, methods] of byPath) {
    const allowed = [...methods].join(", ");
    app.all(honoPath(path), (c) => {
      // RFC 9110 §15.5.6: a 405 names the methods the resource has.
      c.header("allow", allowed);
      return problemResponse(
        c,
        problem("method-not-allowed", `${c.req.method} is not allowed here; use ${allowed}`),
      );
    });
  }
}

/** The request's Origin is this service (what a browser sends with a same-origin fetch). */
function sameOrigin(c: Context): boolean {
  const origin = c.req.header("origin");
  const host = c.req.header("host");
  if (!origin || !host) return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** The query string; a parameter given more than once stays a list (every parameter takes one value). */
function queryOf(c: Context): Record<string, string | string[]> {
  return Object.fromEntries(
    Object.entries(c.req.queries()).map(([name, values]) => [name, values.length === 1 ? values[0] : values]),
  ) as Record<string, string | string[]>;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function parseWith(schema: z.ZodType, value: unknown, where: "path" | "query"): Record<string, unknown> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidRequest(where, parsed.error);
  return parsed.data as Record<string, unknown>;
}

async function readBody(c: Context, schema: z.ZodType, optional: boolean): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "" && optional) return schema.parse({});
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/(.+\+)?json\b/i.test(type))
    throw new ProblemError(
      "unsupported-media-type",
      `send the body as application/json, not ${type || "no type"}`,
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const at = jsonSyntaxProblem(text, error as Error);
    const where = `line ${at.line}, column ${at.column}`;
    throw new ProblemError("invalid-request", `the body is not JSON: ${where}: ${at.message}`, {
      errors: [{ in: "body", path: "", message: `not valid JSON: ${where}: ${at.message}` }],
    });
  }
  // Measured without recursion before zod (which recurses per level) or anything else walks it.
  const deep = tooDeepAt(value, MAX_BODY_DEPTH);
  if (deep) throw bodyTooDeep(deep);
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidRequest("body", parsed.error);
  return parsed.data;
}

/** Every route of the API, resource by resource (each file under api/ is one resource). */
function apiRoutes(deps: ApiDeps): Route[] {
  return [
    ...probeRoutes(deps),
    ...startWorkRoutes(deps),
    ...planRoutes(deps),
    ...jobRoutes(deps),
    ...gateRoutes(deps),
    ...jobStreamRoutes(deps),
    ...deadLetterRoutes(deps),
    ...auditRoutes(deps),
    ...dashboardRoutes(deps),
    ...segmentOpRoutes({
      kinds: deps.kinds ?? KINDS,
      store: deps.store,
      client: deps.client,
      cluster: deps.cluster,
      clock: deps.clock,
      started: async (job) => {
        deps.log.info({ jobId: job.id, kind: job.kind }, "job created");
        await deps.worker?.refresh();
        deps.feed.poke();
      },
      json: jsonResponse,
      jobView: (job) => jobView(deps.store, job),
    }),
  ];
}
