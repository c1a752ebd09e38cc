import type { Context } from "hono";
import {
  SESSION_COOKIE,
  sessionCookie,
  sessionMatches,
  sessionValue,
  tokenEquals,
  tokenMatches,
} from "../auth.js";
import * as D from "../dashboard-schemas.js";
import type { ApiDeps } from "../deps.js";
import { jsonResponse } from "../http.js";
import { ProblemError } from "../problems.js";
import { druidReachability } from "../readiness.js";
import { type Route, route } from "../routes.js";
import * as S from "../schemas.js";

/**
 * The dashboard's session: whether a token is needed, a login that sets an HttpOnly cookie, logout; and
 * what every page shows beside its own view while the session lasts: whether this host reaches Druid.
 */
export function sessionRoutes(deps: ApiDeps): Route[] {
  return [
    route(
      {
        method: "get",
        path: "/api/v1/druid/reachability",
        operationId: "getDruidReachability",
        summary:
          "Whether this host reaches Druid (the state `/readyz` reports): since when not, the unanswered call, the next probe; every dashboard page asks every few seconds, and it costs no Druid request",
        tags: ["dashboard"],
        auth: true,
        responses: { 200: { description: "Druid as this host sees it", schema: S.DruidReachability } },
        problems: [401],
      },
      ({ c }) => jsonResponse(c, 200, druidReachability(deps.outage, deps.worker, deps.clock.now())),
    ),
    route(
      {
        method: "get",
        path: "/api/v1/session",
        operationId: "getSession",
        summary: "Whether the service needs a token and this request carries one (the dashboard asks first)",
        tags: ["dashboard"],
        auth: false,
        responses: { 200: { description: "The session", schema: D.Session } },
        problems: [],
      },
      ({ c }) =>
        jsonResponse(c, 200, { authRequired: deps.token !== null, authenticated: authenticated(deps, c) }),
    ),
    route(
      {
        method: "post",
        path: "/api/v1/login",
        operationId: "login",
        summary:
          "The dashboard's login: checks the API token and answers with an HttpOnly, SameSite=Strict session cookie made from it",
        tags: ["dashboard"],
        auth: false,
        body: D.LoginBody,
        responses: { 204: { description: "Logged in: the cookie is set" } },
        problems: [400, 401, 413, 415],
      },
      ({ c, body }) => {
        if (deps.token === null) return c.body(null, 204);
        if (!tokenEquals(deps.token, body.token))
          throw new ProblemError("unauthorized", "that is not the API token");
        return c.body(null, 204, {
          "set-cookie": cookieHeader(c, sessionValue(body.token), 12 * 3600),
          "cache-control": "no-store",
        });
      },
    ),
    route(
      {
        method: "post",
        path: "/api/v1/logout",
        operationId: "logout",
        summary: "Ends the dashboard's session (clears its cookie)",
        tags: ["dashboard"],
        auth: false,
        body: D.LogoutBody,
        bodyOptional: true,
        responses: { 204: { description: "The cookie is cleared" } },
        problems: [400, 413, 415],
      },
      ({ c }) => c.body(null, 204, { "set-cookie": cookieHeader(c, "", 0) }),
    ),
  ];
}

/** Whether the request carries the service's token (header or the session cookie). */
function authenticated(deps: ApiDeps, c: Context): boolean {
  if (deps.token === null) return true;
  const header = c.req.header("authorization");
  if (header !== undefined) return tokenMatches(deps.token, header);
  const cookie = sessionCookie(c.req.header("cookie"));
  return cookie !== undefined && sessionMatches(deps.token, cookie);
}

function cookieHeader(c: Context, value: string, maxAge: number): string {
  const secure = new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
  return `${SESSION_COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}
