import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The dashboard of `segops serve`: web/ built into static assets in dist/web (npm run build), which the
 * service reads and serves at `/` (src/serve/web.ts). Relative asset URLs, no CDN, nothing fetched at
 * runtime but the API.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  publicDir: false,
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../dist/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
