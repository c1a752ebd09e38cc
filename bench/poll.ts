/**
 * Polling economics: N tasks of mixed durations run at once on the emulator; how long until every one is
 * seen terminal, how many Overlord requests that took, and how late each finish was noticed.
 *
 *   segops               pollTasks through one StatusBatcher: one bulk POST /taskStatus per tick (⌈N/500⌉)
 *   per-task concurrent  one GET /task/{id}/status per task per tick, all tasks at once (N per tick)
 *   sequential           Airflow's Druid hook: submit one task, sleep-poll it until it ends, then the next
 *
 *   node --import tsx bench/poll.ts
 */
import { pathToFileURL } from "node:url";
import { systemClock } from "../src/core/clock.js";
import type { DruidClient } from "../src/druid/client.js";
import { statusLookupFor } from "../src/jobs/engine.js";
import { pollTasks } from "../src/jobs/poll.js";
import { StatusBatcher } from "../src/work/status-batcher.js";
import { mixedDurations, representativeSample } from "./lib/durations.js";
import { type BenchEnv, mapLimit, withBenchEnv } from "./lib/env.js";
import { type BenchResult, Checks } from "./lib/result.js";
import { eventCount, finishedAt } from "./lib/sim-events.js";
import {
  countRequests,
  isOverlord,
  isStatusLookup,
  type LatencySummary,
  sum,
  summarize,
} from "./lib/stats.js";
import { markdownTable, num, seconds, times } from "./lib/table.js";

export interface PollBenchOptions {
  /** Task counts polled at once. @default [200, 1000] */
  sizes?: number[];
  /** Sim ms per real ms; 200 makes the slowest (10 min) task take 3 s. @default 200 */
  timeScale?: number;
  /** Poll interval of every strategy, real ms. @default 100 */
  tickMs?: number;
  /** Tasks the sequential baseline really runs (it is then scaled up to each N). @default 12 */
  sequentialSample?: number;
  /** Seed of the duration mix. @default 7 */
  seed?: number;
}

type Strategy = "segops" | "per-task" | "sequential";

interface Run {
  strategy: Strategy;
  /** Tasks really run. */
  measured: number;
  wallMs: number;
  /** Real time spent submitting with sim time frozen (segops and per-task); not part of `wallMs`. */
  submitMs: number;
  /** Real ms of the slowest task in this run. */
  slowestMs: number;
  overlordRequests: number;
  statusRequests: number;
  latencies: number[];
  /** From the last task's real finish to the end of the run: what polling adds to the ideal wall time. */
  tailMs: number;
}

const TERMINAL = new Set(["SUCCESS", "FAILED"]);
const SUBMIT_CONCURRENCY = 16;

function noopTask(id: string, durationMs: number) {
  // `simDurationMs` is an emulator knob (src/sim/spec.ts); a noop task takes one slot and no locks.
  return { type: "noop", id, context: { simDurationMs: durationMs } };
}

/** Records when each task was first seen terminal, and how often (it must be exactly once). */
class Sightings {
  readonly first = new Map<string, { outcome: string; at: number }>();
  readonly count = new Map<string, number>();
  constructor(private readonly env: BenchEnv) {}
  saw(id: string, outcome: string): void {
    this.count.set(id, (this.count.get(id) ?? 0) + 1);
    if (!this.first.has(id)) this.first.set(id, { outcome, at: this.env.time.realNow() });
  }
}

