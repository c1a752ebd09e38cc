import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Bearer-token checks. Both sides are hashed to 32 bytes first, so `timingSafeEqual` compares equal
 * lengths and the time taken says nothing about the token (neither its bytes nor its length).
 */
export function tokenMatches(expected: string, header: string | undefined): boolean {
  if (header === undefined) return false;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  const given = match?.[1] ?? "";
  const a = createHash("sha256").update(expected).digest();
  const b = createHash("sha256").update(given).digest();
  // Evaluate both: an empty token must still take the comparison's time.
  const same = timingSafeEqual(a, b);
  return same && given.length > 0;
}

/** Loopback addresses: the only ones `segops serve` binds without a token. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
