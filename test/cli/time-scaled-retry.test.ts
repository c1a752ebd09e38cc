import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DruidClient } from "../../src/druid/client.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

// A partition whose task ingested rows is never done at a version that holds none. The case: its handoff
// timed out; meanwhile another writer replaced the day with a tombstone and the Coordinator marked our
// overshadowed version unused; `segops retry` then looks for our version again, on an emulator whose clock
// runs far ahead of segops' (a time scale). The version it recorded is gone, and so is the partition's
// claim to be done; the proof's own cases (a window on Druid's clock, rows ingested but none served) are
// unit-tested in test/ingest/steps.test.ts.

let sim: SimHandle;
const work = mkdtempSync(join(tmpdir(), "segops-timescale-"));

beforeAll(async () => {
  sim = await startSim({ timeScale: 2000, capacity: 4, handoffDelayMs: 1000 });
});
afterAll(async () => {
  await sim.close();
});

describe("a retry on a time-scaled Druid", () => {
  it("never ends done at another writer's tombstone", async () => {
    const ds = "scaled";
    const full = writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 30, dir: join(work, "full") });
    const empty = join(work, "empty");
    writeDailyDataset({ from: "2026-05-01", days: 1, rowsPerDay: 1, dir: empty }); // no file for 2026-06-01
    const template = join(work, "daily.json");
    writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: ds })));
    const run = (dataDir: string, ledger: string, extra: string[] = []) =>
      runCli([
        "run",
        template,
        "--interval",
        "2026-06-01/2026-06-02",
        "--var",
        `dataDir=${dataDir}`,
        "--druid",
        sim.url,
        "--ledger",
        `sqlite:${join(work, ledger)}`,
        "--tick",
        "30",
        ...extra,
      ]).done;

    // Our run: the task SUCCEEDS with 30 rows, but its segments are never loaded: the handoff times out.
    sim.setNeverLoad(ds, true);
    const ours = await run(full, "ours.db", ["--handoff-timeout", "1"]);
    expect(ours.code, ours.stdout).toBe(1);
    expect(ours.stdout).toMatch(/SUCCESS but never queryable/);
    const jobId = /job (\S+)/.exec(ours.stdout)?.[1] as string;

    // Another writer (its own ledger) empties the day on purpose: a tombstone over it.
    const other = await run(empty, "other.db", ["--allow-empty"]);
    expect(other.code, other.stdout).toBe(0);
    // The Coordinator marks what the tombstone overshadows unused, our version among them.
    const client = new DruidClient({ url: sim.url });
    try {
      const used = await client.metadataSegments(ds, ["2026-06-01/2026-06-02"]);
      const versions = [...new Set(used.map((s) => s.version))].sort();
      expect(versions).toHaveLength(2);
      await client.markSegments(ds, "unused", {
        interval: "2026-06-01/2026-06-02",
        versions: [versions[0] as string],
      });
    } finally {
      await client.close();
    }
    sim.setNeverLoad(ds, false);

    // The user retries our failed partition and runs the job again.
    const retried = await runCli(["retry", jobId, "--ledger", `sqlite:${join(work, "ours.db")}`]).done;
    expect(retried.code, retried.stderr).toBe(0);
    const again = await run(full, "ours.db", ["--handoff-timeout", "1"]);
    expect(again.code, again.stdout).toBe(1);
    expect(again.stdout).not.toMatch(/ALL 1 PARTITIONS DONE/);
    // Ours is gone under another writer's newer version over the whole day: superseded, never done.
    expect(again.stdout).toMatch(/failed +1 .*superseded: a newer version \(\S+\) replaced ours \(\S+\)/);
  }, 90_000);
});
