// `npm run chaos -- --runs N --seed S`: the chaos harness's long mode. Runs N seeds from S, plus one
// fault-free run per seed for the request amplification, and prints the figures (JSON lines, then a
// summary) that docs/reliability.md quotes. Exits 1 if any run broke a guarantee.
// `npm run chaos -- --multi --runs N --seed S`: the multi-actor family instead (multi-actor.ts).
import { parseArgs } from "node:util";
import { runChaos } from "./harness.js";
import { runMultiActor } from "./multi-actor.js";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    seed: { type: "string", default: "1" },
    multi: { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
const first = Number(values.seed);
if (!Number.isSafeInteger(runs) || runs < 1)
  throw new Error(`--runs: expected a positive whole number, got ${values.runs}`);
if (!Number.isSafeInteger(first)) throw new Error(`--seed: expected a whole number, got ${values.seed}`);
if (values.multi) process.exit(await multi(runs, first));

let broken = 0;
const totals = {
  lostAnswers: 0,
  ledgerLocks: 0,
  kills: 0,
  restarts: 0,
  forgets: 0,
  forgotten: 0,
  faults: 0,
  retried: 0,
  double: 0,
  mixed: 0,
  lost: 0,
  accepted: 0,
  partitions: 0,
};
const amplification: number[] = [];
const kinds = new Map<string, number>();
for (let i = 0; i < runs; i++) {
  const seed = first + i;
  const run = await runChaos({ seed });
  const calm = await runChaos({ seed, faults: false });
  const f = run.figures;
  amplification.push(f.requests / Math.max(1, calm.figures.requests));
  for (const k of f.faultKinds) kinds.set(k, (kinds.get(k) ?? 0) + 1);
  totals.lostAnswers += f.lostAnswers;
  totals.ledgerLocks += f.ledgerLocks;
  totals.kills += f.kills;
  totals.restarts += f.emulatorRestarts;
  totals.forgets += f.emulatorForgets;
  totals.forgotten += f.forgottenTasks;
  totals.faults += f.faultsInjected;
  totals.retried += f.retriedAttempts;
  totals.double += f.doubleSuccesses;
  totals.mixed += f.mixedChunks;
  totals.lost += f.lost;
  totals.accepted += f.acceptedSubmissions;
  totals.partitions += f.partitions;
  if (run.violations.length > 0) broken++;
  process.stdout.write(
    `${JSON.stringify({ ...f, amplification: amplification.at(-1), violations: run.violations })}\n`,
  );
}
const sorted = [...amplification].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
process.stdout.write(
  `${JSON.stringify({ summary: { runs, broken, ...totals, faultRunsByKind: Object.fromEntries(kinds), amplificationMedian: Number(median.toFixed(2)), amplificationMax: Number((sorted.at(-1) ?? 0).toFixed(2)) } })}\n`,
);
process.exitCode = broken > 0 ? 1 : 0;

/** The multi-actor long mode: one JSON line per run (figures, violations, load average), then a summary. */
async function multi(runs: number, first: number): Promise<number> {
  const { loadavg } = await import("node:os");
  const sum: Record<string, number> = {};
  const add = (key: string, n: number) => {
    sum[key] = (sum[key] ?? 0) + n;
  };
  const answers: Record<string, number> = {};
  const outcomes: Record<string, number> = {};
  const loads: number[] = [];
  let brokenRuns = 0;
  const started = Date.now();
  for (let i = 0; i < runs; i++) {
    const seed = first + i;
    const t0 = Date.now();
    const run = await runMultiActor({ seed });
    const load = loadavg()[0] ?? 0;
    loads.push(load);
    const f = run.figures;
    for (const [k, v] of Object.entries(f)) if (typeof v === "number" && k !== "seed") add(k, v);
    for (const [k, v] of Object.entries(f.answers)) answers[k] = (answers[k] ?? 0) + v;
    for (const [k, v] of Object.entries(f.opOutcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
    if (run.violations.length > 0) brokenRuns++;
    process.stdout.write(
      `${JSON.stringify({ ...f, seconds: Math.round((Date.now() - t0) / 1000), load1: Number(load.toFixed(2)), violations: run.violations })}\n`,
    );
  }
  process.stdout.write(
    `${JSON.stringify({ summary: { runs, brokenRuns, ...sum, answers, opOutcomes: outcomes, minutes: Math.round((Date.now() - started) / 60_000), load1: { min: Math.min(...loads), max: Math.max(...loads) } } })}\n`,
  );
  return brokenRuns > 0 ? 1 : 0;
}