/** Correctness and latency of one run, from the emulator's own accounting. */
function settle(
  env: BenchEnv,
  strategy: Strategy,
  ids: string[],
  seen: Sightings,
  timing: { start: number; submitMs: number; end: number; slowestSimMs: number },
  checks: Checks,
): Run {
  const stats = env.sim.stats();
  const accepted = stats.submissions.filter((s) => s.accepted).length;
  checks.equal(accepted, ids.length, `${strategy}: accepted submissions`);
  const latencies: number[] = [];
  let lastFinish = Number.NEGATIVE_INFINITY;
  for (const id of ids) {
    const sighting = seen.first.get(id);
    checks.equal(seen.count.get(id) ?? 0, 1, `${strategy}: times ${id} was seen terminal`);
    checks.equal(sighting?.outcome, "SUCCESS", `${strategy}: outcome of ${id}`);
    checks.equal(eventCount(stats.tasks, id, "success"), 1, `${strategy}: emulator successes of ${id}`);
    const finish = finishedAt(stats.tasks, id);
    if (finish !== null) lastFinish = Math.max(lastFinish, env.time.toReal(finish));
    if (sighting && finish !== null) {
      const latency = sighting.at - env.time.toReal(finish);
      // Seen before it finished would mean a broken clock mapping, not a fast poller.
      checks.expect(latency >= -1, `${strategy}: ${id} seen ${latency.toFixed(1)} ms before it finished`);
      latencies.push(Math.max(0, latency));
    }
  }
  return {
    strategy,
    measured: ids.length,
    wallMs: timing.end - timing.start,
    submitMs: timing.submitMs,
    slowestMs: env.time.realDuration(timing.slowestSimMs),
    overlordRequests: countRequests(stats.requests, isOverlord),
    statusRequests: countRequests(stats.requests, isStatusLookup),
    latencies,
    tailMs: timing.end - lastFinish,
  };
}

/**
 * Submits every task (16 at a time) with sim time frozen, so all N start at the same sim instant however
 * long the emulator takes to accept them; the measured run starts when time resumes.
 */
async function submitFrozen(
  env: BenchEnv,
  prefix: string,
  durations: readonly number[],
): Promise<{ ids: string[]; submitMs: number }> {
  const before = env.time.realNow();
  env.time.pause();
  try {
    const ids = await mapLimit(durations, SUBMIT_CONCURRENCY, async (d, i) => {
      const { taskId } = await env.client.submitTask(noopTask(`${prefix}_${i}`, d));
      return taskId;
    });
    return { ids, submitMs: env.time.realNow() - before };
  } finally {
    env.time.resume();
  }
}

async function runSegops(env: BenchEnv, durations: number[], tickMs: number, checks: Checks): Promise<Run> {
  const seen = new Sightings(env);
  const { ids, submitMs } = await submitFrozen(env, "segops", durations);
  const start = env.time.realNow();
  const batcher = new StatusBatcher({ lookup: statusLookupFor(env.client), clock: systemClock, tickMs });
  try {
    await pollTasks(ids, { batcher, clock: systemClock, onTerminal: (t) => seen.saw(t.id, t.outcome) });
  } finally {
    await batcher.stop();
  }
  const end = env.time.realNow();
  return settle(
    env,
    "segops",
    ids,
    seen,
    { start, submitMs, end, slowestSimMs: Math.max(...durations) },
    checks,
  );
}

/** Polls one task until it ends: GET its status, sleep one interval, again. */
async function pollOne(client: DruidClient, id: string, tickMs: number, seen: Sightings): Promise<void> {
  for (;;) {
    const { status } = await client.taskStatus(id);
    if (status && TERMINAL.has(status.statusCode)) {
      seen.saw(id, status.statusCode);
      return;
    }
    await systemClock.sleep(tickMs);
  }
}

async function runPerTask(env: BenchEnv, durations: number[], tickMs: number, checks: Checks): Promise<Run> {
  const seen = new Sightings(env);
  const { ids, submitMs } = await submitFrozen(env, "pertask", durations);
  const start = env.time.realNow();
  await Promise.all(ids.map((id) => pollOne(env.client, id, tickMs, seen)));
  const end = env.time.realNow();
  return settle(
    env,
    "per-task",
    ids,
    seen,
    { start, submitMs, end, slowestSimMs: Math.max(...durations) },
    checks,
  );
}

