import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { ingestArgs, runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { nextDay, sqlCount } from "../helpers/sql-count.js";

// A rerun of the same command: the same input from the same source finds its job and submits nothing;
// a corrected file is new work for its partition only; a given --source-version names the work instead.

let sim: SimHandle;
const work = mkdtempSync(join(tmpdir(), "segops-rerun-"));
const dataDir = writeDailyDataset({ from: "2026-06-01", days: 2, rowsPerDay: 12, dir: join(work, "data") });
const template = join(work, "daily.json");
writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "rerun" })));

beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 1000 });
});
afterAll(async () => {
  await sim.close();
});

function backfill(ledger: string, extra: string[] = []) {
  return runCli([
    ...ingestArgs({
      template,
      dataDir,
      druid: sim.url,
      ledgerPath: join(work, ledger),
      range: { from: "2026-06-01", to: "2026-06-03" },
    }),
    "--tick",
    "30",
    ...extra,
  ]).done;
}

const accepted = () => sim.stats().submissions.filter((s) => s.accepted).length;

const rowsOn = (datasource: string, day: string) => sqlCount(sim.url, datasource, day, nextDay(day));

describe("a rerun is new work exactly when its source changed", () => {
  it("unchanged: the same job, already done, nothing submitted; corrected file: that day ingested again", async () => {
    const first = await backfill("fp.db");
    expect(first.code, first.stderr).toBe(0);
    const afterFirst = accepted();
    expect(await rowsOn("rerun", "2026-06-02")).toBe(12);

    const again = await backfill("fp.db");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/already done on .*from the same inputs and source: nothing submitted/);
    expect(accepted()).toBe(afterFirst);

    // The upstream corrects 2026-06-02: 5 rows instead of 12.
    writeDailyDataset({ from: "2026-06-02", days: 1, rowsPerDay: 5, dir: dataDir });
    const corrected = await backfill("fp.db");
    expect(corrected.code, corrected.stderr).toBe(0);
    expect(corrected.stderr).toMatch(
      /2026-06-02\/2026-06-03: source changed \(events-2026-06-02\.json [\d,]+ bytes → [\d,]+ bytes\)/,
    );
    // The same job, found again: only the changed partition runs again.
    expect(corrected.stderr).toMatch(/^resuming job backfill_rerun_/);
    expect(corrected.stderr).not.toMatch(/2026-06-01\/2026-06-02: source changed/);
    // Only the corrected day was submitted; Druid serves its new rows, the other day is untouched.
    expect(accepted()).toBe(afterFirst + 1);
    expect(await rowsOn("rerun", "2026-06-02")).toBe(5);
    expect(await rowsOn("rerun", "2026-06-01")).toBe(12);
  });

  it("--source-version names the work: the same version reattaches, a new one runs every partition again", async () => {
    const v1 = await backfill("given.db", ["--source-version", "upstream-run-1"]);
    expect(v1.code, v1.stderr).toBe(0);
    const before = accepted();
    const same = await backfill("given.db", ["--source-version", "upstream-run-1"]);
    expect(same.stderr).toMatch(/already done/);
    expect(accepted()).toBe(before);
    const v2 = await backfill("given.db", ["--source-version", "upstream-run-2"]);
    expect(v2.code, v2.stderr).toBe(0);
    expect(v2.stderr).toMatch(/source changed \(source version upstream-run-1 → upstream-run-2\)/);
    expect(accepted()).toBe(before + 2);
  });
});
