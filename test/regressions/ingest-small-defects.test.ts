import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import type { TaskContext } from "../../src/driver/runner.js";
import { TaskAbort, TaskProgress } from "../../src/driver/signals.js";
import { DruidClient } from "../../src/druid/client.js";
import { clusterOf } from "../../src/druid/cluster.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { FORGOTTEN_LIMIT, ingestRunner } from "../../src/ingest/runner.js";
import type { IngestProgress } from "../../src/ingest/types.js";
import { runIngestJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { JsonObject } from "../../src/ledger/types.js";
import { startSim } from "../../src/sim/index.js";
import { HandoffChecker } from "../../src/work/handoff.js";
import type { StatusBatcher } from "../../src/work/status-batcher.js";
import { runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { ingestTaskRow } from "../helpers/task-row.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

describe("smaller defects in the ingestion path", () => {
  it("a task Druid's status endpoint forgets while submit answers duplicate is not resubmitted forever", async () => {
    const clock = new ManualClock(0);
    let submits = 0;
    const client = {
      metadataSegments: async () => [],
      servedSegments: async () => [],
      submitTask: async (spec: { id: string }) => {
        submits++;
        return { outcome: "duplicate" as const, taskId: spec.id };
      },
    } as unknown as DruidClient;
    const batcher = { get: async (id: string) => ({ id, state: "UNKNOWN" }) } as unknown as StatusBatcher;
    const runner = ingestRunner({
      client,
      clock,
      batcher,
      handoff: new HandoffChecker({ clock, source: client }),
    });
    let progress: JsonObject = {};
    const ctx: TaskContext = {
      signal: new AbortController().signal,
      owner: "me",
      clock,
      checkpoint: async (patch) => {
        progress = { ...progress, ...patch };
        return ingestTaskRow(progress);
      },
    };
    let outcome: unknown;
    for (let i = 0; i < 20; i++) {
      try {
        await runner.handler(ingestTaskRow(progress), ctx);
        outcome = "returned";
      } catch (error) {
        outcome = error;
      }
      if (!(outcome instanceof TaskProgress)) break;
    }
    expect(outcome).toBeInstanceOf(TaskAbort);
    expect((outcome as Error).message).toMatch(
      /answers "duplicate" .* status endpoint does not know the task/,
    );
    expect(submits).toBe(FORGOTTEN_LIMIT);
    expect((progress as IngestProgress).outcome).toBe("forgotten");
  });

  it("segops retry after 'SUCCESS but never queryable' waits for handoff again instead of failing at once", async () => {
    const sim = await startSim({
      timeScale: 200,
      capacity: 2,
      handoffDelayMs: 1000,
      baseDurationMs: 2000,
      seed: 3,
    });
    const client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
    const store = await openStore("sqlite::memory:");
    closers.push(
      () => sim.close(),
      () => client.close(),
      () => store.close(),
    );
    sim.setNeverLoad("stuck", true);
    const data = writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 8 });
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: "stuck" }) },
      templateName: "t.json",
      range: parseInterval("2026-06-01/2026-06-02"),
      vars: { dataDir: data },
      cluster: clusterOf(client),
    });
    await store.createJob(plan.job, plan.tasks);
    const options = { store, client, clock: systemClock, jobId: plan.job.id, tickMs: 20, leaseMs: 5000 };
    const first = await runIngestJob({ ...options, handoffTimeoutMs: 2000 });
    expect(first.counts.failed).toBe(1);
    const [failed] = await store.listTasks(plan.job.id);
    expect(failed?.lastError).toMatch(/SUCCESS but never queryable/);

    // The Historicals come back; the user sends the partition back with `segops retry`.
    // Loading takes a while (a minute of emulated time): the retry must wait for it, not fail at once.
    sim.setNeverLoad("stuck", false);
    for (const s of sim.engine.store.all("stuck")) s.servedAt = sim.engine.now + 60_000;
    expect(await store.retryTask(failed?.id as string, "test")).not.toBeNull();
    const second = await runIngestJob({ ...options, handoffTimeoutMs: 2000 });
    expect(second.counts.done).toBe(1);
    expect(second.job.state).toBe("done");
    // No new Druid task: the same attempt was waited for again.
    expect(sim.stats().submissions.filter((s) => s.accepted)).toHaveLength(1);
  }, 60_000);
});

