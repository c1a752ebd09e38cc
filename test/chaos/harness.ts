// The chaos harness: a 60-partition backfill through the real CLI against the
// emulator, with seeded faults — SIGKILLs of the CLI at seeded points of progress (then the same command
// again), Druid 5xx, connection resets, 429 bursts, leader failovers (307, 503), a slow Coordinator, and
// the emulator restarted with its state (running tasks lose their worker and FAIL, as in Druid) or without the
// tasks it had in flight (Druid forgetting a task: segops must submit the same id again), and Druid's
// answer to one submission in ten lost on the way back (a proxy destroys the connection after Druid accepted),
// and the SQLite ledger locked by another process for up to 8 s.
// After the run a checker compares Druid's side (the emulator's submission log, tasks and timeline) with
// segops' side (the ledger and the final report). Runnable alone: `npm run chaos -- --runs 20 --seed 1`.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Clock, systemClock } from "../../src/core/clock.js";
import { parseTaskId } from "../../src/core/task-id.js";
import { openStore } from "../../src/ledger/open.js";
import { isActive } from "../../src/sim/engine.js";
import type { FaultRule } from "../../src/sim/faults.js";
import { seededRng } from "../../src/sim/rng.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import type { SubmissionRecord } from "../../src/sim/stats.js";
import { type CliResult, runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startLossyProxy } from "./lossy-proxy.js";

export interface ChaosOptions {
  seed: number;
  /** Partitions (days) of the backfill. @default 60 */
  partitions?: number;
  /** Inject faults (false: the fault-free run the amplification is measured against). @default true */
  faults?: boolean;
  /**
   * How the emulator is restarted, when the seed restarts it: with its state, or without the tasks it had
   * in flight (Druid forgetting a task). @default seeded
   */
  restart?: "with-state" | "forget";
}

export interface ChaosFigures {
  seed: number;
  partitions: number;
  kills: number;
  emulatorRestarts: number;
  /** Restarts that forgot the tasks in flight (their ids unknown to Druid afterwards). */
  emulatorForgets: number;
  /** Tasks Druid forgot in those restarts (each must be submitted again under the same id, and run once). */
  forgottenTasks: number;
  /** Times another process held the SQLite ledger's write lock (up to 8 s) during the run. */
  ledgerLocks: number;
  faultsInjected: number;
  faultKinds: string[];
  /** Submissions Druid accepted whose answer the proxy destroyed. */
  lostAnswers: number;
  /** Every HTTP request segops made to the emulator. */
  requests: number;
  acceptedSubmissions: number;
  /** Attempts Druid FAILED (lost worker on restart) and segops retried under a new id. */
  retriedAttempts: number;
  /** Partitions with two SUCCESS attempts (goal 0). */
  doubleSuccesses: number;
  /** Chunks with more than one live version (goal 0). */
  mixedChunks: number;
  /** Partitions not done at the end (goal 0). */
  lost: number;
  exitCode: number | null;
}

export interface ChaosRun {
  figures: ChaosFigures;
  /** Broken invariants, each in words (empty = the run holds every guarantee). */
  violations: string[];
}

const DS = "chaos";
const REPO = fileURLToPath(new URL("../..", import.meta.url));
const FROM = Date.UTC(2026, 0, 1);

/** Seeded fault rules: a mix of 5xx, resets, 429 bursts, failovers and a slow Coordinator. */
function faultPlan(rng: ReturnType<typeof seededRng>): { rules: FaultRule[]; kinds: string[] } {
  const all: Array<[string, FaultRule]> = [
    [
      "5xx on submit",
      { path: "/druid/indexer/v1/task", method: "POST", kind: "status", status: 500, rate: 0.1 },
    ],
    ["5xx on bulk status", { path: "/druid/indexer/v1/taskStatus", kind: "status", status: 503, rate: 0.1 }],
    ["resets", { kind: "reset", rate: 0.02 }],
    ["429 burst", { path: "/druid/indexer/v1/task", method: "POST", kind: "status", status: 429, count: 5 }],
    ["failover (307)", { path: "/druid/indexer/v1", kind: "failover", rate: 0.02, count: 20 }],
    ["no leader (503)", { path: "/druid/coordinator/v1", kind: "noLeader", rate: 0.02, count: 20 }],
    ["slow Coordinator", { path: "/druid/coordinator/v1", kind: "latency", latencyMs: 20, rate: 0.2 }],
  ];
  const chosen = all.filter(() => rng.next() < 0.6);
  const picked = chosen.length > 0 ? chosen : all.slice(0, 3);
  return { rules: picked.map(([, r]) => r), kinds: picked.map(([k]) => k) };
}

