import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseGranularity } from "../../src/core/granularity.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import type { IngestProgress } from "../../src/ingest/types.js";
import { openStore } from "../../src/ledger/open.js";
import { startSim } from "../../src/sim/server.js";
import { auditTimeline } from "../../src/work/audit.js";
import { toTimelineSegment } from "../../src/work/segments.js";
import { runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { type HoldMode, startHoldProxy } from "../helpers/hold-proxy.js";

type CrashPoint =
  | "before submit"
  | "after submit, before the id was observed"
  | "while polling"
  | "during handoff";

async function crashThenRerun(point: CrashPoint) {
  const work = mkdtempSync(join(tmpdir(), "segops-crash-"));
  const dataDir = writeDailyDataset({ from: "2026-03-01", days: 4, rowsPerDay: 30, dir: join(work, "data") });
  const template = join(work, "daily.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "crashy" })));
  const ledgerUrl = `sqlite:${join(work, "ledger.db")}`;
  const sim = await startSim({
    timeScale: 20,
    capacity: 8,
    seed: 11,
    baseDurationMs: point === "while polling" ? 60_000 : 2000,
    handoffDelayMs: point === "during handoff" ? 60_000 : 1000,
  });
  const proxy = await startHoldProxy(sim.url);
  const store = await openStore(ledgerUrl);
  const client = new DruidClient({ url: sim.url });
  const args = [
    "backfill",
    template,
    "--from",
    "2026-03-01",
    "--to",
    "2026-03-05",
    "--var",
    `dataDir=${dataDir}`,
    "--druid",
    proxy.url,
    "--ledger",
    ledgerUrl,
    "--tick",
    "40",
    "--lease",
    "1000",
    "--json",
  ];
  try {
    const hold: Record<CrashPoint, HoldMode> = {
      "before submit": "before",
      "after submit, before the id was observed": "after",
      "while polling": "pass",
      "during handoff": "pass",
    };
    proxy.mode = hold[point];
    const first = runCli(args);
    const steps = async () => {
      const jobs = await store.listJobs();
      if (jobs.length === 0) return [];
      return (await store.listTasks(jobs[0]!.id)).map((t) => (t.progress as IngestProgress).step);
    };
    if (point === "before submit" || point === "after submit, before the id was observed") {
      await until(`${point}: a submission held`, () => proxy.held >= 2, { whileRunning: first });
    } else if (point === "while polling") {
      await until("a partition is being polled", async () => (await steps()).includes("running"), {
        whileRunning: first,
      });
    } else {
      await until("a partition waits for handoff", async () => (await steps()).includes("handoff"), {
        whileRunning: first,
      });
    }
    first.child.kill("SIGKILL");
    const killed = await first.done;
    expect(killed.signal).toBe("SIGKILL");
    proxy.mode = "pass";

    const second = runCli(args);
    const finished = await second.done;
    expect(finished.code, finished.stderr).toBe(0);
    const report = JSON.parse(finished.stdout) as {
      counts: { done: number };
      partitions: { rows: number }[];
    };
    expect(report.counts.done).toBe(4);
    expect(report.partitions.map((p) => p.rows)).toEqual([30, 30, 30, 30]);

    // Exactly one accepted submission per Druid task id, and each partition needed only one attempt.
    const accepted = sim.stats().submissions.filter((s) => s.accepted);
    const perId = new Map<string, number>();
    for (const s of accepted) perId.set(s.id ?? "", (perId.get(s.id ?? "") ?? 0) + 1);
    expect([...perId.values()]).toEqual([1, 1, 1, 1]);

    // No interval has two live versions.
    const range = parseInterval("2026-03-01/2026-03-05");
    const used = await client.metadataSegments("crashy", ["2026-03-01/2026-03-05"]);
    const served = new Set(await client.servedSegments("crashy"));
    const audit = auditTimeline({
      datasource: "crashy",
      interval: range,
      granularity: parseGranularity("day"),
      segments: used.map((s) => toTimelineSegment(s, served)),
    });
    expect(audit.violations).toEqual([]);
    expect(audit.chunks.map((c) => c.liveVersions.length)).toEqual([1, 1, 1, 1]);
    return sim.stats();
  } finally {
    await client.close();
    await store.close();
    await proxy.close();
    await sim.close();
  }
}

describe("crash safety: SIGKILL the backfill process, rerun the same command", () => {
  for (const point of [
    "before submit",
    "after submit, before the id was observed",
    "while polling",
    "during handoff",
  ] as const) {
    it(`finishes with one accepted submission per attempt and one live version per chunk (killed ${point})`, async () => {
      const stats = await crashThenRerun(point);
      if (point === "after submit, before the id was observed") {
        // The rerun resubmitted ids Druid already had: answered as duplicates and reattached.
        expect(stats.submissions.some((s) => !s.accepted && s.status === 400)).toBe(true);
      }
    }, 60_000);
  }
});

describe("Ctrl-C: the backfill hands its work back and the rerun resumes at once", () => {
  it("exits 3 with every partition handed back, then the same command finishes without waiting for a lease", async () => {
    const work = mkdtempSync(join(tmpdir(), "segops-sigint-"));
    const dataDir = writeDailyDataset({
      from: "2026-04-01",
      days: 3,
      rowsPerDay: 10,
      dir: join(work, "data"),
    });
    const template = join(work, "daily.json");
    writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "interrupted" })));
    const ledgerUrl = `sqlite:${join(work, "ledger.db")}`;
    const sim = await startSim({
      timeScale: 20,
      capacity: 8,
      seed: 4,
      baseDurationMs: 40_000,
      handoffDelayMs: 1000,
    });
    const store = await openStore(ledgerUrl);
    const args = [
      "backfill",
      template,
      "--from",
      "2026-04-01",
      "--to",
      "2026-04-04",
      "--var",
      `dataDir=${dataDir}`,
      "--druid",
      sim.url,
      "--ledger",
      ledgerUrl,
      "--tick",
      "40",
      "--json",
    ];
    try {
      const first = runCli(args); // the default 30 s lease
      await until(
        "all partitions at Druid",
        async () => {
          const job = (await store.listJobs())[0];
          if (!job) return false;
          const tasks = await store.listTasks(job.id);
          return tasks.length === 3 && tasks.every((t) => (t.progress as IngestProgress).step === "running");
        },
        { whileRunning: first },
      );
      first.child.kill("SIGINT");
      const interrupted = await first.done;
      expect(interrupted.code).toBe(3);
      expect(interrupted.stderr).toContain("interrupted: handing work back");
      const job = (await store.listJobs())[0];
      const rows = await store.listTasks(job?.id as string);
      expect(rows.map((t) => [t.state, t.leaseOwner])).toEqual([
        ["suspended", null],
        ["suspended", null],
        ["suspended", null],
      ]);

      // Suspended with no lease: the rerun claims them at once instead of sitting out the 30 s lease.
      expect(rows.every((t) => t.reason?.startsWith("handed back"))).toBe(true);
      const second = await runCli(args).done;
      expect(second.code, second.stderr).toBe(0);
      expect(JSON.parse(second.stdout).counts.done).toBe(3);
      const accepted = sim.stats().submissions.filter((s) => s.accepted);
      expect(accepted).toHaveLength(3);
    } finally {
      await store.close();
      await sim.close();
    }
  }, 60_000);
});

