import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobReport } from "../../src/jobs/report.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import type { Gap } from "../../src/work/audit.js";
import { runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * A 44-day backfill with two corrupt days, end to end on the emulator: both days are dead-lettered, and the
 * job's report, `segops status` and `segops audit` say that those two days hold no data and why; with
 * `--expect-full` the audit exits 1. Without a ledger, the audit still lists the gaps, without reasons.
 */

const DS = "gappy";
const RANGE = "2026-01-01/2026-02-14";
const DEAD_DAYS = ["2026-01-09", "2026-01-20"];
const dayIv = (day: string) => {
  const start = Date.parse(`${day}T00:00:00Z`);
  return `${new Date(start).toISOString()}/${new Date(start + 86_400_000).toISOString()}`;
};

let sim: SimHandle;
let work: string;
let ledger: string;
let backfill: { code: number | null; report: JobReport };

beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 1000, baseDurationMs: 2000, seed: 44 });
  work = mkdtempSync(join(tmpdir(), "segops-audit-gaps-"));
  const dataDir = writeDailyDataset({ from: "2026-01-01", days: 44, rowsPerDay: 5, dir: join(work, "data") });
  for (const day of DEAD_DAYS)
    writeFileSync(
      join(dataDir, `events-${day}.json`),
      Array.from({ length: 5 }, (_, i) => `{broken ${i}`).join("\n"),
    );
  const template = join(work, "t.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: DS })));
  ledger = `sqlite:${join(work, "ledger.db")}`;
  const run = await runCli([
    "backfill",
    template,
    "--from",
    "2026-01-01",
    "--to",
    "2026-02-14",
    "--var",
    `dataDir=${dataDir}`,
    "--druid",
    sim.url,
    "--ledger",
    ledger,
    "--tick",
    "20",
    "--json",
  ]).done;
  backfill = { code: run.code, report: JSON.parse(run.stdout) as JobReport };
}, 120_000);

afterAll(async () => {
  await sim.close();
});

const audit = (extra: string[]) =>
  runCli(["audit", DS, "--interval", RANGE, "--druid", sim.url, "--ledger", ledger, ...extra]).done;

describe("gaps of a backfill with two dead-lettered days", () => {
  it("the job's report lists the two dead-lettered partitions as gaps (--json and status)", async () => {
    expect(backfill.code).toBe(1);
    const { report } = backfill;
    expect(report.counts).toMatchObject({ done: 42, dead: 2 });
    expect(report.gaps.map((g) => [g.interval, g.reason, g.job])).toEqual(
      DEAD_DAYS.map((d) => [dayIv(d), "dead-lettered", report.job]),
    );
    for (const g of report.gaps) expect(g.task).toMatch(new RegExp(`^${report.job}/`));

    const status = await runCli(["status", report.job, "--ledger", ledger]).done;
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/GAPS: 2 of 44 partition\(s\) put no data in/);
    expect(status.stdout).toMatch(/^ {2}2026-01-09\/2026-01-10 \(dead-lettered: .+\)$/m);
    expect(status.stdout).toMatch(/^ {2}2026-01-20\/2026-01-21 \(dead-lettered: .+\)$/m);
  });

  it("segops audit lists both gaps with the reason and the job; the audit itself holds (exit 0)", async () => {
    const r = await audit([]);
    expect(r.code, r.stderr).toBe(0);
    const job = backfill.report.job;
    expect(r.stdout).toMatch(/^GAPS: 2 part\(s\) of the range hold no live data:$/m);
    for (const d of ["2026-01-09/2026-01-10", "2026-01-20/2026-01-21"])
      expect(r.stdout).toContain(`  ${d} (dead-lettered in job ${job}: `);
    expect(r.stdout).toMatch(/^AUDIT OK: 42 chunk\(s\), 210 rows; 2 gap\(s\) with no live data/m);
  });

  it("--expect-full exits 1 and says which; --json carries the gaps and ok false", async () => {
    const text = await audit(["--expect-full"]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/AUDIT FAILED \(--expect-full\): 2 gap\(s\) with no live data/);
    expect(text.stdout).toContain("2026-01-09/2026-01-10 (dead-lettered");

    const json = await audit(["--expect-full", "--json"]);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { ok: boolean; gaps: Gap[]; violations: unknown[] };
    expect(report.ok).toBe(false);
    expect(report.violations).toEqual([]);
    expect(report.gaps).toEqual(
      backfill.report.gaps.map((g) => ({
        interval: g.interval,
        reason: "dead-lettered",
        job: backfill.report.job,
        task: g.task,
        error: expect.any(String),
      })),
    );
    // Without the flag, the same gaps and the exit code as before.
    const plain = await audit(["--json"]);
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout)).toMatchObject({ ok: true, gaps: report.gaps });
  });

  it("with a day granularity the gaps are the two day buckets", async () => {
    const r = await audit(["--granularity", "day", "--json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { chunks: unknown[]; gaps: Gap[] };
    expect(report.chunks).toHaveLength(44);
    expect(report.gaps.map((g) => [g.interval, g.reason])).toEqual(
      DEAD_DAYS.map((d) => [dayIv(d), "dead-lettered"]),
    );
  });

  it("without a ledger the gaps are listed without reasons, and --expect-full still exits 1", async () => {
    const none = `sqlite:${join(work, "no-such", "ledger.db")}`;
    const args = ["audit", DS, "--interval", RANGE, "--druid", sim.url, "--ledger", none];
    const text = await runCli([...args, "--expect-full"]).done;
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(
      /GAPS: 2 part\(s\) of the range hold no live data \(no ledger at .*: reasons unknown\):/,
    );
    expect(text.stdout).toContain("  2026-01-09/2026-01-10 (no segments)");
    const json = await runCli([...args, "--json"]).done;
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { gaps: Gap[] }).gaps).toEqual(
      DEAD_DAYS.map((d) => ({ interval: dayIv(d), reason: "no-segments" })),
    );
  });

  it("all time: only the stretch between the first and last segment is looked at", async () => {
    const r = await runCli(["audit", DS, "--druid", sim.url, "--ledger", ledger, "--json"]).done;
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { gaps: Gap[] }).gaps.map((g) => g.interval)).toEqual(
      DEAD_DAYS.map(dayIv),
    );
  });
});
