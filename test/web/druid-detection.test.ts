import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { logIn, ROOT, useDashboardBrowser } from "../helpers/browser.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService } from "../helpers/serve.js";

/**
 * The detection latency on an emulator whose clock runs ahead (time scale 200, as the README's quick start
 * runs it at 100): Druid's end of every task (createdTime + duration, by its clock) comes after segops saw it,
 * so no latency can be measured. The load API counts those partitions, and the Druid view says why there is no
 * figure instead of a bare "–". No sleeps: every wait is for a selector or the job's end.
 */

declare const window: { axe: unknown };
declare const document: unknown;

const TOKEN = "druid-detection-token-0123456789abcdef";
const dashboard = useDashboardBrowser();

describe("dashboard: detection latency on a scaled emulator", () => {
  it("no figure, and the view says Druid's clock runs ahead of this host's", async () => {
    const t = await startTestService({
      token: TOKEN,
      sim: { timeScale: 200 },
      service: { webDir: dashboard.web },
    });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 10 });
    const created = await t.call("/api/v1/backfills", {
      json: {
        template: dailyTemplate({ datasource: "web_detect" }),
        templateName: "daily.json",
        from: "2026-01-01",
        to: "2026-01-04",
        vars: { dataDir },
      },
    });
    expect(created.status, created.text).toBeLessThan(300);
    const waited = await t.call(`/api/v1/jobs/${encodeURIComponent(created.json.id)}/wait?timeout=120`);
    expect(waited.json.job.counts).toMatchObject({ done: 3 });

    const load = await t.call("/api/v1/druid/load");
    expect(load.json.latency.detection).toMatchObject({ count: 0, p50: null, unmeasured: 3 });
    expect(load.json.latency.handoff.count).toBe(3);

    const ctx = await dashboard.context({ width: 1440, height: 900 });
    const page = await ctx.newPage();
    await logIn(page, `${t.service.url}/#/druid`, TOKEN);
    const row = page.getByTestId("latency").locator("tbody tr").first();
    await row.waitFor();
    const why = row.locator("small.why");
    expect(await why.isVisible()).toBe(true);
    expect(await why.textContent()).toMatch(
      /^None measured: Druid's clock runs ahead of this host's — 3 partition/,
    );
    expect(await row.getAttribute("title")).toMatch(/--time-scale/);
    // The handoff row has its figure and no such note.
    expect(await page.getByTestId("latency").locator("tbody tr").nth(1).locator("small.why").count()).toBe(0);

    await page.addScriptTag({ path: join(ROOT, "node_modules", "axe-core", "axe.min.js") });
    const violations = (await page.evaluate(async () => {
      // biome-ignore lint/suspicious/noExplicitAny: axe is a global the script tag defined
      const axe = (window as any).axe;
      const r = await axe.run(document, { resultTypes: ["violations"] });
      return r.violations.map((v: { id: string; impact: string }) => ({ id: v.id, impact: v.impact }));
    })) as { id: string; impact: string }[];
    expect(violations.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
    await ctx.close();
  }, 300_000);
});
