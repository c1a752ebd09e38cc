/**
 * CLI startup: wall time of `segops --help` and of `segops validate` on a typical template, against bare
 * Node (`node -e 0`) in the same run, from the compiled `dist/` (what the installed CLI runs) and from
 * source through tsx. Every command is a fresh process; the variants take turns, round after round, so
 * a change in the machine's load hits them all alike. Then, per module, what importing it costs in a
 * fresh process: where the time of a start goes, and what the lazy command modules keep out of it.
 *
 *   node --import tsx bench/startup.ts [--runs 30] [--no-build]
 *
 * Goals: `--help` within 2× of bare Node, `validate` under 250 ms (both from dist).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { buildOnce } from "./lib/build.js";
import { type BenchResult, Checks } from "./lib/result.js";
import { quantile } from "./lib/stats.js";
import { markdownTable, num, times } from "./lib/table.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);

export interface StartupBenchOptions {
  /** Measured runs of every variant (after `warmup` unmeasured rounds). @default 30 */
  runs?: number;
  /** Unmeasured rounds first: file cache, tsx's compile cache. @default 3 */
  warmup?: number;
  /** Compile `dist/` first (`tsc -p tsconfig.build.json`), so its figures are of the current source. @default true */
  build?: boolean;
  /** Fresh processes per module in the import-cost table. @default 7 */
  importRuns?: number;
}

interface Variant {
  name: string;
  args: string[];
  /** What its output must show for the run to count as a correct one. */
  expect: (stdout: string) => boolean;
}

interface Exit {
  code: number | null;
  ms: number;
  /** CPU time (user + system) of the child, as it reported at exit; NaN when it did not. */
  cpuMs: number;
  stdout: string;
  stderr: string;
}

/**
 * Preloaded into every measured command (bare Node included, so it costs all of them alike): reports the
 * process's CPU time at exit. Unlike wall time it hardly moves when other work shares the machine.
 */
const CPU_REPORTER =
  'data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("\\nbench-cpu-us "+(u.user+u.system)+"\\n")})';
const CPU_LINE = /\nbench-cpu-us (\d+)\n$/;

function run(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      const cpu = CPU_LINE.exec(stderr);
      resolve({ code, ms, cpuMs: cpu ? Number(cpu[1]) / 1000 : Number.NaN, stdout, stderr });
    });
  });
}

const TEMPLATE = "samples/templates/wikipedia-daily.json";
const VALIDATE = [
  "validate",
  TEMPLATE,
  "--interval",
  "2016-06-27/P1D",
  "--var",
  `dataDir=${join(root, "samples/wikipedia-sample")}`,
];
const listsEveryCommand = (out: string) =>
  ["demo", "run", "backfill", "wait", "status", "dlq", "sim", "validate", "id"].every((c) =>
    new RegExp(`^  ${c} `, "m").test(out),
  );

/** Node's own start with tsx's loader: the floor of every from-source figure. */
const TSX_BARE = ["--import", "tsx", "-e", "0"];

function variants(): Variant[] {
  const dist = join(root, "dist/cli/bin.js");
  const src = join(root, "src/cli/bin.ts");
  return [
    { name: "`node -e 0` (bare Node)", args: ["-e", "0"], expect: () => true },
    { name: "`segops --help` (dist)", args: [dist, "--help"], expect: listsEveryCommand },
    { name: "`segops validate` (dist)", args: [dist, ...VALIDATE], expect: () => true },
    { name: "`node --import tsx -e 0` (bare tsx)", args: TSX_BARE, expect: () => true },
    {
      name: "`segops --help` (source, tsx)",
      args: ["--import", "tsx", src, "--help"],
      expect: listsEveryCommand,
    },
    {
      name: "`segops validate` (source, tsx)",
      args: ["--import", "tsx", src, ...VALIDATE],
      expect: () => true,
    },
  ];
}

/** What importing one module (with everything it imports) costs in a fresh process, from dist. */
const IMPORTS: Array<[what: string, specifier: string, note: string]> = [
  ["commander", "commander", "`--help`: the argument parser"],
  ["dist/cli/commands/index.js", "./dist/cli/commands/index.js", "`--help`: every command's registration"],
  ["dist/spec/index.js", "./dist/spec/index.js", "`validate`: the spec toolkit (zod, yaml, luxon)"],
  ["dist/cli/commands/ingest-common.js", "./dist/cli/commands/ingest-common.js", "kept out: run/backfill"],
  ["dist/cli/context.js", "./dist/cli/context.js", "kept out: the Druid client and ledger opener"],
  ["dist/sim/index.js", "./dist/sim/index.js", "kept out: the emulator"],
  ["undici", "undici", "kept out: HTTP client"],
  ["pg", "pg", "kept out: PostgreSQL driver"],
  ["better-sqlite3", "better-sqlite3", "kept out: SQLite driver"],
];

async function importCost(specifier: string): Promise<number> {
  const script = `const t = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t));`;
  const exit = await run(["--input-type=module", "-e", script]);
  if (exit.code !== 0) throw new Error(`importing ${specifier} failed: ${exit.stderr.trim().split("\n")[0]}`);
  return Number(exit.stdout);
}

const ms = (value: number) => `${num(value, 0)} ms`;

