/**
 * The emulator's start-up and memory, before and after a change to its engine: for each checkout (compiled
 * `dist/`), `segops sim --port 0` in a fresh process — the time from spawn to its first answer
 * (`GET /status/health` 200), its resident set idle at that moment, and its resident set (and peak) after it
 * ran the MSQ corpus (test/fixtures/msq-corpus: every query submitted, in order, each waited on until its task
 * ends). The checkouts take turns, round after round, so the machine's load hits them alike; `--load N` runs N
 * CPU-burning processes meanwhile (the loaded figure), and the 1-minute load average is printed with each.
 *
 *   git worktree add /tmp/msq-before <commit> && ln -s "$PWD/node_modules" /tmp/msq-before/
 *   (cd /tmp/msq-before && npx tsc -p tsconfig.build.json)       # and the same for the "after" checkout
 *   node --import tsx bench/sim-startup.ts --before /tmp/msq-before --after . [--runs 10] [--load 2]
 *
 * Linux only (RSS from /proc). Reports medians and the spread (min–max) over the runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { readCorpus } from "../test/helpers/msq-corpus.js";
import { sampleProc } from "./lib/proc.js";
import { quantile } from "./lib/stats.js";
import { markdownTable, num } from "./lib/table.js";

interface Run {
  firstAnswerMs: number;
  idleRssMb: number;
  afterRssMb: number;
  peakRssMb: number;
  accepted: number;
  succeeded: number;
}

const MB = 1024 * 1024;

async function waitHealthy(url: string, child: ChildProcess, t0: number): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`segops sim exited ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/status/health`);
      if (res.status === 200) return performance.now() - t0;
    } catch {
      // Not listening yet: ask again.
    }
    await new Promise((r) => setImmediate(r));
  }
}

/** Starts `segops sim` from a checkout's dist/ and resolves with its URL once it prints where it listens. */
function startSim(root: string): Promise<{ child: ChildProcess; url: string; t0: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(root, "dist/cli/bin.js"), "sim", "--port", "0"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolvePromise, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolvePromise({ child, url: m[1], t0 });
    });
    child.on("exit", (code) => reject(new Error(`segops sim (${root}) exited ${code}`)));
  });
}

/** Submits every corpus query in order and waits until each accepted one's task has ended. */
async function runCorpus(url: string): Promise<{ accepted: number; succeeded: number }> {
  let accepted = 0;
  let succeeded = 0;
  let n = 0;
  for (const e of readCorpus()) {
    try {
      const r = await submitOne(url, e, `bench-${++n}`);
      accepted += r.accepted ? 1 : 0;
      succeeded += r.succeeded ? 1 : 0;
    } catch {
      // A query the engine answers with a dropped connection counts as not accepted.
    }
  }
  return { accepted, succeeded };
}

async function submitOne(
  url: string,
  e: ReturnType<typeof readCorpus>[number],
  sqlQueryId: string,
): Promise<{ accepted: boolean; succeeded: boolean }> {
  {
    const res = await fetch(`${url}/druid/v2/sql/task`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query: e.sql,
        context: { sqlQueryId, simDurationMs: 1, ...e.context },
      }),
    });
    const body = (await res.json()) as { taskId?: string };
    if (res.status !== 202 || !body.taskId) return { accepted: false, succeeded: false };
    for (;;) {
      const st = (await (await fetch(`${url}/druid/indexer/v1/task/${body.taskId}/status`)).json()) as {
        status?: { statusCode?: string };
      };
      const code = st.status?.statusCode;
      if (code === "SUCCESS" || code === "FAILED") return { accepted: true, succeeded: code === "SUCCESS" };
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

async function once(root: string): Promise<Run> {
  const { child, url, t0 } = await startSim(root);
  try {
    const firstAnswerMs = await waitHealthy(url, child, t0);
    const pid = child.pid as number;
    const idle = sampleProc(pid);
    const { accepted, succeeded } = await runCorpus(url);
    const after = sampleProc(pid);
    return {
      firstAnswerMs,
      idleRssMb: idle.rssBytes / MB,
      afterRssMb: after.rssBytes / MB,
      peakRssMb: after.hwmBytes / MB,
      accepted,
      succeeded,
    };
  } finally {
    child.kill("SIGKILL");
  }
}

function burners(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      before: { type: "string" },
      after: { type: "string", default: "." },
      runs: { type: "string", default: "10" },
      load: { type: "string", default: "0" },
    },
  });
  const variants = [
    ...(values.before ? [{ name: "before", root: resolve(values.before) }] : []),
    { name: "after", root: resolve(values.after) },
  ];
  for (const v of variants)
    if (!existsSync(join(v.root, "dist/cli/bin.js")))
      throw new Error(`${v.root}: no dist/cli/bin.js — build it first (npx tsc -p tsconfig.build.json)`);
  const runs = Number(values.runs);
  const load = burners(Number(values.load));
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const results = new Map<string, Run[]>(variants.map((v) => [v.name, []]));
  try {
    await once(variants[0]?.root as string); // warm the file cache
    for (let i = 0; i < runs; i++)
      for (const v of variants) (results.get(v.name) as Run[]).push(await once(v.root));
  } finally {
    for (const b of load) b.kill("SIGKILL");
  }
  const loadAfter = loadavg()[0] ?? Number.NaN;
  const med = (xs: number[]) => quantile(xs, 0.5);
  const spread = (xs: number[]) => `${num(Math.min(...xs), 0)}–${num(Math.max(...xs), 0)}`;
  const rows = variants.map((v) => {
    const r = results.get(v.name) as Run[];
    const pick = (k: keyof Run) => r.map((x) => x[k]);
    return [
      v.name,
      `${num(med(pick("firstAnswerMs")), 0)} ms (${spread(pick("firstAnswerMs"))})`,
      `${num(med(pick("idleRssMb")), 1)} MB`,
      `${num(med(pick("afterRssMb")), 1)} MB`,
      `${num(med(pick("peakRssMb")), 1)} MB`,
      `${r[0]?.accepted ?? 0} accepted, ${r[0]?.succeeded ?? 0} succeeded`,
    ];
  });
  console.log(
    markdownTable(
      [
        "engine",
        "first answer (median, range)",
        "RSS idle",
        "RSS after corpus",
        "peak RSS",
        "corpus queries",
      ],
      rows,
    ),
  );
  console.log(
    `\n${runs} runs each, ${load.length} CPU burners; 1-min load average ${num(loadBefore, 2)} before, ${num(loadAfter, 2)} after.`,
  );
}

await main();
