import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

let sim: SimHandle;
const work = mkdtempSync(join(tmpdir(), "segops-ops-"));

beforeAll(async () => {
  sim = await startSim({ timeScale: 200, capacity: 8, handoffDelayMs: 1000, seed: 3 });
});
afterAll(async () => {
  await sim.close();
});

function templateFile(name: string, t: object): string {
  const p = join(work, name);
  writeFileSync(p, JSON.stringify(t));
  return p;
}

describe("submit and wait: the operator and sensor halves", () => {
  const dataDir = writeDailyDataset({ from: "2026-07-01", days: 1, rowsPerDay: 10, dir: join(work, "sw") });
  const template = templateFile("sw.json", dailyTemplate({ datasource: "sensor" }));
  const common = ["--interval", "2026-07-01/P1D", "--var", `dataDir=${dataDir}`, "--druid"];

  it("submits once, reattaches on a rerun, and waits through handoff", async () => {
    const first = await runCli(["submit", template, ...common, sim.url, "--json"]).done;
    expect(first.code, first.stderr).toBe(0);
    const submitted = JSON.parse(first.stdout) as { taskId: string; outcome: string };
    expect(submitted.outcome).toBe("accepted");
    const again = await runCli(["submit", template, ...common, sim.url, "--json"]).done;
    expect(JSON.parse(again.stdout)).toMatchObject({ taskId: submitted.taskId, outcome: "duplicate" });
    expect(sim.stats().submissions.filter((s) => s.id === submitted.taskId && s.accepted)).toHaveLength(1);

    const waited = await runCli([
      "wait",
      submitted.taskId,
      "--handoff",
      "--tick",
      "30",
      "--druid",
      sim.url,
      "--json",
    ]).done;
    expect(waited.code, waited.stderr).toBe(0);
    expect(JSON.parse(waited.stdout)).toMatchObject({ outcome: "SUCCESS", handoff: true });
  });

  it("exits 1 with Druid's errorMsg when the task FAILED", async () => {
    const failing = dailyTemplate({ datasource: "sensor" }) as Record<string, unknown>;
    failing.context = { simFail: "Failed in phase[segment generation]. See task logs for details." };
    const t = templateFile("fail.json", failing);
    const submitted = await runCli(["submit", t, ...common, sim.url]).done;
    const id = submitted.stdout.trim();
    const waited = await runCli(["wait", id, "--tick", "30", "--druid", sim.url]).done;
    expect(waited.code).toBe(1);
    expect(waited.stdout).toContain(`${id} -> FAILED: Failed in phase[segment generation]`);
  });

  it("exits 3 when the timeout comes first", async () => {
    const slow = dailyTemplate({ datasource: "sensor" }) as Record<string, unknown>;
    slow.context = { simDurationMs: 3_600_000 };
    const t = templateFile("slow.json", slow);
    const id = (await runCli(["submit", t, ...common, sim.url]).done).stdout.trim();
    const waited = await runCli(["wait", id, "--timeout", "0.5", "--tick", "30", "--druid", sim.url]).done;
    expect(waited.code).toBe(3);
    expect(waited.stdout).toContain("TIMEOUT");
  });
});

