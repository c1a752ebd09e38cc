import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";

let pg: TestPostgres;
let sim: SimHandle;
beforeAll(async () => {
  pg = await startPostgres();
  // Each partition takes about 5 s of real time and a host holds at most 3: the first host needs four
  // rounds (about 20 s) for the 12 partitions, so a second host that starts within 15 s — even on a
  // loaded machine — finds work left. Both start at once.
  sim = await startSim({
    timeScale: 1,
    capacity: 6,
    handoffDelayMs: 100,
    baseDurationMs: 5_000,
    perRowMs: 0,
    seed: 17,
  });
});
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
    const a = runCli(args);
    const b = runCli(args);
    const [ra, rb] = await Promise.all([a.done, b.done]);
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
