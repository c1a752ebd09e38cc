import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { watchOutageLines } from "../../src/cli/progress.js";
import { ManualClock } from "../../src/core/clock.js";
import { UnavailableError } from "../../src/druid/errors.js";
import { OutageMonitor } from "../../src/druid/outage.js";
import { openStore } from "../../src/ledger/open.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * Druid gone mid-run must not be a silent hang. The progress output says Druid is
 * unreachable and since when; after `--druid-outage-timeout` the run exits 4 with the work handed back,
 * and the job resumes once Druid is back.
 */

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
});

function setup() {
  const work = mkdtempSync(join(tmpdir(), "segops-i9out-"));
  const dataDir = writeDailyDataset({ from: "2026-05-01", days: 4, rowsPerDay: 8, dir: join(work, "data") });
  const template = join(work, "t.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: "outage" })));
  const ledger = `sqlite:${join(work, "ledger.db")}`;
  const args = (url: string) => [
    "backfill",
    template,
    "--from",
    "2026-05-01",
    "--to",
    "2026-05-05",
    "--var",
    `dataDir=${dataDir}`,
    "--druid",
    url,
    "--ledger",
    ledger,
    "--tick",
    "30",
    "--druid-outage-timeout",
    "2",
  ];
  return { args, ledger };
}

describe("Druid gone mid-run", () => {
  it("Druid killed after the first submissions: says so, exits 4 with the work handed back, resumes", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "segops-i9sim-"));
    let sim: SimHandle = await startSim({
      timeScale: 20,
      capacity: 2,
      baseDurationMs: 20_000,
      seed: 9,
      dataDir,
    });
    const port = sim.port;
    closers.push(() => sim.close());
    const { args, ledger } = setup();
    const store = await openStore(ledger);
    closers.push(() => store.close());
    const first = runCli(args(sim.url));
    await until("a submission reached Druid", () => sim.stats().submissions.some((s) => s.accepted), {
      whileRunning: first,
    });
    await sim.close();
    const stopped = await first.done;
    expect(stopped.code, stopped.stderr).toBe(4);
    expect(stopped.stderr).toMatch(/Druid unreachable since \d{4}-\d\d-\d\dT/);
    expect(stopped.stderr).toMatch(/Druid has not answered since .*resume with segops resume/);
    const [job] = await store.listJobs();
    const counts = await store.countTasks(job?.id as string);
    // Handed back (suspended/new), none lost to failed or held under a lease.
    expect(counts.running + counts.failed + counts.dead).toBe(0);

    // Druid back (with its state): the same command finishes the job without resubmitting anything.
    sim = await startSim({ port, timeScale: 20, capacity: 2, baseDurationMs: 20_000, seed: 9, dataDir });
    const before = sim.stats().submissions.length;
    const again = await runCli([...args(sim.url), "--json"]).done;
    expect(again.code, again.stderr).toBe(0);
    const accepted = sim
      .stats()
      .submissions.filter((s) => s.accepted)
      .map((s) => s.id);
    expect(new Set(accepted).size).toBe(accepted.length);
    expect(before).toBe(0);
  }, 90_000);

  it("a persistent 500 on /taskStatus is an outage too: exit 4, not a hang", async () => {
    const sim = await startSim({ timeScale: 20, capacity: 2, baseDurationMs: 20_000, seed: 10 });
    closers.push(() => sim.close());
    const { args } = setup();
    const run = runCli(args(sim.url));
    await until("a submission reached Druid", () => sim.stats().submissions.some((s) => s.accepted), {
      whileRunning: run,
    });
    sim.setFaults([{ path: "/druid/indexer/v1/taskStatus", kind: "status", status: 500 }]);
    const stopped = await run.done;
    expect(stopped.code, stopped.stderr).toBe(4);
    expect(stopped.stderr).toContain("POST /druid/indexer/v1/taskStatus");
  }, 90_000);

  it("the plain progress lines say when Druid stopped answering and when it is back", async () => {
    const clock = new ManualClock(Date.UTC(2026, 4, 1, 12));
    const monitor = new OutageMonitor(clock);
    const lines: string[] = [];
    const watcher = watchOutageLines(monitor, clock, (l) => lines.push(l), {
      checkMs: 1000,
      remindMs: 30_000,
    });
    const error = new UnavailableError({ endpoint: "POST /druid/indexer/v1/taskStatus", status: 503 });
    monitor.record({
      reachable: false,
      endpoint: "POST /druid/indexer/v1/taskStatus",
      route: "POST /druid/indexer/v1/taskStatus",
      status: 503,
      error,
    });
    await clock.advance(1000);
    await clock.advance(31_000);
    monitor.record({
      reachable: true,
      endpoint: "POST /druid/indexer/v1/taskStatus",
      route: "POST /druid/indexer/v1/taskStatus",
      status: 200,
    });
    await clock.advance(1000);
    await watcher.stop();
    expect(lines[0]).toMatch(
      /^Druid unreachable since 2026-05-01T12:00:00.000Z \(\d+s\): POST \/druid\/indexer\/v1\/taskStatus/,
    );
    expect(lines.filter((l) => l.startsWith("Druid unreachable"))).toHaveLength(2);
    expect(lines.at(-1)).toMatch(/^Druid answering again after 3\ds$/);
  });
});

describe("the outage monitor", () => {
  const clock = () => new ManualClock(Date.UTC(2026, 4, 1, 12));
  const fail = (endpoint: string) => ({
    reachable: false as const,
    endpoint,
    route: endpoint,
    status: 503,
    error: new UnavailableError({ endpoint, status: 503 }),
  });

  it("one endpoint failing while others answer is an outage of that endpoint", async () => {
    const c = clock();
    const m = new OutageMonitor(c);
    m.record(fail("POST /druid/indexer/v1/taskStatus"));
    await c.advance(5000);
    m.record({
      reachable: true,
      endpoint: "GET /druid/indexer/v1/workers",
      route: "GET /druid/indexer/v1/workers",
      status: 200,
    });
    m.record(fail("POST /druid/indexer/v1/taskStatus"));
    expect(m.outageMs()).toBe(5000);
    m.record({
      reachable: true,
      endpoint: "POST /druid/indexer/v1/taskStatus",
      route: "POST /druid/indexer/v1/taskStatus",
      status: 200,
    });
    expect(m.since).toBeNull();
  });

  it("ids in a path do not split a family, and a family no longer tried stops counting", async () => {
    const c = clock();
    const m = new OutageMonitor(c, 60_000);
    m.record(fail("GET /druid/indexer/v1/task/a_1/status"));
    m.record({
      reachable: true,
      endpoint: "GET /druid/indexer/v1/task/b_2/status",
      route: "GET /druid/indexer/v1/task/b_2/status",
      status: 200,
    });
    expect(m.since).toBeNull();
    m.record(fail("GET /druid/coordinator/v1/datasources/wiki"));
    await c.advance(61_000);
    expect(m.since).toBeNull();
  });
});