describe("under SIGKILL: a shared ledger, two clusters", () => {
  it.each([21, 22])(
    "the killed prod backfill never runs on the stage cluster, and its rerun fills prod (seed %i)",
    async (seed) => {
      const work = mkdtempSync(join(tmpdir(), "segops-twoclusters-"));
      const prodData = writeDailyDataset({
        from: "2026-05-01",
        days: 20,
        rowsPerDay: 8,
        dir: join(work, "prod"),
      });
      const stageData = writeDailyDataset({
        from: "2026-05-01",
        days: 2,
        rowsPerDay: 8,
        dir: join(work, "stage"),
      });
      const prodTemplate = join(work, "prod.json");
      const stageTemplate = join(work, "stage.json");
      writeFileSync(prodTemplate, JSON.stringify(dailyTemplate({ datasource: "prod" })));
      writeFileSync(stageTemplate, JSON.stringify(dailyTemplate({ datasource: "stage" })));
      const ledgerUrl = `sqlite:${join(work, "ledger.db")}`;
      const a = await startSim({
        timeScale: 50,
        capacity: 2,
        seed,
        baseDurationMs: 4000,
        handoffDelayMs: 1000,
      });
      const b = await startSim({
        timeScale: 50,
        capacity: 2,
        seed: seed + 1,
        baseDurationMs: 4000,
        handoffDelayMs: 1000,
      });
      const store = await openStore(ledgerUrl);
      const common = ["--ledger", ledgerUrl, "--tick", "30", "--lease", "500", "--json"];
      const prodArgs = [
        "backfill",
        prodTemplate,
        "--from",
        "2026-05-01",
        "--to",
        "2026-05-21",
        "--var",
        `dataDir=${prodData}`,
        "--druid",
        a.url,
        ...common,
      ];
      try {
        const first = runCli(prodArgs);
        await until(
          "a few prod partitions done",
          async () => {
            const job = (await store.listJobs())[0];
            return job ? (await store.countTasks(job.id)).done >= 3 : false;
          },
          { whileRunning: first },
        );
        first.child.kill("SIGKILL");
        await first.done;

        // Once the killed run's leases have lapsed, a stage backfill on cluster B shares the ledger.
        await new Promise((r) => setTimeout(r, 600));
        const stage = await runCli([
          "backfill",
          stageTemplate,
          "--from",
          "2026-05-01",
          "--to",
          "2026-05-03",
          "--var",
          `dataDir=${stageData}`,
          "--druid",
          b.url,
          ...common,
        ]).done;
        expect(stage.code, stage.stderr).toBe(0);
        const toB = b.stats().submissions.filter((s) => s.accepted);
        expect(toB.map((s) => s.id?.includes("_stage_"))).toEqual([true, true]);

        const rerun = await runCli(prodArgs).done;
        expect(rerun.code, rerun.stderr).toBe(0);
        expect(JSON.parse(rerun.stdout).counts.done).toBe(20);
        const perDay = new Map<string, number>();
        for (const r of a.engine.store.liveRows("prod", a.engine.now)) {
          const day = new Date(r.__time as number).toISOString().slice(0, 10);
          perDay.set(day, (perDay.get(day) ?? 0) + 1);
        }
        expect(perDay.size).toBe(20);
        expect([...perDay.values()].every((n) => n === 8)).toBe(true);
        expect(b.engine.store.liveRows("prod", b.engine.now)).toHaveLength(0);
      } finally {
        await store.close();
        await a.close();
        await b.close();
      }
    },
    90_000,
  );
});
