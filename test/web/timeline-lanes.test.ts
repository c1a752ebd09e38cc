import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { artifact, logIn, ROOT, useDashboardBrowser } from "../helpers/browser.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService, type TestService } from "../helpers/serve.js";

/**
 * The segment timeline's lanes in real headless Chromium against the service on the emulator: a 90-day daily
 * backfill with two dead-lettered days, ten days appended to (two small segments each: compaction
 * candidates), five of them compacted, and ten days run again. Time runs across; one lane per chunk state
 * (live, overshadowed, unused, gaps); exactly one live shape per chunk; a chunk clicked lists its versions and
 * segments; the range and the chunk stay in the URL through a reload, and back returns to the range before.
 * The compaction-candidate rule is checked on the same data: the compacted days have none, the fragmented
 * ones have theirs, and a day's one small segment is none. No sleeps: every wait is for a selector or a state.
 */

declare const window: { axe: unknown; innerWidth: number };
declare const document: { documentElement: { scrollWidth: number } };

const TOKEN = "timeline-lanes-token-0123456789abcdef";
const DS = "web_lanes";
const RANGE = "2026-01-01/2026-04-01";
const dashboard = useDashboardBrowser();

async function ended(t: TestService, created: { status: number; text: string; json: { id: string } }) {
  // The service's log says what an unexpected answer was about.
  const errors = () => t.logs.filter((l) => /"level":(50|60)/.test(l)).join("\n");
  expect(created.status, `${created.text}\n${errors()}`).toBeLessThan(300);
  const res = await t.call(`/api/v1/jobs/${encodeURIComponent(created.json.id)}/wait?timeout=120`);
  expect(res.json.ended, res.text).toBe(true);
  return res.json;
}

/** axe-core in the page: no serious or critical violation. */
async function expectAccessible(page: Page): Promise<void> {
  await page.addScriptTag({ path: join(ROOT, "node_modules", "axe-core", "axe.min.js") });
  const result = (await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is a global the script tag defined
    const axe = (window as any).axe;
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v: { id: string; impact: string; nodes: { target: string[] }[] }) => ({
      id: v.id,
      impact: v.impact,
      at: v.nodes.slice(0, 3).map((n) => n.target.join(" ")),
    }));
  })) as { id: string; impact: string }[];
  expect(result.filter((v) => v.impact === "serious" || v.impact === "critical")).toEqual([]);
}

const day = (d: string) => `${d}T00:00:00.000Z`;
const chunkOf = (d: string, next: string) => `${day(d)}/${day(next)}`;

