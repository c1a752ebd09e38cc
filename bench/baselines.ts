/**
 * segops against what users run today, in the same run on the same emulator, in emulated time:
 *
 *   makespan   a 200-partition backfill (seeded log-normal durations, 16 slots, every 5th task k = 3) by
 *              segops (`runIngestJob`, SQLite ledger, 1 s tick), baseline 1 (a pool of 16 workers, each
 *              submit + capped-backoff poll 2 s → 30 s) and baselines 2/3 (sequential: submit, poll every
 *              1 s to SUCCESS, next; measured on a sample and extrapolated), against the lower bound
 *              max(longest task, Σ slot-time ÷ capacity) + handoff delay.
 *   polling    N tasks already in flight: segops `pollTasks` (one bulk lookup a tick) against baseline 1
 *              as a pool of 16 pollers and as one backoff poller per task; Overlord requests per task and
 *              detection latency (emulated seconds).
 *
 *   node --import tsx bench/baselines.ts [--quick]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { parseInterval } from "../src/core/interval.js";
import type { TaskSpec } from "../src/druid/client.js";
import { type PlannedJob, planIngestJob } from "../src/ingest/plan.js";
import type { IngestPayload } from "../src/ingest/types.js";
import { runIngestJob, statusLookupFor } from "../src/jobs/engine.js";
import { pollTasks } from "../src/jobs/poll.js";
import { openStore } from "../src/ledger/open.js";
import type { JsonObject } from "../src/ledger/types.js";
import { StatusBatcher } from "../src/work/status-batcher.js";
import { dailyTemplate, writeDailyDataset } from "../test/helpers/dataset.js";
import { backoffBackfill, pollWithBackoff, pool, type Seen, sequentialBackfill } from "./lib/baselines.js";
import { logNormalDurations, representativeSample } from "./lib/durations.js";
import { type BenchEnv, type BenchEnvOptions, mapLimit, withBenchEnv } from "./lib/env.js";
import { type BenchResult, Checks } from "./lib/result.js";
import { eventAt, finishedAt } from "./lib/sim-events.js";
import { countRequests, isOverlord, isStatusLookup, quantile, sum } from "./lib/stats.js";
import { markdownTable, num, times } from "./lib/table.js";

export interface BaselinesBenchOptions {
  /** Fewer tasks / a faster time scale: the `--quick` subset. */
  quick?: boolean;
  /** Sim ms per real ms of the makespan run. @default 60 (--quick: 150) */
  makespanTimeScale?: number;
  seed?: number;
}

/** What `bench/run.ts --json` picks up from this benchmark. */
export type BaselinesFigures = {
  makespanOverBound: number;
  makespanBoundMin: number;
  makespanMin: Record<string, number>;
  requestsPerTaskBackfill: Record<string, number>;
  requestsVsBackoffPoller: number;
  requestsVsBackoffPollerBackfill: number;
  detectionP99Ms: number;
  baselineDetectionP99Ms: number;
  pollRequestsPerTask: Record<string, number>;
};

const TICK = 1000; // segops' default tick, emulated ms
const SLOTS = { workers: 2, capacity: 8 };
const HANDOFF_MS = 10_000;
const FROM = "2026-01-01";

const minutes = (ms: number, d = 1) => `${num(ms / 60_000, d)} min`;
const secs = (ms: number, d = 1) => `${num(ms / 1000, d)} s`;

interface Latencies {
  p50: number;
  p99: number;
  max: number;
}
function latencies(values: number[]): Latencies {
  return { p50: quantile(values, 0.5), p99: quantile(values, 0.99), max: quantile(values, 1) };
}
const showLatency = (l: Latencies) => `${secs(l.p50)} / ${secs(l.p99)} / ${secs(l.max)}`;

/** Detection latency of each sighting: seen (sim ms) − the emulator's finish event (sim ms). */
function detection(env: BenchEnv, seen: ReadonlyArray<{ id: string; at: number }>): number[] {
  const tasks = env.sim.stats().tasks;
  return seen.flatMap((s) => {
    const f = finishedAt(tasks, s.id);
    return f === null ? [] : [Math.max(0, s.at - f)];
  });
}

// ---------------------------------------------------------------------------------------------------------
// Makespan: a backfill on 16 slots.

interface BackfillRun {
  name: string;
  makespanMs: number;
  overlord: number;
  statusLookups: number;
  tasks: number;
  latency: Latencies;
  /** Measured on a sample and scaled (sequential). */
  extrapolated?: { sample: number };
}

