/**
 * Long-poll waiters on one `segops serve`: what 1,000 clients parked on `GET /api/v1/jobs/{id}/wait` cost
 * the service (CPU while they wait, resident memory) and how soon each is answered once its job ends,
 * against the same service with no clients and with the same number of clients polling
 * `GET /api/v1/jobs/{id}` every second instead.
 *
 * The service is the compiled CLI (`node dist/cli/bin.js serve`) in its own process, on a SQLite ledger
 * and the emulator (which runs in this process, with the clients). Its CPU time and memory are read from
 * outside, through /proc/PID/stat (utime + stime, all threads) and /proc/PID/status (VmRSS, VmHWM); its
 * live heap after a full GC comes from a one-line preload that answers SIGUSR2 (RSS alone swings by tens
 * of MiB with the GC). Each service measures a window with no clients first, then one with them.
 *
 *   node --import tsx bench/serve-waiters.ts [--clients 1000] [--jobs 10] [--days 3] [--window 15] [--no-build]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { Agent, Client, request } from "undici";
import { DEFAULTS } from "../src/core/defaults.js";
import { startSim } from "../src/sim/server.js";
import { dailyTemplate, writeDailyDataset } from "../test/helpers/dataset.js";
import { buildOnce } from "./lib/build.js";
import { openFileLimit, procAvailable, sampleProc } from "./lib/proc.js";
import { type BenchResult, Checks } from "./lib/result.js";
import { simTime } from "./lib/sim-time.js";
import { quantile } from "./lib/stats.js";
import { markdownTable, num } from "./lib/table.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const BIN = join(root, "dist/cli/bin.js");

export interface ServeWaitersBenchOptions {
  /** Concurrent clients (waiters, or pollers in the polling baseline). @default 1000 */
  clients?: number;
  /** Backfill jobs the clients are spread over. @default 10 */
  jobs?: number;
  /** Partitions (days) per job. @default 3 */
  days?: number;
  /** Measurement window while the clients wait, ms. @default 10000 */
  windowMs?: number;
  /** The polling baseline's interval (sleep after each answer), ms. @default 1000 */
  pollEveryMs?: number;
  /** Sim ms per real ms once the jobs are let run. @default 20 */
  timeScale?: number;
  /** Compile `dist/` first, so the service is the current source. @default true */
  build?: boolean;
}

type Mode = "long-poll" | "polling";

/** One measurement window of the service (no client arrives or leaves in it). */
interface Window {
  cpuMs: number;
  wallMs: number;
  /** Median and largest of the RSS samples taken every 250 ms through the window. */
  rss: number;
  rssMax: number;
  /** VmHWM at the window's end. */
  hwm: number;
  threads: number;
  fds: number;
  /** Requests the clients sent inside the window. */
  requests: number;
  /** The service's live heap after a full GC at the window's end: V8 heap used + external (buffers). */
  live: number;
}

/** One service process: a window with no clients, then one with the clients parked or polling. */
interface Run {
  mode: Mode;
  name: string;
  clients: number;
  idle: Window;
  loaded: Window;
  /** Parking the clients (first request sent → the service's gauge shows them all). */
  parkMs: number;
  parkCpuMs: number;
  /** Per client: its job's end (the job's `done` event) → the client had the answer. */
  latencies: number[];
  /** Per job: its first client's latency (one sample a job: how long the end took to reach the service's clients). */
  firstByJob: number[];
  /** Per job: last client's answer − first client's (fanning the answer out to all of its clients). */
  spreadByJob: number[];
  /** Clients answered before their job could end (sim time still frozen). */
  early: number;
  errors: string[];
  /** Jobs that ended, of all. */
  jobsEnded: number;
  jobs: number;
  /** What the service wrote on stderr, with the phase it wrote it in. */
  stderr: Array<{ phase: Phase; line: string }>;
  warnLogs: string[];
}

type Phase = "setup" | "idle" | "clients" | "ending";

const FROM = "2026-01-01";
const DAY_MS = 86_400_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
): Promise<void> {
  const giveUp = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > giveUp) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

interface ServeChild {
  pid: number;
  url: string;
  /** The phase stderr lines are tagged with (set by the caller as it goes). */
  phase: Phase;
  stderr: Array<{ phase: Phase; line: string }>;
  warnLogs: string[];
  heapReports: NodeJS.MemoryUsage[];
  /** SIGTERM (the service drains), resolves with the exit code. */
  stop(): Promise<number | null>;
}

