/**
 * Runs the benchmarks, prints one markdown section per benchmark (ratios against the baselines measured in
 * the same run) and, when all of them ran, writes `bench/results.md`. Exits 1 when a benchmark's own
 * correctness checks failed.
 *
 *   npm run bench                                   # all (see ALL); writes bench/results.md
 *   npm run bench -- --quick                        # baselines, scale, startup, handoff, overhead, smaller (< 2 min)
 *   npm run bench -- --json                         # also one JSON object of named figures on stdout
 *   node --import tsx bench/run.ts poll backfill    # a subset (printed only; results.md is left alone)
 *
 * With --json the markdown goes to stderr, so stdout is exactly one JSON object.
 */
import { spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runBackfillBench } from "./backfill.js";
import { runBaselinesBench } from "./baselines.js";
import { runCostBench } from "./cost.js";
import { runHandoffBench } from "./handoff.js";
import { runLargeRequestBench } from "./large-request.js";
import type { BenchResult } from "./lib/result.js";
import { markdownTable } from "./lib/table.js";
import { captureWarnings } from "./lib/warnings.js";
import { runOverheadBench } from "./overhead.js";
import { runPollBench } from "./poll.js";
import { runScaleBench } from "./scale.js";
import { runServeWaitersBench } from "./serve-waiters.js";
import { runStartupBench } from "./startup.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const ALL = [
  "baselines",
  "scale",
  "poll",
  "backfill",
  "ledger",
  "startup",
  "waiters",
  "handoff",
  "overhead",
  "large-request",
  "cost",
] as const;
type Name = (typeof ALL)[number];
/** `--quick`: the README's headline figures, at a smaller size. */
const QUICK: readonly Name[] = ["baselines", "scale", "startup", "handoff", "overhead"];

/** `bench/ledger.ts` (another module's benchmark) runs on import, so it gets its own process. */
async function runLedgerBench(): Promise<BenchResult> {
  const script = join(here, "ledger.ts");
  const base = { title: "Ledger", setup: "", notes: [], headline: [] };
  if (!existsSync(script))
    return { ...base, tables: [], problems: [], notes: ["bench/ledger.ts is absent."] };
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: root });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
      });
      child.on("error", reject);
      child.on("close", (c) => resolve({ code: c, stdout: out, stderr: err }));
    },
  );
  const lines = stdout.trim().split("\n");
  const table = lines.filter((l) => l.startsWith("|")).join("\n");
  const rest = lines.filter((l) => !l.startsWith("|") && l.trim() !== "");
  return {
    ...base,
    setup:
      "`bench/ledger.ts` (run as a child process): committed CAS transitions per second, the latency of claiming 1,000 due tasks, and the driver's scan (listDue 100, then claim) with 100,000 due tasks, on SQLite and PostgreSQL.",
    tables: table ? [table] : [],
    notes: rest,
    problems:
      code === 0 ? [] : [`bench/ledger.ts exited ${code}: ${stderr.trim().split("\n").slice(-3).join(" ")}`],
  };
}

const flags = new Set(process.argv.slice(2).filter((a) => a.startsWith("--")));
const quick = flags.has("--quick");
const json = flags.has("--json");

const RUNNERS: Record<Name, () => Promise<BenchResult>> = {
  baselines: () => runBaselinesBench({ quick }),
  scale: () => runScaleBench({ quick }),
  poll: () => runPollBench(),
  backfill: () => runBackfillBench(),
  ledger: runLedgerBench,
  startup: () => runStartupBench(quick ? { runs: 5, warmup: 1, importRuns: 1 } : {}),
  waiters: () => runServeWaitersBench(),
  handoff: () => runHandoffBench({ quick }),
  overhead: () => runOverheadBench({ quick }),
  "large-request": runLargeRequestBench,
  cost: () => runCostBench({ quick }),
};

