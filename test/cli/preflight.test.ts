import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { ingestArgs, runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { sqlCount } from "../helpers/sql-count.js";

// Never replace live data with less: a day whose file has not landed, or a partition whose template reads
// no file at all, is refused before anything is submitted, and the live rows stay (Druid's sampler read
// the input first); --allow-empty says the interval is meant to become empty.

let sim: SimHandle;
const work = mkdtempSync(join(tmpdir(), "segops-preflight-"));

beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 1000 });
});
afterAll(async () => {
  await sim.close();
});

function setup(datasource: string, from = "2026-06-01") {
  const dataDir = writeDailyDataset({
    from,
    days: 2,
    rowsPerDay: 12,
    dir: join(work, datasource),
  });
  const template = join(work, `${datasource}.json`);
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource })));
  const to = new Date(Date.parse(`${from}T00:00:00Z`) + 2 * 86_400_000).toISOString().slice(0, 10);
  const args = (extra: string[] = []) => [
    ...ingestArgs({
      template,
      dataDir,
      druid: sim.url,
      ledgerPath: join(work, `${datasource}.db`),
      range: { from, to },
    }),
    "--tick",
    "30",
    ...extra,
  ];
  return { dataDir, args };
}

const rows = (datasource: string, from: string, to: string) => sqlCount(sim.url, datasource, from, to);

const acceptedFor = (datasource: string) =>
  sim.stats().submissions.filter((s) => s.accepted && s.id?.includes(`_${datasource}_`)).length;

describe("the pre-flight of a replace over live data", () => {
  it("refuses a day whose file has not landed: exit 1, nothing submitted for it, its rows still live", async () => {
    const ds = "pf_missing";
    const { dataDir, args } = setup(ds);
    expect((await runCli(args()).done).code).toBe(0);
    expect(await rows(ds, "2026-06-02", "2026-06-03")).toBe(12);
    const before = acceptedFor(ds);

    rmSync(join(dataDir, "events-2026-06-02.json"));
    const rerun = await runCli(args()).done;
    expect(rerun.code, rerun.stderr).toBe(1);
    expect(rerun.stdout).toMatch(/^2026-06-02\/2026-06-03 +refused-empty /m);
    expect(rerun.stdout).toMatch(
      /refused to replace 2026-06-02T00:00:00.000Z\/2026-06-03T00:00:00.000Z: its input \(local baseDir \S+, filter events-2026-06-02.json\) yields no rows, while (12 row\(s\) in )?1 segment\(s\) of version \S+ are live there; nothing was submitted/,
    );
    expect(acceptedFor(ds)).toBe(before); // the unchanged day reattached, the missing one was refused
    expect(await rows(ds, "2026-06-02", "2026-06-03")).toBe(12);

    // Meant to be empty: --allow-empty lets the replace through, and the day serves nothing.
    const emptied = await runCli(args(["--allow-empty"])).done;
    expect(emptied.code, emptied.stderr).toBe(0);
    expect(await rows(ds, "2026-06-02", "2026-06-03")).toBe(0);
    expect(await rows(ds, "2026-06-01", "2026-06-02")).toBe(12);
  });

  it("refuses a month over a daily template (its filter matches no file): the month's days stay", async () => {
    const ds = "pf_month";
    const { args } = setup(ds, "2026-06-02");
    expect((await runCli(args()).done).code).toBe(0);
    const month = args().map((a) =>
      a === "2026-06-02" ? "2026-06-01" : a === "2026-06-04" ? "2026-07-01" : a,
    );
    const run = await runCli([...month, "--granularity", "month"]).done;
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(
      /refused to replace 2026-06-01T00:00:00.000Z\/2026-07-01T00:00:00.000Z: its input \(local baseDir \S+, filter events-2026-06-01.json\) yields no rows/,
    );
    expect(await rows(ds, "2026-06-01", "2026-07-01")).toBe(24);
  });
});
