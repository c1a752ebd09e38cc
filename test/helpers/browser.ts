import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";

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

export interface ContextOptions {
  /** @default 1280 */
  width?: number;
  /** @default 800 */
  height?: number;
  dark?: boolean;
  /** axe is injected as a script, which the dashboard's CSP would refuse. @default true */
  bypassCSP?: boolean;
  /** Each wait's cap, not a speed check: on a loaded machine Chromium takes seconds to render. @default 30_000 */
  timeoutMs?: number;
}

/** The dashboard built from web/ and one Chromium, shared by the tests of a file. */
export interface DashboardBrowser {
  /** The built dashboard's directory (the service's `webDir`); set once the file's first hook ran. */
  readonly web: string;
  readonly chromium: RunningBrowser;
  /** A new browser context (its own cookies and storage), closed by the caller. */
  context(options?: ContextOptions): Promise<BrowserContext>;
}

/**
 * Builds the dashboard and starts Chromium before the file's tests (registers its own beforeAll and afterAll,
 * first, so a file's own beforeAll can use both), and closes Chromium after them.
 */
export function useDashboardBrowser(): DashboardBrowser {
  let web = "";
  let running: RunningBrowser | undefined;
  beforeAll(async () => {
    [web, running] = await Promise.all([buildDashboard(), launchChromium()]);
  }, 120_000);
  afterAll(async () => {
    await running?.close();
  });
  const chromiumOf = (): RunningBrowser => {
    if (!running)
      throw new Error("Chromium is not started: use the dashboard browser inside a hook or a test");
    return running;
  };
  return {
    get web() {
      return web;
    },
    get chromium() {
      return chromiumOf();
    },
    async context(options = {}) {
      const ctx = await chromiumOf().browser.newContext({
        viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
        colorScheme: options.dark ? "dark" : "light",
        bypassCSP: options.bypassCSP ?? true,
      });
      ctx.setDefaultTimeout(options.timeoutMs ?? 30_000);
      return ctx;
    },
  };
}

/**
 * Opens `url` and logs in with the API token. The router keeps the address's hash through the log-in, so a
 * test opens the page it means directly (navigating just after the job list mounted could be undone by its
 * first effect, which rewrites the hash to #/jobs). Waits for nothing after the click: each test waits for
 * what it needs.
 */
export async function logIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel("API token").fill(token);
  await page.getByRole("button", { name: "Log in" }).click();
}