describe("dashboard: the segment timeline's lanes", () => {
  it("a 90-day backfill with gaps, re-runs and a compaction: lanes, one live version per chunk, versions on click, the range in the URL", async () => {
    const t = await startTestService({ token: TOKEN, service: { webDir: dashboard.web } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 90, rowsPerDay: 10 });
    for (const d of ["2026-01-05", "2026-03-20"])
      writeFileSync(join(dataDir, `events-${d}.json`), "{broken\n{broken\n");
    const run = (extra: Record<string, unknown>) =>
      t.call("/api/v1/backfills", {
        json: {
          template: dailyTemplate({ datasource: DS }),
          templateName: "daily.json",
          from: "2026-01-01",
          to: "2026-04-01",
          vars: { dataDir },
          ...extra,
        },
      });
    const first = await ended(t, await run({}));
    expect(first.job.counts).toMatchObject({ done: 88, dead: 2 });
    // Ten days appended to (other rows: the same ones twice would be a doubled append): two small segments
    // each, which compaction would merge.
    await ended(
      t,
      await run({
        template: dailyTemplate({ datasource: DS, append: true }),
        from: "2026-02-01",
        to: "2026-02-11",
        vars: { dataDir: writeDailyDataset({ from: "2026-02-01", days: 10, rowsPerDay: 5 }) },
        specVersion: "append",
      }),
    );
    const fragmented = await t.call(`/api/v1/audit?datasource=${DS}&interval=2026-02-01/2026-02-11`);
    expect(fragmented.json.compactionCandidates, fragmented.text).toHaveLength(20);
    // The other days hold one small segment each: no candidate (compacting them would change nothing).
    const whole = await t.call(`/api/v1/audit?datasource=${DS}&interval=2026-01-10/2026-01-31`);
    expect(whole.json.compactionCandidates).toEqual([]);

    const compact = { datasource: DS, interval: "2026-02-01/2026-02-06" };
    const compacted = await ended(t, await t.call("/api/v1/compactions", { json: compact }));
    expect(compacted.job.counts.done).toBe(5);
    const after = await t.call(`/api/v1/audit?datasource=${DS}&interval=2026-02-01/2026-02-06`);
    expect(after.json.compactionCandidates).toEqual([]);
    // Freshly compacted, the small days plan nothing more.
    const again = await t.call("/api/v1/compactions", { json: compact });
    expect(again.json).toMatchObject({ tasks: 0 });
    await ended(t, await run({ from: "2026-03-01", to: "2026-03-11", new: true }));

    const api = await t.call(`/api/v1/datasources/${DS}/timeline?interval=${RANGE}`);
    const chunks = api.json.chunks as {
      interval: string;
      live: { state: string; candidates: number } | null;
      overshadowed: { versions: number };
      versions: { status: string }[];
    }[];
    expect(chunks.filter((c) => c.live)).toHaveLength(88);
    expect(chunks.filter((c) => c.live?.state === "ours")).toHaveLength(88);
    expect(chunks.filter((c) => c.live?.candidates)).toHaveLength(5);
    expect(
      chunks.filter((c) => c.overshadowed.versions > 0 || c.versions.some((v) => v.status === "unused")),
    ).toHaveLength(15);

    const ctx = await dashboard.context({ width: 1440, height: 900 });
    const page = await ctx.newPage();
    await logIn(page, `${t.service.url}/#/datasources/${DS}?interval=${RANGE}`, TOKEN);
    await page.getByTestId("audit-verdict").waitFor();
    await expect(page.getByTestId("audit-verdict").textContent()).resolves.toMatch(
      /Audit ok: .*, but 2 gaps/,
    );

    // Lanes, time across: the lane names, and a shape per chunk in the live lane, none above another.
    expect(await page.locator(".lane-names div").allTextContents()).toEqual([
      "Live version",
      "Overshadowed",
      "Unused",
      "Gaps",
    ]);
    const live = page.locator("svg.lanes rect[data-status=live]");
    expect(await live.count()).toBe(88);
    const perChunk = await page
      .locator("svg.lanes g[data-chunk]")
      .evaluateAll((gs) => gs.map((g) => g.querySelectorAll("rect[data-status=live]").length));
    expect(perChunk.filter((n) => n > 1)).toEqual([]);
    const boxes = await live.evaluateAll((rs) =>
      rs.map((r) => {
        const b = r.getBoundingClientRect();
        return { top: b.top, left: b.left, right: b.right };
      }),
    );
    expect(new Set(boxes.map((b) => Math.round(b.top))).size).toBe(1);
    const sorted = [...boxes].sort((a, b) => a.left - b.left);
    for (let i = 1; i < sorted.length; i++)
      expect(sorted[i]!.left).toBeGreaterThanOrEqual(sorted[i - 1]!.right - 1);
    expect(
      await page
        .locator("svg.lanes rect[data-status=overshadowed], svg.lanes rect[data-status=unused]")
        .count(),
    ).toBeGreaterThanOrEqual(15);
    expect(await page.locator("svg.lanes rect.seg-candidate").count()).toBe(5);
    expect(
      await page.locator("svg.lanes g.gap").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-gap"))),
    ).toEqual(["dead-lettered", "dead-lettered"]);
    // The axis has dates, and the drawing is a few hundred shapes, not one row per version.
    expect(await page.locator(".lanes-axis span").allTextContents()).toEqual([
      "2026-01",
      "2026-02",
      "2026-03",
    ]);
    expect(await page.locator("svg.lanes rect").count()).toBeLessThan(400);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);

    // A compacted day clicked: its versions (the compaction's live, the backfill's overshadowed) and segments.
    const compactedDay = chunkOf("2026-02-02", "2026-02-03");
    await page.locator(`svg.lanes g[data-chunk="${compactedDay}"] rect[data-status=live]`).click();
    const detail = page.getByTestId("chunk-detail");
    await detail.waitFor();
    await expect(detail.getByRole("heading").textContent()).resolves.toBe("Chunk 2026-02-02 → 2026-02-03");
    const versions = await detail
      .locator("table.chunk-versions tbody tr")
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-status")));
    expect(versions[0]).toBe("live");
    expect(versions.slice(1).length).toBeGreaterThanOrEqual(1);
    expect(versions.slice(1).every((s) => s === "overshadowed" || s === "unused")).toBe(true);
    expect(await detail.locator("table.segments tbody tr").count()).toBeGreaterThanOrEqual(3);
    expect(page.url()).toContain(`chunk=${encodeURIComponent(compactedDay)}`);
    await page.screenshot({ path: artifact("timeline-lanes.png") });
    // The docs' screenshot, when asked for (SEGOPS_UPDATE_SCREENSHOTS=1): a plain run leaves the tree as it was.
    if (process.env.SEGOPS_UPDATE_SCREENSHOTS === "1")
      copyFileSync(artifact("timeline-lanes.png"), join(ROOT, "docs", "images", "dashboard-timeline.png"));
    await expectAccessible(page);

    // Reload: the range and the chunk come back from the URL.
    await page.reload();
    await page.getByTestId("chunk-detail").waitFor();
    expect(await page.getByLabel("Interval").inputValue()).toBe(RANGE);
    await expect(page.getByTestId("chunk-detail").getByRole("heading").textContent()).resolves.toBe(
      "Chunk 2026-02-02 → 2026-02-03",
    );

    // A narrower range from the form, then back: the range before returns, in the box and in the drawing.
    await page.getByLabel("Interval").fill("2026-03-01/2026-03-11");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForFunction(() =>
      (globalThis as unknown as { location: { hash: string } }).location.hash.includes("2026-03-11"),
    );
    await page.getByText("(10 chunks)").waitFor();
    expect(await page.locator("svg.lanes rect[data-status=live]").count()).toBe(10);
    // The re-run's days: each one live version, the first run's overshadowed or unused beside it.
    expect(
      await page
        .locator("svg.lanes rect[data-status=overshadowed], svg.lanes rect[data-status=unused]")
        .count(),
    ).toBe(10);
    await page.goBack();
    await page.locator("svg.lanes g.gap").first().waitFor();
    expect(await page.getByLabel("Interval").inputValue()).toBe(RANGE);
    expect(await page.locator("svg.lanes rect[data-status=live]").count()).toBe(88);

    // The keyboard: a chunk's versions from the chunks table.
    const button = page.getByRole("button", { name: /versions of 2026-03-02 → 2026-03-03$/ });
    await button.focus();
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("chunk-detail").getByRole("heading").textContent()).resolves.toBe(
      "Chunk 2026-03-02 → 2026-03-03",
    );
    expect(await button.getAttribute("aria-expanded")).toBe("true");

    // On a phone the lanes fit the screen: no sideways scrolling, every live chunk still drawn.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator(".lane-names").waitFor();
    const phoneOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(phoneOverflow).toBeLessThanOrEqual(0);
    const widths = await page
      .locator("svg.lanes rect[data-status=live]")
      .evaluateAll((rs) => rs.map((r) => r.getBoundingClientRect().width));
    expect(widths).toHaveLength(88);
    expect(Math.min(...widths)).toBeGreaterThan(0);
    await page.evaluate(() =>
      (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0),
    );
    await page.screenshot({ path: artifact("timeline-lanes-phone.png") });
    await ctx.close();
  }, 600_000);
});