export async function runChaos(options: ChaosOptions): Promise<ChaosRun> {
  const partitions = options.partitions ?? 60;
  const withFaults = options.faults ?? true;
  const rng = seededRng(options.seed * 7919 + 17);
  const work = mkdtempSync(join(tmpdir(), `segops-chaos-${options.seed}-`));
  const dataDir = writeDailyDataset({
    from: "2026-01-01",
    days: partitions,
    rowsPerDay: 12,
    dir: join(work, "data"),
  });
  const template = join(work, "daily.json");
  writeFileSync(template, JSON.stringify(dailyTemplate({ datasource: DS })));
  const ledgerUrl = `sqlite:${join(work, "ledger.db")}`;
  const simDir = join(work, "sim");
  const plan = withFaults ? faultPlan(rng) : { rules: [], kinds: [] };

  // The emulator's base clock, which a forgetting restart freezes for a moment: the tasks in flight when it
  // looks stay in flight until it is stopped (at 1000× a task ends in a millisecond or two).
  let frozenAt: number | null = options.restart === "forget" ? Date.now() : null;
  const clock: Clock = {
    now: () => frozenAt ?? Date.now(),
    sleep: (ms, signal) => systemClock.sleep(ms, signal),
  };
  const simOptions = {
    clock,
    seed: options.seed,
    timeScale: 1000,
    handoffDelayMs: 2000,
    capacity: 8,
    dataDir: simDir,
  };
  let sim: SimHandle = await startSim({ ...simOptions, faults: plan.rules });
  const port = sim.port;
  // Druid's answer to one submission in ten is lost on the way back (the task exists; segops never heard).
  const proxy = await startLossyProxy(sim.url, rng, withFaults ? 0.1 : 0);
  // Druid-side facts survive emulator restarts here (its stats start again with each life).
  const submissions: SubmissionRecord[] = [];
  let requests = 0;
  let faultsInjected = 0;
  const bank = () => {
    const s = sim.stats();
    submissions.push(...s.submissions);
    requests += Object.values(s.requests).reduce((a, b) => a + b, 0);
    faultsInjected += s.faultsInjected;
    sim.resetStats();
  };
  const accepted = () =>
    submissions.filter((s) => s.accepted).length + sim.stats().submissions.filter((s) => s.accepted).length;

  const to = new Date(FROM + partitions * 86_400_000).toISOString().slice(0, 10);
  const args = [
    "backfill",
    template,
    "--from",
    "2026-01-01",
    "--to",
    to,
    "--var",
    `dataDir=${dataDir}`,
    "--druid",
    proxy.url,
    "--ledger",
    ledgerUrl,
    "--tick",
    "20",
    "--lease",
    "1500",
    "--max-concurrency",
    "8",
    "--json",
  ];

  // Seeded kill points (by accepted submissions) and one emulator restart point.
  const kills = withFaults ? 1 + rng.int(0, 2) : 0;
  const killAt = Array.from({ length: kills }, () => rng.int(1, partitions - 1)).sort((a, b) => a - b);
  const drawnRestart = withFaults && rng.next() < 0.7 ? rng.int(1, partitions - 1) : null;
  // A forgetting restart asked for comes at the first accepted submission, with the emulator's time stopped
  // from the start (below): a task is then surely in flight. At 1000× a whole run can otherwise end before
  // the harness sees its trigger (a loaded machine starves the harness, not the CLI), forgetting nothing.
  const restartAt = options.restart === "forget" ? 1 : drawnRestart;
  let restarts = 0;
  let killed = 0;
  let last: CliResult | null = null;
  // Another process takes the SQLite ledger's write lock for up to 8 s at a seeded point (longer than
  // the CLI's 5 s busy timeout: the run may stop on it, exit 4, and be run again).
  const lockAt = withFaults && rng.next() < 0.6 ? rng.int(1, partitions - 1) : null;
  const lockMs = rng.int(500, 8000);
  // Drawn last, so the seeds' other choices are those of runs before this fault existed.
  const forget = options.restart ? options.restart === "forget" : rng.next() < 0.5;
  const forgotten = new Set<string>();
  let forgets = 0;
  let ledgerLocks = 0;
  const locker =
    lockAt === null
      ? Promise.resolve()
      : (async () => {
          await until(`${lockAt} accepted submissions`, () => accepted() >= lockAt, { timeoutMs: 300_000 });
          const holder = spawn(
            process.execPath,
            [
              "-e",
              `const db = new (require("better-sqlite3"))(process.argv[1]); db.exec("BEGIN IMMEDIATE"); setTimeout(() => { db.exec("COMMIT"); db.close(); }, ${lockMs});`,
              ledgerUrl.slice("sqlite:".length),
            ],
            { cwd: REPO, stdio: "ignore" },
          );
          ledgerLocks++;
          await new Promise((resolve) => holder.on("exit", resolve));
        })().catch(() => undefined);

  for (let round = 0; round < 10 && last?.code !== 0; round++) {
    const cli = runCli(args);
    const nextKill = killAt[killed];
    const restartPending = restartAt !== null && restarts === 0;
    if (nextKill !== undefined || restartPending) {
      const trigger = Math.min(
        nextKill ?? Number.POSITIVE_INFINITY,
        restartPending ? (restartAt as number) : Number.POSITIVE_INFINITY,
      );
      try {
        await until(`${trigger} accepted submissions`, () => accepted() >= trigger, {
          timeoutMs: 120_000,
          whileRunning: cli,
        });
      } catch {
        // The run ended before the trigger (it was fast): nothing to interrupt this round.
      }
      if (!cli.exited) {
        if (restartPending && trigger === restartAt) {
          if (forget) {
            // Forget tasks really in flight: wait (bounded) until one is, with the emulator's time stopped
            // from that look to its stop.
            await until(
              "a task in flight",
              () => {
                const wasFrozen = frozenAt !== null;
                frozenAt ??= Date.now();
                sim.engine.sync();
                if ([...sim.engine.tasks.values()].some(isActive)) return true;
                if (!wasFrozen) frozenAt = null;
                return false;
              },
              { timeoutMs: 60_000, whileRunning: cli },
            ).catch(() => undefined);
          }
          bank();
          await sim.close();
          if (forget) {
            // Druid forgets the tasks it had in flight: gone from its task storage, never run, no segment.
            for (const id of forgetActiveTasks(simDir)) forgotten.add(id);
            forgets++;
            frozenAt = null;
          }
          sim = await startSim({ ...simOptions, port, faults: plan.rules });
          restarts++;
        } else {
          cli.child.kill("SIGKILL");
          killed++;
        }
      }
    }
    last = await cli.done;
  }
  await locker;
  bank();

  const violations: string[] = [];
  const figures = await check({ sim, ledgerUrl, submissions, forgotten, partitions, last, violations });
  await sim.close();
  await proxy.close();
  return {
    figures: {
      seed: options.seed,
      partitions,
      kills: killed,
      emulatorRestarts: restarts,
      emulatorForgets: forgets,
      forgottenTasks: forgotten.size,
      ledgerLocks,
      faultsInjected,
      faultKinds: withFaults ? [...plan.kinds, "lost submit answers"] : [],
      lostAnswers: proxy.lost,
      requests,
      ...figures,
      exitCode: last?.code ?? null,
    },
    violations,
  };
}

