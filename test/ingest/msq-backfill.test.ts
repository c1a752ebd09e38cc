import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { JobReport } from "../../src/jobs/report.js";
import { openStore } from "../../src/ledger/open.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { parseTemplateText } from "../../src/spec/index.js";
import { runCli, until } from "../helpers/cli-process.js";
import { writeDailyDataset } from "../helpers/dataset.js";

/**
 * `segops backfill` with a `.sql` template submits one `REPLACE … OVERWRITE WHERE` per day to
 * `/druid/v2/sql/task` under the derived id (`query-<sqlQueryId>`), follows the controller, gates on the MSQ
 * report, waits for handoff and audits — on the emulator, in a real CLI process.
 */

const SIGNATURE =
  '[{"name":"ts","type":"string"},{"name":"channel","type":"string"},{"name":"page","type":"string"},{"name":"added","type":"long"}]';

function sqlTemplate(datasource: string): string {
  return [
    "-- one day of events, replaced as a whole",
    `REPLACE INTO "${datasource}" OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}'`,
    `SELECT TIME_PARSE("ts") AS __time, "channel", "page", "added"`,
    `FROM TABLE(EXTERN('{"type":"local","baseDir":"{{var.dataDir}}","filter":"events-{{start:yyyy-MM-dd}}.json"}', '{"type":"json"}', '${SIGNATURE}'))`,
    "PARTITIONED BY DAY",
    'CLUSTERED BY "channel"',
    "",
  ].join("\n");
}

let sim: SimHandle;
beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 6, handoffDelayMs: 1000, baseDurationMs: 2000, seed: 15 });
});
afterAll(async () => {
  await sim.close();
});

function setup(datasource: string, template = sqlTemplate(datasource)) {
  const work = mkdtempSync(join(tmpdir(), `segops-msq-${datasource}-`));
  const dataDir = writeDailyDataset({ from: "2026-07-01", days: 4, rowsPerDay: 20, dir: join(work, "data") });
  const file = join(work, "daily.sql");
  writeFileSync(file, template);
  const ledger = join(work, "ledger.db");
  const args = (extra: string[] = []) => [
    "backfill",
    file,
    "--from",
    "2026-07-01",
    "--to",
    "2026-07-05",
    "--var",
    `dataDir=${dataDir}`,
    "--druid",
    sim.url,
    "--ledger",
    `sqlite:${ledger}`,
    "--tick",
    "20",
    "--json",
    ...extra,
  ];
  return { dataDir, file, ledger, args };
}

const corrupt = (dir: string, day: string) =>
  appendFileSync(join(dir, `events-${day}.json`), "{broken row one\n{broken row two\n");

function submissionsOf(datasource: string) {
  const ids = new Set(
    [...sim.engine.tasks.values()].filter((t) => t.dataSource === datasource).map((t) => t.id),
  );
  return sim.stats().submissions.filter((s) => s.id !== null && (ids.has(s.id) || s.id.includes(datasource)));
}

async function countDay(datasource: string, day: string, next: string): Promise<number> {
  const res = await fetch(`${sim.url}/druid/v2/sql`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      query: `SELECT COUNT(*) AS n FROM "${datasource}" WHERE __time >= TIMESTAMP '${day} 00:00:00' AND __time < TIMESTAMP '${next} 00:00:00'`,
    }),
  });
  const rows = (await res.json()) as Array<{ n: number }>;
  return rows[0]?.n ?? 0;
}

