import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { artifact, logIn, useDashboardBrowser } from "../helpers/browser.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { type OutageService, startOutageService, until } from "../serve/outage-helpers.js";

/**
 * The dashboard while Druid does not answer, in real Chromium: every page (the job list, a job, the
 * segment timeline, the Druid load) carries a banner saying since when and that the work waits with
 * nothing lost, and the job list's live indicator is not green; once Druid answers again the banner goes
 * and the indicator is what the stream says. The service runs on a clock ten times faster than the
 * system's (its probes come sooner); every wait is for a state, capped, never a speed check.
 */

declare function getComputedStyle(element: unknown): { color: string };

const TOKEN = "outage-token-0123456789abcdef";
const dashboard = useDashboardBrowser();

async function login(page: Page, t: OutageService): Promise<void> {
  await logIn(page, `${t.service.url}/`, TOKEN);
  await page.getByRole("heading", { name: "Jobs" }).waitFor();
}

const reachable = async (t: OutageService) => (await t.call("/api/v1/druid/reachability")).json.reachable;

describe("dashboard: Druid unreachable", () => {
  it("a banner on every page while Druid does not answer, the live indicator not green; gone once it answers", async () => {
    const t = await startOutageService({
      scale: 10,
      token: TOKEN,
      sim: { baseDurationMs: 600_000 },
      service: { webDir: dashboard.web, loadSampleMs: 2000 },
    });
    const ctx = await dashboard.context({ bypassCSP: false });
    try {
      const dataDir = writeDailyDataset({ from: "2026-04-01", days: 2, rowsPerDay: 4 });
      const created = await t.call("/api/v1/backfills", {
        json: {
          template: dailyTemplate({ datasource: "web_outage" }),
          templateName: "daily.json",
          from: "2026-04-01",
          to: "2026-04-03",
          vars: { dataDir },
        },
      });
      expect(created.status, created.text).toBe(201);
      const id = created.json.id as string;
      const page = await ctx.newPage();
      await login(page, t);
      const row = page.locator(`tr[data-job="${id}"]`);
      await row.waitFor();
      await page.getByRole("status").getByText("● live").waitFor();
      await expect(page.getByTestId("druid-unreachable").count()).resolves.toBe(0);

      await t.proxy.down();
      // The worker's own calls (and readiness probes) find it down.
      await until("the service finds Druid down", async () => {
        await t.call("/readyz");
        return !(await reachable(t));
      });
      const pages = [
        { hash: "#/jobs", ready: page.getByRole("heading", { name: "Jobs" }) },
        { hash: `#/jobs/${encodeURIComponent(id)}`, ready: page.locator("h1").first() },
        { hash: "#/datasources/web_outage", ready: page.locator("h1").first() },
        { hash: "#/druid", ready: page.locator("h1").first() },
      ];
      for (const { hash, ready } of pages) {
        await page.goto(`${t.service.url}/${hash}`);
        await ready.waitFor();
        const banner = page.getByTestId("druid-unreachable");
        await banner.waitFor();
        await expect(banner.textContent()).resolves.toMatch(
          /^Druid unreachable since (\d{4}-\d\d-\d\d )?\d\d:\d\d UTC — work paused, nothing lost\./,
        );
        await expect(banner.getAttribute("role")).resolves.toBe("alert");
      }
      // The job list: the stream is live, the work is not; the indicator says so, and is not green.
      await page.goto(`${t.service.url}/#/jobs`);
      const indicator = page.locator(".heading [role=status]");
      await indicator.getByText("paused: Druid unreachable").waitFor();
      await expect(indicator.textContent()).resolves.not.toMatch(/live/);
      const colors = await page.evaluate(() => {
        const probe = (cls: string) => {
          const el = Object.assign(document.createElement("span"), { className: cls });
          document.body.appendChild(el);
          const color = getComputedStyle(el).color;
          el.remove();
          return color;
        };
        return {
          live: probe("live-live"),
          shown: getComputedStyle(document.querySelector(".heading [role=status]")).color,
        };
      });
      expect(colors.shown).not.toBe(colors.live);
      await page.screenshot({ path: artifact("druid-unreachable.png") });

      // Druid is back: the next probe finds it; the banner goes on every page.
      await t.proxy.up();
      await until("the service reaches Druid again", async () => {
        await t.call("/readyz");
        return await reachable(t);
      });
      for (const { hash, ready } of pages) {
        await page.goto(`${t.service.url}/${hash}`);
        await ready.waitFor();
        await page.getByTestId("druid-unreachable").waitFor({ state: "detached" });
      }
      await page.goto(`${t.service.url}/#/jobs`);
      await indicator.getByText(/● live|○ nothing running/).waitFor();
    } finally {
      await ctx.close();
      await t.stop();
    }
  }, 240_000);
});

declare const document: {
  createElement(tag: string): { className: string; remove(): void };
  querySelector(selector: string): unknown;
  body: { appendChild(el: unknown): void };
};
