import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { startSim } from "../../src/sim/index.js";
import { runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * After Ctrl-C, a `--new` job must be resumable without ingesting everything again. The hint
 * names `segops resume JOB`; rerunning the command (which contains `--new`) over an unfinished job of the
 * same inputs is refused; `resume`, or the same command without `--new` (which finds the unfinished job
 * again instead of starting the plain one beside it), finishes it with no partition ingested twice (an
 * appending template would double the rows).
 */

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

describe("--new then rerun the same command", () => {
  it.each([
    [4, "segops resume JOB"],
    [5, "the command without --new"],
  ])(
    "--new then 'rerun the same command' does not ingest everything again (seed %i, finished by %s)",
    async (seed, wayBack) => {
      const sim = await startSim({
        timeScale: 100,
        capacity: 2,
        handoffDelayMs: 1000,
        baseDurationMs: 4000,
        seed,
      });
      closers.push(() => sim.close());
      const work = mkdtempSync(join(tmpdir(), "segops-i9new-"));
      const dataDir = writeDailyDataset({
        from: "2026-04-01",
        days: 6,
        rowsPerDay: 8,
        dir: join(work, "data"),
      });
      const template = join(work, "append.json");
      writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "appended", append: true })));
      const ledger = `sqlite:${join(work, "ledger.db")}`;
      const args = [
        "backfill",
        template,
        "--from",
        "2026-04-01",
        "--to",
        "2026-04-07",
        "--var",
        `dataDir=${dataDir}`,
        "--druid",
        sim.url,
        "--ledger",
        ledger,
        "--tick",
        "30",
        "--max-concurrency",
        "2",
        "--new",
      ];
      const store = await openStore(ledger);
      closers.push(() => store.close());
      const first = runCli(args);
      await until(
        "a partition is done",
        async () => {
          const [job] = await store.listJobs();
          return job ? (await store.countTasks(job.id)).done >= 1 : false;
        },
        { whileRunning: first },
      );
      first.child.kill("SIGINT");
      const stopped = await first.done;
      expect(stopped.code).toBe(3);
      const [job] = await store.listJobs();
      const jobId = job?.id as string;
      expect(stopped.stderr).toContain(`segops resume ${jobId}`);
      expect(stopped.stdout).toContain(`segops resume ${jobId}`);
      expect(stopped.stdout).not.toContain("rerun the same command");
      const acceptedBefore = sim.stats().submissions.filter((s) => s.accepted).length;

      // The same command again: refused, nothing submitted, no second job.
      const again = await runCli(args).done;
      expect(again.code, again.stderr).toBe(2);
      expect(again.stderr).toContain(jobId);
      expect(again.stderr).toContain("segops resume");
      expect(await store.listJobs()).toHaveLength(1);
      expect(sim.stats().submissions.filter((s) => s.accepted).length).toBe(acceptedBefore);

      // The way back finishes the job; every day holds its 8 rows once.
      const resumed = await runCli(
        wayBack === "segops resume JOB"
          ? ["resume", jobId, "--druid", sim.url, "--ledger", ledger, "--tick", "30", "--json"]
          : [...args.filter((a) => a !== "--new"), "--json"],
      ).done;
      expect(resumed.code, resumed.stderr).toBe(0);
      expect((await store.listJobs()).map((j) => j.id)).toEqual([jobId]);
      const report = JSON.parse(resumed.stdout) as { counts: { done: number }; state: string };
      expect(report.counts.done).toBe(6);
      expect(report.state).toBe("done");
      const perDay = new Map<string, number>();
      for (const row of sim.engine.store.liveRows("appended", sim.engine.now)) {
        const day = new Date(row.__time as number).toISOString().slice(0, 10);
        perDay.set(day, (perDay.get(day) ?? 0) + 1);
      }
      expect([...perDay.values()]).toEqual([8, 8, 8, 8, 8, 8]);
      const accepted = sim
        .stats()
        .submissions.filter((s) => s.accepted)
        .map((s) => s.id);
      expect(new Set(accepted).size).toBe(accepted.length);
    },
    60_000,
  );

  it("resume refuses a job of another cluster (exit 2, nothing submitted)", async () => {
    const a = await startSim({ timeScale: 100, seed: 1 });
    const b = await startSim({ timeScale: 100, seed: 2 });
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    const work = mkdtempSync(join(tmpdir(), "segops-i9res-"));
    const dataDir = writeDailyDataset({
      from: "2026-04-01",
      days: 1,
      rowsPerDay: 8,
      dir: join(work, "data"),
    });
    const template = join(work, "t.json");
    writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "bound" })));
    const ledger = `sqlite:${join(work, "ledger.db")}`;
    const planned = await runCli([
      "backfill",
      template,
      "--from",
      "2026-04-01",
      "--to",
      "2026-04-02",
      "--var",
      `dataDir=${dataDir}`,
      "--druid",
      a.url,
      "--ledger",
      ledger,
      "--deadline",
      "0.001",
      "--json",
    ]).done;
    expect(planned.code, planned.stderr).toBe(3);
    const jobId = (JSON.parse(planned.stdout) as { job: string }).job;
    const wrong = await runCli(["resume", jobId, "--druid", b.url, "--ledger", ledger]).done;
    expect(wrong.code, wrong.stderr).toBe(2);
    expect(wrong.stderr).toContain(`belongs to the Druid at ${a.url}`);
    expect(b.stats().submissions).toHaveLength(0);
  });
});