async function startServe(druidUrl: string, ledgerUrl: string): Promise<ServeChild> {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("SEGOPS_")) delete env[key];
  // One preloaded line, inert until asked: on SIGUSR2 the service runs a full GC and reports its live heap
  // on stderr (RSS alone moves by tens of MiB with the GC's rhythm). Nothing else of the process changes.
  const child = spawn(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      HEAP_REPORTER,
      BIN,
      "serve",
      "--port",
      "0",
      "--druid",
      druidUrl,
      "--ledger",
      ledgerUrl,
      "--log-level",
      "info",
    ],
    { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  // Should this process end abruptly (an exception, Ctrl-C), the service must not outlive it.
  const orphaned = () => child.kill("SIGKILL");
  process.once("exit", orphaned);
  const exited = new Promise<number | null>((resolve) =>
    child.on("close", (code) => {
      process.off("exit", orphaned);
      resolve(code);
    }),
  );
  const handle: ServeChild = {
    pid: child.pid as number,
    url: "",
    phase: "setup",
    stderr: [],
    warnLogs: [],
    heapReports: [],
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
  let pending = "";
  // stdout is the JSON log (one line per request and per state change, as in production): read it, since
  // a full pipe would stall the service, and keep the warn+ lines.
  child.stdout?.on("data", (d: Buffer) => {
    const lines = (pending + d.toString()).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (/"level":(4|5|6)\d/.test(line)) handle.warnLogs.push(line.slice(0, 300));
  });
  handle.url = await new Promise<string>((resolve, reject) => {
    let err = "";
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      const lines = err.split("\n");
      err = lines.pop() ?? "";
      for (const line of lines) {
        const listening = /listening on (\S+)/.exec(line);
        const heap = /^bench-heap (.*)$/.exec(line);
        if (heap) handle.heapReports.push(JSON.parse(heap[1] as string));
        else if (listening) resolve(listening[1] as string);
        else if (line.trim() !== "") handle.stderr.push({ phase: handle.phase, line });
      }
    });
    child.on("error", reject);
    void exited.then((code) =>
      reject(new Error(`segops serve exited ${code}: ${handle.stderr.map((l) => l.line).join(" | ")}`)),
    );
  });
  return handle;
}

// biome-ignore lint/suspicious/noExplicitAny: the API's JSON bodies, read field by field
type Json = any;

