/**
 * Handoff checks at scale: what one handoff tick costs segops when the datasource has 200,000 served segments
 * and N partitions wait, reading the served set the old way (the datasource's whole served-id list, `GET
 * /datasources/{ds}/segments`) and the new way (the Coordinator's served view of just the waiting intervals,
 * `…/intervals/{interval}/serverview`, one request per range of touching intervals).
 *
 *   node --import tsx bench/handoff.ts [--quick]
 *
 * The emulator (`segops sim`, from source) runs in its own process over a state file of hourly segments; the
 * checker runs here with a ManualClock, so a tick is exactly one flush. Per tick: bytes of the answers (an undici
 * interceptor counts body bytes), requests, wall time from the tick to the last verdict (the emulator's answer
 * time included), and this process's CPU time (segops' parse and decision cost).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Agent, type Dispatcher } from "undici";
import { ManualClock } from "../src/core/clock.js";
import { parseInterval } from "../src/core/interval.js";
import { DruidClient } from "../src/druid/client.js";
import { HandoffChecker, type HandoffSource, MAX_SERVED_RANGES } from "../src/work/handoff.js";
import { type BenchResult, Checks } from "./lib/result.js";
import { startSimProcess } from "./lib/sim-process.js";
import { markdownTable, num, times } from "./lib/table.js";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const HOUR = 3_600_000;
const DS = "big";
const VERSION = "2020-01-01T00:00:00.000Z";
const FIRST = Date.UTC(2000, 0, 1);

const iso = (t: number) => new Date(t).toISOString();

/** `n` hourly segments of one version from 2000-01-01, as the emulator's state file stores them, all served. */
function stateFile(dir: string, n: number): void {
  const segments = Array.from({ length: n }, (_, i) => {
    const start = FIRST + i * HOUR;
    const interval = `${iso(start)}_${iso(start + HOUR)}`;
    return {
      id: `${DS}_${interval}_${VERSION}`,
      dataSource: DS,
      interval: { start, end: start + HOUR },
      version: VERSION,
      partitionNum: 0,
      corePartitions: 1,
      shardSpec: { type: "numbered", partitionNum: 0, partitions: 1 },
      size: 52_000,
      numRows: 1_000,
      dimensions: ["channel", "page", "user"],
      metrics: ["count", "added"],
      loadSpec: { type: "local", path: `/druid/segments/${DS}/${interval}/${VERSION}/0/index.zip` },
      tombstone: false,
      taskId: "seed",
      publishedAt: 0,
      servedAt: 0,
      unusedAt: null,
      rows: null,
    };
  });
  writeFileSync(
    join(dir, "sim-state.json"),
    JSON.stringify({
      format: 1,
      savedAt: 0,
      counters: { seq: 0, lastVersion: 0, failCounts: {} },
      tasks: [],
      segments,
    }),
  );
}

/** Counts response body bytes of every request through the dispatcher. */
function countingAgent(counter: { bytes: number }): Dispatcher {
  return new Agent({ connections: 8 }).compose((dispatch) => (opts, handler) => {
    const h = handler as unknown as Record<string, unknown>;
    const wrapped = new Proxy(h, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (prop === "onResponseData")
          return (controller: unknown, chunk: Buffer) => {
            counter.bytes += chunk.length;
            return value.call(target, controller, chunk);
          };
        if (prop === "onData")
          return (chunk: Buffer) => {
            counter.bytes += chunk.length;
            return value.call(target, chunk);
          };
        return value.bind(target);
      },
    });
    return dispatch(opts, wrapped as unknown as Dispatcher.DispatchHandler);
  });
}

interface Tick {
  bytes: number;
  requests: number;
  wallMs: number;
  cpuMs: number;
  handedOff: number;
}

/** The waiting hours: `n` consecutive ones, or `n` one every `stride` hours, spread over the datasource. */
function waiting(n: number, segments: number, shape: "contiguous" | "scattered"): string[] {
  const stride = shape === "contiguous" ? 1 : Math.max(2, Math.floor(segments / n));
  const base = shape === "contiguous" ? Math.floor(segments / 2) : 0;
  return Array.from({ length: n }, (_, i) => {
    const start = FIRST + (base + i * stride) * HOUR;
    return `${iso(start)}/${iso(start + HOUR)}`;
  });
}

