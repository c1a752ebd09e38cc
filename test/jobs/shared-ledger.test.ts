import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { openStore } from "../../src/ledger/open.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";

let pg: TestPostgres;
let sim: SimHandle;
// Emulated time stands still until the test moves it: no task can finish before both hosts hold work,
// however slowly the second process starts on a loaded machine.
const clock = new ManualClock(Date.UTC(2026, 9, 1));
beforeAll(async () => {
  pg = await startPostgres();
  sim = await startSim({
    clock,
    timeScale: 1,
    capacity: 6,
    handoffDelayMs: 1000,
    baseDurationMs: 10_000,
    seed: 17,
  });
}, 60_000);
afterAll(async () => {
  await sim?.close();
  await pg?.stop();
});

describe("two hosts share one backfill through a PostgreSQL ledger", () => {
  it("runs every partition once: each Druid task accepted once, both processes exit 0", async () => {
    const work = mkdtempSync(join(tmpdir(), "segops-shared-"));
    const dataDir = writeDailyDataset({
      from: "2026-10-01",
      days: 12,
      rowsPerDay: 15,
      dir: join(work, "data"),
    });
    const template = join(work, "daily.json");
    writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "shared" })));
    const ledger = pg.freshUrl();
    const args = [
      "backfill",
      template,
      "--from",
      "2026-10-01",
      "--to",
      "2026-10-13",
      "--var",
      `dataDir=${dataDir}`,
      "--druid",
      sim.url,
      "--ledger",
      ledger,
      "--tick",
      "30",
      "--max-concurrency",
      "3",
      "--json",
    ];
    // Each host holds at most 3 partitions; with time frozen, both come to hold some before any finishes.
    const observer = await openStore(ledger);
    const a = runCli(args);
    const b = runCli(args);
    const owners = async () => {
      const job = (await observer.listJobs())[0];
      if (!job) return 0;
      const held = (await observer.listTasks(job.id)).filter((t) => t.state === "running" && t.leaseOwner);
      return new Set(held.map((t) => t.leaseOwner)).size;
    };
    try {
      await until("both hosts hold partitions", async () => (await owners()) === 2, {
        whileRunning: a,
        timeoutMs: 120_000,
      });
    } finally {
      await observer.close();
    }
    // Now let the emulated cluster run: ten emulated seconds per real tick, until both hosts are done.
    let moving = true;
    const mover = (async () => {
      while (moving) {
        await clock.advance(10_000);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const [ra, rb] = await Promise.all([a.done, b.done]);
    moving = false;
    await mover;
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    expect(JSON.parse(ra.stdout).counts.done).toBe(12);

    const accepted = sim.stats().submissions.filter((s) => s.accepted);
    expect(accepted).toHaveLength(12);
    expect(new Set(accepted.map((s) => s.id)).size).toBe(12);

    // Both hosts did work: the partitions' "done" events name two different driver owners.
    const store = await openStore(ledger);
    try {
      const job = (await store.listJobs())[0];
      const events = await store.listEvents({ jobId: job?.id as string });
      const finishers = new Set(
        events.filter((e) => e.taskId !== null && e.toState === "done").map((e) => e.actor),
      );
      expect(finishers.size).toBe(2);
    } finally {
      await store.close();
    }
  }, 180_000);
});
