import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTaskId } from "../../src/core/task-id.js";
import { openStore } from "../../src/ledger/open.js";
import { isActive } from "../../src/sim/engine.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { type CliRun, runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { type RestartablePostgres, startRestartablePostgres } from "./pg-restart-cluster.js";

/**
 * The PostgreSQL server itself restarted under running `segops serve` hosts: three hosts share one ledger on a cluster of this test's own (initdb on a temp dir, its own
 * port: restarting a server other tests use would break them); mid-run the server is stopped (`pg_ctl stop
 * -m fast`: every session terminated), kept down past every lease, and started again. The hosts wait the
 * outage out (the worker's `ledgerOutageMs`), and the job still ends with every partition done exactly
 * once: one accepted submission per partition in the emulator's log, no partition with two successful
 * Druid tasks, one live version per chunk, the one the ledger recorded.
 */

const PARTITIONS = 120;
const LEASE_MS = 3000;
const DS = "pg_restart";

let pg: RestartablePostgres;
let sim: SimHandle;
const hosts: CliRun[] = [];

beforeAll(async () => {
  pg = await startRestartablePostgres();
  // Real time: one-second tasks, 12 slots for three hosts of 4 (at least 10 s for the job: time for every
  // host to claim work on a loaded machine before the stop).
  sim = await startSim({
    timeScale: 1,
    capacity: 12,
    handoffDelayMs: 50,
    baseDurationMs: 1000,
    perRowMs: 0,
    seed: 31,
  });
}, 120_000);
afterAll(async () => {
  for (const h of hosts) if (!h.exited) h.child.kill("SIGKILL");
  await Promise.all(hosts.map((h) => h.done));
  await sim?.close();
  await pg?.destroy();
});

interface Host {
  run: CliRun;
  url: string;
  owner: string;
}

async function startHost(ledger: string): Promise<Host> {
  const run = runCli([
    "serve",
    "--port",
    "0",
    "--ledger",
    ledger,
    "--druid",
    sim.url,
    "--max-concurrency",
    "4",
    "--tick",
    "50",
    "--lease",
    String(LEASE_MS),
    "--log-level",
    "warn",
  ]);
  hosts.push(run);
  let match: RegExpExecArray | null = null;
  await until(
    "the service listens",
    () => {
      match = /listening on (\S+) \(owner (\S+)\)/.exec(run.output().stderr);
      return match !== null;
    },
    { timeoutMs: 90_000, whileRunning: run },
  );
  const [, url, owner] = match as unknown as [string, string, string];
  return { run, url, owner };
}

/** JSON log lines of a host (pino on stdout) whose message is `msg`. */
function logged(host: Host, msg: string): number {
  return host.run
    .output()
    .stdout.split("\n")
    .filter((line) => line.includes(`"msg":"${msg}`)).length;
}

