/**
 * What each poller costs a production-sized Druid: the emulator seeded with a day of history (20,000 complete
 * tasks over 24 h, 200,000 served segments over 50 datasources, straight into its stores: src/sim/history.ts),
 * then the same 100- and 1,000-partition daily backfill (16 slots) driven by
 *
 *   segops          `runIngestJob` (SQLite ledger, 1 s tick), waiting for handoff and the audit;
 *   seed-style      a pool of 16: submit, then one status GET per task with backoff 2 s → 30 s;
 *   operator-style  a pool of 16: submit, then one status GET per task every second (Airflow's DruidOperator).
 *
 * Requests and response bytes per endpoint are counted by each run's client (`onAttempt`: every attempt, and the
 * body Druid answered with), per task and per emulated minute; detection latency is SUCCESS at Druid (the
 * emulator's finish event) to the poller seeing it. Emulated time throughout.
 *
 * Beside them, two floor rows (not pollers; bench/lib/cost-floor.ts): the least a poller that sees every finish
 * within 2 s (1 s), reads each report once and submits once could cost on the same run — the segops run's task
 * run times (the emulator's submission to finish), its report and submission answers, and the smallest per-task
 * status-answer cost measured (segops' bulk answers per id asked, counted from its requests; the status GETs).
 *
 *   node --import tsx bench/cost.ts [--quick]       # --quick: the 100-partition backfill only
 *     [--partitions 1000] [--pollers segops]        # one size, one poller (to profile segops' process alone)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { parseInterval } from "../src/core/interval.js";
import { DruidClient, type TaskSpec } from "../src/druid/client.js";
import { type PlannedJob, planIngestJob } from "../src/ingest/plan.js";
import type { IngestPayload } from "../src/ingest/types.js";
import { runIngestJob } from "../src/jobs/engine.js";
import { openStore } from "../src/ledger/open.js";
import type { JsonObject } from "../src/ledger/types.js";
import type { HistoryOptions } from "../src/sim/history.js";
import type { SimStatsSnapshot } from "../src/sim/stats.js";
import { MAX_CHECK_INTERVAL_TICKS } from "../src/work/handoff.js";
import { dailyTemplate, writeDailyDataset } from "../test/helpers/dataset.js";
import { backoffBackfill, pollEvery, pool, type Seen } from "./lib/baselines.js";
import { countingDispatcher } from "./lib/bulk-ids.js";
import { type CostFloor, costFloor, type StatusEntryCost } from "./lib/cost-floor.js";
import { startCostSim } from "./lib/cost-sim.js";
import { logNormalDurations } from "./lib/durations.js";
import { type EndpointCost, RequestMeter } from "./lib/request-meter.js";
import { type BenchResult, Checks } from "./lib/result.js";
import { eventAt, finishedAt } from "./lib/sim-events.js";
import type { SimTime } from "./lib/sim-time.js";
import { isStatusLookup, quantile } from "./lib/stats.js";
import { markdownTable, num } from "./lib/table.js";

export interface CostBenchOptions {
  /** Only the 100-partition backfill. */
  quick?: boolean;
  /** Sim ms per real ms. @default 20 */
  timeScale?: number;
  seed?: number;
  /** The history seeded before each run. @default 20,000 tasks, 200,000 segments, 50 datasources */
  history?: Omit<HistoryOptions, "names" | "segmentsBefore">;
  /** Backfill sizes. @default [100, 1000] (--quick: [100]) */
  partitions?: number[];
  /** The pollers run (`--pollers segops,seed`), for profiling one alone. @default all three */
  pollers?: Poller[];
}

const DATASOURCE = "events";
const FROM = "2026-01-01";
const SLOTS = { workers: 2, capacity: 8 };
const HANDOFF_MS = 10_000;
const TICK = 1000;
const PRODUCTION: Omit<HistoryOptions, "names" | "segmentsBefore"> = {
  tasks: 20_000,
  segments: 200_000,
  dataSources: 50,
};

const POLLERS = ["segops", "seed", "operator"] as const;
type Poller = (typeof POLLERS)[number];
const LABEL: Record<Poller, string> = {
  segops: "**segops** (`runIngestJob`, 1 s tick, waits for handoff + audit)",
  seed: "seed-style: pool of 16, status GET per task, backoff 2 s → 30 s",
  operator: "operator-style: pool of 16, status GET per task every 1 s",
};

