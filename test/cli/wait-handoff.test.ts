import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/** `segops wait --handoff` on a task whose interval a later task replaced reports SUPERSEDED (exit 5). */

let sim: SimHandle;
// Overshadowed segments stay used (marked unused only after a long emulated delay), as on a busy Coordinator.
beforeAll(async () => {
  sim = await startSim({
    timeScale: 200,
    capacity: 4,
    handoffDelayMs: 1000,
    unusedDelayMs: 3_600_000,
    seed: 8,
  });
});
afterAll(async () => {
  await sim.close();
});

describe("wait --handoff", () => {
  it("reports SUPERSEDED with its own exit code when a later task replaced the interval", async () => {
    const work = mkdtempSync(join(tmpdir(), "segops-superseded-"));
    const eight = writeDailyDataset({ from: "2026-08-01", days: 1, rowsPerDay: 8, dir: join(work, "eight") });
    const one = writeDailyDataset({ from: "2026-08-01", days: 1, rowsPerDay: 1, dir: join(work, "one") });
    const template = join(work, "t.json");
    writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "replaced" })));
    const submit = async (dataDir: string) => {
      const r = await runCli([
        "submit",
        template,
        "--interval",
        "2026-08-01/P1D",
        "--var",
        `dataDir=${dataDir}`,
        "--druid",
        sim.url,
      ]).done;
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trim();
    };
    const wait = (id: string) =>
      runCli(["wait", id, "--handoff", "--tick", "20", "--druid", sim.url, "--json"]).done;

    const first = await submit(eight);
    expect((await wait(first)).code).toBe(0);
    const second = await submit(one);
    expect((await wait(second)).code).toBe(0);

    const again = await wait(first);
    expect(again.code, again.stderr).toBe(5);
    const outcome = JSON.parse(again.stdout) as { outcome: string; errorMsg: string };
    expect(outcome.outcome).toBe("SUPERSEDED");
    expect(outcome.errorMsg).toMatch(/a later task replaced the interval/);
  }, 240_000);
});
