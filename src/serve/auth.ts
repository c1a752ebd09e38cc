import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Bearer-token checks. Both sides are hashed to 32 bytes first, so `timingSafeEqual` compares equal
 * lengths and the time taken says nothing about the token (neither its bytes nor its length).
 */
export function tokenMatches(expected: string, header: string | undefined): boolean {
  if (header === undefined) return false;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return tokenEquals(expected, match?.[1] ?? "");
}

/** The token itself (the dashboard's login form and its cookie), compared as `tokenMatches` does. */
export function tokenEquals(expected: string, given: string): boolean {
  const a = createHash("sha256").update(expected).digest();
  const b = createHash("sha256").update(given).digest();
  // Evaluate both: an empty token must still take the comparison's time.
  const same = timingSafeEqual(a, b);
  return same && given.length > 0;
}

/**
 * The dashboard's session cookie (HttpOnly, SameSite=Strict). Each login makes a new session: a random id
 * and an expiry, signed with an HMAC keyed by the API token (`v2.ID.EXPIRES.MAC`). So a response never
 * carries the token, the cookie is no bearer token elsewhere, any host with the same token accepts it
 * (nothing to share between hosts), it ends on the server at its expiry whatever the browser does, and a
 * new token ends every session. Logging out revokes its id on the host that answers the logout.
 */
export const SESSION_COOKIE = "segops_session";

/** How long a session lasts: the cookie's lifetime and the expiry signed into it. */
export const SESSION_SECONDS = 12 * 3600;

const SESSION = /^v2\.([A-Za-z0-9_-]{22})\.([0-9]{1,15})\.([A-Za-z0-9_-]{43})$/;

/**
 * Session ids logged out on this host, until their expiry (then the signature refuses them anyway).
 * Only validly signed sessions get here, so it holds at most the logins of the last twelve hours. It is
 * in memory: process-wide, forgotten on a restart, and not seen by the other hosts of a deployment.
 */
const revoked = new Map<string, number>();

function sessionMac(token: string, id: string, expires: string): string {
  return createHmac("sha256", token)
    .update(`segops dashboard session v2\n${id}\n${expires}`)
    .digest("base64url");
}

/** A new session's cookie value for a token (a fresh random id each time). */
export function sessionValue(token: string, now: number = Date.now()): string {
  const id = randomBytes(16).toString("base64url");
  const expires = String(Math.floor(now / 1000) + SESSION_SECONDS);
  return `v2.${id}.${expires}.${sessionMac(token, id, expires)}`;
}

/** The id and expiry (ms) of a session value signed with this token and not expired, or undefined. */
function validSession(
  token: string,
  given: string,
  now: number,
): { id: string; expiresMs: number } | undefined {
  const match = SESSION.exec(given);
  if (!match) return undefined;
  const [, id = "", expires = ""] = match;
  // Compared as tokens are: in constant time, whatever the given MAC.
  if (!tokenEquals(sessionMac(token, id, expires), match[3] ?? "")) return undefined;
  const expiresMs = Number(expires) * 1000;
  return expiresMs > now ? { id, expiresMs } : undefined;
}

/** Whether a session cookie's value was made from this token, has not expired and was not logged out. */
export function sessionMatches(token: string, given: string, now: number = Date.now()): boolean {
  const session = validSession(token, given, now);
  return session !== undefined && !revoked.has(session.id);
}

/** Logs a session out: this host refuses its cookie from now on. Anything else given is ignored. */
export function endSession(token: string, given: string, now: number = Date.now()): void {
  const session = validSession(token, given, now);
  if (session === undefined) return;
  for (const [id, expiresMs] of revoked) if (expiresMs <= now) revoked.delete(id);
  revoked.set(session.id, session.expiresMs);
}

/** The session cookie's value in a `Cookie` header, or undefined. */
export function sessionCookie(header: string | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Loopback addresses: the only ones `segops serve` binds without a token. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
