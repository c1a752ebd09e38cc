import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { endSession, SESSION_SECONDS, sessionMatches, sessionValue } from "../../src/serve/auth.js";
import { startTestService, type TestService } from "../helpers/serve.js";

/**
 * The dashboard's session ends on the server: logging out makes the service refuse the cookie it was
 * given (a copy kept by the browser, a proxy log or an attacker no longer works), a session expires
 * after its twelve hours whatever the browser does, and every login is a session of its own.
 */

const TOKEN = "logout-test-token-0123456789";

async function login(t: TestService): Promise<string> {
  const res = await t.call("/api/v1/login", { token: null, json: { token: TOKEN } });
  expect(res.status).toBe(204);
  return (res.headers.get("set-cookie") ?? "").split(";")[0] as string;
}

const jobsWith = async (t: TestService, cookie: string) =>
  (await t.call("/api/v1/jobs", { token: null, headers: { cookie } })).status;

describe("logging out of the dashboard", () => {
  it("makes the service refuse the logged-out cookie; other sessions and the bearer token go on", async () => {
    const t = await startTestService({ token: TOKEN });
    const origin = `http://${new URL(t.service.url).host}`;
    const first = await login(t);
    const second = await login(t);
    expect(second).not.toBe(first);
    expect(await jobsWith(t, first)).toBe(200);
    expect(await jobsWith(t, second)).toBe(200);

    const out = await t.call("/api/v1/logout", {
      token: null,
      method: "POST",
      headers: { cookie: first, origin },
    });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^segops_session=; .*Max-Age=0/);

    // The same value, sent again as the browser (or anyone who copied it) would.
    expect(await jobsWith(t, first)).toBe(401);
    expect((await t.call("/api/v1/session", { token: null, headers: { cookie: first } })).json).toEqual({
      authRequired: true,
      authenticated: false,
    });
    const change = await t.call("/api/v1/jobs/x/retry", {
      token: null,
      method: "POST",
      headers: { cookie: first, origin },
    });
    expect(change.status).toBe(401);
    // Only that session ended; a new login works again, and the bearer token never depended on it.
    expect(await jobsWith(t, second)).toBe(200);
    expect(await jobsWith(t, await login(t))).toBe(200);
    expect((await t.call("/api/v1/jobs")).status).toBe(200);
    expect(t.logs.join("\n")).not.toContain(TOKEN);
  });

  it("a cookie from before sessions were signed with an id (a fixed HMAC of the token) is refused", async () => {
    const t = await startTestService({ token: TOKEN });
    const fixed = createHmac("sha256", TOKEN).update("segops dashboard session v1").digest("base64url");
    expect(await jobsWith(t, `segops_session=${fixed}`)).toBe(401);
  });

  it("another host with the same token accepts the session (nothing is shared but the token)", async () => {
    const a = await startTestService({ token: TOKEN });
    const b = await startTestService({ token: TOKEN });
    const other = await startTestService({ token: `${TOKEN}-other` });
    const cookie = await login(a);
    expect(await jobsWith(b, cookie)).toBe(200);
    expect(await jobsWith(other, cookie)).toBe(401);
  });
});

describe("session values", () => {
  const now = Date.parse("2026-03-01T00:00:00Z");

  it("expire on the server after their lifetime", () => {
    const value = sessionValue(TOKEN, now);
    expect(sessionMatches(TOKEN, value, now)).toBe(true);
    expect(sessionMatches(TOKEN, value, now + SESSION_SECONDS * 1000 - 1)).toBe(true);
    expect(sessionMatches(TOKEN, value, now + SESSION_SECONDS * 1000)).toBe(false);
  });

  it("cannot be extended or moved to another token: the id and expiry are signed", () => {
    const value = sessionValue(TOKEN, now);
    const [v, id, expires, mac] = value.split(".");
    const later = `${v}.${id}.${Number(expires) + SESSION_SECONDS}.${mac}`;
    expect(sessionMatches(TOKEN, later, now)).toBe(false);
    expect(sessionMatches(`${TOKEN}x`, value, now)).toBe(false);
    expect(sessionMatches(TOKEN, `${value}x`, now)).toBe(false);
    expect(sessionMatches(TOKEN, "", now)).toBe(false);
  });

  it("a logout ends only its own session, and ignores a value it did not sign", () => {
    const mine = sessionValue(TOKEN, now);
    const yours = sessionValue(TOKEN, now);
    endSession(`${TOKEN}x`, mine, now); // signed with another token: not this service's session
    expect(sessionMatches(TOKEN, mine, now)).toBe(true);
    endSession(TOKEN, mine, now);
    expect(sessionMatches(TOKEN, mine, now)).toBe(false);
    expect(sessionMatches(TOKEN, yours, now)).toBe(true);
  });
});