describe("segops serve: the PostgreSQL server restarted under running hosts", () => {
  it(`three hosts, ${PARTITIONS} partitions, PostgreSQL stopped past every lease and started again: the hosts wait it out, every partition done exactly once`, async () => {
    const ledger = `${pg.url}?schema=restart`;
    const all = await Promise.all([startHost(ledger), startHost(ledger), startHost(ledger)]);
    const [a] = all as [Host, Host, Host];

    const work = mkdtempSync(join(tmpdir(), "segops-pg-restart-"));
    const dataDir = writeDailyDataset({
      from: "2025-01-01",
      days: PARTITIONS,
      rowsPerDay: 4,
      dir: join(work, "data"),
    });
    const to = new Date(Date.UTC(2025, 0, 1) + PARTITIONS * 86_400_000).toISOString().slice(0, 10);
    const res = await fetch(`${a.url}/api/v1/backfills`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        template: dailyTemplate({ datasource: DS }),
        from: "2025-01-01",
        to,
        vars: { dataDir },
      }),
    });
    expect(res.status).toBe(201);
    const jobId = ((await res.json()) as { id: string }).id;

    // Mid-run: every host holds running partitions and some are done.
    let store = await openStore(ledger);
    try {
      await until(
        "every host has claimed partitions, 20 are done and some are running",
        async () => {
          const tasks = await store.listTasks(jobId);
          const done = tasks.filter((t) => t.state === "done").length;
          const running = tasks.filter((t) => t.state === "running").length;
          // The stop must come mid-run: past three quarters of the job, this run missed its point.
          if (done > (PARTITIONS * 3) / 4)
            throw new Error(`${done} partitions done before every host had claimed work and some ran`);
          const actors = new Set((await store.listEvents({ jobId, limit: 100_000 })).map((e) => e.actor));
          return all.every((h) => actors.has(h.owner)) && done >= 20 && running >= 4;
        },
        { timeoutMs: 300_000 },
      );
    } finally {
      await store.close();
    }

    // The server goes away: every session terminated, no new one accepted.
    await pg.stopServer();
    const stoppedAt = Date.now();
    expect(await pg.isReady()).toBe(false);
    for (const h of all) {
      await until(
        `host ${h.owner} says the ledger does not answer`,
        () => logged(h, "the ledger does not answer") > 0,
        {
          timeoutMs: 120_000,
          whileRunning: h.run,
        },
      );
    }
    // Down for longer than any lease (so every partition held at the stop is another host's to take over
    // once the server is back) and until Druid has finished what was submitted before: its tasks go on.
    await until(
      "the outage outlasts every lease and Druid's running tasks end",
      () => {
        sim.engine.sync();
        return Date.now() > stoppedAt + 2 * LEASE_MS && ![...sim.engine.tasks.values()].some(isActive);
      },
      { timeoutMs: 120_000 },
    );
    await pg.startServer();
    for (const h of all) {
      await until(`host ${h.owner} claims work again`, () => logged(h, "the ledger answers again") > 0, {
        timeoutMs: 120_000,
        whileRunning: h.run,
      });
    }

    store = await openStore(ledger);
    try {
      await until(
        `all ${PARTITIONS} partitions done`,
        async () => ((await store.countTasks(jobId)).done ?? 0) === PARTITIONS,
        { timeoutMs: 300_000 },
      );
      // Every host rode the outage out: none exited.
      for (const h of all) expect(h.run.exited, h.run.exited?.stderr.slice(-3000)).toBeNull();
      await until("the job is settled done", async () => (await store.getJob(jobId))?.state === "done", {
        timeoutMs: 60_000,
      });

      // Druid's side: one accepted submission per partition, each id once, no partition with two successes.
      const accepted = sim.stats().submissions.filter((s) => s.accepted && s.id?.includes(DS));
      const ids = accepted.map((s) => s.id as string);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(PARTITIONS);
      const successesBySlug = new Map<string, number>();
      for (const id of ids) {
        const slug = parseTaskId(id)?.slug;
        expect(slug, id).toBeDefined();
        if (sim.engine.tasks.get(id)?.phase === "success")
          successesBySlug.set(slug as string, (successesBySlug.get(slug as string) ?? 0) + 1);
      }
      expect([...successesBySlug.values()].filter((n) => n > 1)).toEqual([]);
      expect(successesBySlug.size).toBe(PARTITIONS);

      // One live version per chunk, the one the ledger recorded, served.
      sim.engine.sync();
      const visible = sim.engine.store.visible(DS, sim.engine.now);
      const tasks = await store.listTasks(jobId);
      expect(tasks).toHaveLength(PARTITIONS);
      for (const t of tasks) {
        const [startText, endText] = (t.payload as { interval: string }).interval.split("/");
        const start = Date.parse(startText ?? "");
        const end = Date.parse(endText ?? "");
        const inChunk = visible.filter((s) => s.interval.start >= start && s.interval.end <= end);
        const versions = [...new Set(inChunk.map((s) => s.version))];
        expect(versions, t.id).toEqual([(t.progress as { version?: string }).version]);
        expect(
          inChunk.every((s) => sim.engine.isServed(s)),
          t.id,
        ).toBe(true);
      }
      // The outage was real: each partition held at the stop was claimed again after its lease ran out.
      // (Held at the stop: the last event committed before it left the partition running.)
      const events = await store.listEvents({ jobId, limit: 100_000 });
      const lastBefore = new Map<string, string>();
      for (const e of [...events].sort((x, y) => x.id - y.id))
        if (e.taskId !== null && e.at <= stoppedAt) lastBefore.set(e.taskId, e.toState);
      const heldAtStop = tasks.filter((t) => lastBefore.get(t.id) === "running");
      expect(heldAtStop.length).toBeGreaterThan(0);
      for (const t of heldAtStop) {
        const reclaimed = events.find(
          (e) => e.taskId === t.id && e.at > stoppedAt && e.reason.startsWith("claimed after the lease"),
        );
        expect(reclaimed, t.id).toBeDefined();
      }
      // And every host's API answers from the ledger again.
      for (const h of all) {
        const r = await fetch(`${h.url}/api/v1/jobs/${encodeURIComponent(jobId)}`);
        expect(r.status).toBe(200);
        expect(((await r.json()) as { state: string }).state).toBe("done");
      }
    } finally {
      await store.close();
    }
  }, 600_000);
});