async function runSequential(
  env: BenchEnv,
  durations: number[],
  tickMs: number,
  checks: Checks,
): Promise<Run> {
  const seen = new Sightings(env);
  const ids: string[] = [];
  const start = env.time.realNow();
  for (const [i, d] of durations.entries()) {
    const { taskId } = await env.client.submitTask(noopTask(`seq_${i}`, d));
    ids.push(taskId);
    await pollOne(env.client, taskId, tickMs, seen);
  }
  const end = env.time.realNow();
  const slowestSimMs = Math.max(...durations);
  return settle(env, "sequential", ids, seen, { start, submitMs: 0, end, slowestSimMs }, checks);
}

interface Row {
  label: string;
  measured: string;
  wallMs: number;
  slowestMs: number;
  overlordRequests: number;
  statusRequests: number;
  n: number;
  latency: LatencySummary;
  tailMs: number;
}

function rowOf(run: Run, label: string, n = run.measured): Row {
  return {
    label,
    measured: String(run.measured),
    wallMs: run.wallMs,
    slowestMs: run.slowestMs,
    overlordRequests: run.overlordRequests,
    statusRequests: run.statusRequests,
    n,
    latency: summarize(run.latencies),
    tailMs: run.tailMs,
  };
}

/**
 * The sequential baseline at full N, scaled from the sample: its wall time is Σ durations × the sample's
 * overhead factor (wall ÷ Σ its durations); status requests scale the same way; submissions are one per task.
 */
function extrapolate(sample: Run, sampleSimMs: number[], allSimMs: number[], scale: number): Row {
  const sampleReal = sum(sampleSimMs) / scale;
  const allReal = sum(allSimMs) / scale;
  const factor = allReal / sampleReal;
  const statusRequests = Math.round(sample.statusRequests * factor);
  return {
    label: "sequential (Airflow hook) †",
    measured: `${sample.measured} †`,
    wallMs: sample.wallMs * factor,
    slowestMs: Math.max(...allSimMs) / scale,
    overlordRequests: statusRequests + allSimMs.length,
    statusRequests,
    n: allSimMs.length,
    latency: summarize(sample.latencies),
    tailMs: sample.tailMs,
  };
}

function table(rows: Row[]): string {
  const base = rows[0] as Row;
  return markdownTable(
    [
      "strategy",
      "tasks run",
      "wall time",
      "wall ÷ slowest task",
      "last seen after last finish",
      "Overlord requests",
      "requests / task",
      "of which status lookups",
      "status lookups / s",
      "detection latency p50 / p95 / max",
      "wall vs segops",
      "requests vs segops",
      "status lookups vs segops",
    ],
    rows.map((r) => [
      r.label,
      r.measured,
      seconds(r.wallMs),
      times(r.wallMs / r.slowestMs),
      `${num(r.tailMs)} ms`,
      num(r.overlordRequests),
      num(r.overlordRequests / r.n, 1),
      num(r.statusRequests),
      num(r.statusRequests / (r.wallMs / 1000), 0),
      `${num(r.latency.p50)} / ${num(r.latency.p95)} / ${num(r.latency.max)} ms`,
      times(r.wallMs / base.wallMs),
      times(r.overlordRequests / base.overlordRequests),
      times(r.statusRequests / base.statusRequests),
    ]),
  );
}