interface CostRun {
  poller: Poller;
  partitions: number;
  makespanMs: number;
  meter: RequestMeter;
  detection: number[];
  /** segops only: the emulator serving a partition's segments to segops' handoff gate seeing it (emulated ms). */
  handoffSeen: number[];
  /** Active tasks (running or pending) averaged over the run, for the cost model. */
  seenSucceeded: number;
  /** The poller's process's event-loop delay over the run (real ms; `monitorEventLoopDelay`). */
  loopDelay: { p99: number; max: number };
  /** Gaps between consecutive status lookups' answers (sim ms). */
  lookupGaps: number[];
  /** Task ids asked over all bulk `POST /taskStatus` attempts (what their response bytes were spent on). */
  bulkIdsAsked: number;
  /** Per task seen to succeed: the emulator's submission to its finish (sim ms), for the cost floor. */
  runTimes: number[];
  /** The emulator's first submission to its last finish of those tasks (sim ms). */
  taskSpanMs: number;
  /** The machine's 1-min load average when this poller's run started and ended (the load moves run to run). */
  load: { before: number; after: number };
}

function planBackfill(dataDir: string, durations: readonly number[]): PlannedJob {
  const start = Date.parse(`${FROM}T00:00:00Z`);
  const end = new Date(start + durations.length * 86_400_000).toISOString().slice(0, 10);
  const plan = planIngestJob({
    kind: "backfill",
    template: { kind: "task", value: dailyTemplate({ datasource: DATASOURCE, k: 1 }) },
    templateName: "bench-daily.json",
    range: parseInterval(`${FROM}/${end}`),
    vars: { dataDir },
  });
  for (const [i, task] of plan.tasks.entries()) {
    const spec = (task.payload as unknown as IngestPayload).spec as { context?: JsonObject };
    spec.context = { ...(spec.context ?? {}), simDurationMs: durations[i] as number };
  }
  return plan;
}

/** What a run reads: the emulator's URL, its sim time, a metered client and the emulator's task timelines. */
interface CostEnv {
  client: DruidClient;
  time: SimTime;
  /** The emulator's per-task event timelines (`GET /__sim/stats`, not metered). */
  tasks(): Promise<SimStatsSnapshot["tasks"]>;
  /** When each status lookup's answer came (sim ms), in order. */
  lookups: readonly number[];
  /** Task ids asked by bulk status requests so far. */
  bulkIdsAsked(): number;
}

/**
 * One emulator with the history seeded, in a process of its own (a real Druid is another process: segops'
 * event loop must not be the emulator's), and a client whose every attempt the meter counts.
 */
async function withCostEnv<T>(
  o: { timeScale: number; seed: number; history: CostBenchOptions["history"] },
  fn: (env: CostEnv, meter: RequestMeter) => Promise<T>,
): Promise<T> {
  const sim = await startCostSim({
    timeScale: o.timeScale,
    originMs: Date.now(),
    sim: { ...SLOTS, seed: o.seed, baseDurationMs: 60_000, handoffDelayMs: HANDOFF_MS },
    history: {
      ...(o.history ?? PRODUCTION),
      names: [DATASOURCE],
      segmentsBefore: Date.parse(`${FROM}T00:00:00Z`),
    },
  });
  const meter = new RequestMeter();
  const lookups: number[] = [];
  const counting = countingDispatcher(16);
  const client = new DruidClient({
    url: sim.url,
    dispatcher: counting.dispatcher,
    onAttempt: (attempt) => {
      meter.record(attempt);
      if (isStatusLookup(attempt.route)) lookups.push(sim.time.clock.now());
    },
  });
  const tasks = async () => {
    const res = await fetch(`${sim.url}/__sim/stats`);
    return ((await res.json()) as SimStatsSnapshot).tasks;
  };
  try {
    return await fn({ client, time: sim.time, tasks, lookups, bulkIdsAsked: counting.idsAsked }, meter);
  } finally {
    await client.close();
    await counting.close();
    await sim.stop();
  }
}

function detectionOf(tasks: SimStatsSnapshot["tasks"], seen: readonly Seen[]): number[] {
  return seen.flatMap((s) => {
    const f = finishedAt(tasks, s.id);
    return f === null ? [] : [Math.max(0, s.at - f)];
  });
}

