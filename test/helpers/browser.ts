import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";

/**
 * Real headless Chromium for the dashboard's tests: Debian's package (/usr/bin/chromium, installed by
 * scripts/provision.sh, or here when missing), driven by playwright-core; never a downloaded browser.
 * The dashboard is built from web/ into a temporary directory first, so the tests see the source as it is.
 */

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CHROMIUM = "/usr/bin/chromium";
export const ARTIFACTS = join(ROOT, ".tmp", "artifacts", "dashboard");

/** Installs Debian's chromium when it is missing (as scripts/provision.sh does). */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  const root = process.getuid?.() === 0;
  const run = (args: string[]) => {
    const r = spawnSync(root ? args[0]! : "sudo", root ? args.slice(1) : args, {
      encoding: "utf8",
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
    if (r.status !== 0) throw new Error(`${args.join(" ")} failed:\n${r.stdout}${r.stderr}`);
  };
  run(["apt-get", "update", "-qq"]);
  run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]);
}

/** Builds web/ with Vite into a fresh directory; returns it (index.html and assets/). */
export async function buildDashboard(): Promise<string> {
  const { build } = await import("vite");
  const outDir = mkdtempSync(join(tmpdir(), "segops-web-"));
  await build({
    configFile: join(ROOT, "web", "vite.config.ts"),
    build: { outDir, emptyOutDir: true },
    logLevel: "error",
  });
  return outDir;
}

export interface RunningBrowser {
  browser: Browser;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<RunningBrowser> {
  ensureChromium();
  // Playwright starts Chromium with a new, empty --user-data-dir of its own (and refuses the flag in
  // `args`: it belongs to launchPersistentContext), removed again on close.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    browser,
    close: () => browser.close(),
  };
}

export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return join(ARTIFACTS, name);
}
