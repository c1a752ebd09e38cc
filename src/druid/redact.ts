/**
 * Last line of defence for secrets: every text the client puts into an error or a log line passes
 * through `redact`, so a password or token echoed back by a proxy or an error page cannot leak.
 */
const MASK = "[REDACTED]";

/** The strings that must never appear: each secret itself plus the encoded forms sent on the wire. */
export function secretVariants(secrets: readonly string[]): string[] {
  const out = new Set<string>();
  for (const s of secrets) {
    if (s.length < 3) continue; // masking 1–2 characters would shred ordinary text and hide nothing
    out.add(s);
    out.add(encodeURIComponent(s));
  }
  // Longest first, so a secret containing another is masked whole.
  return [...out].sort((a, b) => b.length - a.length);
}

export function redact(text: string, variants: readonly string[]): string {
  let result = text;
  for (const v of variants) {
    if (result.includes(v)) result = result.split(v).join(MASK);
  }
  return result;
}

/**
 * Hides the userinfo of a URL-like text, even one too malformed to parse: everything between the
 * scheme's `//` (or the start) and the last `@` becomes `***` (`http://admin:pw@[bad` → `http://***@[bad`).
 */
export function redactUserinfo(text: string): string {
  const at = text.lastIndexOf("@");
  if (at < 0) return text;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(text);
  const start = scheme ? scheme[0].length : 0;
  return at < start ? text : `${text.slice(0, start)}***${text.slice(at)}`;
}