export async function runStartupBench(options: StartupBenchOptions = {}): Promise<BenchResult> {
  const runs = options.runs ?? 30;
  const warmup = options.warmup ?? 3;
  const importRuns = options.importRuns ?? 7;
  const checks = new Checks();
  const notes: string[] = [];
  if (options.build ?? true) {
    const complaint = await buildOnce();
    if (complaint)
      notes.push(`\`tsc -p tsconfig.build.json\` reported errors (dist/ emitted anyway): ${complaint}`);
  }
  checks.expect(existsSync(join(root, "dist/cli/bin.js")), "dist/cli/bin.js is missing: run npm run build");

  const loadBefore = loadavg()[0] ?? 0;
  const all = variants();
  const samples = all.map(() => [] as number[]);
  const cpu = all.map(() => [] as number[]);
  for (let round = 0; round < warmup + runs; round++) {
    // A different order each round, so no variant always runs right after the same other.
    const order = all.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    for (const i of order) {
      const variant = all[i] as Variant;
      const exit = await run(["--import", CPU_REPORTER, ...variant.args]);
      if (round === warmup) {
        checks.equal(exit.code, 0, `${variant.name} exit code (stderr: ${exit.stderr.trim().slice(0, 200)})`);
        checks.expect(variant.expect(exit.stdout), `${variant.name}: its output is not what it should be`);
      }
      if (round >= warmup) {
        (samples[i] as number[]).push(exit.ms);
        (cpu[i] as number[]).push(exit.cpuMs);
      }
    }
  }
  const median = samples.map((s) => quantile(s, 0.5));
  const p90 = samples.map((s) => quantile(s, 0.9));
  const at = (i: number) => median[i] as number;
  const rows = all.map((v, i) => {
    const floor = i < 3 ? at(0) : at(3);
    const cpuMedian = quantile(cpu[i] as number[], 0.5);
    return [v.name, ms(at(i)), ms(p90[i] as number), times(at(i) / floor), ms(at(i) - floor), ms(cpuMedian)];
  });

  const costs: Array<[string, string, string]> = [];
  for (const [what, specifier, note] of IMPORTS) {
    const values: number[] = [];
    for (let i = 0; i < importRuns; i++) values.push(await importCost(specifier));
    costs.push([`\`${what}\``, ms(quantile(values, 0.5)), note]);
  }

  const helpRatio = at(1) / at(0);
  const validateMs = at(2);
  const goal = (ok: boolean) => (ok ? "met" : "**missed**");
  const cpuAt = (i: number) => quantile(cpu[i] as number[], 0.5);
  notes.push(
    `Goals (dist, wall time): \`--help\` within 2× of bare Node: ${times(helpRatio)}, ${goal(helpRatio <= 2)}; \`validate\` under 250 ms: ${ms(validateMs)}, ${goal(validateMs < 250)}. In CPU time: \`--help\` ${times(cpuAt(1) / cpuAt(0))} of bare Node, \`validate\` ${ms(cpuAt(2))}.`,
    "Ratios and added time are against bare Node for dist, against bare tsx (Node with tsx's loader, which compiles TypeScript on the fly) for source.",
    "CPU is the child's user + system time as it reported at exit (every command preloads the same one-line reporter): it hardly moves with the machine's load, wall time does.",
    `Machine: Node ${process.version}, ${availableParallelism()} CPUs; 1-min load average ${loadBefore.toFixed(1)} before the runs, ${(loadavg()[0] ?? 0).toFixed(1)} at the end.`,
    "Import costs are medians over fresh processes, with everything each module imports; they overlap (the registrations import commander) and do not add up to a start.",
  );
  return {
    title: "CLI startup",
    setup: [
      `Wall time of each command as a fresh process (spawn to exit), ${runs} runs each after ${warmup} warm-up rounds,`,
      "the variants taking turns in a shuffled order every round. `validate` checks",
      `\`${TEMPLATE}\` for \`--interval 2016-06-27/P1D\` with its \`dataDir\` variable. dist/ is compiled first.`,
    ].join(" "),
    tables: [
      markdownTable(["command", "wall median", "wall p90", "vs bare", "added", "CPU median"], rows),
      // The last column is words: left-aligned.
      markdownTable(["module (imported alone)", "import cost (median)", "for"], costs).replace(
        "|---|---:|---:|",
        "|---|---:|---|",
      ),
    ],
    notes,
    headline: [
      [
        "CLI startup (dist)",
        `\`segops --help\` ${ms(at(1))} = ${times(helpRatio)} bare Node; \`segops validate\` (a typical template) ${ms(validateMs)}`,
        `bare \`node -e 0\`: ${ms(at(0))}; goals: ≤ 2× and < 250 ms`,
      ],
    ],
    problems: checks.problems,
    figures: { helpMs: at(1), nodeMs: at(0), validateMs, helpCpuMs: cpuAt(1), nodeCpuMs: cpuAt(0) },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: {
      runs: { type: "string" },
      warmup: { type: "string" },
      "no-build": { type: "boolean" },
    },
  });
  const result = await runStartupBench({
    ...(values.runs ? { runs: Number(values.runs) } : {}),
    ...(values.warmup ? { warmup: Number(values.warmup) } : {}),
    ...(values["no-build"] ? { build: false } : {}),
  });
  console.log([result.setup, ...result.tables, result.notes.map((n) => `- ${n}`).join("\n")].join("\n\n"));
  if (result.problems.length > 0) {
    console.error(`\n${result.problems.length} correctness problem(s):\n${result.problems.join("\n")}`);
    process.exitCode = 1;
  }
}