async function api(
  url: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${url}${path}`, init);
  const text = await res.text();
  return { status: res.status, json: text === "" ? undefined : JSON.parse(text) };
}

async function waitersGauge(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^segops_waiters (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
}

const HEAP_REPORTER =
  'data:text/javascript,process.on("SIGUSR2",()=>{globalThis.gc();const m=process.memoryUsage();process.stderr.write("bench-heap "+JSON.stringify(m)+"\\n")})';

/** Asks the service for its live heap after a full GC (see HEAP_REPORTER). */
async function liveHeap(serve: ServeChild): Promise<NodeJS.MemoryUsage> {
  const seen = serve.heapReports.length;
  process.kill(serve.pid, "SIGUSR2");
  await until("the service's heap report", () => serve.heapReports.length > seen, 10_000);
  return serve.heapReports[seen] as NodeJS.MemoryUsage;
}

const ended = (state: unknown) => state === "done" || state === "failed";

/** The instant each job ended: its job-level event to done (or failed), as the ledger committed it. */
async function jobEnds(url: string, ids: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const id of ids) {
    let after = 0;
    for (;;) {
      const page = await api(url, `/api/v1/jobs/${id}/events?after=${after}&limit=1000`);
      for (const e of page.json.items as Array<{ taskId: string | null; toState: string; at: string }>)
        if (e.taskId === null && ended(e.toState)) out.set(id, Date.parse(e.at));
      if (page.json.items.length < 1000) break;
      after = page.json.next;
    }
  }
  return out;
}

/** CPU time and memory of process `pid` over `windowMs`; `requests()` counts what the clients sent. */
async function measureWindow(serve: ServeChild, windowMs: number, requests: () => number): Promise<Window> {
  const pid = serve.pid;
  const w0 = sampleProc(pid);
  const r0 = requests();
  const t0 = performance.now();
  // RSS moves by tens of MiB with the heap's GC cycles: sample it through the window, report the median.
  const rss: number[] = [];
  while (performance.now() - t0 < windowMs - 10) {
    await sleep(Math.min(250, Math.max(0, windowMs - (performance.now() - t0))));
    rss.push(sampleProc(pid).rssBytes);
  }
  const w1 = sampleProc(pid);
  const wallMs = performance.now() - t0;
  const heap = await liveHeap(serve);
  return {
    cpuMs: w1.cpuMs - w0.cpuMs,
    wallMs,
    rss: quantile(rss, 0.5),
    rssMax: Math.max(...rss),
    hwm: w1.hwmBytes,
    threads: w1.threads,
    fds: w1.fds,
    requests: requests() - r0,
    live: heap.heapUsed + heap.external,
  };
}

type Settings = Required<Omit<ServeWaitersBenchOptions, "build">>;

async function runService(mode: Mode, o: Settings, dataDir: string): Promise<Run> {
  const clients = o.clients;
  const dir = mkdtempSync(join(tmpdir(), "segops-bench-serve-"));
  const time = simTime(o.timeScale);
  // Sim time stands still until both windows are measured: the partitions the service submits stay
  // running, so every client waits on an open job however long parking them takes.
  time.pause();
  const sim = await startSim({ clock: time.clock, capacity: 32, workers: 1, handoffDelayMs: 5000, seed: 12 });
  const serve = await startServe(sim.url, `sqlite:${join(dir, "ledger.db")}`);
  const agent = new Agent({
    connections: clients + 16,
    pipelining: 1,
    headersTimeout: 0,
    bodyTimeout: 0,
    connectTimeout: 60_000,
    keepAliveTimeout: 30_000,
  });
  const errors: string[] = [];
  const began = performance.now();
  const step = (what: string) =>
    process.stderr.write(`    ${mode}: ${what} at ${num((performance.now() - began) / 1000, 1)} s\n`);
  let stopPolling = false;
  let pollers: Client[] = [];
  let stoppedCode: number | null = null;
  try {
    const ids: string[] = [];
    for (let j = 0; j < o.jobs; j++) {
      const res = await api(serve.url, "/api/v1/backfills", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          template: dailyTemplate({ datasource: `waiters_${j}` }),
          from: `${FROM}T00:00:00Z`,
          to: new Date(Date.parse(`${FROM}T00:00:00Z`) + o.days * DAY_MS).toISOString(),
          vars: { dataDir },
        }),
      });
      if (res.status !== 201)
        throw new Error(`POST /api/v1/backfills: ${res.status} ${JSON.stringify(res.json)}`);
      ids.push(res.json.id as string);
    }
    // The worker has taken as many partitions as it runs at once, and settles (JIT, first GCs).
    const inFlight = Math.min(DEFAULTS.maxConcurrency, o.jobs * o.days);
    await until(
      `${inFlight} submissions`,
      () => sim.stats().submissions.filter((s) => s.accepted).length >= inFlight,
      30_000,
    );
    await sleep(3000);
    step("partitions submitted and running");

    let requests = 0;
    serve.phase = "idle";
    const idle = await measureWindow(serve, o.windowMs, () => requests);
    step("window without clients measured");

    serve.phase = "clients";
    const answeredAt = new Array<number>(clients).fill(Number.NaN);
    const jobOf = (i: number) => ids[i % ids.length] as string;
    let resumed = false;
    let early = 0;
    const parkStart = sampleProc(serve.pid);
    const parkT0 = performance.now();
    let done: Promise<unknown>;
    if (mode === "long-poll") {
      done = Promise.all(
        Array.from({ length: clients }, async (_, i) => {
          try {
            requests++;
            const res = await request(`${serve.url}/api/v1/jobs/${jobOf(i)}/wait?timeout=300`, {
              dispatcher: agent,
            });
            const body = (await res.body.json()) as { ended?: boolean };
            answeredAt[i] = Date.now();
            if (!resumed) early++;
            if (res.statusCode !== 200 || body.ended !== true)
              errors.push(`waiter ${i}: ${res.statusCode} ${JSON.stringify(body).slice(0, 120)}`);
          } catch (error) {
            errors.push(`waiter ${i}: ${(error as Error).message}`);
          }
        }),
      );
      await until(
        `${clients} waiters parked`,
        async () => (await waitersGauge(serve.url)) >= clients,
        120_000,
      );
    } else {
      // One keep-alive connection per poller, as independent clients hold (the service keeps an idle
      // connection 5 s, longer than the interval); a shared pool would serve them all with a few dozen.
      pollers = Array.from(
        { length: clients },
        () => new Client(serve.url, { pipelining: 1, keepAliveTimeout: 30_000 }),
      );
      done = Promise.all(
        Array.from({ length: clients }, async (_, i) => {
          const own = pollers[i] as Client;
          // Spread over one interval, as independent clients would be.
          await sleep((i * o.pollEveryMs) / clients);
          while (!stopPolling) {
            try {
              requests++;
              const res = await own.request({ method: "GET", path: `/api/v1/jobs/${jobOf(i)}` });
              const body = (await res.body.json()) as { state?: string };
              if (res.statusCode !== 200) errors.push(`poller ${i}: ${res.statusCode}`);
              if (ended(body.state)) {
                answeredAt[i] = Date.now();
                if (!resumed) early++;
                return;
              }
            } catch (error) {
              errors.push(`poller ${i}: ${(error as Error).message}`);
              if (errors.length > 50) return;
            }
            await sleep(o.pollEveryMs);
          }
        }),
      );
    }
    const parkMs = performance.now() - parkT0;
    const parkCpuMs = sampleProc(serve.pid).cpuMs - parkStart.cpuMs;
    step("clients parked or polling");
    // Let the clients' arrival (and its garbage) settle out of the window; pollers reach steady state.
    await sleep(3000);
    const loaded = await measureWindow(serve, o.windowMs, () => requests);
    step("window with clients measured");

    // Now let the jobs run to their end; every client is answered (or sees it) as soon as it can.
    serve.phase = "ending";
    resumed = true;
    time.resume();
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      done,
      new Promise<void>((resolve) => {
        bound = setTimeout(() => {
          errors.push("clients not answered within 180 s of the jobs running");
          resolve();
        }, 180_000);
      }),
    ]);
    clearTimeout(bound);
    stopPolling = true;
    step("jobs ended, clients answered");
    const ends = await jobEnds(serve.url, ids);
    const latencies: number[] = [];
    const byJob = new Map<string, number[]>();
    for (let i = 0; i < clients; i++) {
      const end = ends.get(jobOf(i));
      if (end === undefined || !Number.isFinite(answeredAt[i])) continue;
      const l = (answeredAt[i] as number) - end;
      latencies.push(l);
      byJob.set(jobOf(i), [...(byJob.get(jobOf(i)) ?? []), l]);
    }
    // Per job: its first client's latency, and how long answering all of its clients took after that.
    const firstByJob = [...byJob.values()].map((ls) => Math.min(...ls));
    const spreadByJob = [...byJob.values()].map((ls) => Math.max(...ls) - Math.min(...ls));
    stoppedCode = await serve.stop();
    if (stoppedCode !== 0) errors.push(`segops serve exited ${stoppedCode} on SIGTERM`);
    return {
      mode,
      name:
        mode === "long-poll"
          ? `**${num(clients)} long-poll waiters** (\`/wait?timeout=300\`)`
          : `${num(clients)} clients polling \`GET /jobs/{id}\` every ${num(o.pollEveryMs / 1000)} s`,
      clients,
      idle,
      loaded,
      parkMs,
      parkCpuMs,
      latencies,
      firstByJob,
      spreadByJob,
      early,
      errors,
      jobsEnded: ends.size,
      jobs: ids.length,
      stderr: serve.stderr,
      warnLogs: serve.warnLogs,
    };
  } finally {
    stopPolling = true;
    if (stoppedCode === null) await serve.stop();
    await agent.close().catch(() => undefined);
    await Promise.all(pollers.map((c) => c.close().catch(() => undefined)));
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const mib = (bytes: number) => `${num(bytes / 1024 / 1024, 1)} MiB`;
const share = (w: Window) => w.cpuMs / w.wallMs;
const pct = (w: Window) => `${num(share(w) * 100, 1)} %`;
const ms = (value: number) => `${num(value, 0)} ms`;
const lat = (values: readonly number[]) =>
  values.length > 0
    ? `${ms(quantile(values, 0.5))} / ${ms(quantile(values, 0.99))} / ${ms(quantile(values, 1))}`
    : "–";

/** Where the one warning seen so far comes from (traced with `--trace-warnings --stack-trace-limit=60`). */
const HANDOFF_WARNING =
  "Traced to the handoff gate, not to serve: a flush of the handoff checker (src/work/tick-batcher.ts, `#run`) hands its long-lived stop signal to src/work/handoff.ts, which asks `DruidClient.servedSegments` for every datasource of the batch at once; undici adds one abort listener per request to that signal (and removes it when the response closes), so 10 or more datasources waiting for handoff in one tick cross Node's limit of 10. Not a leak, but a warning printed in production whenever a tick checks that many datasources (here: 10 backfills on 10 datasources).";

/** Node's warnings in what the service wrote on stderr. */
function warningsOf(run: Run): Array<{ phase: Phase; text: string }> {
  return run.stderr
    .filter((l) => /Warning:/.test(l.line))
    .map((l) => ({ phase: l.phase, text: l.line.replace(/^\(node:\d+\) /, "") }));
}

export async function runServeWaitersBench(options: ServeWaitersBenchOptions = {}): Promise<BenchResult> {
  const o: Settings = {
    clients: options.clients ?? 1000,
    jobs: options.jobs ?? 10,
    days: options.days ?? 3,
    windowMs: options.windowMs ?? 15_000,
    pollEveryMs: options.pollEveryMs ?? 1000,
    timeScale: options.timeScale ?? 20,
  };
  const checks = new Checks();
  const notes: string[] = [];
  const base = { title: "Long-poll waiters on one `segops serve`", setup: "", headline: [] };
  if (!procAvailable(process.pid))
    return {
      ...base,
      tables: [],
      notes: ["/proc is not available: this benchmark needs Linux."],
      problems: [],
    };
  const limit = openFileLimit();
  // Each side holds one socket per client (this process the client ends, the service the server ends).
  const needed = o.clients + 256;
  if (limit && limit.soft < needed)
    return {
      ...base,
      tables: [],
      notes: [],
      problems: [
        `the open-file limit is ${limit.soft} (hard ${limit.hard}); ${o.clients} clients need about ${needed}: run \`ulimit -n ${Math.min(limit.hard, 4 * needed)}\` first (the service inherits it)`,
      ],
    };
  if (options.build ?? true) {
    // The same build as the other benchmarks of this run (none when dist/ is of this source already).
    const error = await buildOnce();
    if (error) notes.push(`\`tsc -p tsconfig.build.json\` reported errors (dist/ emitted anyway): ${error}`);
  }
  const dataDir = writeDailyDataset({ from: FROM, days: o.days, rowsPerDay: 50 });
  const loadBefore = loadavg()[0] ?? 0;
  const runs: Run[] = [];
  try {
    for (const mode of ["long-poll", "polling"] as const) {
      process.stderr.write(`  serve-waiters: ${mode}…\n`);
      runs.push(await runService(mode, o, dataDir));
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const [long, poll] = runs as [Run, Run];

  const warned = new Map<string, Mode[]>();
  for (const r of runs) {
    checks.equal(r.jobsEnded, r.jobs, `${r.mode}: jobs ended`);
    checks.expect(r.errors.length === 0, `${r.mode}: ${r.errors.length} client errors, e.g. ${r.errors[0]}`);
    checks.equal(r.latencies.length, r.clients, `${r.mode}: clients that saw their job end`);
    checks.equal(r.early, 0, `${r.mode}: clients answered "ended" while sim time stood still`);
    for (const w of warningsOf(r)) {
      // A warning while the clients wait is theirs; one as the jobs end comes with the work of any service.
      if (w.phase === "clients")
        checks.expect(false, `${r.mode}: the service warned with the clients parked: ${w.text}`);
      else {
        const key = `${w.phase === "ending" ? "while the jobs ran to their end" : `in the ${w.phase} phase`}, not from the clients: ${w.text}`;
        warned.set(key, [...(warned.get(key) ?? []), r.mode]);
      }
    }
    const other = r.stderr.filter((l) => !/Warning:|--trace-warnings/.test(l.line));
    if (other.length > 0)
      notes.push(
        `${r.mode}: the service wrote on stderr: ${other
          .slice(0, 3)
          .map((l) => l.line)
          .join(" | ")}`,
      );
    if (r.warnLogs.length > 0)
      notes.push(`${r.mode}: ${r.warnLogs.length} warn+ log lines, e.g. \`${r.warnLogs[0]}\``);
  }
  for (const [text, modes] of warned)
    notes.push(
      `The service warned (${modes.join(" and ")} ${modes.length > 1 ? "runs" : "run"}) ${text}.${/MaxListenersExceeded/.test(text) ? ` ${HANDOFF_WARNING}` : ""}`,
    );
  checks.expect(
    long.latencies.every((l) => l >= 0),
    "long-poll: a waiter answered before its job's end was committed",
  );

  const rows: string[][] = [];
  for (const r of runs) {
    for (const [w, loaded] of [
      [r.idle, false],
      [r.loaded, true],
    ] as const) {
      rows.push([
        loaded ? r.name : `same service, no clients yet (${r.mode} run)`,
        pct(w),
        loaded ? `+${num((share(w) - share(r.idle)) * 100, 1)} pts` : "–",
        num(w.requests / (w.wallMs / 1000), 0),
        mib(w.rss),
        loaded ? mib(w.rss - r.idle.rss) : "–",
        mib(w.live),
        loaded ? mib(w.live - r.idle.live) : "–",
        mib(w.hwm),
        num(w.fds),
      ]);
    }
  }
  const costTable = markdownTable(
    [
      "service state",
      "service CPU (% of one core)",
      "added by the clients",
      "client requests / s",
      "RSS (median of the window)",
      "added",
      "live heap after a full GC",
      "added",
      "VmHWM",
      "open fds",
    ],
    rows,
  );
  const answerTable = markdownTable(
    [
      "clients",
      "parking them (wall, service CPU)",
      "job ended → client had it: p50 / p99 / max (all clients)",
      `first client of each job: median / max (${num(long.firstByJob.length)} jobs)`,
      "first → last client of a job: median / max",
    ],
    runs.map((r) => [
      r.name,
      r.mode === "long-poll" ? `${ms(r.parkMs)}, ${ms(r.parkCpuMs)} CPU` : "–",
      lat(r.latencies),
      `${ms(quantile(r.firstByJob, 0.5))} / ${ms(quantile(r.firstByJob, 1))}`,
      `${ms(quantile(r.spreadByJob, 0.5))} / ${ms(quantile(r.spreadByJob, 1))}`,
    ]),
  );
  const addedCpu = (r: Run) => share(r.loaded) - share(r.idle);
  const perWaiterKiB = (long.loaded.live - long.idle.live) / 1024 / Math.max(1, long.clients);
  const perWaiterRssKiB = (long.loaded.rss - long.idle.rss) / 1024 / Math.max(1, long.clients);
  notes.push(
    `Per parked waiter: ${num(perWaiterKiB, 1)} KiB of live heap (the difference after a full GC ÷ ${num(long.clients)}: the request, response and socket objects, signals, promise and timer it holds), ${num(perWaiterRssKiB, 1)} KiB of RSS. RSS is what the OS sees but moves by tens of MiB with the GC's rhythm: compare the two "no clients" rows, same code and state in two processes; the live heap is the stable figure. CPU added by ${num(long.clients)} parked waiters: ${num(addedCpu(long) * 100, 1)} points of a core, against ${num(addedCpu(poll) * 100, 1)} points for ${num(poll.clients)} clients polling every ${num(o.pollEveryMs / 1000)} s.`,
    `The latencies of all clients are ${num(long.firstByJob.length)} samples (one per job: its ${num(long.clients / Math.max(1, long.jobs))} clients are answered by one check), the first-client column shows them; the last column is what answering all clients of one job at once adds. A waiter's latency is at most one feed interval (${num(Math.max(50, Math.floor(DEFAULTS.tickMs / 4)))} ms) plus the check; where it falls below that depends on the phase between the worker's tick (which commits the end) and the feed's reads, which is much the same for every job of one run, so the median moves between runs (70 to 230 ms seen) while the bound holds.`,
    `Parking costs the service ${num(long.parkCpuMs / long.clients, 2)} ms of CPU per waiter, once (the request, and one job + partition-count read each, since a waiter's first check must follow its subscription); after that a parked waiter costs nothing per tick: the feed reads the ledger once per ${num(Math.max(50, Math.floor(DEFAULTS.tickMs / 4)))} ms whoever waits, and one job read answers all waiters of a job.`,
    `"Job ended" is the job's own event to \`done\` (the ledger's commit time, the service's clock); "had it" is this process's clock when the answer's body was read: the same machine's clock. A waiter waits for the service's change feed (one ledger read every ${num(Math.max(50, Math.floor(DEFAULTS.tickMs / 4)))} ms), a poller for its next poll.`,
    `Open-file limit ${limit ? `${limit.soft} (hard ${limit.hard})` : "unknown"}: ${num(o.clients)} connections need about ${num(needed)} on each side; the benchmark stops with a message when it is lower (raise it with \`ulimit -n\`).`,
    `Machine: Node ${process.version}, ${availableParallelism()} CPUs; 1-min load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? 0).toFixed(1)} after. The clients and the emulator run in this process and share the two cores with the service; CPU is utime + stime of the service process in ticks of 10 ms, so ±0.1 % over a ${num(o.windowMs / 1000)} s window, and the service's own background work moves it by about half a point between windows.`,
  );
  return {
    ...base,
    setup: [
      `One \`segops serve\` (compiled, \`node dist/cli/bin.js serve\`, default settings: worker tick ${num(DEFAULTS.tickMs)} ms, ${DEFAULTS.maxConcurrency} partitions in flight, info logging) in its own process, on a SQLite ledger and the emulator.`,
      `${o.jobs} backfills of ${o.days} daily partitions are created through \`POST /api/v1/backfills\`; sim time stands still until both windows are measured, so the ${Math.min(DEFAULTS.maxConcurrency, o.jobs * o.days)} partitions the service submits stay running and it does its ordinary work (status lookups, admission reads, change-feed reads) throughout.`,
      `The service's CPU time (utime + stime of all its threads, /proc/PID/stat) and resident memory (VmRSS every 250 ms, VmHWM, /proc/PID/status) are read from outside, and its live heap after a full GC at the end from a preloaded SIGUSR2 handler (\`--expose-gc\`), over a ${num(o.windowMs / 1000)} s window with no clients, then over another with ${num(o.clients)} clients (undici, ${num(o.clients + 16)} connections, one request each in flight) spread evenly over the jobs:`,
      `long-poll waiters (\`GET /api/v1/jobs/{id}/wait?timeout=300\`) in one service process, pollers of \`GET /api/v1/jobs/{id}\` (answer, sleep ${num(o.pollEveryMs / 1000)} s, again) in a second, fresh one with its own ledger and emulator.`,
      `Then sim time runs at ${o.timeScale}× and the jobs end; each client's latency is from its job's end to its answer.`,
    ].join(" "),
    tables: [costTable, answerTable],
    notes,
    headline: [
      [
        `${num(o.clients)} long-poll waiters on one \`serve\``,
        `${pct(long.loaded)} of a core while they wait (${pct(long.idle)} with none: +${num(addedCpu(long) * 100, 1)} pts); live heap +${mib(long.loaded.live - long.idle.live)} (${num(perWaiterKiB, 0)} KiB a waiter), RSS +${mib(long.loaded.rss - long.idle.rss)}; answered ${ms(quantile(long.latencies, 0.5))} p50 / ${ms(quantile(long.latencies, 0.99))} p99 after the job ended`,
        `${num(poll.clients)} clients polling every ${num(o.pollEveryMs / 1000)} s: ${pct(poll.loaded)} of a core (+${num(addedCpu(poll) * 100, 1)} pts), live heap +${mib(poll.loaded.live - poll.idle.live)}, RSS +${mib(poll.loaded.rss - poll.idle.rss)}; saw the end ${ms(quantile(poll.latencies, 0.5))} p50 / ${ms(quantile(poll.latencies, 0.99))} p99 after`,
      ],
    ],
    problems: checks.problems,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: {
      clients: { type: "string" },
      jobs: { type: "string" },
      days: { type: "string" },
      window: { type: "string" },
      "time-scale": { type: "string" },
      "no-build": { type: "boolean" },
    },
  });
  const result = await runServeWaitersBench({
    ...(values.clients ? { clients: Number(values.clients) } : {}),
    ...(values.jobs ? { jobs: Number(values.jobs) } : {}),
    ...(values.days ? { days: Number(values.days) } : {}),
    ...(values.window ? { windowMs: Number(values.window) * 1000 } : {}),
    ...(values["time-scale"] ? { timeScale: Number(values["time-scale"]) } : {}),
    ...(values["no-build"] ? { build: false } : {}),
  });
  console.log([result.setup, ...result.tables, result.notes.map((n) => `- ${n}`).join("\n")].join("\n\n"));
  for (const [a, b, c] of result.headline) console.log(`\n${a}: ${b} | ${c}`);
  if (result.problems.length > 0) {
    console.error(`\n${result.problems.length} correctness problem(s):\n${result.problems.join("\n")}`);
    process.exitCode = 1;
  }
}
