/**
 * End-to-end overhead of `segops run` (goal ≤ 1 s): the compiled CLI ingests one daily partition
 * against `segops sim` in another process (time scale 1, so emulated time is real time; handoff delay 0, so
 * the Coordinator serves the segments as they are published), with a task of known emulated duration
 * (`context.simDurationMs`). Overhead = wall time of the process − the task's duration as Druid reports it;
 * it splits into the time before Druid created the task (process start, planning, ledger, baseline reads,
 * submit) and the time after the task ended (SUCCESS detection, handoff gate, audit, exit).
 *
 *   node --import tsx bench/overhead.ts [--quick]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildOnce } from "./lib/build.js";
import { type BenchResult, Checks } from "./lib/result.js";
import { startSimProcess } from "./lib/sim-process.js";
import { markdownTable, num } from "./lib/table.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const BIN = join(root, "dist/cli/bin.js");
const TASK_MS = 3000;
const GOAL_MS = 1000;

interface Round {
  wallMs: number;
  taskMs: number;
  beforeMs: number;
  afterMs: number;
  exit: number | null;
}

/** One `segops run` in a fresh ledger; a new spec version per round gives a new Druid task id. */
async function runOnce(url: string, dir: string, template: string, round: number): Promise<Round> {
  const args = [
    BIN,
    "run",
    template,
    "--interval",
    "2016-06-27/2016-06-28",
    "--var",
    `dataDir=${join(root, "samples/wikipedia-sample")}`,
    "--druid",
    url,
    "--ledger",
    `sqlite:${join(dir, `ledger-${round}.db`)}`,
    "--spec-version",
    `overhead-${Date.now()}-${round}`,
    "--json",
  ];
  const started = Date.now();
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (c) => resolve({ code: c, stdout: out }));
  });
  const ended = Date.now();
  const report = JSON.parse(stdout) as { partitions: Array<{ druidTaskId: string }> };
  const id = report.partitions[0]?.druidTaskId ?? "";
  const res = await fetch(`${url}/druid/indexer/v1/task/${encodeURIComponent(id)}/status`);
  const status = ((await res.json()) as { status: { createdTime: string; duration: number } }).status;
  const created = Date.parse(status.createdTime);
  return {
    wallMs: ended - started,
    taskMs: status.duration,
    beforeMs: created - started,
    afterMs: ended - (created + status.duration),
    exit: code,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

export async function runOverheadBench(options: { quick?: boolean } = {}): Promise<BenchResult> {
  const rounds = options.quick ? 2 : 7;
  const checks = new Checks();
  const buildProblem = await buildOnce();
  if (buildProblem) checks.expect(false, `tsc: ${buildProblem}`);
  const dir = mkdtempSync(join(tmpdir(), "segops-bench-overhead-"));
  const template = join(dir, "template.json");
  const sample = JSON.parse(readFileSync(join(root, "samples/templates/wikipedia-daily.json"), "utf8"));
  writeFileSync(template, JSON.stringify({ ...sample, context: { simDurationMs: TASK_MS } }));
  const load = loadavg()[0] ?? 0;
  const sim = await startSimProcess({ nodeArgs: [BIN], args: ["--handoff-delay", "0"], cwd: root });
  const results: Round[] = [];
  try {
    if (!options.quick) await runOnce(sim.url, dir, template, -1); // warm-up: file cache
    for (let r = 0; r < rounds; r++) {
      const round = await runOnce(sim.url, dir, template, r);
      checks.equal(round.exit, 0, `round ${r}: segops run exit code`);
      checks.equal(round.taskMs, TASK_MS, `round ${r}: task duration`);
      results.push(round);
    }
  } finally {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const overhead = results.map((r) => r.wallMs - r.taskMs);
  const med = median(overhead);
  const row = (name: string, pick: (r: Round) => number) => [
    name,
    `${num(median(results.map(pick)))} ms`,
    `${num(Math.min(...results.map(pick)))}–${num(Math.max(...results.map(pick)))} ms`,
  ];
  const table = markdownTable(
    ["`segops run`, one partition", `median of ${rounds}`, "range"],
    [
      row("wall time of the process", (r) => r.wallMs),
      row("task duration (Druid's `duration`)", (r) => r.taskMs),
      row(`**overhead** = wall − task (goal ≤ ${num(GOAL_MS)} ms)`, (r) => r.wallMs - r.taskMs),
      row("· before the task: start, plan, ledger, baseline, submit", (r) => r.beforeMs),
      row("· after the task: SUCCESS seen, handoff gate, audit, exit", (r) => r.afterMs),
    ],
  );
  return {
    title: "End-to-end overhead of `segops run`",
    setup: `The compiled CLI (\`node dist/cli/bin.js run\`, fresh SQLite ledger and Druid task id each round) against \`segops sim\` in its own process (time scale 1, handoff delay 0), one daily partition of the wikipedia sample whose task takes ${num(TASK_MS)} ms of emulated time. 1-min load average ${load.toFixed(1)} at the start.`,
    tables: [table],
    notes: [`Overhead ${num(med)} ms median: goal ${med <= GOAL_MS ? "met" : "**missed**"}.`],
    headline: [[`\`segops run\` overhead beyond the task (goal ≤ 1 s)`, `${num(med)} ms`, ""]],
    problems: checks.problems,
    figures: { runOverheadMs: med },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await runOverheadBench({ quick: process.argv.includes("--quick") });
  console.log(
    [`## ${result.title}`, result.setup, ...result.tables, ...result.notes.map((n) => `- ${n}`)].join("\n\n"),
  );
  for (const p of result.problems) console.error(`problem: ${p}`);
  console.log(`\n1-min load average ${(loadavg()[0] ?? 0).toFixed(1)} at the end`);
  process.exitCode = result.problems.length > 0 ? 1 : 0;
}
