import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DruidClient } from "../../src/druid/client.js";
import { redact, secretVariants } from "../../src/druid/redact.js";
import { FakeDruid, InstantClock } from "../druid/helpers/fake-druid.js";

/**
 * A proxy's or Druid's error body may echo a credential escaped for HTML or JSON, or upper-cased; the
 * client's errors must not carry it in any of those forms (nor raw, URL-encoded or base64'd).
 */

// Every character an escaper touches: quote, backslash, angle brackets, ampersand, apostrophe, slash,
// a space and a non-ASCII letter.
const PASSWORD = `Pa"ss\\w<ö>rd&1 it's/x`;
const TOKEN = 'tok<Ä>&"bearer\\secret';

/** The forms a proxy, a Python or Java error page, or a JSON encoder writes a secret in. */
function echoes(secret: string): Record<string, string> {
  const html = secret
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
  const jsonInner = JSON.stringify(secret).slice(1, -1);
  return {
    raw: secret,
    url: encodeURIComponent(secret),
    "html (named)": html.replaceAll("'", "&#39;"),
    "html (hex, as Python's html.escape)": html.replaceAll("'", "&#x27;"),
    "html (numeric, upper-case hex)": [...secret]
      .map((c) => (/[A-Za-z0-9]/.test(c) ? c : `&#X${(c.codePointAt(0) as number).toString(16)};`))
      .join(""),
    json: jsonInner,
    "json (ASCII only, as Python's json.dumps)": jsonInner.replace(
      /[^\x20-\x7e]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    ),
    "json (slash escaped)": jsonInner.replaceAll("/", "\\/"),
    "upper-cased": secret.toUpperCase(),
    "lower-cased": secret.toLowerCase(),
    "html then upper-cased": html.toUpperCase(),
    "json of html": JSON.stringify(html).slice(1, -1),
  };
}

describe("redact: escaped and re-cased secrets", () => {
  const variants = secretVariants([PASSWORD, TOKEN]);

  for (const [name, secret] of [
    ["password", PASSWORD],
    ["bearer token", TOKEN],
  ] as const) {
    for (const [form, echoed] of Object.entries(echoes(secret))) {
      it(`masks the ${name} ${form}`, () => {
        const out = redact(`denied: <${echoed}> end`, variants);
        expect(out).toBe("denied: <[REDACTED]> end");
      });
    }
  }

  it("leaves text without a secret as it is", () => {
    const text = `plain: Pa ss w rd &amp; &lt;tag&gt; \\"quoted\\" \\u00f6 PASSWORD`;
    expect(redact(text, variants)).toBe(text);
  });
});

describe("the Druid client's errors", () => {
  let druid: FakeDruid;
  beforeEach(() => {
    druid = new FakeDruid();
  });
  afterEach(async () => {
    await druid.close();
  });

  it("carry no HTML-escaped, JSON-escaped or upper-cased password from an echoing body", async () => {
    await druid.start();
    const { json, "upper-cased": upper, "html (named)": html } = echoes(PASSWORD);
    druid.on("GET", "/druid/indexer/v1/workers", {
      status: 400,
      body: { error: `bad password; html=${html}; json="${json}"; upper=${upper}` },
    });
    const client = new DruidClient({
      url: druid.url,
      clock: new InstantClock(),
      retry: { maxAttempts: 1 },
      auth: { type: "basic", username: "admin", password: PASSWORD },
    });
    try {
      const error = (await client.workers().catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(Error);
      const surfaces = `${error.message}\n${JSON.stringify(error)}\n${String(error.stack)}`;
      expect(surfaces).toContain('html=[REDACTED]; json=\\"[REDACTED]\\"; upper=[REDACTED]');
      for (const form of [html, json, upper]) expect(surfaces).not.toContain(form);
    } finally {
      await client.close();
    }
  });
});