/** The plan, with each partition's duration (and k = 3 for every 5th) written into its rendered spec. */
function planBackfill(dataDir: string, durations: number[]): PlannedJob {
  const days = durations.length;
  const start = Date.parse(`${FROM}T00:00:00Z`);
  const range = parseInterval(`${FROM}/${new Date(start + days * 86_400_000).toISOString().slice(0, 10)}`);
  const plan = planIngestJob({
    kind: "backfill",
    template: { kind: "task", value: dailyTemplate({ datasource: "events", k: 1 }) },
    templateName: "bench-daily.json",
    range,
    vars: { dataDir },
  });
  for (const [i, task] of plan.tasks.entries()) {
    const payload = task.payload as unknown as IngestPayload;
    const spec = payload.spec as { spec: { tuningConfig: JsonObject }; context?: JsonObject };
    const k = i % 5 === 2 ? 3 : 1;
    spec.spec.tuningConfig.maxNumConcurrentSubTasks = k;
    spec.context = { ...(spec.context ?? {}), simDurationMs: durations[i] as number };
    payload.slots = k > 1 ? k + 1 : 1;
  }
  return plan;
}

const specsOf = (plan: PlannedJob): TaskSpec[] =>
  plan.tasks.map((t) => (t.payload as unknown as IngestPayload).spec as unknown as TaskSpec);

/** max(longest task, Σ slot-time ÷ capacity) + handoff delay, from the emulator's own run times. */
function lowerBound(env: BenchEnv, slotsOf: Map<string, number>): { boundMs: number; slotMs: number } {
  const tasks = env.sim.stats().tasks;
  let longest = 0;
  let slotMs = 0;
  for (const [id, slots] of slotsOf) {
    const from = eventAt(tasks, id, "running");
    const to = finishedAt(tasks, id);
    if (from === null || to === null) continue;
    longest = Math.max(longest, to - from);
    slotMs += (to - from) * slots;
  }
  const capacity = SLOTS.workers * SLOTS.capacity;
  return { boundMs: Math.max(longest, slotMs / capacity) + HANDOFF_MS, slotMs };
}

function backfillEnv(timeScale: number, seed: number): BenchEnvOptions {
  return {
    timeScale,
    sim: { ...SLOTS, seed, baseDurationMs: 60_000, handoffDelayMs: HANDOFF_MS },
  };
}

