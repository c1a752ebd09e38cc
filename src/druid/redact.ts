/**
 * Last line of defence for secrets: every text the client puts into an error or a log line passes
 * through `redact`, so a password or token echoed back by a proxy or an error page cannot leak, whether
 * raw, URL-encoded, HTML-escaped (`&amp;`, `&#39;`, `&#x3c;`), JSON-escaped (`\"`, `\\`, `\u00f6`) or in
 * another letter case, or any mix of these.
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
  const pattern = patternFor(variants);
  return pattern === null ? text : text.replace(pattern, MASK);
}

/** One regular expression per list of variants (the client passes the same list for its lifetime). */
const compiled = new WeakMap<readonly string[], RegExp | null>();

function patternFor(variants: readonly string[]): RegExp | null {
  const known = compiled.get(variants);
  if (known !== undefined) return known;
  // An empty variant would match everywhere; longest first, so the whole of a longer secret is masked.
  const sources = [...variants]
    .filter((v) => v.length > 0)
    .sort((a, b) => b.length - a.length)
    .map(spellings);
  // `i` for upper- and lower-cased echoes; `u` so a case folds per code point (ö matches Ö).
  const pattern = sources.length === 0 ? null : new RegExp(sources.join("|"), "giu");
  compiled.set(variants, pattern);
  return pattern;
}

/**
 * A secret as a pattern that matches every character in each of the ways a text may carry it, so a
 * secret escaped by more than one layer, or only partly, is still found. The alternatives per
 * character are a fixed few, and the pattern is linear in the secret's length.
 */
function spellings(secret: string): string {
  let source = "";
  for (const ch of secret) source += `(?:${forms(ch).join("|")})`;
  return source;
}

const HTML_NAMED: Record<string, readonly string[]> = {
  "&": ["&amp;"],
  "<": ["&lt;"],
  ">": ["&gt;"],
  '"': ["&quot;"],
  "'": ["&apos;"],
};

const JSON_SHORT: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "/": "\\/",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/** The spellings of one character (a code point), as regular-expression sources. */
function forms(ch: string): string[] {
  const cp = ch.codePointAt(0) as number;
  const out = new Set<string>([ch, ch.toUpperCase(), ch.toLowerCase()].map(escapeRegExp));
  // URL encoding: the UTF-8 bytes as %XX (`+` for a space in a query or form).
  out.add([...Buffer.from(ch, "utf8")].map((b) => `%${b.toString(16).padStart(2, "0")}`).join(""));
  if (ch === " ") out.add("\\+");
  // HTML: named entities for the characters escapers use them for, and numeric references (decimal
  // or hex, leading zeros and a missing `;` allowed, as browsers read them).
  for (const named of HTML_NAMED[ch] ?? []) out.add(escapeRegExp(named));
  out.add(`&#0*${cp};?`);
  out.add(`&#x0*${cp.toString(16)};?`);
  // JSON: the short escapes, and \uXXXX for each UTF-16 code unit (a surrogate pair above U+FFFF).
  const short = JSON_SHORT[ch];
  if (short !== undefined) out.add(escapeRegExp(short));
  let units = "";
  for (let i = 0; i < ch.length; i++) units += `\\\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`;
  out.add(units);
  return [...out];
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
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
