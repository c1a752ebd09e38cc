/**
 * Throughput of several `segops serve` hosts against one (docs/operations.md, "Several hosts on one PostgreSQL ledger"): the same 500-partition
 * daily backfill, created through the API, run to the end by 1 and by 4 serve processes sharing one
 * PostgreSQL ledger (a throwaway cluster with fsync on), against the emulator in this process. Measured from
 * the POST to the last partition done, in partitions per second, with what explains the ratio: the
 * emulator's slots in use, the hosts' CPU time, and PostgreSQL's commits, rollbacks and lock waits.
 *
 * Two clusters: "Druid-bound" (16 slots, 500 ms tasks: at most 32 partitions/s whatever segops does) and
 * "segops-bound" (256 slots, 20 ms tasks: Druid is never the limit, so the figure is segops' and its ledger's).
 * Each host runs with the same flags (`--max-concurrency 16`), so 4 hosts may hold 4× as many partitions.
 *
 *   node --import tsx bench/hosts.ts [--partitions 500] [--hosts 1,4] [--rounds 1] [--json]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import pg from "pg";
import { openStore } from "../src/ledger/open.js";
import { type SimHandle, startSim } from "../src/sim/server.js";
import { type CliRun, runCli, until } from "../test/helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../test/helpers/dataset.js";
import { startPostgres } from "../test/helpers/postgres.js";
import { procAvailable, sampleProc } from "./lib/proc.js";

interface Cluster {
  name: string;
  capacity: number;
  baseDurationMs: number;
  handoffDelayMs: number;
}

const CLUSTERS: Cluster[] = [
  { name: "Druid-bound", capacity: 16, baseDurationMs: 500, handoffDelayMs: 50 },
  { name: "segops-bound", capacity: 256, baseDurationMs: 20, handoffDelayMs: 10 },
];

interface Row {
  cluster: string;
  hosts: number;
  partitions: number;
  wallS: number;
  perSecond: number;
  /** Mean Druid tasks running on a slot (from the emulator's task lifetimes) over the run, and its slots. */
  meanInFlight: number;
  capacity: number;
  /** CPU seconds of all hosts together, and per partition. */
  hostCpuS: number;
  cpuMsPerPartition: number;
  /** CPU seconds of this process (the emulator, and the bench's own polling of the ledger). */
  emulatorCpuS: number;
  /** The machine's CPUs busy over the run (from /proc/stat: every process, this run's and others'). */
  machineBusy: number;
  /** PostgreSQL over the run: transactions committed and rolled back, and lock waits seen by sampling. */
  commits: number;
  rollbacks: number;
  lockWaitSamples: number;
  accepted: number;
  duplicates: number;
}

async function startHost(ledger: string, druid: string): Promise<{ run: CliRun; url: string }> {
  const run = runCli([
    "serve",
    "--port",
    "0",
    "--ledger",
    ledger,
    "--druid",
    druid,
    "--max-concurrency",
    "16",
    "--tick",
    "50",
    "--log-level",
    "warn",
  ]);
  let url = "";
  await until(
    "the service listens",
    () => {
      url = /listening on (\S+)/.exec(run.output().stderr)?.[1] ?? "";
      return url !== "";
    },
    { timeoutMs: 120_000, whileRunning: run },
  );
  return { run, url };
}

