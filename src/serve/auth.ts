import { createHash, createHmac, timingSafeEqual } from "node:crypto";

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
 * The dashboard's session cookie (HttpOnly, SameSite=Strict). Its value is derived from the API token
 * (an HMAC keyed by it), not the token itself: a response never carries the token, the cookie is no
 * bearer token elsewhere, and a new token ends every session.
 */
export const SESSION_COOKIE = "segops_session";

/** The session cookie's value for a token. */
export function sessionValue(token: string): string {
  return createHmac("sha256", token).update("segops dashboard session v1").digest("base64url");
}

/** Whether a session cookie's value was made from this token (compared in constant time). */
export function sessionMatches(token: string, given: string): boolean {
  return tokenEquals(sessionValue(token), given);
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