function section(r: BenchResult): string {
  const parts = [`## ${r.title}`];
  if (r.setup) parts.push(r.setup);
  parts.push(...r.tables);
  if (r.notes.length > 0) parts.push(r.notes.map((n) => `- ${n}`).join("\n"));
  if (r.problems.length > 0) {
    const shown = r.problems.slice(0, 20).map((p) => `- ${p}`);
    if (r.problems.length > 20) shown.push(`- … and ${r.problems.length - 20} more`);
    parts.push(`**Correctness problems (${r.problems.length}):**\n\n${shown.join("\n")}`);
  }
  return parts.join("\n\n");
}

function git(args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn("git", args, { cwd: root });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("error", () => resolve("unknown"));
    child.on("close", () => resolve(out.trim() || "unknown"));
  });
}

const args = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const unknown = [
  ...args.filter((a) => !(ALL as readonly string[]).includes(a)),
  ...[...flags].filter((f) => f !== "--quick" && f !== "--json"),
];
if (unknown.length > 0) {
  console.error(
    `unknown benchmark(s) or flag(s): ${unknown.join(", ")}; expected some of: ${ALL.join(", ")}, --quick, --json`,
  );
  process.exit(2);
}
const selected: Name[] = args.length > 0 ? (args as Name[]) : quick ? [...QUICK] : [...ALL];
/** With --json, stdout carries only the JSON object. */
const print = (text: string) => (json ? process.stderr.write(`${text}\n`) : console.log(text));

const startedAt = new Date();
const loadBefore = loadavg()[0] ?? 0;
const results: BenchResult[] = [];
const warnings = captureWarnings();
try {
  for (const name of selected) {
    process.stderr.write(`running ${name}…\n`);
    const began = performance.now();
    const result = await RUNNERS[name]();
    // Where a run's time goes (the --quick budget is 2 minutes in all).
    process.stderr.write(`${name} took ${((performance.now() - began) / 1000).toFixed(1)} s\n`);
    results.push(result);
    print(`${section(result)}\n`);
  }
} finally {
  warnings.restore();
}

const cpu = cpus();
const machine = [
  `${startedAt.toISOString().slice(0, 16)}Z, commit ${await git(["rev-parse", "--short", "HEAD"])}`,
  `Node ${process.version}, ${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}`,
  `1-min load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? 0).toFixed(1)} after (the machine is shared)`,
].join(" · ");
const headline = results.flatMap((r) => r.headline);
const warningNotes = [...warnings.seen.values()].map(
  (w) => `- Node warned ${w.count}× \`${w.name}\` during the run, e.g. "${w.example}"`,
);
const doc = [
  "# segops benchmarks: latest results",
  `Generated by \`npm run bench\` (bench/run.ts). ${machine}. See docs/benchmarks.md for what each benchmark measures.`,
  headline.length > 0
    ? `## Headline\n\n${markdownTable(["benchmark", "segops", "baselines in the same run"], headline, "text")}`
    : "",
  ...results.map(section),
  warningNotes.length > 0 ? `## Warnings\n\n${warningNotes.join("\n")}` : "",
]
  .filter((p) => p !== "")
  .join("\n\n");

if (warningNotes.length > 0) print(`## Warnings\n\n${warningNotes.join("\n")}\n`);
print(machine);
if (selected.length === ALL.length && !quick) {
  writeFileSync(join(here, "results.md"), `${doc}\n`);
  print("wrote bench/results.md");
}
if (json) {
  const figures = Object.assign(
    {
      startedAt: startedAt.toISOString(),
      commit: await git(["rev-parse", "--short", "HEAD"]),
      quick,
      loadBefore,
      loadAfter: loadavg()[0] ?? 0,
      cpus: cpu.length,
    },
    ...results.map((r) => r.figures ?? {}),
  );
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
const problems = results.reduce((n, r) => n + r.problems.length, 0);
if (problems > 0) {
  console.error(`${problems} correctness problem(s); see above`);
  process.exitCode = 1;
}
