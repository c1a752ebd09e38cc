import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IngestProgress } from "../../src/ingest/types.js";
import { openStore } from "../../src/ledger/open.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { ingestArgs, runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { sqlCount } from "../helpers/sql-count.js";

// A replace that fails its data gates after Druid published it is undone: the interval serves what it
// served before, the partition ends rolled back (exit 1) with both versions named, and a crash in the
// middle of the undo is finished by the rerun, once.

let sim: SimHandle;
const work = mkdtempSync(join(tmpdir(), "segops-undo-"));

beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 1000 });
});
afterAll(async () => {
  await sim.close();
});

function setup(datasource: string) {
  const dataDir = writeDailyDataset({
    from: "2026-06-01",
    days: 1,
    rowsPerDay: 20,
    dir: join(work, datasource),
  });
  const template = join(work, `${datasource}.json`);
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource })));
  const ledgerPath = join(work, `${datasource}.db`);
  const ledger = `sqlite:${ledgerPath}`;
  const args = (extra: string[] = []) => [
    ...ingestArgs({
      template,
      dataDir,
      druid: sim.url,
      ledgerPath,
      range: { interval: "2026-06-01/2026-06-02" },
    }),
    "--tick",
    "30",
    "--lease",
    "1500",
    ...extra,
  ];
  return { dataDir, ledger, args };
}

const rows = (datasource: string) => sqlCount(sim.url, datasource);

const requests = (pattern: string) =>
  Object.entries(sim.stats().requests)
    .filter(([k]) => k.includes(pattern))
    .reduce((n, [, v]) => n + v, 0);

describe("a replace that fails its gates after Druid published it is undone", () => {
  it("--min-rows failing after publish: rolled back, the old rows served again, the report says so", async () => {
    const { dataDir, args } = setup("undo_gate");
    const first = await runCli(args()).done;
    expect(first.code, first.stderr).toBe(0);
    expect(await rows("undo_gate")).toBe(20);

    // The corrected file holds 5 rows; the gate wants at least 10.
    writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 5, dir: dataDir });
    const second = await runCli(args(["--min-rows", "10"])).done;
    expect(second.code, second.stderr).toBe(1);
    expect(second.stdout).toMatch(
      /data gate failed after Druid published .*: 5 row\(s\) ingested, fewer than --min-rows 10.*The replace was undone: our version \S+ \(5 row\(s\) ingested\) is marked unused and version \S+ \((?:20 row\(s\) in )?1 segment\(s\)\) is live and served again/s,
    );
    expect(second.stdout).toMatch(/^2026-06-01\/2026-06-02 +rolled-back +1 /m);
    expect(await rows("undo_gate")).toBe(20);

    // Sent back as it was, the same input is not published over the good data again.
    const submitted = sim.stats().submissions.filter((s) => s.accepted).length;
    const jobId = /job (\S+)/.exec(second.stdout)?.[1] as string;
    const ledger = args().at(args().indexOf("--ledger") + 1) as string;
    expect((await runCli(["retry", jobId, "--ledger", ledger]).done).code).toBe(0);
    const retried = await runCli(args(["--min-rows", "10"])).done;
    expect(retried.code).toBe(1);
    expect(retried.stdout).toMatch(/not run again: this partition's replace was rolled back/);
    expect(sim.stats().submissions.filter((s) => s.accepted).length).toBe(submitted);
    expect(await rows("undo_gate")).toBe(20);
  });

  it("--max-row-drop: a replace that shrinks the day past it is undone; within it, it is done", async () => {
    const { dataDir, args } = setup("undo_drop");
    expect((await runCli(args()).done).code).toBe(0);
    expect(await rows("undo_drop")).toBe(20);
    writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 5, dir: dataDir }); // 20 → 5 rows: a 75% drop
    const refused = await runCli(args(["--max-row-drop", "50%"])).done;
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stdout).toMatch(
      /5 row\(s\) ingested where 20 were served: a drop of 75.0%, more than --max-row-drop 50%/,
    );
    expect(refused.stdout).toMatch(/^2026-06-01\/2026-06-02 +rolled-back /m);
    expect(await rows("undo_drop")).toBe(20);
    const allowed = await runCli(args(["--max-row-drop", "80%"])).done;
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(await rows("undo_drop")).toBe(5);
    const bad = await runCli(args(["--max-row-drop", "half"])).done;
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--max-row-drop: must be a percentage from 0 to 100/);
  });

  it("SIGKILL between the undo's marks: the rerun finishes the undo once, nothing ingested again", async () => {
    const { dataDir, ledger, args } = setup("undo_crash");
    expect((await runCli(args()).done).code).toBe(0);
    writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 5, dir: dataDir });
    const submitted = sim.stats().submissions.filter((s) => s.accepted).length;
    const unmarks = requests("/markUnused");

    // Druid answers 500 to markUsed for a while: the undo stops between its two marks.
    sim.setFaults([
      { path: "/druid/indexer/v1/datasources/undo_crash/markUsed", kind: "status", status: 500 },
    ]);
    const crashing = runCli(args(["--min-rows", "10"]));
    const store = await openStore(ledger);
    try {
      await until(
        "the undo waits to mark the earlier version used",
        async () => {
          const jobs = await store.listJobs();
          const tasks = (await Promise.all(jobs.map((j) => store.listTasks(j.id)))).flat();
          return tasks.some((t) => (t.progress as IngestProgress).undo?.phase === "mark");
        },
        { whileRunning: crashing, timeoutMs: 30_000 },
      );
    } finally {
      await store.close();
    }
    crashing.child.kill("SIGKILL");
    expect((await crashing.done).signal).toBe("SIGKILL");
    sim.setFaults([]);

    const rerun = await runCli(args(["--min-rows", "10"])).done;
    expect(rerun.code, rerun.stderr).toBe(1);
    expect(rerun.stdout).toMatch(/The replace was undone/);
    expect(await rows("undo_crash")).toBe(20);
    // Our version was marked unused once (before the crash); nothing was submitted again.
    expect(requests("/markUnused") - unmarks).toBe(1);
    expect(sim.stats().submissions.filter((s) => s.accepted).length).toBe(submitted + 1);
  });
});
