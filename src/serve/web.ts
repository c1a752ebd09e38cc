import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { Context, Hono } from "hono";

/**
 * The dashboard's static assets: web/ built by Vite (`npm run build`) into dist/web, read into memory
 * once (with a gzip copy of each) and served at `/` and `/assets/…`. No data is in them, so they need no
 * token; the data routes they call do.
 */

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
};

/** Script and style only from this origin; no frames, no plugins, data only from the API. */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

interface Asset {
  body: Uint8Array;
  gzip: Uint8Array;
  type: string;
}

/**
 * Where the built dashboard is: dist/web next to dist/serve (the installed package), or the checkout's
 * dist/web when the service runs from src/ (tsx). Null when neither has an index.html.
 */
export function findWebDir(from: string = dirname(fileURLToPath(import.meta.url))): string | null {
  for (const candidate of [join(from, "..", "web"), join(from, "..", "..", "dist", "web")]) {
    if (existsSync(join(candidate, "index.html"))) return candidate;
  }
  return null;
}

function readAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const add = (path: string, name: string) => {
    const body = readFileSync(path);
    assets.set(name, {
      body,
      gzip: gzipSync(body, { level: 9 }),
      type: TYPES[extname(name)] ?? "application/octet-stream",
    });
  };
  add(join(dir, "index.html"), "index.html");
  const assetDir = join(dir, "assets");
  if (existsSync(assetDir))
    for (const name of readdirSync(assetDir))
      if (statSync(join(assetDir, name)).isFile()) add(join(assetDir, name), `assets/${name}`);
  return assets;
}

function send(c: Context, asset: Asset, cache: string): Response {
  const gzip = /\bgzip\b/.test(c.req.header("accept-encoding") ?? "");
  return c.body((gzip ? asset.gzip : asset.body) as Uint8Array<ArrayBuffer>, 200, {
    "content-type": asset.type,
    "cache-control": cache,
    vary: "accept-encoding",
    ...(gzip ? { "content-encoding": "gzip" } : {}),
    ...SECURITY_HEADERS,
  });
}

/**
 * Registers `/` and `/assets/*`. Without a build, `/` answers 503 saying how to build it (the API works
 * the same either way).
 */
export function registerWeb(
  app: Hono,
  webDir: string | null,
  notBuilt: (c: Context) => Response,
  notFound: (c: Context) => Response,
): void {
  const assets = webDir ? readAssets(webDir) : null;
  app.get("/", (c) => {
    const index = assets?.get("index.html");
    return index ? send(c, index, "no-cache") : notBuilt(c);
  });
  app.get("/assets/:name", (c) => {
    const name = c.req.param("name");
    const asset = /^[A-Za-z0-9._-]+$/.test(name) ? assets?.get(`assets/${name}`) : undefined;
    // Vite names each asset by its content's hash: it never changes under the same name.
    return asset ? send(c, asset, "public, max-age=31536000, immutable") : notFound(c);
  });
}
