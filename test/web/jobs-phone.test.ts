import { copyFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { artifact, logIn, ROOT, useDashboardBrowser } from "../helpers/browser.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService, type TestService } from "../helpers/serve.js";

/**
 * The job list on a phone (390×844) in real headless Chromium: each job a card, its name on one line (cut
 * with an ellipsis, whole in its title), its progress bar visible across the card, nothing wider than the
 * screen, axe clean; at 1440×900 it stays a table. No sleeps: every wait is for a selector.
 */

declare const window: { axe: unknown; innerWidth: number };
declare const document: { documentElement: { scrollWidth: number } };
declare function getComputedStyle(
  element: unknown,
  pseudo?: string,
): { lineHeight: string; content: string; textOverflow: string; display: string };

const TOKEN = "jobs-phone-token-0123456789abcdef";
const LONG = "web_phone_clickstream_events_by_country_and_device_hourly";
const dashboard = useDashboardBrowser();
let t: TestService;

beforeAll(async () => {
  t = await startTestService({ token: TOKEN, service: { webDir: dashboard.web } });
  const dataDir = writeDailyDataset({ from: "2026-01-01", days: 4, rowsPerDay: 10 });
  for (const datasource of [LONG, "web_phone"]) {
    const created = await t.call("/api/v1/backfills", {
      json: {
        template: dailyTemplate({ datasource }),
        templateName: "daily.json",
        from: "2026-01-01",
        to: "2026-01-05",
        vars: { dataDir },
      },
    });
    expect(created.status, created.text).toBeLessThan(300);
    const res = await t.call(`/api/v1/jobs/${encodeURIComponent(created.json.id)}/wait?timeout=120`);
    expect(res.json.ended).toBe(true);
  }
}, 300_000);

async function open(width: number, height: number): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await dashboard.context({ width, height });
  const page = await ctx.newPage();
  await logIn(page, `${t.service.url}/`, TOKEN);
  await page.locator("table.jobs tbody tr").nth(1).waitFor();
  return { ctx, page };
}

/** axe-core in the page: no serious or critical violation. */
async function expectAccessible(page: Page): Promise<void> {
  await page.addScriptTag({ path: join(ROOT, "node_modules", "axe-core", "axe.min.js") });
  const result = (await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is a global the script tag defined
    const axe = (window as any).axe;
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v: { id: string; impact: string }) => ({ id: v.id, impact: v.impact }));
  })) as { id: string; impact: string }[];
  expect(result.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
}

describe("dashboard: the job list on a phone", () => {
  it("390×844: cards with the name on one line, progress visible, no sideways scrolling, axe clean; 1440×900: a table", async () => {
    const { ctx, page } = await open(390, 844);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    // What sticks out, should anything.
    const wide = await page.evaluate(() =>
      // biome-ignore lint/suspicious/noExplicitAny: the page's DOM
      [...(document as any).querySelectorAll("body *")]
        .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
        .slice(0, 5)
        .map((el) => `${el.tagName}.${el.className}`),
    );
    expect(overflow, wide.join(", ")).toBeLessThanOrEqual(0);

    const rows = page.locator("table.jobs tbody tr");
    expect(await rows.count()).toBe(2);
    for (let i = 0; i < 2; i++) {
      const row = rows.nth(i);
      const card = await row.boundingBox();
      expect(card?.width).toBeLessThanOrEqual(390);
      // The name: one line, as wide as the card allows (not three characters a line).
      const name = row.locator("td.id a");
      const box = await name.boundingBox();
      const lineHeight = await name.evaluate((a) => Number.parseFloat(getComputedStyle(a).lineHeight));
      expect(box?.height).toBeLessThanOrEqual(lineHeight * 1.2);
      expect(box?.width).toBeGreaterThan((card?.width ?? 0) * 0.7);
      expect(await name.getAttribute("title")).toMatch(/^backfill_/);
      // Progress: visible, across the card.
      const bar = row.getByRole("progressbar");
      expect(await bar.isVisible()).toBe(true);
      expect((await bar.boundingBox())?.width).toBeGreaterThan((card?.width ?? 0) * 0.7);
      // The other columns are labelled in the card.
      expect(
        await row.locator("td.duration").evaluate((td) => getComputedStyle(td, "::before").content),
      ).toBe('"Duration"');
    }
    // The long name is cut with an ellipsis, whole in its title.
    const long = page.locator(`table.jobs tr td.id a`, { hasText: LONG.slice(0, 12) });
    const cut = await long.evaluate((a) => ({
      scroll: a.scrollWidth,
      client: a.clientWidth,
      ellipsis: getComputedStyle(a).textOverflow,
    }));
    expect(cut.ellipsis).toBe("ellipsis");
    expect(cut.scroll).toBeGreaterThan(cut.client);
    await page.screenshot({ path: artifact("jobs-phone.png") });
    // The docs' screenshot, when asked for (SEGOPS_UPDATE_SCREENSHOTS=1): a plain run leaves the tree as it was.
    if (process.env.SEGOPS_UPDATE_SCREENSHOTS === "1")
      copyFileSync(artifact("jobs-phone.png"), join(ROOT, "docs", "images", "dashboard-jobs-phone.png"));
    await expectAccessible(page);
    await ctx.close();

    // At 1440×900 it stays a table, its column headers shown.
    const desk = await open(1440, 900);
    expect(await desk.page.locator("table.jobs thead th").first().isVisible()).toBe(true);
    const display = await desk.page
      .locator("table.jobs tbody tr")
      .first()
      .evaluate((tr) => getComputedStyle(tr).display);
    expect(display).toBe("table-row");
    expect(await desk.page.locator("table.jobs tbody tr").first().getByRole("progressbar").isVisible()).toBe(
      true,
    );
    await desk.ctx.close();
  });
});