async function check(input: {
  sim: SimHandle;
  ledgerUrl: string;
  submissions: SubmissionRecord[];
  /** Task ids the emulator forgot in a restart: each may be accepted once more. */
  forgotten: ReadonlySet<string>;
  partitions: number;
  last: CliResult | null;
  violations: string[];
}): Promise<
  Pick<ChaosFigures, "acceptedSubmissions" | "retriedAttempts" | "doubleSuccesses" | "mixedChunks" | "lost">
> {
  const { sim, violations } = input;
  const engine = sim.engine;
  const accepted = input.submissions.filter((s) => s.accepted && s.id);
  const ids = accepted.map((s) => s.id as string);
  // Once per id, or twice for an id Druid forgot (segops submits it again, as it must).
  const times = new Map<string, number>();
  for (const id of ids) times.set(id, (times.get(id) ?? 0) + 1);
  for (const [id, n] of times)
    if (n > (input.forgotten.has(id) ? 2 : 1)) violations.push(`task id ${id} was accepted ${n} times`);
  for (const id of input.forgotten)
    if (times.get(id) !== 2)
      violations.push(
        `forgotten task ${id} was accepted ${times.get(id) ?? 0} times, not once before and once after`,
      );

  // Per partition (interval slug): its Druid tasks and how they ended.
  const bySlug = new Map<string, string[]>();
  for (const id of ids) {
    const parsed = parseTaskId(id);
    if (!parsed) {
      violations.push(`an accepted task id segops did not derive: ${id}`);
      continue;
    }
    bySlug.set(parsed.slug, [...(bySlug.get(parsed.slug) ?? []), id]);
  }
  let doubleSuccesses = 0;
  let retriedAttempts = 0;
  for (const [slug, all] of bySlug) {
    const taskIds = [...new Set(all)];
    const phases = taskIds.map((id) => engine.tasks.get(id)?.phase);
    const successes = phases.filter((p) => p === "success").length;
    if (successes > 1) {
      doubleSuccesses++;
      violations.push(`partition ${slug} has ${successes} successful attempts`);
    }
    retriedAttempts += phases.filter((p) => p === "failed").length;
  }

  const store = await openStore(input.ledgerUrl);
  let lost = 0;
  let mixedChunks = 0;
  try {
    const [job] = await store.listJobs({ kind: "backfill" });
    if (!job) {
      violations.push(
        `no backfill job in the ledger; the last run: ${input.last?.code} ${input.last?.stderr.slice(-800)}`,
      );
      return {
        acceptedSubmissions: ids.length,
        retriedAttempts,
        doubleSuccesses,
        mixedChunks,
        lost: input.partitions,
      };
    }
    const tasks = await store.listTasks(job.id);
    if (tasks.length !== input.partitions)
      violations.push(`${tasks.length} partitions in the ledger, not ${input.partitions}`);
    const visible = engine.store.visible(DS, engine.now);
    for (const t of tasks) {
      if (t.state !== "done") {
        lost++;
        violations.push(`partition ${t.id} ended ${t.state}: ${t.lastError ?? ""}`);
        continue;
      }
      const p = t.progress as { version?: string; interval?: string };
      const interval = (t.payload as { interval: string }).interval;
      const [startText, endText] = interval.split("/");
      const start = Date.parse(startText ?? "");
      const end = Date.parse(endText ?? "");
      const live = [
        ...new Set(
          visible.filter((s) => s.interval.start >= start && s.interval.end <= end).map((s) => s.version),
        ),
      ];
      if (live.length > 1) {
        mixedChunks++;
        violations.push(`chunk ${interval} has live versions ${live.join(", ")}`);
      }
      if (live.length === 1 && p.version !== live[0])
        violations.push(`chunk ${interval}: the ledger recorded ${p.version}, Druid serves ${live[0]}`);
      if (live.length === 0)
        violations.push(`chunk ${interval} is done in the ledger but has no live version`);
      const served = visible.filter(
        (s) => s.version === live[0] && s.interval.start >= start && s.interval.end <= end,
      );
      if (!served.every((s) => engine.isServed(s)))
        violations.push(`chunk ${interval} is done but not served`);
    }
  } finally {
    await store.close();
  }

  // The exit code and the report tell the truth.
  const last = input.last;
  if (last?.code !== 0)
    violations.push(`the last run exited ${last?.code ?? last?.signal}: ${last?.stderr.slice(-500)}`);
  else {
    const report = JSON.parse(last.stdout) as { state?: string; counts?: { done?: number } };
    if (report.state !== "done" || report.counts?.done !== input.partitions)
      violations.push(`the report says ${JSON.stringify({ state: report.state, counts: report.counts })}`);
  }
  return { acceptedSubmissions: ids.length, retriedAttempts, doubleSuccesses, mixedChunks, lost };
}

/**
 * Edits a stopped emulator's saved state so that it forgets the tasks it had in flight (waiting, pending or
 * running): gone from its task storage as if the Overlord had lost them. Returns their ids.
 */
function forgetActiveTasks(simDir: string): string[] {
  const file = join(simDir, "sim-state.json");
  const state = JSON.parse(readFileSync(file, "utf8")) as { tasks: Array<{ id: string; phase: string }> };
  const active = state.tasks.filter((t) => ["waiting", "pending", "running"].includes(t.phase));
  state.tasks = state.tasks.filter((t) => !active.includes(t));
  writeFileSync(file, JSON.stringify(state));
  return active.map((t) => t.id);
}
