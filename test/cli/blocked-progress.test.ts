import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { watchBlockedLines } from "../../src/cli/progress.js";
import { ManualClock } from "../../src/core/clock.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { ingestArgs, runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * A backfill that nothing moves because another task holds the cluster's only slot must say so, not sit
 * silent (on a real Indexer a shut-down task's thread can hold its slot for five minutes).
 */
describe("segops backfill says when the cluster's slots block it", () => {
  let sim: SimHandle;
  const work = mkdtempSync(join(tmpdir(), "segops-blocked-"));
  const dataDir = writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 4, dir: join(work, "data") });
  const template = join(work, "daily.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "blocked" })));

  beforeAll(async () => {
    sim = await startSim({ capacity: 1, workers: 1, timeScale: 50, handoffDelayMs: 500 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it("prints what it waits for while another task holds the only slot, and when it moves again", async () => {
    const task = (path: string, body?: unknown) =>
      fetch(`${sim.url}/druid/indexer/v1/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    // Another user's task: one slot, running for far longer than this test.
    const blocker = await task("task", {
      type: "noop",
      id: "other_users_task",
      context: { simDurationMs: 1e9 },
    });
    expect(blocker.status).toBe(200);
    const run = runCli([
      ...ingestArgs({
        template,
        dataDir,
        druid: sim.url,
        ledgerPath: join(work, "ledger.db"),
        range: { from: "2026-06-01", to: "2026-06-02" },
      }),
      "--tick",
      "100",
    ]);
    const said = () => run.output().stderr;
    await until(
      "the backfill to say it waits for slots",
      () => /waiting for Druid worker slots/.test(said()),
      {
        timeoutMs: 60_000,
        whileRunning: run,
      },
    );
    expect(said()).toMatch(
      /waiting for Druid worker slots: the next partition needs 1, 1 of 1 worker slots in use by other tasks; nothing of this run is in flight \(for \d+s\)/,
    );
    expect(sim.stats().submissions.map((s) => s.id)).toEqual(["other_users_task"]);
    // The other task ends: the partition is admitted and the backfill finishes.
    expect((await task("task/other_users_task/shutdown")).status).toBe(200);
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(/no longer waiting for worker slots \(after \d+s\)/);
    expect(done.stdout).toMatch(/ALL 1 PARTITIONS DONE AND AUDITED/);
  }, 90_000);
});

describe("watchBlockedLines", () => {
  it("says the block once, reminds while it lasts, and says when it is over", async () => {
    const clock = new ManualClock(0);
    let since: number | null = null;
    const lines: string[] = [];
    const watcher = watchBlockedLines(
      { since: null, describe: () => "waiting for Druid worker slots: x" },
      clock,
      (l) => lines.push(l),
      { checkMs: 1000, remindMs: 30_000 },
    );
    await watcher.stop();
    expect(lines).toEqual([]);

    const blocked = watchBlockedLines(
      {
        get since() {
          return since;
        },
        describe: () => "waiting for Druid worker slots: x",
      },
      clock,
      (l) => lines.push(l),
      { checkMs: 1000, remindMs: 30_000 },
    );
    since = 0;
    await clock.advance(1000);
    await clock.advance(31_000);
    since = null;
    await clock.advance(1000);
    await blocked.stop();
    expect(lines).toEqual([
      "waiting for Druid worker slots: x (for 1s)",
      "waiting for Druid worker slots: x (for 31s)",
      "no longer waiting for worker slots (after 33s)",
    ]);
  });
});