async function runOne(
  poller: Poller,
  plan: PlannedJob,
  o: { timeScale: number; seed: number; history: CostBenchOptions["history"] },
  checks: Checks,
): Promise<CostRun> {
  const partitions = plan.tasks.length;
  const loadBefore = loadavg()[0] ?? Number.NaN;
  return withCostEnv(o, async (env, meter) => {
    const clock = env.time.clock;
    const start = clock.now();
    let seen: Seen[] = [];
    const druidIdOf = new Map<string, string>();
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const handedOff: Array<{ druidId: string; at: number }> = [];
    if (poller === "segops") {
      const dir = mkdtempSync(join(tmpdir(), "segops-bench-cost-"));
      const store = await openStore(`sqlite:${join(dir, "ledger.db")}`);
      try {
        await store.createJob(plan.job, plan.tasks, "bench");
        const result = await runIngestJob({
          store,
          client: env.client,
          clock,
          jobId: plan.job.id,
          tickMs: TICK,
          maxConcurrency: 16,
          onStep: (task, step, detail) => {
            if (step === "succeeded") {
              seen.push({ id: detail, outcome: "SUCCESS", at: clock.now() });
              druidIdOf.set(task.id, detail);
            }
            const druidId = druidIdOf.get(task.id);
            if (step === "handed-off" && druidId) handedOff.push({ druidId, at: clock.now() });
          },
        });
        checks.equal(result.counts.done, partitions, `cost ${partitions} segops: partitions done`);
      } finally {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    } else {
      // Pinned ids, as a careful recipe pins them: a submission whose answer was lost (a keep-alive race on a
      // loaded machine) is retried instead of ending the run.
      const specs = plan.tasks.map(
        (t, i) =>
          ({
            ...((t.payload as unknown as IngestPayload).spec as unknown as TaskSpec),
            id: `cost_${poller}_${i}`,
          }) as TaskSpec,
      );
      seen =
        poller === "seed"
          ? await backoffBackfill(env.client, specs, { clock, poolSize: 16 })
          : await pool(specs, 16, async (spec) => {
              const { taskId } = await env.client.submitTask(spec);
              return pollEvery(env.client, taskId, clock, 1000);
            });
    }
    const makespanMs = clock.now() - start;
    loop.disable();
    const succeeded = seen.filter((s) => s.outcome === "SUCCESS").length;
    checks.equal(succeeded, partitions, `cost ${partitions} ${poller}: successes seen`);
    const tasks = await env.tasks();
    const spans = seen.flatMap((s) => {
      const from = eventAt(tasks, s.id, "submitted");
      const to = finishedAt(tasks, s.id);
      return from === null || to === null ? [] : [{ from, to }];
    });
    return {
      poller,
      partitions,
      makespanMs,
      meter,
      detection: detectionOf(tasks, seen),
      handoffSeen: handedOff.flatMap((h) => {
        const served = eventAt(tasks, h.druidId, "handedOff");
        return served === null ? [] : [Math.max(0, h.at - served)];
      }),
      seenSucceeded: succeeded,
      loopDelay: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
      lookupGaps: env.lookups.slice(1).map((t, i) => t - (env.lookups[i] as number)),
      bulkIdsAsked: env.bulkIdsAsked(),
      load: { before: loadBefore, after: loadavg()[0] ?? Number.NaN },
      runTimes: spans.map((s) => s.to - s.from),
      taskSpanMs:
        spans.length === 0 ? 0 : Math.max(...spans.map((s) => s.to)) - Math.min(...spans.map((s) => s.from)),
    };
  });
}

const BULK_STATUS = "POST /druid/indexer/v1/taskStatus";
const STATUS_GET = "GET /druid/indexer/v1/task/:taskId/status";
const REPORTS = "GET /druid/indexer/v1/task/:taskId/reports";
const SUBMIT = "POST /druid/indexer/v1/task";
/** The detection intervals the floor is computed for (D). */
const FLOOR_INTERVALS_MS = [2000, 1000] as const;

/**
 * The floor of a run (bench/lib/cost-floor.ts), from segops' run of it: its tasks' run times (the emulator's
 * submission to finish), its report and submission answers, and the smallest per-task status-answer cost any
 * of the run's pollers measured (segops' bulk answers per id asked, the baselines' status GETs). Null without
 * segops' run (the only one that reads reports).
 */
function floorsOf(runs: readonly CostRun[]): CostFloor[] | null {
  const segops = runs.find((r) => r.poller === "segops");
  if (!segops || segops.runTimes.length === 0) return null;
  const cost = (r: CostRun, route: string) => r.meter.byEndpoint().find(([e]) => e === route)?.[1];
  const report = cost(segops, REPORTS);
  const submit = cost(segops, SUBMIT);
  if (!report?.requests || !submit?.requests) return null;
  const candidates: StatusEntryCost[] = [];
  const bulk = cost(segops, BULK_STATUS);
  if (bulk?.requests && segops.bulkIdsAsked > 0)
    candidates.push({
      source: `segops' bulk \`POST /taskStatus\`: ${num(bulk.bytes, 0)} B ÷ ${num(segops.bulkIdsAsked, 0)} ids asked`,
      bytes: bulk.bytes / segops.bulkIdsAsked,
    });
  for (const r of runs) {
    const get = cost(r, STATUS_GET);
    if (get?.requests)
      candidates.push({
        source: `${r.poller}'s \`GET /task/{id}/status\`: ${num(get.bytes, 0)} B ÷ ${num(get.requests, 0)}`,
        bytes: get.bytes / get.requests,
      });
  }
  return FLOOR_INTERVALS_MS.map((intervalMs) =>
    costFloor({
      runTimesMs: segops.runTimes,
      makespanMs: segops.taskSpanMs,
      statusEntry: candidates,
      reportBytes: report.bytes / report.requests,
      submitBytes: submit.bytes / submit.requests,
      intervalMs,
    }),
  );
}

const floorLabel = (f: CostFloor) =>
  `floor (not a poller): every finish seen within ${f.intervalMs / 1000} s, report + submission only`;

const perMin = (n: number, ms: number) => (n / ms) * 60_000;
const meanBytes = (r: CostRun, route: string) => {
  const c = r.meter.byEndpoint().find(([e]) => e === route)?.[1];
  return c?.requests ? c.bytes / c.requests : Number.NaN;
};
const kib = (bytes: number) => `${num(bytes / 1024, 1)} KiB`;
const secs = (ms: number) => `${num(ms / 1000, 2)} s`;

function summaryTable(runs: readonly CostRun[], floors: readonly CostFloor[]): string {
  const base = runs.find((r) => r.poller === "segops");
  const bt = base?.meter.total();
  const floorRows = floors.map((f) => {
    const span = base?.taskSpanMs ?? 0;
    const requests = f.requestsPerTask * f.tasks;
    const bytes = f.bytesPerTask * f.tasks;
    return [
      floorLabel(f),
      `${num(span / 60_000, 1)} min`,
      num(requests, 0),
      num(f.requestsPerTask, 1),
      num(f.bulkLookups / f.tasks, 1),
      kib(f.bytesPerTask),
      num(perMin(requests, span), 0),
      kib(perMin(bytes, span)),
      `≤ ${secs(f.intervalMs)}`,
      "",
      bt ? `${num(requests / bt.requests, 2)}× / ${num(bytes / bt.bytes, 2)}×` : "",
    ];
  });
  const rows = runs.map((r) => {
    const t = r.meter.total();
    return [
      LABEL[r.poller],
      `${num(r.makespanMs / 60_000, 1)} min`,
      num(t.requests, 0),
      num(t.requests / r.partitions, 1),
      num(r.meter.total(isStatusLookup).requests / r.partitions, 1),
      kib(t.bytes / r.partitions),
      num(perMin(t.requests, r.makespanMs), 0),
      kib(perMin(t.bytes, r.makespanMs)),
      `${secs(quantile(r.detection, 0.5))} / ${secs(quantile(r.detection, 0.99))}`,
      `${num(r.load.before, 1)} → ${num(r.load.after, 1)}`,
      bt ? `${num(t.requests / bt.requests, 2)}× / ${num(t.bytes / bt.bytes, 2)}×` : "",
    ];
  });
  rows.push(...floorRows);
  return markdownTable(
    [
      "poller",
      "makespan",
      "requests",
      "requests / task",
      "of which status lookups",
      "bytes / task",
      "requests / min",
      "bytes / min",
      "detection p50 / p99",
      "1-min load",
      "requests / bytes vs segops",
    ],
    rows,
    "figures",
  );
}

function endpointTable(runs: readonly CostRun[]): string {
  const rows: string[][] = [];
  for (const r of runs)
    for (const [endpoint, c] of r.meter.byEndpoint())
      rows.push([
        r.poller,
        `\`${endpoint}\``,
        num(c.requests, 0),
        num(perMin(c.requests, r.makespanMs), 1),
        kib(perMin(c.bytes, r.makespanMs)),
        num(c.requests / r.partitions, 2),
        `${num(c.bytes / Math.max(1, c.requests), 0)} B`,
      ]);
  return markdownTable(
    ["poller", "endpoint", "requests", "per min", "bytes / min", "per task", "bytes / request"],
    rows,
    "figures",
  );
}

export async function runCostBench(options: CostBenchOptions = {}): Promise<BenchResult> {
  const checks = new Checks();
  const timeScale = options.timeScale ?? 20;
  const seed = options.seed ?? 7;
  const history = options.history ?? PRODUCTION;
  const sizes = options.partitions ?? (options.quick ? [100] : [100, 1000]);
  const tables: string[] = [];
  const figures: Record<string, unknown> = {};
  const headline: BenchResult["headline"] = [];
  const notes: string[] = [];
  const loadBefore = loadavg()[0] ?? Number.NaN;
  for (const partitions of sizes) {
    const durations = logNormalDurations(partitions, seed, {
      medianMs: 60_000,
      sigma: 0.5,
      minMs: 20_000,
      maxMs: 5 * 60_000,
    });
    const dataDir = mkdtempSync(join(tmpdir(), "segops-bench-cost-data-"));
    try {
      writeDailyDataset({ dir: dataDir, from: FROM, days: partitions, rowsPerDay: 20 });
      const plan = planBackfill(dataDir, durations);
      const runs: CostRun[] = [];
      for (const poller of options.pollers ?? POLLERS)
        runs.push(await runOne(poller, plan, { timeScale, seed, history }, checks));
      const floors = floorsOf(runs) ?? [];
      tables.push(`**${partitions} partitions**`, summaryTable(runs, floors), endpointTable(runs));
      const of = (p: Poller) => runs.find((r) => r.poller === p);
      const [s, b, op] = POLLERS.map((p) => of(p)?.meter.total());
      const segops = of("segops");
      if (!segops) continue;
      const p99 = quantile(segops.detection, 0.99);
      figures[`cost${partitions}`] = Object.fromEntries([
        ...runs.map((r) => [
          r.poller,
          {
            requestsPerTask: r.meter.total().requests / r.partitions,
            bytesPerTask: r.meter.total().bytes / r.partitions,
            detectionP99Ms: quantile(r.detection, 0.99),
            makespanMs: r.makespanMs,
            ...(r.poller === "segops"
              ? {
                  handoffSeenP50Ms: quantile(r.handoffSeen, 0.5),
                  handoffSeenP99Ms: quantile(r.handoffSeen, 0.99),
                }
              : {}),
          },
        ]),
        ...floors.map((f) => [
          `floor${f.intervalMs / 1000}s`,
          {
            intervalMs: f.intervalMs,
            looksPerTask: f.looksPerTask,
            statusEntryBytes: f.statusEntry.bytes,
            statusEntrySource: f.statusEntry.source,
            bulkLookups: f.bulkLookups,
            requestsPerTask: f.requestsPerTask,
            bytesPerTask: f.bytesPerTask,
            makespanMs: segops.taskSpanMs,
          },
        ]),
      ]);
      const cheapest =
        s &&
        b &&
        op &&
        s.requests <= Math.min(b.requests, op.requests) &&
        s.bytes <= Math.min(b.bytes, op.bytes);
      notes.push(
        `${partitions} partitions: segops ${cheapest ? "sends the fewest requests and bytes per task" : "is **not** the cheapest per task"} (${num((s?.requests ?? 0) / partitions, 1)} requests, ${kib((s?.bytes ?? 0) / partitions)} a task), detection p99 ${secs(p99)} (goal ≤ 2 s: ${p99 <= 2000 ? "met" : "**missed**"}).`,
        `${partitions} partitions: segops' process (the emulator is another) had event-loop delays p99 ${num(segops.loopDelay.p99, 0)} ms / max ${num(segops.loopDelay.max, 0)} ms real (× ${timeScale} emulated); gaps between its status lookups p50 ${secs(quantile(segops.lookupGaps, 0.5))} / p99 ${secs(quantile(segops.lookupGaps, 0.99))} / max ${secs(Math.max(0, ...segops.lookupGaps))}.`,
        `${partitions} partitions: segops saw a handoff ${secs(quantile(segops.handoffSeen, 0.5))} (p50) / ${secs(quantile(segops.handoffSeen, 0.99))} (p99) after the emulator served the segments (${segops.handoffSeen.length} partitions; the checks back off to every ${MAX_CHECK_INTERVAL_TICKS} ticks while nothing new is served).`,
      );
      for (const f of floors) {
        const vs = (x: EndpointCost | undefined, what: string) =>
          x
            ? `${what} ${num(x.requests / partitions, 1)} requests / ${kib(x.bytes / partitions)} a task: the floor is ${num(f.requestsPerTask / (x.requests / partitions), 2)}× / ${num(f.bytesPerTask / (x.bytes / partitions), 2)}× that`
            : "";
        notes.push(
          `${partitions} partitions, ${floorLabel(f)}: ${num(f.looksPerTask, 1)} status entries a task (Σ ⌈run time / ${f.intervalMs / 1000} s⌉, run time the emulator's submission to finish) × ${num(f.statusEntry.bytes, 1)} B (the smallest measured: ${f.statusEntry.source}) + report ${num(meanBytes(segops, REPORTS), 0)} B + submission ${num(meanBytes(segops, SUBMIT), 0)} B = ${kib(f.bytesPerTask)} a task; ${num(f.bulkLookups, 0)} bulk lookups over ${secs(segops.taskSpanMs)} (first submission to last finish) shared by ${f.tasks} tasks + 2 = ${num(f.requestsPerTask, 2)} requests a task. ${[vs(b, "seed-style"), vs(s, "segops")].filter(Boolean).join("; ")}.`,
        );
      }
      headline.push([
        `cost: ${partitions}-partition backfill against a production-sized history (emulated)`,
        `${num((s?.requests ?? 0) / partitions, 1)} requests, ${kib((s?.bytes ?? 0) / partitions)} a task; detection p99 ${secs(p99)}`,
        `seed-style ${num((b?.requests ?? 0) / partitions, 1)} requests, ${kib((b?.bytes ?? 0) / partitions)}; operator-style ${num((op?.requests ?? 0) / partitions, 1)} requests, ${kib((op?.bytes ?? 0) / partitions)} a task`,
      ]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const setup = [
    `The emulator seeded with a production-sized history (${num(history.tasks, 0)} complete tasks over 24 h,`,
    `${num(history.segments, 0)} served segments over ${history.dataSources} datasources; the backfill's datasource is one of them),`,
    `then a daily backfill (log-normal task durations, median 1 min, σ 0.5, 20 s–5 min) on ${SLOTS.workers} × ${SLOTS.capacity} = 16 slots,`,
    `segments served ${HANDOFF_MS / 1000} s after publish, at time scale ${timeScale}; all figures in emulated time.`,
    "Requests and response bytes are every attempt each run's client sent and the body it got back, per endpoint (route template).",
    "segops waits for handoff and audits each partition; the baselines stop at SUCCESS.",
    `1-min load average ${num(loadBefore, 1)} before, ${num(loadavg()[0] ?? Number.NaN, 1)} after.`,
  ].join(" ");
  return {
    title: "What segops costs a Druid",
    setup,
    tables,
    notes,
    headline,
    problems: checks.problems,
    figures,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      scale: { type: "string" },
      partitions: { type: "string" },
      pollers: { type: "string" },
    },
  });
  const pollers = values.pollers?.split(",");
  const unknown = pollers?.find((p) => !(POLLERS as readonly string[]).includes(p));
  if (unknown !== undefined)
    throw new Error(
      `--pollers: unknown poller "${unknown}"; expected a comma-separated list of ${POLLERS.join(", ")}`,
    );
  const partitions = values.partitions?.split(",").map(Number);
  if (partitions?.some((n) => !(Number.isInteger(n) && n > 0)))
    throw new Error(`--partitions: expected comma-separated positive integers, got "${values.partitions}"`);
  const result = await runCostBench({
    quick: values.quick,
    ...(values.scale ? { timeScale: Number(values.scale) } : {}),
    ...(partitions ? { partitions } : {}),
    ...(pollers ? { pollers: pollers as Poller[] } : {}),
  });
  console.log(`## ${result.title}\n\n${result.setup}\n\n${result.tables.join("\n\n")}\n`);
  for (const n of result.notes) console.log(`- ${n}`);
  for (const p of result.problems) console.log(`PROBLEM: ${p}`);
  process.exitCode = result.problems.length > 0 ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
