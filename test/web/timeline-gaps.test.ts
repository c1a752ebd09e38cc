import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { artifact, logIn, ROOT, useDashboardBrowser } from "../helpers/browser.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService, type TestService } from "../helpers/serve.js";

/**
 * The timeline view's gaps in real headless Chromium (Debian's package, driven by playwright-core) against
 * the service on the emulator: a backfill with two dead-lettered days shows them as marked empty stretches
 * labelled "gap", a legend entry that says "gap", a verdict that is not a plain "ok", and a table with the
 * ledger's reason and job; a range without gaps keeps its "✓ Audit ok". No sleeps: every wait is for a
 * selector.
 */

declare const window: { axe: unknown };
declare const document: unknown;

const TOKEN = "timeline-gaps-token-0123456789abcdef";
const dashboard = useDashboardBrowser();

/** Logs in on the page at `hash` (kept through the log-in, see `logIn`). */
const loginAt = (page: Page, t: TestService, hash: string) => logIn(page, `${t.service.url}/${hash}`, TOKEN);

/**
 * Records what a page saw go wrong (answers of 400 and above, failed requests, console errors), so a wait
 * that times out says why the page did not get there instead of only which selector it missed.
 */
function watch(page: Page): <T>(wait: Promise<T>) => Promise<T> {
  const seen: string[] = [];
  page.on("response", (r) => {
    if (r.status() >= 400) seen.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  page.on("requestfailed", (r) => seen.push(`failed ${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
  page.on("console", (m) => {
    if (m.type() === "error") seen.push(`console: ${m.text()}`);
  });
  return async (wait) => {
    try {
      return await wait;
    } catch (error) {
      const main =
        (await page
          .locator("body")
          .textContent({ timeout: 2_000 })
          .catch(() => "?")) ?? "";
      throw new Error(
        `${(error as Error).message}\npage ${page.url()} shows: ${main.slice(0, 600)}\nit saw: ${seen.join("; ") || "nothing wrong"}`,
      );
    }
  };
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

describe("dashboard: gaps in the segment timeline", () => {
  it("two dead-lettered days are marked empty stretches labelled gap, listed with the reason and job", async () => {
    const t = await startTestService({ token: TOKEN, service: { webDir: dashboard.web } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 10, rowsPerDay: 10 });
    for (const d of ["2026-01-03", "2026-01-07"])
      writeFileSync(join(dataDir, `events-${d}.json`), "{broken\n{broken\n");
    const created = await t.call("/api/v1/backfills", {
      json: {
        template: dailyTemplate({ datasource: "web_gaps" }),
        templateName: "daily.json",
        from: "2026-01-01",
        to: "2026-01-11",
        vars: { dataDir },
      },
    });
    const id = created.json.id as string;
    const waited = await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=60`);
    expect(waited.json.job.counts).toMatchObject({ done: 8, dead: 2 });

    const ctx = await dashboard.context({ height: 900 });
    const page = await ctx.newPage();
    const seen = watch(page);
    await loginAt(page, t, "#/datasources/web_gaps?interval=2026-01-01/2026-01-11");
    const verdict = page.getByTestId("audit-verdict");
    await seen(verdict.waitFor());
    const said = (await verdict.textContent()) ?? "";
    expect(said).toMatch(/Audit ok: .*, but 2 gaps: part of the range holds no live data/);
    expect(said).not.toContain("✓");
    expect(await verdict.getAttribute("class")).toContain("bad");

    // Marked in the drawing, across the rows, with the word as well as the pattern.
    const marks = page.locator("svg.timeline g.gap");
    expect(await marks.count()).toBe(2);
    expect(await marks.evaluateAll((gs) => gs.map((g) => g.getAttribute("data-gap")))).toEqual([
      "dead-lettered",
      "dead-lettered",
    ]);
    expect(await page.locator("svg.timeline g.gap text.gap-label").allTextContents()).toEqual(["gap", "gap"]);
    expect(await page.locator("svg.timeline").getAttribute("aria-label")).toMatch(/, 2 gaps;/);
    await expect(page.getByRole("list", { name: "Legend" }).textContent()).resolves.toContain("gap");
    // Where the gaps are drawn: one day wide each, over no live segment (the eight live days lie around them).
    const xs = (selector: string) =>
      page.locator(selector).evaluateAll((els) =>
        els.map((el) => {
          const r = el.getBoundingClientRect();
          return { a: r.left, b: r.right };
        }),
      );
    const live = await xs("svg.timeline rect[data-status=live]");
    const holes = await xs("svg.timeline g.gap rect");
    expect(live).toHaveLength(8);
    const dayWidth = Math.max(...live.map((l) => l.b - l.a));
    for (const h of holes) {
      expect(Math.abs(h.b - h.a - dayWidth)).toBeLessThan(3);
      expect(live.filter((l) => l.a < h.b - 2 && h.a + 2 < l.b)).toEqual([]);
    }
    expect(holes[0]!.a).toBeGreaterThan(Math.min(...live.map((l) => l.a)));

    await page.locator("svg.timeline g.gap rect").first().hover();
    await expect(page.locator(".hover-info").textContent()).resolves.toMatch(
      new RegExp(`gap 2026-01-03 → 2026-01-04: no live data \\(dead-lettered in job ${id}\\)`),
    );

    const rows = page.locator("table.gaps tbody tr");
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).textContent()).toMatch(/2026-01-03 → 2026-01-04.*dead-lettered/);
    expect(await rows.nth(1).textContent()).toMatch(/2026-01-07 → 2026-01-08.*dead-lettered/);
    expect(await rows.nth(0).getByRole("link", { name: id }).getAttribute("href")).toBe(
      `#/jobs/${encodeURIComponent(id)}`,
    );
    await page.screenshot({ path: artifact("timeline-gaps.png"), fullPage: true });
    await expectAccessible(page);

    // A range the backfill filled: no gap, the plain "✓ Audit ok", no gaps table.
    await page.goto(`${t.service.url}/#/datasources/web_gaps?interval=2026-01-08/2026-01-11`);
    await page.getByText("Audit ok: one live version per chunk, every segment served (3 chunks)").waitFor();
    expect(await page.getByTestId("audit-verdict").textContent()).toMatch(/^✓ Audit ok/);
    expect(await page.locator("svg.timeline g.gap").count()).toBe(0);
    expect(await page.locator("table.gaps").count()).toBe(0);
    await ctx.close();
  });
});
