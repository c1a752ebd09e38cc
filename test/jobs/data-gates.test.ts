import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PartitionReport } from "../../src/jobs/report.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * "done" is decided on Druid's row counters. A corrupt day fails its partition (exit 1) with
 * the counters and Druid's first parse errors in the report; a tolerable few bad rows pass under the gate.
 */

let sim: SimHandle;
beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 1000, baseDurationMs: 2000, seed: 12 });
});
afterAll(async () => {
  await sim.close();
});

function dataset(name: string) {
  const work = mkdtempSync(join(tmpdir(), `segops-gates-${name}-`));
  const dataDir = writeDailyDataset({ from: "2026-07-01", days: 3, rowsPerDay: 20, dir: join(work, "data") });
  const template = join(work, "t.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: name })));
  const args = (extra: string[]) => [
    "backfill",
    template,
    "--from",
    "2026-07-01",
    "--to",
    "2026-07-04",
    "--var",
    `dataDir=${dataDir}`,
    "--druid",
    sim.url,
    "--ledger",
    `sqlite:${join(work, "ledger.db")}`,
    "--tick",
    "20",
    ...extra,
  ];
  return { dataDir, args };
}

const corrupt = (dir: string, day: string) =>
  writeFileSync(
    join(dir, `events-${day}.json`),
    Array.from({ length: 20 }, (_, i) => `{broken ${i}`).join("\n"),
  );

describe("data gates on the emulator", () => {
  it("a corrupt day fails that partition (exit 1) with the row counters in the report and the --json output", async () => {
    const { dataDir, args } = dataset("corrupt");
    corrupt(dataDir, "2026-07-02");
    const human = await runCli(args([])).done;
    expect(human.code, human.stderr).toBe(1);
    // Druid was told to stop at the first parse error (maxParseExceptions 0 rendered from the gate).
    expect(human.stdout).toMatch(/Max parse exceptions\[0\] exceeded/);
    expect(human.stdout).toMatch(/2026-07-02\/2026-07-03: processed 0, with errors 0, unparseable [1-9]/);

    const json = await runCli(args(["--json"])).done;
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { partitions: PartitionReport[]; state: string };
    const bad = report.partitions.find((p) => p.interval.startsWith("2026-07-02"));
    expect(bad?.state).toBe("dead");
    expect(bad?.rowStats?.unparseable).toBeGreaterThan(0);
    expect(bad?.rowStats?.processed).toBe(0);
    expect(report.partitions.filter((p) => p.state === "done")).toHaveLength(2);
    expect(report.state).toBe("failed");
  }, 60_000);

  it("a corrupt day under a percentage gate SUCCEEDS in Druid with 0 rows and still fails here, not retried", async () => {
    const { dataDir, args } = dataset("corruptpct");
    corrupt(dataDir, "2026-07-03");
    const json = await runCli(args(["--max-unparseable", "50%", "--poison-after", "1", "--json"])).done;
    expect(json.code, json.stderr).toBe(1);
    const report = JSON.parse(json.stdout) as { partitions: PartitionReport[] };
    const bad = report.partitions.find((p) => p.interval.startsWith("2026-07-03"));
    // The same input would fail the same way: not retried. Nothing was live before and nothing of it is
    // served, so there is nothing to undo.
    expect(bad?.state).toBe("failed");
    expect(bad?.outcome).toBeNull();
    expect(bad?.attempts).toBe(1);
    expect(bad?.error).toMatch(
      /data gate failed after Druid published .*: the input produced 20 row\(s\) but none was ingested.* nothing to undo/,
    );
    expect(bad?.parseErrors.length).toBeGreaterThan(0);
  }, 60_000);

  it("a tolerable few bad rows pass under the gate", async () => {
    const { dataDir, args } = dataset("fewbad");
    appendFileSync(join(dataDir, "events-2026-07-01.json"), "{bad row one\n{bad row two\n");
    const json = await runCli(args(["--max-unparseable", "5", "--json"])).done;
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as { partitions: PartitionReport[] };
    const day = report.partitions.find((p) => p.interval.startsWith("2026-07-01"));
    expect(day?.rowStats).toMatchObject({ processed: 20, unparseable: 2 });
    expect(day?.rows).toBe(20);
  }, 60_000);
});