export async function runPollBench(options: PollBenchOptions = {}): Promise<BenchResult> {
  const sizes = options.sizes ?? [200, 1000];
  const timeScale = options.timeScale ?? 200;
  const tickMs = options.tickMs ?? 100;
  const seed = options.seed ?? 7;
  const checks = new Checks();
  const envFor = (capacity: number) => ({
    timeScale,
    sim: { capacity, seed, handoffDelayMs: 0 },
  });

  // One sequential sample serves every N: the same duration mix, spread over its quantiles.
  const reference = mixedDurations(Math.max(...sizes), seed);
  const sampleDurations = representativeSample(reference, options.sequentialSample ?? 12);
  const sequential = await withBenchEnv(envFor(4), (env) =>
    runSequential(env, sampleDurations, tickMs, checks),
  );

  const tables: string[] = [];
  const headline: BenchResult["headline"] = [];
  for (const n of sizes) {
    const durations = mixedDurations(n, seed);
    const segops = await withBenchEnv(envFor(n), (env) => runSegops(env, durations, tickMs, checks));
    const perTask = await withBenchEnv(envFor(n), (env) => runPerTask(env, durations, tickMs, checks));
    const seq = extrapolate(sequential, sampleDurations, durations, timeScale);
    const rows = [
      rowOf(segops, "**segops** (1 status batcher)"),
      rowOf(perTask, "per-task concurrent GETs"),
      seq,
    ];
    tables.push(
      `**N = ${num(n)} tasks**: slowest ${seconds(segops.slowestMs, 1)}, Σ durations ${seconds(sum(durations) / timeScale, 0)}; submitting them (sim time frozen, not in the wall time) took ${seconds(segops.submitMs)} and ${seconds(perTask.submitMs)}\n\n${table(rows)}`,
    );
    headline.push([
      `poll ${num(n)} tasks at once`,
      `${seconds(segops.wallMs, 1)} = ${times(segops.wallMs / segops.slowestMs)} the slowest task; ${num(segops.statusRequests)} status lookups + ${num(n)} submissions`,
      [
        `per-task GETs: ${times(perTask.statusRequests / segops.statusRequests)} the status lookups (${times(perTask.overlordRequests / segops.overlordRequests)} all requests), ${times(perTask.wallMs / segops.wallMs)} the wall time`,
        `sequential (extrapolated from ${sequential.measured} measured): ${times(seq.wallMs / segops.wallMs)} the wall time`,
      ].join("; "),
    ]);
  }

  return {
    title: "Polling economics",
    setup: [
      `Tasks are emulator \`noop\` tasks with seeded mixed durations (60 % 1–3 min, 30 % 3–6 min, 10 % 6–10 min`,
      `of sim time; the slowest is 10 min), on a cluster with a slot for every task, at time scale ${timeScale}`,
      `(10 sim minutes = ${seconds(600_000 / timeScale, 0)}). Every strategy polls every ${tickMs} ms and uses the`,
      "same DruidClient (16 keep-alive connections). segops and the per-task baseline submit all N tasks with",
      "sim time frozen, so every task starts at the same sim instant and the emulator's cost of accepting",
      "them stays out of the figures; their wall time runs from that instant until the last task is seen",
      "terminal. The sequential baseline's wall time includes its submissions (one at a time, as it works).",
      "Detection latency is the time from a task's finish (the emulator's own event) to the moment the poller",
      "saw it. Requests are counted by the emulator (`sim.stats().requests`, Overlord paths: N submissions +",
      "status lookups).",
    ].join(" "),
    tables,
    notes: [
      `† sequential: measured on ${sequential.measured} tasks spread over the same duration mix (wall ${seconds(sequential.wallMs, 1)}, ${num(sequential.statusRequests)} status requests), then extrapolated to N: wall = Σ durations of all N × the sample's overhead factor (${times(sequential.wallMs / (sum(sampleDurations) / timeScale))}); status requests scale the same way. Its detection latency is the sample's, measured.`,
      "Ratios are against segops in the same run: above 1× means the baseline took longer / sent more.",
    ],
    headline,
    problems: checks.problems,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const result = await runPollBench();
  console.log(result.tables.join("\n\n"));
  console.log(`\n${result.notes.join("\n")}`);
  if (result.problems.length > 0) {
    console.error(
      `\n${result.problems.length} correctness problem(s):\n${result.problems.slice(0, 20).join("\n")}`,
    );
    process.exitCode = 1;
  }
}