/** One tick of a checker over `intervals`: every partition asks, the clock moves one tick, all verdicts arrive. */
async function tick(
  source: HandoffSource,
  counter: { bytes: number },
  intervals: string[],
  cap: number,
): Promise<Tick> {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const checker = new HandoffChecker({ source, clock, tickMs: 1000, maxServedRanges: cap });
  const verdicts = intervals.map((i) =>
    checker.check(DS, {
      interval: parseInterval(i),
      mode: "replace",
      baseline: { versions: [], segmentIds: [] },
    }),
  );
  const bytes0 = counter.bytes;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await clock.advance(1000);
  const results = await Promise.all(verdicts);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await checker.stop();
  return {
    bytes: counter.bytes - bytes0,
    requests: checker.stats.requests,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    handedOff: results.filter((r) => r.state === "handed-off").length,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

export async function runHandoffBench(options: { quick?: boolean } = {}): Promise<BenchResult> {
  const quick = options.quick === true;
  const segments = quick ? 20_000 : 200_000;
  const rounds = quick ? 1 : 5;
  const dir = mkdtempSync(join(tmpdir(), "segops-bench-handoff-"));
  const checks = new Checks();
  const load = loadavg()[0] ?? 0;
  stateFile(dir, segments);
  const sim = await startSimProcess({
    nodeArgs: ["--import", "tsx", join(root, "src/cli/bin.ts")],
    args: ["--data-dir", dir],
    cwd: root,
    startTimeoutMs: 120_000,
  });
  const counter = { bytes: 0 };
  const client = new DruidClient({ url: sim.url, dispatcher: countingAgent(counter) });
  // The old path: no served view, so the checker reads the whole served list (what it did before).
  const wholeList: HandoffSource = {
    metadataSegments: (ds, intervals, o) => client.metadataSegments(ds, intervals, o),
    servedSegments: (ds, o) => client.servedSegments(ds, o),
    loadRules: (ds, o) => client.loadRules(ds, o),
  };
  const rows: Array<Array<string | number>> = [];
  const figures: Record<string, unknown> = {};
  try {
    // Warm-up: the emulator's first answers build its indexes and JIT both sides.
    await tick(wholeList, counter, waiting(10, segments, "contiguous"), MAX_SERVED_RANGES);
    await tick(client, counter, waiting(quick ? 100 : 10, segments, "scattered"), MAX_SERVED_RANGES);
    const cases: Array<[number, "contiguous" | "scattered"]> = quick
      ? [
          [10, "scattered"],
          [1_000, "contiguous"],
          [200, "scattered"],
        ]
      : [
          [10, "contiguous"],
          [10, "scattered"],
          [100, "scattered"],
          [1_000, "contiguous"],
          [1_000, "scattered"],
          [2_000, "scattered"],
        ];
    for (const [n, shape] of cases) {
      const intervals = waiting(n, segments, shape);
      const variants: Array<[string, HandoffSource, number]> = [
        ["whole served list (before; the fallback now)", wholeList, MAX_SERVED_RANGES],
        [
          n > MAX_SERVED_RANGES && shape === "scattered"
            ? `more than ${num(MAX_SERVED_RANGES)} ranges: the whole list (now)`
            : "serverview per range (now)",
          client,
          MAX_SERVED_RANGES,
        ],
      ];
      if (n > MAX_SERVED_RANGES && shape === "scattered")
        variants.push(["serverview per range, no fallback", client, Number.POSITIVE_INFINITY]);
      let before: Tick | undefined;
      for (const [name, source, cap] of variants) {
        const ticks: Tick[] = [];
        for (let r = 0; r < rounds; r++) ticks.push(await tick(source, counter, intervals, cap));
        const t: Tick = {
          bytes: median(ticks.map((x) => x.bytes)),
          requests: median(ticks.map((x) => x.requests)),
          wallMs: median(ticks.map((x) => x.wallMs)),
          cpuMs: median(ticks.map((x) => x.cpuMs)),
          handedOff: Math.min(...ticks.map((x) => x.handedOff)),
        };
        checks.equal(t.handedOff, n, `${n} ${shape}, ${name}: partitions handed off`);
        before ??= t;
        rows.push([
          `${num(n)} ${shape}`,
          name,
          num(t.requests),
          `${num(t.bytes / 1024, 1)} KiB`,
          `${num(t.wallMs, 1)} ms`,
          `${num(t.cpuMs, 1)} ms`,
          t === before ? "" : `${times(before.bytes / t.bytes)} / ${times(before.wallMs / t.wallMs)}`,
        ]);
        const key = `handoff${n}${shape === "contiguous" ? "Contiguous" : "Scattered"}${t === before ? "Before" : cap === MAX_SERVED_RANGES ? "" : "NoCap"}`;
        figures[`${key}Bytes`] = t.bytes;
        figures[`${key}Ms`] = Math.round(t.wallMs * 10) / 10;
      }
    }
  } finally {
    await client.close();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const table = markdownTable(
    [
      "waiting partitions",
      "served set read as",
      "requests / tick",
      "bytes / tick",
      "wall / tick",
      "segops CPU / tick",
      "fewer bytes / faster than before",
    ],
    rows,
  );
  return {
    title: "Handoff checks at scale",
    setup: `One handoff tick of \`HandoffChecker\` against \`segops sim\` (own process) holding ${num(segments)} served hourly segments of one datasource; hourly partitions waiting, consecutive (a backfill) or one every ${num(Math.floor(segments / 1000))}–${num(Math.floor(segments / 10))} hours (scattered). Every tick also sends the metadata POST of the waiting intervals and the rules GET. Median of ${rounds} ticks each; 1-min load average ${load.toFixed(1)} at the start.`,
    tables: [table],
    notes: [
      "Wall time includes the emulator's answers (its own work per request is not a Coordinator's); bytes, requests and segops' CPU are the figures that carry over to a real cluster.",
    ],
    headline: [],
    problems: checks.problems,
    figures,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await runHandoffBench({ quick: process.argv.includes("--quick") });
  console.log(
    [`## ${result.title}`, result.setup, ...result.tables, ...result.notes.map((n) => `- ${n}`)].join("\n\n"),
  );
  for (const p of result.problems) console.error(`problem: ${p}`);
  console.log(`\n1-min load average ${(loadavg()[0] ?? 0).toFixed(1)} at the end`);
  process.exitCode = result.problems.length > 0 ? 1 : 0;
}
