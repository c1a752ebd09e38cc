/**
 * Scale: 10,000 in-flight Druid tasks tracked by one compiled segops process, with the emulator
 * (`segops sim`) in a process of its own, through `segops poll` and through `segops backfill` with the
 * SQLite ledger; and a 100,000-partition backfill planned and created in the ledger.
 *
 * The measured process is read from outside (/proc: CPU time, VmRSS, VmHWM) and from a preload
 * (bench/lib/probe.mjs: event-loop busy time and longest delay per second, SQLite statements run).
 *
 *   node --import tsx bench/scale.ts [--quick] [--only poll|backfill|plan]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { parseInterval } from "../src/core/interval.js";
import { DruidClient, type TaskSpec } from "../src/druid/client.js";
import { planIngestJob } from "../src/ingest/plan.js";
import { openStore } from "../src/ledger/open.js";
import { buildOnce } from "./lib/build.js";
import { mapLimit } from "./lib/env.js";
import { type ProcSample, sampleProc } from "./lib/proc.js";
import { type BenchResult, Checks } from "./lib/result.js";
import { startSimProcess } from "./lib/sim-process.js";
import { quantile } from "./lib/stats.js";
import { markdownTable, num } from "./lib/table.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const BIN = join(root, "dist/cli/bin.js");
const PROBE = join(here, "lib/probe.mjs");
const MB = 1024 * 1024;

export interface ScaleBenchOptions {
  quick?: boolean;
  /** Tasks in flight through `segops poll`. @default 10000 */
  inFlight?: number;
  /**
   * Partitions in flight through `segops backfill` (SQLite). @default 10000 (tracking only, stopped by
   * its deadline; 2,000 or fewer run to the end and check every partition done).
   */
  backfillInFlight?: number;
  /** Partitions planned and created. @default 100000 */
  planned?: number;
  only?: Array<"poll" | "backfill" | "plan">;
}

interface ProbeLine {
  t: number;
  activeMs: number;
  idleMs: number;
  maxDelayMs: number;
  writes: number;
  reads: number;
  rss: number;
  heapUsed: number;
}

interface Timed {
  /** performance.now() of the sample. */
  at: number;
  proc: ProcSample;
}

interface Measured {
  /** performance.now() when the process was spawned: the origin of every window. */
  startedAt: number;
  code: number | null;
  wallMs: number;
  stdout: string;
  stderr: string;
  samples: Timed[];
  probe: ProbeLine[];
}

/** One row of the scale table: a steady window in which every task is in flight. */
interface ScaleRow {
  name: string;
  inFlight: number;
  peakRssMb: number;
  cpuPct: number;
  tickMedianMs: number;
  tickMaxMs: number;
  maxDelayMs: number;
  writesPerTick: number;
  readsPerTick: number;
  windowS: number;
  wallS: number;
  /** Seconds from the start until every partition ran (backfill). */
  rampS?: number;
}

function lines(text: string): string[] {
  return text.split("\n").filter((l) => l.trim() !== "");
}

/** `segops sim` (compiled) in its own process. */
const startSim = (args: string[]) => startSimProcess({ nodeArgs: [BIN], args, cwd: root });

/** Runs the compiled CLI with the probe preloaded, sampling /proc every 250 ms, bounded by `timeoutMs`. */
function runMeasured(args: string[], probeFile: string, timeoutMs: number): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // SEGOPS_BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the measured process.
    const nodeArgs = (process.env.SEGOPS_BENCH_NODE_ARGS ?? "").split(" ").filter((a) => a !== "");
    const child = spawn(
      process.execPath,
      [...nodeArgs, "--import", pathToFileURL(PROBE).href, BIN, ...args],
      {
        cwd: root,
        env: { ...process.env, SEGOPS_BENCH_PROBE: probeFile, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const samples: Timed[] = [];
    const pid = child.pid as number;
    const timer = setInterval(() => {
      try {
        samples.push({ at: performance.now(), proc: sampleProc(pid) });
      } catch {
        // exited between samples
      }
    }, 250);
    const limit = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(timer);
      clearTimeout(limit);
      let probe: ProbeLine[] = [];
      try {
        probe = lines(readFileSync(probeFile, "utf8")).map((l) => JSON.parse(l) as ProbeLine);
      } catch {
        // no probe output
      }
      resolve({
        startedAt: started,
        code,
        wallMs: performance.now() - started,
        stdout,
        stderr,
        samples,
        probe,
      });
    });
  });
}