async function makespanBench(
  quick: boolean,
  seed: number,
  checks: Checks,
  scale?: number,
): Promise<{ rows: BackfillRun[]; boundMs: number; setup: string; notes: string[] }> {
  const partitions = 200;
  // A tick is 1 emulated s: at scale 300 that is 3 ms real, and any 10 ms the process spends elsewhere
  // shows up as 3 ticks of detection latency. 60 keeps a tick at 17 ms real.
  const timeScale = scale ?? (quick ? 200 : 60);
  const durations = logNormalDurations(partitions, seed, {
    medianMs: 120_000,
    sigma: 0.6,
    minMs: 20_000,
    maxMs: 20 * 60_000,
  });
  const dataDir = mkdtempSync(join(tmpdir(), "segops-bench-data-"));
  const ledgerDir = mkdtempSync(join(tmpdir(), "segops-bench-ledger-"));
  try {
    writeDailyDataset({ dir: dataDir, from: FROM, days: partitions, rowsPerDay: 20 });
    const plan = planBackfill(dataDir, durations);
    const slotsByIndex = plan.tasks.map((t) => (t.payload as unknown as IngestPayload).slots);

    // segops: the ledger-backed run, waiting for handoff and the audit.
    let boundMs = Number.NaN;
    let slotMs = Number.NaN;
    const segops = await withBenchEnv(backfillEnv(timeScale, seed), async (env) => {
      const store = await openStore(`sqlite:${join(ledgerDir, "ledger.db")}`);
      const seen: Seen[] = [];
      const slotsOf = new Map<string, number>();
      try {
        await store.createJob(plan.job, plan.tasks, "bench");
        const byTask = new Map(plan.tasks.map((t, i) => [t.id, slotsByIndex[i] as number]));
        const clock = env.time.clock;
        const start = clock.now();
        const result = await runIngestJob({
          store,
          client: env.client,
          clock,
          jobId: plan.job.id,
          tickMs: TICK,
          maxConcurrency: 16,
          onStep: (task, step, detail) => {
            if (step !== "succeeded") return;
            seen.push({ id: detail, outcome: "SUCCESS", at: clock.now() });
            slotsOf.set(detail, byTask.get(task.id) ?? 1);
          },
        });
        const end = clock.now();
        checks.equal(result.reason, "idle", "makespan segops: drain ended because");
        checks.equal(result.counts.done, partitions, "makespan segops: partitions done");
        ({ boundMs, slotMs } = lowerBound(env, slotsOf));
        return runOf(env, "**segops** (`runIngestJob`, 1 s tick)", end - start, seen, partitions);
      } finally {
        await store.close();
      }
    });

    const specs = specsOf(plan);
    const idsInOrder = async (env: BenchEnv, fn: () => Promise<Seen[]>) => {
      const start = env.time.clock.now();
      const seen = await fn();
      const end = env.time.clock.now();
      return { seen, ms: end - start };
    };
    const backoff = await withBenchEnv(backfillEnv(timeScale, seed), async (env) => {
      const { seen, ms } = await idsInOrder(env, () =>
        backoffBackfill(env.client, specs, { clock: env.time.clock, poolSize: 16 }),
      );
      checks.equal(seen.filter((s) => s.outcome === "SUCCESS").length, partitions, "backoff pool: successes");
      return runOf(env, "baseline 1: pool of 16, backoff 2 s → 30 s", ms, seen, partitions);
    });

    // Sequential: Σ durations long, so a sample spread over the duration mix runs and is scaled up.
    const sampleSize = quick ? 6 : 12;
    const order = durations.map((d, i) => [d, i] as const).sort((a, b) => a[0] - b[0]);
    const picked = representativeSample(
      order.map((_, j) => j),
      sampleSize,
    ).map((j) => (order[j] as readonly [number, number])[1]);
    const sequential = await withBenchEnv(backfillEnv(timeScale * 4, seed), async (env) => {
      const { seen, ms } = await idsInOrder(env, () =>
        sequentialBackfill(
          env.client,
          picked.map((i) => specs[i] as TaskSpec),
          env.time.clock,
          1000,
        ),
      );
      const run = runOf(env, "baselines 2/3: sequential, poll every 1 s †", ms, seen, picked.length);
      const factor = sum(durations) / sum(picked.map((i) => durations[i] as number));
      return {
        ...run,
        makespanMs: run.makespanMs * factor,
        overlord: Math.round(run.overlord * factor),
        statusLookups: Math.round(run.statusLookups * factor),
        tasks: partitions,
        extrapolated: { sample: picked.length },
      };
    });

    const k3 = slotsByIndex.filter((s) => s > 1).length;
    const setup = [
      `${partitions} daily partitions with seeded log-normal durations (median 2 min, σ 0.6, 20 s–20 min;`,
      `Σ ${minutes(sum(durations), 0)}), every 5th with k = 3 sub-tasks (${k3} tasks, 4 slots each), on`,
      `${SLOTS.workers} × ${SLOTS.capacity} = ${SLOTS.workers * SLOTS.capacity} slots; segments served ${HANDOFF_MS / 1000} s after publish.`,
      `Emulated time at scale ${timeScale} (1 emulated s = ${num(1000 / timeScale, 1)} ms real); every figure is in emulated time.`,
      `Bound = max(longest task, Σ slot-time ÷ 16) + handoff delay = ${minutes(boundMs, 2)} (Σ slot-time ${minutes(slotMs, 0)}).`,
      "segops waits for handoff and the version audit of every partition; the baselines stop at SUCCESS.",
    ].join(" ");
    const notes = [
      `† measured on ${sequential.extrapolated?.sample} partitions spread over the duration mix (at 4× the time scale), scaled by Σ durations; its detection latency is the sample's.`,
    ];
    return { rows: [segops, backoff, sequential], boundMs, setup, notes };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(ledgerDir, { recursive: true, force: true });
  }
}