describe("MSQ backfill on the emulator", () => {
  it("plans one REPLACE per PARTITIONED BY bucket with the id in context.sqlQueryId and the gate in maxParseExceptions", () => {
    const plan = planIngestJob({
      kind: "backfill",
      template: parseTemplateText(sqlTemplate("ev"), "t.sql"),
      templateName: "t.sql",
      range: { start: Date.UTC(2026, 6, 1), end: Date.UTC(2026, 6, 3) },
      vars: { dataDir: "/data" },
    });
    expect(plan.datasource).toBe("ev");
    expect(plan.tasks).toHaveLength(2);
    const payload = plan.tasks[0]?.payload as Record<string, unknown> & {
      spec: { query: string; context: Record<string, unknown> };
    };
    expect(payload).toMatchObject({ kind: "sql", mode: "replace", segmentGranularity: "day", slots: 2 });
    expect(payload.spec.query).toContain(
      "TIMESTAMP '2026-07-01 00:00:00' AND __time < TIMESTAMP '2026-07-02 00:00:00'",
    );
    expect(payload.spec.context).toEqual({ maxParseExceptions: 0 });
    // `run` is one partition over its interval; a window that is not the PARTITIONED BY bucket is refused.
    const run = planIngestJob({
      kind: "run",
      template: parseTemplateText(sqlTemplate("ev"), "t.sql"),
      templateName: "t.sql",
      range: { start: Date.UTC(2026, 6, 1), end: Date.UTC(2026, 6, 2) },
      vars: { dataDir: "/data" },
    });
    expect(run.tasks).toHaveLength(1);
    expect(() =>
      planIngestJob({
        kind: "run",
        template: parseTemplateText(sqlTemplate("ev"), "t.sql"),
        templateName: "t.sql",
        range: { start: Date.UTC(2026, 6, 1, 6), end: Date.UTC(2026, 6, 2) },
        vars: { dataDir: "/data" },
      }),
    ).toThrow(/query\.overwrite: .*not aligned with PARTITIONED BY granularity \[DAY\]/);
  });

  it("refuses an SQL template that cannot be run safely (exit 2, the field named, nothing submitted)", async () => {
    const bad = sqlTemplate("msqbad").replace(
      /OVERWRITE WHERE __time >= TIMESTAMP '\{\{start\}\}' AND __time < TIMESTAMP '\{\{end\}\}'/,
      "OVERWRITE ALL",
    );
    const { args, ledger } = setup("msqbad", bad);
    const run = await runCli(args()).done;
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/query\.overwrite/);
    expect(run.stderr).toMatch(/OVERWRITE ALL replaces the whole datasource/);
    expect(submissionsOf("msqbad")).toEqual([]);
    const store = await openStore(`sqlite:${ledger}`);
    expect(await store.listJobs({})).toEqual([]);
    await store.close();
  }, 60_000);

  it("a corrupt day is dead-lettered after Druid's TooManyWarnings; the other days are done, handed off and audited", async () => {
    const ds = "msqcorrupt";
    const { dataDir, args } = setup(ds);
    corrupt(dataDir, "2026-07-02");
    const run = await runCli(args()).done;
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as JobReport;
    const byDay = new Map(report.partitions.map((p) => [p.interval.slice(0, 10), p]));
    const bad = byDay.get("2026-07-02");
    expect(bad?.state).toBe("dead");
    expect(bad?.attempts).toBe(3);
    expect(bad?.error).toMatch(
      /TooManyWarnings: Too many warnings of type CannotParseExternalData generated \(max = 0\)/,
    );
    expect(bad?.rowStats).toMatchObject({ unparseable: 2 });
    expect(bad?.parseErrors.length).toBeGreaterThan(0);
    for (const day of ["2026-07-01", "2026-07-03", "2026-07-04"]) {
      const p = byDay.get(day);
      expect(p?.state, day).toBe("done");
      expect(p?.druidTaskId).toMatch(/^query-segops_msqcorrupt_/);
      expect(p?.rowStats).toEqual({ processed: 20, processedWithError: 0, unparseable: 0, thrownAway: 0 });
      expect(p?.step).toBe("done");
    }
    // Handed off and audited: the Broker serves each good day's rows, once.
    expect(await countDay(ds, "2026-07-01", "2026-07-02")).toBe(20);
    expect(await countDay(ds, "2026-07-03", "2026-07-04")).toBe(20);
    expect(await countDay(ds, "2026-07-02", "2026-07-03")).toBe(0);
    // Each good day submitted once; the corrupt day three attempts, each a new controller id.
    const accepted = submissionsOf(ds).filter((s) => s.accepted);
    expect(accepted).toHaveLength(6);
    expect(new Set(accepted.map((s) => s.id)).size).toBe(6);
    expect(accepted.filter((s) => s.id?.includes("_20260702-")).map((s) => s.id?.slice(-3))).toEqual([
      "_a1",
      "_a2",
      "_a3",
    ]);
    // The controllers ran with their workers.
    const workers = [...sim.engine.tasks.values()].filter(
      (t) => t.dataSource === ds && t.type === "query_worker",
    );
    expect(workers).toHaveLength(6);
  }, 90_000);

  it("a rollup REPLACE (GROUP BY with SUM and COUNT) backfills to exit 0: one live version a day, the day's rows counted once", async () => {
    const ds = "msqrollup";
    const rollupTemplate = [
      `REPLACE INTO "${ds}" OVERWRITE WHERE __time >= TIMESTAMP '{{start}}' AND __time < TIMESTAMP '{{end}}'`,
      `SELECT TIME_FLOOR(TIME_PARSE("ts"), 'P1D') AS __time, "channel", SUM("added") AS "added", COUNT(*) AS "rows"`,
      `FROM TABLE(EXTERN('{"type":"local","baseDir":"{{var.dataDir}}","filter":"events-{{start:yyyy-MM-dd}}.json"}', '{"type":"json"}', '${SIGNATURE}'))`,
      "GROUP BY 1, 2",
      "PARTITIONED BY DAY",
      "",
    ].join("\n");
    const { args } = setup(ds, rollupTemplate);
    const run = await runCli(args()).done;
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as JobReport;
    expect(report.partitions.map((p) => p.state)).toEqual(["done", "done", "done", "done"]);
    for (const p of report.partitions) expect(p.step, p.interval).toBe("done");
    const res = await fetch(`${sim.url}/druid/v2/sql`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        query: `SELECT TIME_FLOOR(__time, 'P1D') AS "day", COUNT(*) AS "groups", SUM("rows") AS "rows" FROM "${ds}" GROUP BY 1 ORDER BY 1`,
      }),
    });
    // 20 source rows a day in 5 channels, floored to the day: 5 rows a day, each day's rows counted once.
    const days = (await res.json()) as Array<{ day: string; groups: number; rows: number }>;
    expect(days.map((d) => d.rows)).toEqual([20, 20, 20, 20]);
    expect(days.map((d) => d.groups)).toEqual([5, 5, 5, 5]);
    expect(submissionsOf(ds).filter((s) => s.accepted)).toHaveLength(4);
  }, 90_000);

  it("under a percentage gate the query SUCCEEDS with warnings and the data gate fails the day", async () => {
    const ds = "msqpct";
    const { dataDir, args } = setup(ds);
    writeFileSync(join(dataDir, "events-2026-07-03.json"), "{a\n{b\n{c\n");
    const run = await runCli(args(["--max-unparseable", "10%", "--poison-after", "1"])).done;
    expect(run.code, run.stderr).toBe(1);
    const report = JSON.parse(run.stdout) as JobReport;
    const bad = report.partitions.find((p) => p.interval.startsWith("2026-07-03"));
    expect(bad?.state).toBe("failed");
    expect(bad?.error).toMatch(
      /data gate failed after Druid published query-\S+: the input produced 3 row\(s\) but none was ingested.* nothing to undo/,
    );
    expect(report.partitions.filter((p) => p.state === "done")).toHaveLength(3);
    const task = [...sim.engine.tasks.values()].find(
      (t) => t.dataSource === ds && t.type === "query_controller" && t.id.includes("_20260703-"),
    );
    expect(task?.phase).toBe("success");
    expect(task?.plan.context.maxParseExceptions).toBe(-1);
  }, 90_000);

  it("SIGKILLed mid-run, the same command resumes: nothing is submitted twice, every good day done once", async () => {
    const ds = "msqkill";
    const { dataDir, args, ledger } = setup(ds);
    corrupt(dataDir, "2026-07-04");
    // The published segments do not load for now: the first run waits in handoff until it is killed.
    sim.setNeverLoad(ds, true);
    const first = runCli(args(["--lease", "3000"]));
    await until(
      "the good days' controllers succeeded and the run waits for their handoff",
      () =>
        [...sim.engine.tasks.values()].filter(
          (t) => t.dataSource === ds && t.type === "query_controller" && t.phase === "success",
        ).length === 3,
      { timeoutMs: 60_000, whileRunning: first },
    );
    first.child.kill("SIGKILL");
    expect((await first.done).signal).toBe("SIGKILL");
    const beforeRerun = submissionsOf(ds).filter((s) => s.accepted).length;
    sim.setNeverLoad(ds, false);
    sim.engine.loadNow(ds);

    const second = await runCli(args(["--lease", "3000"])).done;
    expect(second.code, second.stderr).toBe(1);
    const report = JSON.parse(second.stdout) as JobReport;
    expect(report.partitions.filter((p) => p.state === "done").map((p) => p.interval.slice(0, 10))).toEqual([
      "2026-07-01",
      "2026-07-02",
      "2026-07-03",
    ]);
    expect(report.partitions.find((p) => p.interval.startsWith("2026-07-04"))?.state).toBe("dead");
    // The emulator's submission log: no controller id accepted twice, each good day accepted once.
    const accepted = submissionsOf(ds).filter((s) => s.accepted);
    expect(new Set(accepted.map((s) => s.id)).size).toBe(accepted.length);
    for (const day of ["20260701", "20260702", "20260703"])
      expect(
        accepted.filter((s) => s.id?.includes(`_${day}-`)),
        day,
      ).toHaveLength(1);
    expect(accepted.filter((s) => s.id?.includes("_20260704-")).length).toBe(3);
    // The rerun submitted no good day again (only the corrupt day's remaining attempts, if any).
    const rerunAccepted = accepted.slice(beforeRerun);
    expect(rerunAccepted.every((s) => s.id?.includes("_20260704-"))).toBe(true);
    // It resumed the same job.
    const store = await openStore(`sqlite:${ledger}`);
    expect((await store.listJobs({})).length).toBe(1);
    await store.close();
    for (const [day, next] of [
      ["2026-07-01", "2026-07-02"],
      ["2026-07-02", "2026-07-03"],
      ["2026-07-03", "2026-07-04"],
    ] as const)
      expect(await countDay(ds, day, next)).toBe(20);

    // Resumable: a third run has nothing left to do and submits nothing.
    const third = await runCli(args()).done;
    expect(third.code).toBe(1);
    expect(submissionsOf(ds).filter((s) => s.accepted)).toHaveLength(accepted.length);
  }, 120_000);

  it("a day whose EXTERN file is gone is refused before its query is submitted; its rows stay live", async () => {
    const ds = "msqgone";
    const { dataDir, args } = setup(ds);
    const first = await runCli(args()).done;
    expect(first.code, first.stderr).toBe(0);
    const before = submissionsOf(ds).filter((s) => s.accepted).length;
    rmSync(join(dataDir, "events-2026-07-02.json"));
    const rerun = await runCli(args()).done;
    expect(rerun.code, rerun.stderr).toBe(1);
    const report = JSON.parse(rerun.stdout) as JobReport;
    const gone = report.partitions.find((p) => p.interval.startsWith("2026-07-02"));
    expect(gone).toMatchObject({ state: "failed", outcome: "refused-empty" });
    expect(gone?.error).toMatch(
      /its input \(local baseDir \S+, filter events-2026-07-02.json\) yields no rows/,
    );
    expect(submissionsOf(ds).filter((s) => s.accepted).length).toBe(before);
    expect(await countDay(ds, "2026-07-02", "2026-07-03")).toBe(20);
  }, 90_000);

  it("segops submit with a .sql template prints the controller id; a rerun reattaches instead of failing", async () => {
    const { file, dataDir } = setup("msqsubmit");
    const args = [
      "submit",
      file,
      "--interval",
      "2026-07-01/2026-07-02",
      "--var",
      `dataDir=${dataDir}`,
      "--druid",
      sim.url,
      "--json",
    ];
    const first = await runCli(args).done;
    expect(first.code, first.stderr).toBe(0);
    const out = JSON.parse(first.stdout) as { taskId: string; outcome: string };
    expect(out).toMatchObject({ outcome: "accepted" });
    expect(out.taskId).toMatch(/^query-segops_msqsubmit_20260701-20260702_[0-9a-f]{12}_a1$/);
    const second = await runCli(args).done;
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ taskId: out.taskId, outcome: "duplicate" });
    expect(submissionsOf("msqsubmit").map((x) => [x.id, x.accepted])).toEqual([
      [out.taskId, true],
      [out.taskId, false],
    ]);
  }, 60_000);

  it("a full task queue (the Overlord's 429 wrapped in a 500) slows admission; the backfill still finishes with no failed partition", async () => {
    // One active task at most: a foreign task holds the queue until a submission has been refused.
    const small = await startSim({
      timeScale: 200,
      capacity: 8,
      handoffDelayMs: 500,
      baseDurationMs: 2000,
      seed: 16,
      maxQueueSize: 1,
    });
    try {
      const foreign = await fetch(`${small.url}/druid/indexer/v1/task`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ type: "noop", id: "foreign", context: { simDurationMs: 1e12 } }),
      });
      expect(foreign.status).toBe(200);
      const { args } = setup("msqqueue");
      const run = runCli(args(["--max-concurrency", "4"]).map((x) => (x === sim.url ? small.url : x)));
      const refusals = () => small.stats().submissions.filter((x) => !x.accepted && x.id !== "foreign");
      await until("a submission was refused for the full queue", () => refusals().length > 0, {
        timeoutMs: 60_000,
        whileRunning: run,
      });
      small.engine.shutdown("foreign");
      const done = await run.done;
      expect(done.code, done.stderr).toBe(0);
      const report = JSON.parse(done.stdout) as JobReport;
      expect(report.partitions.map((p) => p.state)).toEqual(["done", "done", "done", "done"]);
      expect(refusals().every((x) => x.status === 500 && x.reason === "task queue full")).toBe(true);
      const accepted = small.stats().submissions.filter((x) => x.accepted && x.id !== "foreign");
      expect(accepted).toHaveLength(4);
      expect(new Set(accepted.map((x) => x.id)).size).toBe(4);
      // No attempt was spent on the refusals: every controller is attempt 1.
      expect(accepted.every((x) => x.id?.endsWith("_a1"))).toBe(true);
    } finally {
      await small.close();
    }
  }, 90_000);

  it("admission counts a query's controller and workers (maxNumTasks slots): no controller waits for slots", async () => {
    // 5 slots, 3 per query (SET maxNumTasks = 3): one query at a time fits, two would not.
    const small = await startSim({
      timeScale: 200,
      capacity: 5,
      handoffDelayMs: 500,
      baseDurationMs: 2000,
      seed: 17,
    });
    try {
      const { args } = setup("msqslots", `SET maxNumTasks = 3;\n${sqlTemplate("msqslots")}`);
      const run = await runCli(args(["--max-concurrency", "8"]).map((x) => (x === sim.url ? small.url : x)))
        .done;
      expect(run.code, run.stderr).toBe(0);
      const stats = small.stats();
      expect(stats.slots.maxUsed).toBe(3);
      const controllers = [...small.engine.tasks.values()].filter((t) => t.type === "query_controller");
      expect(controllers).toHaveLength(4);
      expect(controllers.every((t) => t.plan.slots === 3)).toBe(true);
      for (const t of controllers) {
        const events = stats.tasks[t.id] ?? [];
        const at = (e: string) => events.find((x) => x.event === e)?.at;
        // Placed on workers the moment its lock was granted: admission held it back, not Druid's queue.
        expect(at("running"), t.id).toBe(at("pending"));
      }
      expect([...small.engine.tasks.values()].filter((t) => t.type === "query_worker")).toHaveLength(8);
    } finally {
      await small.close();
    }
  }, 90_000);
});
