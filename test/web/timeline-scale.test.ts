import { describe, expect, it } from "vitest";
import { timelineChunks } from "../../src/serve/dashboard/timeline-chunks.js";
import { useDashboardBrowser } from "../helpers/browser.js";
import { startTestService } from "../helpers/serve.js";

/**
 * The timeline at the size a long backfill reaches: 90 days, each written by a backfill (8 segments), run
 * again (8), appended to (4) and compacted (1) — 1,890 segments, 21 a day — answered by the service's own
 * chunk aggregation and drawn in real Chromium. The lanes stay one shape per chunk and lane (not one row
 * per version), and a chunk's 21 segments are listed on click. Times are printed, not asserted: the
 * machine is shared.
 */

const TOKEN = "timeline-scale-token-0123456789abcdef";
const DS = "web_big";
const dashboard = useDashboardBrowser();

const DAY = 86_400_000;
const iso = (t: number) => new Date(t).toISOString();

/** The answer of `GET …/timeline` for the synthetic datasource, built with the service's aggregation. */
function bigTimeline() {
  const t0 = Date.parse("2026-01-01T00:00:00Z");
  const versions = [
    { v: "2026-04-01T00:00:00.000Z", n: 8, status: "unused" as const },
    { v: "2026-04-02T00:00:00.000Z", n: 12, status: "overshadowed" as const },
    { v: "2026-04-03T00:00:00.000Z", n: 1, status: "live" as const },
  ];
  const segments = [];
  for (let d = 0; d < 90; d++) {
    for (const { v, n, status } of versions)
      for (let p = 0; p < n; p++)
        segments.push({
          id: `${DS}_${iso(t0 + d * DAY)}_${iso(t0 + (d + 1) * DAY)}_${v}${p ? `_${p}` : ""}`,
          start: iso(t0 + d * DAY),
          end: iso(t0 + (d + 1) * DAY),
          version: v,
          partitionNum: p,
          status,
          tombstone: false,
          sizeBytes: 40_000,
          rows: 100,
          served: status === "live",
          compactionCandidate: null,
        });
  }
  const started = performance.now();
  const chunks = timelineChunks(segments, new Set(versions.map((v) => v.v)));
  const aggregateMs = performance.now() - started;
  const interval = `${iso(t0)}/${iso(t0 + 90 * DAY)}`;
  return {
    aggregateMs,
    body: {
      datasource: DS,
      interval,
      segments,
      truncated: false,
      chunks,
      audit: {
        datasource: DS,
        interval,
        ok: true,
        noSegments: false,
        chunks: chunks.map((c) => ({
          interval: c.interval,
          liveVersions: [c.live?.version ?? ""],
          segments: 1,
          rows: 100,
          bytes: 40_000,
          tombstone: false,
          appendedPartitions: 0,
          notes: [],
        })),
        violations: [],
        compactionCandidates: [],
        totals: { rows: 9000, bytes: 3_600_000, segments: 90 },
      },
      gaps: [],
    },
  };
}

describe("dashboard: the timeline of 1,890 segments", () => {
  it("draws one shape per chunk and lane, and lists a chunk's 21 segments on click", async () => {
    const t = await startTestService({ token: TOKEN, service: { webDir: dashboard.web } });
    const { aggregateMs, body } = bigTimeline();
    expect(body.segments).toHaveLength(1890);
    const ctx = await dashboard.context({ width: 1440, height: 900, timeoutMs: 60_000 });
    const page = await ctx.newPage();
    // The answer is the synthetic one (the emulator would take minutes to publish it); the page is the real one.
    await page.route(`**/api/v1/datasources/${DS}/timeline*`, (route) =>
      route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify(body) }),
    );
    await page.goto(`${t.service.url}/#/datasources/${DS}?interval=2026-01-01/2026-04-01`);
    await page.getByLabel("API token").fill(TOKEN);
    const started = Date.now();
    await page.getByRole("button", { name: "Log in" }).click();
    await page.locator("svg.lanes rect[data-status=live]").nth(89).waitFor();
    const drawnMs = Date.now() - started;
    expect(await page.locator("svg.lanes rect[data-status=live]").count()).toBe(90);
    expect(await page.locator("svg.lanes rect[data-status=overshadowed]").count()).toBe(90);
    expect(await page.locator("svg.lanes rect[data-status=unused]").count()).toBe(90);
    expect(await page.locator("svg.lanes rect").count()).toBe(270);
    // The all-segments table is drawn only when opened.
    expect(await page.locator("details table.segments tbody tr").count()).toBe(0);

    const clicked = Date.now();
    await page.locator("svg.lanes rect[data-status=live]").nth(45).click();
    await page.getByTestId("chunk-detail").locator("table.segments tbody tr").nth(20).waitFor();
    const listedMs = Date.now() - clicked;
    expect(await page.getByTestId("chunk-detail").locator("table.segments tbody tr").count()).toBe(21);
    expect(
      await page
        .getByTestId("chunk-detail")
        .locator("table.chunk-versions tbody tr")
        .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-status"))),
    ).toEqual(["live", "overshadowed", "unused"]);
    console.log(
      `timeline of ${body.segments.length} segments: aggregated in ${aggregateMs.toFixed(1)} ms, drawn ${drawnMs} ms after login, a chunk listed ${listedMs} ms after its click`,
    );
    await ctx.close();
  }, 300_000);
});