function runOf(env: BenchEnv, name: string, makespanMs: number, seen: Seen[], tasks: number): BackfillRun {
  const stats = env.sim.stats();
  return {
    name,
    makespanMs,
    overlord: countRequests(stats.requests, isOverlord),
    statusLookups: countRequests(stats.requests, isStatusLookup),
    tasks,
    latency: latencies(detection(env, seen)),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Polling: N tasks already in flight.

interface PollRun {
  name: string;
  wallMs: number;
  overlord: number;
  statusLookups: number;
  latency: Latencies;
}

function noopTask(id: string, durationMs: number): TaskSpec {
  return { type: "noop", id, context: { simDurationMs: durationMs } } as unknown as TaskSpec;
}

/** Submits every task with sim time frozen: all N start at the same emulated instant. */
async function submitFrozen(env: BenchEnv, prefix: string, durations: readonly number[]): Promise<string[]> {
  env.time.pause();
  try {
    return await mapLimit(durations, 16, async (d, i) => {
      const { taskId } = await env.client.submitTask(noopTask(`${prefix}_${i}`, d));
      return taskId;
    });
  } finally {
    env.time.resume();
  }
}

async function pollBench(
  quick: boolean,
  seed: number,
  checks: Checks,
): Promise<{ n: number; rows: PollRun[]; setup: string }> {
  const n = quick ? 500 : 2000;
  // A bulk lookup's real time counts × the scale in emulated latency: 2,000 ids (4 sequential calls of
  // 500) took 20–40 ms, 2–4 emulated s at scale 100. At 30 a tick is 33 ms real.
  const timeScale = quick ? 100 : 30;
  const durations = logNormalDurations(n, seed + 1, {
    medianMs: 120_000,
    sigma: 0.6,
    minMs: 20_000,
    maxMs: 10 * 60_000,
  });
  const env: BenchEnvOptions = { timeScale, sim: { capacity: n, seed, handoffDelayMs: 0 } };
  const submissions = n;
  const measure = async (
    name: string,
    prefix: string,
    poll: (e: BenchEnv, ids: string[]) => Promise<Seen[]>,
  ): Promise<PollRun> =>
    withBenchEnv(env, async (e) => {
      const ids = await submitFrozen(e, prefix, durations);
      const start = e.time.clock.now();
      const seen = await poll(e, ids);
      const wallMs = e.time.clock.now() - start;
      checks.equal(seen.filter((s) => s.outcome === "SUCCESS").length, n, `${prefix}: successes`);
      const stats = e.sim.stats();
      return {
        name,
        wallMs,
        overlord: countRequests(stats.requests, isOverlord) - submissions,
        statusLookups: countRequests(stats.requests, isStatusLookup),
        latency: latencies(detection(e, seen)),
      };
    });

  const segops = await measure("**segops** (`pollTasks`, 1 s tick)", "segops", async (e, ids) => {
    const seen: Seen[] = [];
    const clock = e.time.clock;
    const batcher = new StatusBatcher({ lookup: statusLookupFor(e.client), clock, tickMs: TICK });
    try {
      await pollTasks(ids, {
        batcher,
        clock,
        onTerminal: (t) => seen.push({ id: t.id, outcome: t.outcome as Seen["outcome"], at: clock.now() }),
      });
    } finally {
      await batcher.stop();
    }
    return seen;
  });
  const pool16 = await measure("baseline 1: pool of 16 backoff pollers", "pool", (e, ids) =>
    pool(ids, 16, (id) => pollWithBackoff(e.client, id, { clock: e.time.clock })),
  );
  const everyTask = await measure("baseline 1′: a backoff poller per task", "each", (e, ids) =>
    Promise.all(ids.map((id) => pollWithBackoff(e.client, id, { clock: e.time.clock }))),
  );
  const setup = [
    `${num(n)} noop tasks submitted at the same emulated instant (log-normal durations, median 2 min, σ 0.6,`,
    `20 s–10 min), a slot for each, at time scale ${timeScale}. Requests are status lookups (the`,
    `${num(n)} submissions are left out; they are the same for all). Baseline 1 is the recipe as written: a`,
    "pool of 16 workers, each polling one task (GET, 2 s doubling to 30 s) until it ends, then the next;",
    "baseline 1′ gives every task its own backoff poller at once (16 connections), the only way its",
    "detection latency stays within its cap.",
  ].join(" ");
  return { n, rows: [segops, pool16, everyTask], setup };
}

// ---------------------------------------------------------------------------------------------------------

export async function runBaselinesBench(
  options: BaselinesBenchOptions = {},
): Promise<BenchResult & { figures: BaselinesFigures }> {
  const quick = options.quick ?? false;
  const seed = options.seed ?? 16;
  const checks = new Checks();
  const mk = await makespanBench(quick, seed, checks, options.makespanTimeScale);
  const pl = await pollBench(quick, seed, checks);

  const [seg, b1] = mk.rows as [BackfillRun, BackfillRun, BackfillRun];
  const mkTable = markdownTable(
    [
      "strategy",
      "makespan",
      "÷ lower bound",
      "Overlord requests",
      "per partition",
      "of which status lookups",
      "detection p50 / p99 / max",
      "makespan vs segops",
      "requests vs segops",
    ],
    mk.rows.map((r) => [
      r.name,
      minutes(r.makespanMs),
      times(r.makespanMs / mk.boundMs),
      num(r.overlord),
      num(r.overlord / r.tasks, 1),
      num(r.statusLookups),
      showLatency(r.latency),
      times(r.makespanMs / seg.makespanMs),
      times(r.overlord / seg.overlord),
    ]),
  );
  const [ps, p16, pEach] = pl.rows as [PollRun, PollRun, PollRun];
  const plTable = markdownTable(
    [
      "strategy",
      "last seen",
      "status requests",
      "per task",
      "detection p50 / p99 / max",
      "requests vs segops",
    ],
    pl.rows.map((r) => [
      r.name,
      minutes(r.wallMs),
      num(r.overlord),
      num(r.overlord / pl.n, 2),
      showLatency(r.latency),
      times(r.overlord / ps.overlord),
    ]),
  );
  const figures: BaselinesFigures = {
    makespanOverBound: seg.makespanMs / mk.boundMs,
    makespanBoundMin: mk.boundMs / 60_000,
    makespanMin: Object.fromEntries(mk.rows.map((r) => [r.name, r.makespanMs / 60_000])),
    requestsPerTaskBackfill: Object.fromEntries(mk.rows.map((r) => [r.name, r.overlord / r.tasks])),
    requestsVsBackoffPoller: pEach.overlord / ps.overlord,
    requestsVsBackoffPollerBackfill: b1.overlord / seg.overlord,
    detectionP99Ms: ps.latency.p99,
    baselineDetectionP99Ms: pEach.latency.p99,
    pollRequestsPerTask: Object.fromEntries(pl.rows.map((r) => [r.name, r.overlord / pl.n])),
  };
  const goal = (ok: boolean) => (ok ? "met" : "**missed**");
  const bound = figures.makespanOverBound;
  const tickShare = TICK / mk.boundMs;
  return {
    title: "Against today's baselines (emulated time)",
    setup: `**Makespan.** ${mk.setup}`,
    tables: [mkTable, `**Polling ${num(pl.n)} tasks in flight.** ${pl.setup}\n\n${plTable}`],
    notes: [
      ...mk.notes,
      `Makespan ÷ bound ${num(bound, 3)} (goal ≤ 1.05 + one tick = ${num(1.05 + tickShare, 3)}): ${goal(bound <= 1.05 + tickShare)}.`,
      `Status requests, baseline 1′ ÷ segops with ${num(pl.n)} in flight: ${times(figures.requestsVsBackoffPoller)} (goal ≥ 20×: ${goal(figures.requestsVsBackoffPoller >= 20)}); the pool of 16 sends ${times(p16.overlord / ps.overlord)} segops' requests but its detection p99 is ${secs(p16.latency.p99)}.`,
      `In the 16-slot backfill, baseline 1 sends ${times(figures.requestsVsBackoffPollerBackfill)} segops' Overlord requests: with about 16 tasks in flight one request a tick is not fewer than 16 backoff pollers (see docs/benchmarks.md).`,
      `Detection p99: segops ${secs(ps.latency.p99, 2)} (goal ≤ 2 s: ${goal(ps.latency.p99 <= 2000)}), baseline 1′ ${secs(pEach.latency.p99)}.`,
    ],
    headline: [
      [
        "backfill 200 partitions, 16 slots (emulated)",
        `makespan ${minutes(seg.makespanMs)} = ${times(bound)} the lower bound; ${num(seg.overlord / seg.tasks, 1)} Overlord requests a partition`,
        mk.rows
          .slice(1)
          .map((r) => `${r.name.split(":")[0]}: ${times(r.makespanMs / seg.makespanMs)} the makespan`)
          .join("; "),
      ],
      [
        `poll ${num(pl.n)} tasks in flight (emulated)`,
        `${num(ps.overlord / pl.n, 2)} status requests a task, detection p99 ${secs(ps.latency.p99, 2)}`,
        `backoff poller per task: ${times(pEach.overlord / ps.overlord)} the requests, p99 ${secs(pEach.latency.p99)}; pool of 16: p99 ${secs(p16.latency.p99)}`,
      ],
    ],
    problems: checks.problems,
    figures,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: { quick: { type: "boolean" }, "time-scale": { type: "string" }, only: { type: "string" } },
  });
  const result = await runBaselinesBench({
    quick: values.quick ?? false,
    ...(values["time-scale"] ? { makespanTimeScale: Number(values["time-scale"]) } : {}),
  });
  console.log([result.setup, ...result.tables, ...result.notes.map((n) => `- ${n}`)].join("\n\n"));
  console.log(JSON.stringify(result.figures));
  if (result.problems.length > 0) {
    console.error(`\n${result.problems.length} correctness problem(s):\n${result.problems.join("\n")}`);
    process.exitCode = 1;
  }
}
