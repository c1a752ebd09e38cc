import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

let sim: SimHandle;
const work = mkdtempSync(join(tmpdir(), "segops-cli-"));
const dataDir = writeDailyDataset({ from: "2026-06-01", days: 3, rowsPerDay: 12, dir: join(work, "data") });
const template = join(work, "daily.json");
writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "cli" })));

beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 4, handoffDelayMs: 1000 });
});
afterAll(async () => {
  await sim.close();
});

async function jobsIn(ledgerPath: string): Promise<number> {
  if (!existsSync(ledgerPath)) return 0;
  const store = await openStore(`sqlite:${ledgerPath}`);
  try {
    return (await store.listJobs()).length;
  } finally {
    await store.close();
  }
}

function backfill(extra: string[], ledger = join(work, "bad.db")) {
  return runCli([
    "backfill",
    template,
    "--from",
    "2026-06-01",
    "--to",
    "2026-06-04",
    "--druid",
    sim.url,
    "--ledger",
    `sqlite:${ledger}`,
    "--tick",
    "30",
    ...extra,
  ]).done;
}

describe("segops backfill/run on bad input: one clear message, non-zero exit, nothing submitted, ledger unchanged", () => {
  const cases: Array<{
    name: string;
    args: () => string[];
    template?: string;
    code: number;
    message: RegExp;
    /** Lines on stderr: one, or (an invalid spec) its warnings and each distinct error before the verdict. */
    lines?: number;
  }> = [
    {
      name: "a missing template",
      args: () => ["backfill", join(work, "nope.json"), "--from", "2026-06-01", "--to", "2026-06-04"],
      code: 2,
      message: /cannot read template ".*nope\.json": no such file/,
    },
    {
      name: "an unknown placeholder",
      args: () => [
        "backfill",
        (() => {
          const p = join(work, "unknown.json");
          writeFileSync(
            p,
            JSON.stringify(dailyTemplate({ datasource: "cli" })).replace(
              "{{var.dataDir}}",
              "{{var.dataDir}}/{{hour}}",
            ),
          );
          return p;
        })(),
        "--from",
        "2026-06-01",
        "--to",
        "2026-06-04",
        "--var",
        `dataDir=${dataDir}`,
      ],
      code: 2,
      message: /spec\.ioConfig\.inputSource\.baseDir: unknown placeholder \{\{hour\}\}/,
    },
    {
      name: "an invalid spec",
      args: () => [
        "backfill",
        (() => {
          const p = join(work, "invalid.json");
          const t = dailyTemplate({ datasource: "cli" }) as { spec: { ioConfig: Record<string, unknown> } };
          t.spec.ioConfig.appendToExisting = true; // with dropExisting: Druid rejects both (docs/druid-api.md §4.3)
          writeFileSync(p, JSON.stringify(t));
          return p;
        })(),
        "--from",
        "2026-06-01",
        "--to",
        "2026-06-04",
        "--var",
        `dataDir=${dataDir}`,
      ],
      code: 2,
      message:
        /^warning: spec\.ioConfig\.appendToExisting: .*\nspec\.ioConfig\.dropExisting: in 3 partitions .*\nsegops: .*invalid\.json: 1 error in 3 partitions, nothing submitted/,
      lines: 3,
    },
    {
      name: "an interval not aligned to the granularity",
      args: () => [
        "backfill",
        template,
        "--from",
        "2026-06-01T06:00",
        "--to",
        "2026-06-04",
        "--var",
        `dataDir=${dataDir}`,
      ],
      code: 2,
      message: /not aligned to DAY.*nearest: 2026-06-01T00:00:00\.000Z before/,
    },
  ];
  for (const c of cases) {
    it(`rejects ${c.name}`, async () => {
      const ledger = join(work, `${c.name.replace(/\W+/g, "-")}.db`);
      const before = sim.stats().submissions.length;
      const result = await runCli([...c.args(), "--druid", sim.url, "--ledger", `sqlite:${ledger}`]).done;
      expect(result.code).toBe(c.code);
      expect(result.stderr).toMatch(c.message);
      expect(result.stderr.trim().split("\n")).toHaveLength(c.lines ?? 1);
      expect(sim.stats().submissions.length).toBe(before);
      expect(await jobsIn(ledger)).toBe(0);
    });
  }

  it("reports an unreachable Druid with exit 4 before touching the ledger", async () => {
    const ledger = join(work, "unreachable.db");
    const result = await runCli([
      "backfill",
      template,
      "--from",
      "2026-06-01",
      "--to",
      "2026-06-04",
      "--var",
      `dataDir=${dataDir}`,
      "--druid",
      "http://127.0.0.1:9",
      "--ledger",
      `sqlite:${ledger}`,
    ]).done;
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/cannot reach Druid at http:\/\/127\.0\.0\.1:9: .*refused/);
    expect(await jobsIn(ledger)).toBe(0);
  });

  it("reports an unreadable ledger with exit 4 and submits nothing", async () => {
    const locked = join(work, "locked");
    mkdirSync(locked);
    writeFileSync(join(locked, "ledger.db"), "this is not a database");
    chmodSync(join(locked, "ledger.db"), 0o444);
    const before = sim.stats().submissions.length;
    const result = await backfill(["--var", `dataDir=${dataDir}`], join(locked, "ledger.db"));
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/ledger/i);
    expect(sim.stats().submissions.length).toBe(before);
  });

  it("never puts credentials in its messages", async () => {
    const result = await runCli(
      [
        "backfill",
        template,
        "--from",
        "2026-06-01",
        "--to",
        "2026-06-04",
        "--var",
        `dataDir=${dataDir}`,
        "--druid",
        "http://127.0.0.1:9",
        "--user",
        "admin",
      ],
      { SEGOPS_DRUID_PASSWORD: "hunter2-very-secret" },
    ).done;
    expect(result.code).toBe(4);
    expect(result.stderr + result.stdout).not.toContain("hunter2-very-secret");
  });
});

describe("segops backfill, status and demo", () => {
  it("runs a backfill, finds it again done without resubmitting, and shows it in status", async () => {
    const ledger = join(work, "good.db");
    const first = await backfill(["--var", `dataDir=${dataDir}`, "--json"], ledger);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).counts.done).toBe(3);
    const submitted = sim.stats().submissions.length;
    const again = await backfill(["--var", `dataDir=${dataDir}`], ledger);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(
      /^job backfill_cli_20260601-20260604_\w+ already done on .*from the same inputs and source: nothing submitted/,
    );
    expect(again.stdout).toMatch(/ALL 3 PARTITIONS DONE AND AUDITED/);
    expect(sim.stats().submissions.length).toBe(submitted);
    const status = await runCli(["status", "--ledger", `sqlite:${ledger}`, "--json"]).done;
    expect(JSON.parse(status.stdout).partitions.map((p: { rows: number }) => p.rows)).toEqual([12, 12, 12]);
  });

  it("demo runs as designed: six partitions done, the poison day dead-lettered, exit 0", async () => {
    const result = await runCli(["demo", "--dir", join(work, "demo"), "--time-scale", "200", "--json"]).done;
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.counts).toMatchObject({ done: 6, dead: 1 });
  });
});