describe("dlq and cancel from another shell", () => {
  it("lists, shows, retries and drops dead letters", async () => {
    const dataDir = writeDailyDataset({
      from: "2026-08-01",
      days: 3,
      rowsPerDay: 10,
      dir: join(work, "dlq"),
    });
    appendFileSync(join(dataDir, "events-2026-08-02.json"), "{broken\n");
    appendFileSync(join(dataDir, "events-2026-08-03.json"), "{broken\n");
    const t = dailyTemplate({ datasource: "letters" }) as { spec: { tuningConfig: Record<string, unknown> } };
    t.spec.tuningConfig.maxParseExceptions = 0;
    const template = templateFile("dlq.json", t);
    const ledger = `sqlite:${join(work, "dlq.db")}`;
    const args = [
      "backfill",
      template,
      "--from",
      "2026-08-01",
      "--to",
      "2026-08-04",
      "--var",
      `dataDir=${dataDir}`,
    ];
    const run = () => runCli([...args, "--druid", sim.url, "--ledger", ledger, "--tick", "30"]).done;
    const first = await run();
    expect(first.code).toBe(1);
    expect(first.stdout).toMatch(/NOT ALL DONE: 2 dead-lettered; segops dlq list --job \S+ shows why/);

    const list = await runCli(["dlq", "list", "--ledger", ledger, "--json"]).done;
    const dead = JSON.parse(list.stdout) as Array<{ task: string; interval: string }>;
    expect(dead.map((d) => d.interval.slice(0, 10)).sort()).toEqual(["2026-08-02", "2026-08-03"]);
    const [second, third] = dead.sort((a, b) => (a.interval < b.interval ? -1 : 1));
    const shown = JSON.parse(
      (await runCli(["dlq", "show", second!.task, "--ledger", ledger, "--json"]).done).stdout,
    );
    expect(shown.failures.map((f: { failureClass: string }) => f.failureClass)).toEqual([
      "parse-exceptions",
      "parse-exceptions",
      "parse-exceptions",
    ]);
    // Without --json: a page a person reads — one line per attempt and per state change, ISO times.
    const human = (await runCli(["dlq", "show", second!.task, "--ledger", ledger]).done).stdout;
    const lines = human.trim().split("\n");
    expect(lines[0]).toBe(`${second!.task}: dead-lettered after 3 attempts`);
    expect(lines).toContain("failed attempts:");
    expect(
      lines.filter((l) => /^ {2}attempt \d+ {2}parse-exceptions \(deterministic\)/.test(l)),
    ).toHaveLength(3);
    expect(lines).toContain("history:");
    expect(lines.some((l) => /^ {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}\S+ → dead/.test(l))).toBe(true);
    expect(human).not.toMatch(/\b1\d{12}\b/); // no epoch milliseconds
    expect(human).not.toMatch(/^\s*"/m); // no JSON members
    expect(human).not.toMatch(/ {2}running {2}checkpoint /); // progress checkpoints are counted, not listed
    expect(lines.at(-1)).toMatch(/^next: fix the cause, then segops dlq retry \S+ \(or segops dlq drop/);
    expect(lines.length).toBeLessThan(40);

    writeDailyDataset({ from: "2026-08-02", days: 1, rowsPerDay: 10, dir: dataDir }); // fixed input
    expect((await runCli(["dlq", "retry", second!.task, "--ledger", ledger]).done).code).toBe(0);
    expect((await runCli(["dlq", "drop", third!.task, "--ledger", ledger]).done).code).toBe(0);
    const notDead = await runCli(["dlq", "retry", third!.task, "--ledger", ledger]).done;
    expect(notDead.code).toBe(2);
    expect(notDead.stderr).toContain("is not a dead-lettered partition");

    const rerun = await run();
    expect(rerun.code).toBe(1); // the dropped partition stays failed
    expect(rerun.stdout).toMatch(/done 2 · failed 1 · dead 0/);

    // Fix its input too and send the job's failed partitions back: the rerun finishes everything.
    writeDailyDataset({ from: "2026-08-03", days: 1, rowsPerDay: 10, dir: dataDir });
    const jobId = /job (\S+)/.exec(rerun.stdout)?.[1] as string;
    const retried = await runCli(["retry", jobId, "--ledger", ledger]).done;
    expect(retried.stdout).toContain("1 partition(s) sent back to run");
    const last = await run();
    expect(last.code, last.stdout).toBe(0);
    expect(last.stdout).toMatch(/done 3 · failed 0 · dead 0/);
    // The dropped partition's failed ids are never resubmitted: its fourth attempt ran.
    expect(last.stdout).toMatch(/2026-08-03\/2026-08-04\s+done\s+4\s/);
  }, 240_000);

  it("cancels a running job from another process and shuts its Druid tasks down", async () => {
    const dataDir = writeDailyDataset({
      from: "2026-09-01",
      days: 2,
      rowsPerDay: 10,
      dir: join(work, "cancel"),
    });
    const slow = dailyTemplate({ datasource: "canceled" }) as Record<string, unknown>;
    slow.context = { simDurationMs: 3_600_000 };
    const template = templateFile("cancel.json", slow);
    const ledgerPath = join(work, "cancel.db");
    const ledger = `sqlite:${ledgerPath}`;
    const running = runCli([
      "backfill",
      template,
      "--from",
      "2026-09-01",
      "--to",
      "2026-09-03",
      "--var",
      `dataDir=${dataDir}`,
      "--druid",
      sim.url,
      "--ledger",
      ledger,
      "--tick",
      "30",
    ]);
    const store = await openStore(ledger);
    let jobId = "";
    try {
      await until(
        "both partitions running at Druid",
        async () => {
          const jobs = await store.listJobs();
          if (!jobs[0]) return false;
          jobId = jobs[0].id;
          const tasks = await store.listTasks(jobId);
          return (
            tasks.length === 2 && tasks.every((t) => (t.progress as { step?: string }).step === "running")
          );
        },
        { whileRunning: running },
      );
    } finally {
      await store.close();
    }
    const cancel = await runCli(["cancel", jobId, "--shutdown", "--ledger", ledger, "--druid", sim.url]).done;
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toMatch(/canceled 2 unfinished partition\(s\)/);
    expect(cancel.stdout.match(/asked Druid to shut down/g)).toHaveLength(2);
    const finished = await running.done;
    expect(finished.code, `${finished.stdout}\n${finished.stderr}`).toBe(1);
    expect(finished.stdout).toMatch(/failed 2/);
    const shutdowns = Object.entries(sim.stats().requests).filter(([k]) => k.includes("shutdown"));
    expect(shutdowns.reduce((n, [, c]) => n + c, 0)).toBe(2);
  });
});