/** Busy and total jiffies of all CPUs (/proc/stat's first line). */
function cpuTimes(): { busy: number; total: number } {
  const fields =
    readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

async function dbStats(admin: pg.Client): Promise<{ commits: number; rollbacks: number }> {
  const r = await admin.query(
    "SELECT xact_commit::bigint AS c, xact_rollback::bigint AS r FROM pg_stat_database WHERE datname = 'postgres'",
  );
  return { commits: Number(r.rows[0].c), rollbacks: Number(r.rows[0].r) };
}

async function measure(options: {
  cluster: Cluster;
  hosts: number;
  partitions: number;
  pgUrl: string;
  schema: string;
  admin: pg.Client;
}): Promise<Row> {
  const { cluster, partitions, admin } = options;
  const sim: SimHandle = await startSim({
    timeScale: 1,
    capacity: cluster.capacity,
    baseDurationMs: cluster.baseDurationMs,
    handoffDelayMs: cluster.handoffDelayMs,
    perRowMs: 0,
    seed: 41,
  });
  const work = mkdtempSync(join(tmpdir(), "segops-bench-hosts-"));
  const hosts: Array<{ run: CliRun; url: string }> = [];
  try {
    const ledger = `${options.pgUrl}?schema=${options.schema}`;
    for (let i = 0; i < options.hosts; i++) hosts.push(await startHost(ledger, sim.url));
    const dataDir = writeDailyDataset({
      from: "2024-01-01",
      days: partitions,
      rowsPerDay: 2,
      dir: join(work, "data"),
    });
    const to = new Date(Date.UTC(2024, 0, 1) + partitions * 86_400_000).toISOString().slice(0, 10);
    const cpu0 = hosts.map((h) =>
      procAvailable(h.run.child.pid as number) ? sampleProc(h.run.child.pid as number).cpuMs : 0,
    );
    const db0 = await dbStats(admin);
    const self0 = process.cpuUsage();
    const machine0 = cpuTimes();
    const t0 = performance.now();
    const startedAt = Date.now();
    const res = await fetch(`${(hosts[0] as { url: string }).url}/api/v1/backfills`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        template: dailyTemplate({ datasource: "bench_hosts" }),
        from: "2024-01-01",
        to,
        vars: { dataDir },
      }),
    });
    if (res.status !== 201) throw new Error(`POST /api/v1/backfills: ${res.status} ${await res.text()}`);
    const jobId = ((await res.json()) as { id: string }).id;
    const store = await openStore(ledger);
    let lockWaitSamples = 0;
    try {
      await until(
        `${partitions} partitions done`,
        async () => {
          const waits = await admin.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
          );
          lockWaitSamples += Number(waits.rows[0].n);
          return ((await store.countTasks(jobId)).done ?? 0) === partitions;
        },
        { timeoutMs: 1_800_000 },
      );
    } finally {
      await store.close();
    }
    const wallMs = performance.now() - t0;
    const endedAt = Date.now();
    const db1 = await dbStats(admin);
    const self1 = process.cpuUsage(self0);
    const machine1 = cpuTimes();
    const cpu1 = hosts.map((h) =>
      procAvailable(h.run.child.pid as number) ? sampleProc(h.run.child.pid as number).cpuMs : 0,
    );
    const hostCpuMs = cpu1.reduce((a, b, i) => a + b - (cpu0[i] ?? 0), 0);
    // Mean in flight: the sum of the tasks' lifetimes (submitted → finished) over the run's wall time.
    sim.engine.sync();
    let busy = 0;
    for (const t of sim.engine.tasks.values()) {
      const end = t.finishedAt ?? endedAt;
      if (t.startedAt !== null)
        busy += Math.max(0, Math.min(end, endedAt) - Math.max(t.startedAt, startedAt));
    }
    const accepted = sim.stats().submissions.filter((s) => s.accepted && s.id);
    return {
      cluster: cluster.name,
      hosts: options.hosts,
      partitions,
      wallS: wallMs / 1000,
      perSecond: partitions / (wallMs / 1000),
      meanInFlight: busy / (endedAt - startedAt),
      capacity: cluster.capacity,
      hostCpuS: hostCpuMs / 1000,
      cpuMsPerPartition: hostCpuMs / partitions,
      emulatorCpuS: (self1.user + self1.system) / 1e6,
      machineBusy: (machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total),
      commits: db1.commits - db0.commits,
      rollbacks: db1.rollbacks - db0.rollbacks,
      lockWaitSamples,
      accepted: accepted.length,
      duplicates: accepted.length - new Set(accepted.map((s) => s.id)).size,
    };
  } finally {
    for (const h of hosts) h.run.child.kill("SIGTERM");
    await Promise.all(hosts.map((h) => h.run.done));
    await sim.close();
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      partitions: { type: "string", default: "500" },
      hosts: { type: "string", default: "1,4" },
      rounds: { type: "string", default: "1" },
      json: { type: "boolean", default: false },
    },
  });
  const partitions = Number(values.partitions);
  const counts = String(values.hosts).split(",").map(Number);
  const rounds = Number(values.rounds);
  const pgServer = await startPostgres({ durable: true });
  const admin = new pg.Client({ connectionString: pgServer.url });
  await admin.connect();
  const rows: Row[] = [];
  const load: number[][] = [];
  try {
    let n = 0;
    for (const cluster of CLUSTERS)
      for (let round = 0; round < rounds; round++)
        for (const hosts of counts) {
          const row = await measure({
            cluster,
            hosts,
            partitions,
            pgUrl: pgServer.url,
            schema: `bench_hosts_${++n}`,
            admin,
          });
          load.push(loadavg());
          rows.push(row);
          process.stderr.write(`${JSON.stringify({ ...row, loadavg: loadavg() })}\n`);
        }
  } finally {
    await admin.end();
    await pgServer.stop();
  }
  const f = (x: number, d = 1) => x.toFixed(d);
  const lines = [
    `${partitions} partitions, ${availableParallelism()} cores, load average after each run: ${load.map((l) => l.map((x) => x.toFixed(2)).join(" ")).join(" · ")}`,
    "",
    "| cluster | hosts | wall (s) | partitions/s | Druid slots busy (mean / slots) | host CPU (s) | CPU ms / partition | emulator CPU (s) | machine busy | PG commits | PG rollbacks | lock-wait samples | accepted (dupl.) |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map(
      (r) =>
        `| ${r.cluster} | ${r.hosts} | ${f(r.wallS)} | ${f(r.perSecond)} | ${f(r.meanInFlight)} / ${r.capacity} | ${f(r.hostCpuS)} | ${f(r.cpuMsPerPartition)} | ${f(r.emulatorCpuS)} | ${(r.machineBusy * 100).toFixed(0)} % | ${r.commits} | ${r.rollbacks} | ${r.lockWaitSamples} | ${r.accepted} (${r.duplicates}) |`,
    ),
  ];
  for (const cluster of CLUSTERS) {
    const of = (h: number) => rows.filter((r) => r.cluster === cluster.name && r.hosts === h);
    const mean = (rs: Row[]) => rs.reduce((a, r) => a + r.perSecond, 0) / Math.max(1, rs.length);
    const [one, many] = [of(Math.min(...counts)), of(Math.max(...counts))];
    if (one.length && many.length)
      lines.push(
        "",
        `${cluster.name}: ${Math.max(...counts)} hosts / ${Math.min(...counts)} = ${(mean(many) / mean(one)).toFixed(2)}×`,
      );
  }
  process.stdout.write(values.json ? `${JSON.stringify({ rows, load })}\n` : `${lines.join("\n")}\n`);
  if (rows.some((r) => r.duplicates > 0 || r.accepted !== r.partitions)) process.exitCode = 1;
}

await main();
