import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it, onTestFinished } from "vitest";
import { startSim } from "../../src/sim/server.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService } from "../helpers/serve.js";

/**
 * `segops serve --druid-request-budget`: the service's Druid client holds calls past the budget (they are sent
 * later, none dropped: the backfill still ends done), and `/metrics` counts the waits per class.
 */

const TOKEN = "budget-token-0123456789abcdef";

it("a backfill under a budget of 5 requests a second ends done, and /metrics counts the calls that waited", async () => {
  const sim = await startSim({ timeScale: 200, capacity: 8, handoffDelayMs: 2000, seed: 5 });
  onTestFinished(() => sim.close());
  const budgeted = await startTestService({
    token: TOKEN,
    service: {
      druid: {
        url: sim.url,
        retry: { baseMs: 5, capMs: 50, maxAttempts: 3 },
        requestBudget: { perSecond: 5 },
      },
    },
  });
  const dataDir = mkdtempSync(join(tmpdir(), "segops-budget-"));
  writeDailyDataset({ dir: dataDir, from: "2026-01-01", days: 3, rowsPerDay: 10 });
  const created = await budgeted.call("/api/v1/backfills", {
    json: {
      template: dailyTemplate({ datasource: "budgeted" }),
      templateName: "daily.json",
      from: "2026-01-01",
      to: "2026-01-04",
      vars: { dataDir },
    },
  });
  expect(created.status, created.text).toBe(201);
  const ended = await budgeted.call(`/api/v1/jobs/${encodeURIComponent(created.json.id)}/wait?timeout=120`);
  expect(ended.json.ended).toBe(true);
  expect(ended.json.job.counts).toMatchObject({ done: 3 });
  const text = (await budgeted.call("/metrics")).text;
  const waits = [...text.matchAll(/^segops_druid_request_budget_waits_total\{class="(\w+)"\} (\d+)/gm)];
  // Every class is exported from the start; a 20 ms tick's status lookups alone exceed 5 a second.
  expect(waits.map((m) => m[1]).sort()).toEqual(["admission", "handoff", "other", "status"]);
  expect(waits.reduce((sum, m) => sum + Number(m[2]), 0)).toBeGreaterThan(0);
  expect(text).toMatch(/^segops_druid_request_budget_wait_seconds_total\{class="status"\} /m);
});