/**
 * Figures over the window [from, to] (ms since the process started): CPU from /proc, busy time per
 * second (one tick) and SQLite statements per tick from the probe; peak RSS over the whole run (VmHWM).
 */
function windowFigures(name: string, inFlight: number, m: Measured, fromMs: number, toMs: number): ScaleRow {
  const t0 = m.startedAt;
  const inWindow = m.samples.filter((s) => s.at - t0 >= fromMs && s.at - t0 <= toMs);
  const first = inWindow[0];
  const last = inWindow[inWindow.length - 1];
  const cpuPct =
    first && last && last.at > first.at
      ? ((last.proc.cpuMs - first.proc.cpuMs) / (last.at - first.at)) * 100
      : Number.NaN;
  // A sample taken as the process exits (a zombie's status has no Vm lines) reads NaN: left out.
  const hwm = Math.max(...m.samples.map((s) => s.proc.hwmBytes).filter(Number.isFinite), 0);
  // The probe's clock (performance.now() in the child) starts with the process, as t0 does.
  const probeWindow = m.probe.filter((p) => p.t >= fromMs && p.t <= toMs);
  const busy = probeWindow.map((p) => p.activeMs);
  const pf = probeWindow[0];
  const pl = probeWindow[probeWindow.length - 1];
  const ticks = pf && pl ? (pl.t - pf.t) / 1000 : Number.NaN;
  return {
    name,
    inFlight,
    peakRssMb: hwm / MB,
    cpuPct,
    tickMedianMs: quantile(busy, 0.5),
    tickMaxMs: quantile(busy, 1),
    maxDelayMs: quantile(
      probeWindow.map((p) => p.maxDelayMs),
      1,
    ),
    writesPerTick: pf && pl ? (pl.writes - pf.writes) / ticks : Number.NaN,
    readsPerTick: pf && pl ? (pl.reads - pf.reads) / ticks : Number.NaN,
    windowS: first && last ? (last.at - first.at) / 1000 : Number.NaN,
    wallS: m.wallMs / 1000,
  };
}

function noopTask(id: string, durationMs: number): TaskSpec {
  return { type: "noop", id, context: { simDurationMs: durationMs } } as unknown as TaskSpec;
}

/** `segops poll --file` over N running tasks. */
async function pollAtScale(n: number, quick: boolean, dir: string, checks: Checks): Promise<ScaleRow> {
  const sim = await startSim(["--capacity", String(n), "--time-scale", "1"]);
  const client = new DruidClient({ url: sim.url, connections: 16 });
  try {
    // Every task runs D from its submission; the poller starts once all are in, so all N are in flight
    // for D − (submission time) after it starts.
    const holdMs = quick ? 20_000 : 45_000;
    const submitStart = performance.now();
    const ids = await mapLimit(
      Array.from({ length: n }, (_, i) => i),
      16,
      async (i) => (await client.submitTask(noopTask(`scale_${i}`, holdMs))).taskId,
    );
    const submitMs = performance.now() - submitStart;
    const file = join(dir, "ids.txt");
    writeFileSync(file, `${ids.join("\n")}\n`);
    const m = await runMeasured(
      ["poll", "--druid", sim.url, "--file", file, "--tick", "1000"],
      join(dir, "poll.probe"),
      holdMs + 120_000,
    );
    checks.equal(m.code, 0, `segops poll of ${n} exit code (stderr: ${m.stderr.trim().slice(0, 200)})`);
    checks.expect(m.stdout.includes(`ALL ${n} TASKS SUCCEEDED`), `segops poll of ${n}: not all succeeded`);
    // In flight: from 2 s after the start (its own startup and the first tick) until the first task ends.
    const firstEnd = holdMs - submitMs;
    checks.expect(firstEnd > 5000, `poll ${n}: submitting took ${num(submitMs)} ms, too long for a window`);
    return windowFigures("`segops poll`", n, m, 2000, firstEnd - 500);
  } finally {
    await client.close();
    await sim.stop();
  }
}

/** An hourly template with one inline row per partition, each task held `holdMs` by the emulator. */
function hourlyTemplate(holdMs: number): object {
  return {
    type: "index_parallel",
    spec: {
      dataSchema: {
        dataSource: "scale",
        timestampSpec: { column: "ts", format: "iso" },
        dimensionsSpec: { dimensions: ["k"] },
        granularitySpec: { segmentGranularity: "hour", queryGranularity: "none", rollup: false },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "inline", data: '{"ts":"{{start}}","k":"a"}' },
        inputFormat: { type: "json" },
        appendToExisting: false,
      },
      tuningConfig: {
        type: "index_parallel",
        maxNumConcurrentSubTasks: 1,
        partitionsSpec: { type: "dynamic" },
      },
    },
    context: { simDurationMs: holdMs },
  };
}