describe("smaller defects in the ingest commands", () => {
  const work = mkdtempSync(join(tmpdir(), "segops-i9low-"));
  const template = join(work, "t.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "low" })));
  const base = [
    "backfill",
    template,
    "--from",
    "2026-06-01",
    "--to",
    "2026-06-02",
    "--var",
    "dataDir=/nowhere",
  ];
  const ledger = join(work, "ledger.db");
  const rest = ["--druid", "http://127.0.0.1:9", "--ledger", `sqlite:${ledger}`];

  it.each(["--prefix", "--spec-version"])(
    "%s '' is refused (exit 2) instead of silently falling back to the default",
    async (flag) => {
      const result = await runCli([...base, flag, "", ...rest]).done;
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(`${flag}: must not be empty`);
    },
  );

  it("backfill names the JSON path of a bad segmentGranularity, as validate does", async () => {
    const bad = dailyTemplate({ datasource: "low" }) as {
      spec: { dataSchema: { granularitySpec: JsonObject } };
    };
    bad.spec.dataSchema.granularitySpec.segmentGranularity = "fortnightly";
    const file = join(work, "bad.json");
    writeFileSync(file, JSON.stringify(bad));
    const result = await runCli(["backfill", file, ...base.slice(2), ...rest]).done;
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain("spec.dataSchema.granularitySpec.segmentGranularity");
  });

  it("an unaligned range names a real remedy, not an option that does not exist", async () => {
    const result = await runCli([
      "backfill",
      template,
      "--from",
      "2026-06-01T06:00:00Z",
      "--to",
      "2026-06-03",
      "--var",
      "dataDir=/nowhere",
      ...rest,
    ]).done;
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toContain("allow widening");
    expect(result.stderr).toMatch(/instead, or a finer granularity/);
  });
});

describe("a ledger deleted or replaced mid-run", () => {
  it.each(["deleted", "replaced"] as const)(
    "a ledger %s mid-run does not end ALL DONE: exit 4 naming it",
    async (what) => {
      const sim = await startSim({ timeScale: 20, capacity: 2, baseDurationMs: 20_000, seed: 6 });
      closers.push(() => sim.close());
      const work = mkdtempSync(join(tmpdir(), "segops-i9gone-"));
      const dataDir = writeDailyDataset({
        from: "2026-06-01",
        days: 2,
        rowsPerDay: 8,
        dir: join(work, "data"),
      });
      const template = join(work, "t.json");
      writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "gone" })));
      const ledger = join(work, "ledger.db");
      const run = runCli([
        "backfill",
        template,
        "--from",
        "2026-06-01",
        "--to",
        "2026-06-03",
        "--var",
        `dataDir=${dataDir}`,
        "--druid",
        sim.url,
        "--ledger",
        `sqlite:${ledger}`,
        "--tick",
        "30",
      ]);
      await until("a submission reached Druid", () => sim.stats().submissions.some((s) => s.accepted), {
        whileRunning: run,
      });
      if (what === "replaced") {
        // Replaced in one step (a rename over it), so the process never sees the path missing in between.
        writeFileSync(`${ledger}.new`, "");
        renameSync(`${ledger}.new`, ledger);
        for (const suffix of ["-wal", "-shm"]) rmSync(`${ledger}${suffix}`, { force: true });
      } else {
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${ledger}${suffix}`, { force: true });
      }
      const result = await run.done;
      expect(result.code, result.stderr).toBe(4);
      expect(result.stderr).toContain(`the SQLite ledger ${ledger} was ${what}`);
      expect(result.stdout).not.toContain("DONE AND AUDITED");
    },
    60_000,
  );
});
