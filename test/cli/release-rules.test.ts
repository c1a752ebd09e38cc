import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { segopsInProcess } from "../helpers/cli-in-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * `segops run` plans before it connects (bad input exits 2 with Druid down), with Druid 33's rules, where what a
 * later release refuses is a warning naming that release. Once connected, the cluster's own release decides: a
 * template Druid 37 refuses (a dynamic partitionsSpec's maxRowsPerSegment of 0, refused from 36 on) exits 2 there
 * with the rule and the release, nothing submitted and no ledger written; on a Druid 33 it runs with the warning.
 */

const work = mkdtempSync(join(tmpdir(), "segops-release-rules-"));
const dataDir = writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 5, dir: join(work, "data") });
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

function templateFile(): string {
  const t = dailyTemplate({ datasource: "release_rules" }) as {
    spec: { tuningConfig: Record<string, unknown> };
  };
  t.spec.tuningConfig.partitionsSpec = { type: "dynamic", maxRowsPerSegment: 0 };
  const path = join(work, "zero-rows.json");
  writeFileSync(path, JSON.stringify(t));
  return path;
}

async function runOn(druidVersion: number) {
  const sim: SimHandle = await startSim({ druidVersion, timeScale: 200, handoffDelayMs: 500 });
  closers.push(() => sim.close());
  const ledger = join(work, `ledger-${druidVersion}.db`);
  const r = await segopsInProcess([
    "run",
    templateFile(),
    "--interval",
    "2026-06-01/2026-06-02",
    "--var",
    `dataDir=${dataDir}`,
    "--druid",
    sim.url,
    "--ledger",
    `sqlite:${ledger}`,
    "--tick",
    "50",
  ]);
  return { ...r, sim, ledger };
}

describe("segops run validates with the cluster's release once it knows it", () => {
  it("Druid 37 refuses maxRowsPerSegment 0: exit 2 naming the rule and the release, nothing submitted, no ledger", async () => {
    const r = await runOn(37);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(
      /warning: spec\.tuningConfig\.partitionsSpec\.maxRowsPerSegment: .*Druid 36 and later refuse it/,
    );
    expect(r.err).toMatch(/maxRowsPerSegment must be greater than 0, found 0/);
    expect(r.err).toMatch(
      /1 error on the cluster's Druid 37, nothing submitted \(segops validate .* --druid-version 37/,
    );
    expect(r.sim.stats().submissions).toHaveLength(0);
    expect(existsSync(r.ledger)).toBe(false);
  });

  it("Druid 33 accepts it: the same command runs to done, with the warning", async () => {
    const r = await runOn(33);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/Druid 36 and later refuse it/);
    expect(r.sim.stats().submissions.filter((s) => s.accepted)).toHaveLength(1);
  });
});