const FROM = Date.parse("2020-01-01T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

/**
 * Above this many partitions the backfill row measures tracking only: the run is stopped by `--deadline` a
 * minute after the first tasks end (exit 3, resumable). Finishing 10,000 partitions through the emulator takes
 * many more minutes (its handoff answers for 10,000 segments are slow to compute; docs/benchmarks.md, "Scale"),
 * and the 2,000-partition run already checks that every partition ends done.
 */
const TRACK_ONLY_ABOVE = 2000;

/** `segops backfill` of N hourly partitions, all admitted at once (N slots), SQLite ledger. */
async function backfillAtScale(n: number, quick: boolean, dir: string, checks: Checks): Promise<ScaleRow> {
  const trackOnly = n > TRACK_ONLY_ABOVE;
  // 10,000 submissions ramp up over one to two minutes: the hold leaves a window after the ramp.
  const holdMs = quick ? 60_000 : trackOnly ? 240_000 : 90_000;
  const workers = Math.ceil(n / 1000);
  const sim = await startSim([
    "--workers",
    String(workers),
    "--capacity",
    "1000",
    "--time-scale",
    "1",
    "--handoff-delay",
    "1000",
  ]);
  const stopWatch = new AbortController();
  const ramp = watchRamp(sim.url, n, stopWatch.signal);
  try {
    const template = join(dir, "hourly.json");
    writeFileSync(template, JSON.stringify(hourlyTemplate(holdMs)));
    const m = await runMeasured(
      [
        "backfill",
        template,
        "--from",
        iso(FROM),
        "--to",
        iso(FROM + n * 3_600_000),
        "--druid",
        sim.url,
        "--ledger",
        `sqlite:${join(dir, "ledger.db")}`,
        "--max-concurrency",
        String(n),
        "--json",
        ...(trackOnly ? ["--deadline", String((holdMs + 60_000) / 1000)] : []),
      ],
      join(dir, "backfill.probe"),
      holdMs + 600_000,
    );
    // The ramp watcher stops with the process: a run that never had all N running must not hang the bench.
    stopWatch.abort();
    const report = parseReport(m.stdout);
    if (trackOnly) {
      // Stopped by its deadline with the work handed back: nothing failed, nothing dead-lettered.
      checks.equal(m.code, 3, `segops backfill of ${n} exit code (stderr: ${m.stderr.trim().slice(-300)})`);
      checks.equal(report?.counts?.failed ?? 0, 0, `segops backfill of ${n}: partitions failed`);
      checks.equal(report?.counts?.dead ?? 0, 0, `segops backfill of ${n}: partitions dead-lettered`);
    } else {
      checks.equal(m.code, 0, `segops backfill of ${n} exit code (stderr: ${m.stderr.trim().slice(-300)})`);
      checks.equal(report?.counts?.done, n, `segops backfill of ${n}: partitions done`);
    }
    // In flight: from the moment the emulator ran all N (the ramp) until the first of them ended.
    const t0 = m.startedAt;
    const { allRunningAt, firstRunningAt } = await ramp;
    checks.expect(allRunningAt !== null, `backfill ${n}: never had all ${n} partitions running at once`);
    const from = (allRunningAt ?? Number.NaN) - t0 + 1000;
    const to = (firstRunningAt ?? Number.NaN) - t0 + holdMs - 1000;
    checks.expect(to - from > 5000, `backfill ${n}: the ramp left ${num((to - from) / 1000)} s in flight`);
    const row = windowFigures("`segops backfill` (SQLite)", n, m, from, to);
    return { ...row, rampS: (from - 1000) / 1000 };
  } finally {
    stopWatch.abort();
    await sim.stop();
  }
}

type Report = { counts?: { done?: number; failed?: number; dead?: number } };

function parseReport(stdout: string): Report | null {
  try {
    return JSON.parse(stdout) as Report;
  } catch {
    return null;
  }
}

/** Polls the emulator's running-task list every second: when the first and when all `n` tasks ran. */
async function watchRamp(
  url: string,
  n: number,
  signal: AbortSignal,
): Promise<{ firstRunningAt: number | null; allRunningAt: number | null }> {
  let firstRunningAt: number | null = null;
  while (!signal.aborted) {
    try {
      const res = await fetch(`${url}/druid/indexer/v1/runningTasks`, { signal });
      const running = ((await res.json()) as unknown[]).length;
      const now = performance.now();
      if (running > 0) firstRunningAt ??= now;
      if (running >= n) return { firstRunningAt, allRunningAt: now };
    } catch {
      if (signal.aborted) break;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { firstRunningAt, allRunningAt: null };
}

/** Plans N hourly partitions (render + validate each) and creates the job in a fresh SQLite ledger. */
async function planAtScale(n: number, dir: string, checks: Checks) {
  const t0 = performance.now();
  const plan = planIngestJob({
    kind: "backfill",
    template: { kind: "task", value: hourlyTemplate(60_000) as never },
    templateName: "hourly.json",
    range: parseInterval(`${iso(FROM)}/${iso(FROM + n * 3_600_000)}`),
  });
  const planMs = performance.now() - t0;
  checks.equal(plan.tasks.length, n, "planned partitions");
  const file = join(dir, "plan.db");
  const store = await openStore(`sqlite:${file}`);
  const t1 = performance.now();
  try {
    await store.createJob(plan.job, plan.tasks, "bench");
  } finally {
    await store.close();
  }
  const createMs = performance.now() - t1;
  const size = ["", "-wal", "-shm"].reduce((s, ext) => {
    try {
      return s + statSync(`${file}${ext}`).size;
    } catch {
      return s;
    }
  }, 0);
  return { n, planMs, createMs, totalMs: planMs + createMs, ledgerMb: size / MB };
}

export async function runScaleBench(options: ScaleBenchOptions = {}): Promise<BenchResult> {
  const quick = options.quick ?? false;
  const inFlight = options.inFlight ?? 10_000;
  const planned = options.planned ?? 100_000;
  const backfillInFlight = options.backfillInFlight ?? 10_000;
  // --quick leaves the backfill out: its ramp and hold alone take about two minutes.
  const only = new Set(options.only ?? (quick ? ["poll", "plan"] : ["poll", "backfill", "plan"]));
  const checks = new Checks();
  const complaint = await buildOnce();
  const notes: string[] = complaint ? [`tsc reported (dist/ emitted anyway): ${complaint}`] : [];
  const dir = mkdtempSync(join(tmpdir(), "segops-bench-scale-"));
  const rows: ScaleRow[] = [];
  let plan: Awaited<ReturnType<typeof planAtScale>> | null = null;
  try {
    if (only.has("poll")) rows.push(await pollAtScale(inFlight, quick, dir, checks));
    if (only.has("backfill")) rows.push(await backfillAtScale(backfillInFlight, quick, dir, checks));
    if (only.has("plan")) plan = await planAtScale(planned, dir, checks);
  } finally {
    // SEGOPS_BENCH_KEEP=1 keeps the probe files and ledgers for a closer look.
    if (process.env.SEGOPS_BENCH_KEEP) notes.push(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  const goal = (ok: boolean) => (ok ? "met" : "**missed**");
  const tables: string[] = [];
  if (rows.length > 0)
    tables.push(
      markdownTable(
        [
          "process",
          "tasks in flight",
          "peak RSS (goal ≤ 150 MB)",
          "CPU, one core (goal ≤ 5 %)",
          "busy per 1 s tick, median / max (goal ≤ 50 ms)",
          "longest event-loop delay",
          "ledger writes / reads per tick",
          "window",
        ],
        rows.map((r) => [
          r.name,
          num(r.inFlight),
          `${num(r.peakRssMb)} MB (${goal(r.peakRssMb <= 150)})`,
          `${num(r.cpuPct, 1)} % (${goal(r.cpuPct <= 5)})`,
          `${num(r.tickMedianMs)} / ${num(r.tickMaxMs)} ms (${goal(r.tickMedianMs <= 50)})`,
          `${num(r.maxDelayMs)} ms`,
          `${num(r.writesPerTick)} / ${num(r.readsPerTick)}`,
          `${num(r.windowS)} s of ${num(r.wallS)} s`,
        ]),
      ),
    );
  if (plan)
    tables.push(
      markdownTable(
        [
          "partitions",
          "planned (render + validate)",
          "created in the ledger",
          "total (goal ≤ 10 s)",
          "ledger size (goal ≤ 200 MB)",
        ],
        [
          [
            num(plan.n),
            `${num(plan.planMs / 1000, 1)} s`,
            `${num(plan.createMs / 1000, 1)} s`,
            `${num(plan.totalMs / 1000, 1)} s (${goal(plan.totalMs <= 10_000)})`,
            `${num(plan.ledgerMb)} MB (${goal(plan.ledgerMb <= 200)})`,
          ],
        ],
      ),
    );
  const pollRow = rows.find((r) => r.name.includes("poll"));
  const backfillRow = rows.find((r) => r.name.includes("backfill"));
  return {
    title: "Scale: 10,000 in flight, 100,000 planned",
    setup: [
      `One compiled segops process (\`node dist/cli/bin.js\`) tracks ${num(inFlight)} Druid tasks (poll; ${num(backfillInFlight)} through the backfill), with the emulator`,
      "(`segops sim`, time scale 1) in a process of its own; the bench submits noop tasks (poll) or the",
      "backfill submits one hourly partition per slot (`--max-concurrency` = N, N slots). The window is a",
      "stretch in which every task is in flight: CPU is utime + stime over it (/proc), peak RSS is VmHWM over",
      "the whole run, busy per tick is the event loop's active time per second (1 s tick; a preload reads",
      "`performance.eventLoopUtilization()`), and ledger writes are SQLite INSERT/UPDATE/DELETE statements",
      `per second counted by the same preload. The plan row plans ${num(planned)} hourly partitions in-process`,
      "(`planIngestJob`) and creates the job in a fresh SQLite ledger (`createJob`).",
    ].join(" "),
    tables,
    notes,
    headline: [
      ...(pollRow
        ? ([
            [
              `poll ${num(inFlight)} tasks in flight (emulator in another process)`,
              `peak RSS ${num(pollRow.peakRssMb)} MB, ${num(pollRow.cpuPct, 1)} % of a core, ${num(pollRow.tickMedianMs)} ms busy a tick`,
              "goals: ≤ 150 MB, ≤ 5 %, ≤ 50 ms",
            ],
          ] as Array<[string, string, string]>)
        : []),
      ...(backfillRow
        ? ([
            [
              `backfill with ${num(backfillRow.inFlight)} partitions in flight (SQLite)`,
              `peak RSS ${num(backfillRow.peakRssMb)} MB, ${num(backfillRow.cpuPct, 1)} % of a core, ${num(backfillRow.tickMedianMs)} ms busy a tick, ${num(backfillRow.writesPerTick)} ledger writes a tick`,
              "goals: ≤ 150 MB, ≤ 5 %, ≤ 50 ms",
            ],
          ] as Array<[string, string, string]>)
        : []),
      ...(plan
        ? ([
            [
              `plan + create ${num(plan.n)} partitions`,
              `${num(plan.totalMs / 1000, 1)} s, ledger ${num(plan.ledgerMb)} MB`,
              "goals: ≤ 10 s, ≤ 200 MB",
            ],
          ] as Array<[string, string, string]>)
        : []),
    ],
    problems: checks.problems,
    figures: {
      ...(pollRow
        ? { rss10kMb: pollRow.peakRssMb, cpuPct10k: pollRow.cpuPct, tick10kMs: pollRow.tickMedianMs }
        : {}),
      ...(backfillRow
        ? {
            backfillInFlight: backfillRow.inFlight,
            backfillRssMb: backfillRow.peakRssMb,
            backfillCpuPct: backfillRow.cpuPct,
            backfillTickMs: backfillRow.tickMedianMs,
            backfillWritesPerTick: backfillRow.writesPerTick,
          }
        : {}),
      ...(plan ? { plan100kMs: plan.totalMs, plan100kLedgerMb: plan.ledgerMb } : {}),
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean" },
      only: { type: "string", multiple: true },
      "in-flight": { type: "string" },
      "backfill-in-flight": { type: "string" },
      planned: { type: "string" },
    },
  });
  const result = await runScaleBench({
    quick: values.quick ?? false,
    ...(values.only ? { only: values.only as ScaleBenchOptions["only"] } : {}),
    ...(values["in-flight"] ? { inFlight: Number(values["in-flight"]) } : {}),
    ...(values["backfill-in-flight"] ? { backfillInFlight: Number(values["backfill-in-flight"]) } : {}),
    ...(values.planned ? { planned: Number(values.planned) } : {}),
  });
  console.log([result.setup, ...result.tables, ...result.notes].join("\n\n"));
  console.log(JSON.stringify(result.figures));
  if (result.problems.length > 0) {
    console.error(`\n${result.problems.length} correctness problem(s):\n${result.problems.join("\n")}`);
    process.exitCode = 1;
  }
}
