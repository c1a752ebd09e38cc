import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { ManualClock, systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { clusterOf } from "../../src/druid/cluster.js";
import type { DataSegment } from "../../src/druid/types.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { runJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import {
  type CompactRequest,
  chunkTotals,
  compactionSlotBudget,
  compactionVerdict,
  inspectCompaction,
  judgeChunks,
  planCompaction,
  sameData,
  taskSlotBudget,
} from "../../src/ops/index.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { DEFAULT_SIZE_BAND } from "../../src/work/audit.js";
import { segmentId } from "../../src/work/segments.js";
import { runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * `segops compact` on the emulator: a fragmented month (three segments a day) becomes one segment a day
 * with the same rows and totals; a chunk split by maxRows stays split but in band; a chunk a running task
 * locks is skipped; an ingestion that takes a running compaction's lock wins, and the compaction runs again
 * after it, over the new data.
 */

let sim: SimHandle | undefined;
let client: DruidClient | undefined;
let store: Store | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
  sim = client = store = undefined;
});

const DS = "compactme";

async function start(options: Parameters<typeof startSim>[0] = {}) {
  sim = await startSim({ timeScale: 1000, handoffDelayMs: 1000, seed: 5, ...options });
  client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
  store = await openStore("sqlite::memory:");
}

async function run(jobId: string) {
  return runJob({
    store: store as Store,
    client: client as DruidClient,
    clock: systemClock,
    jobId,
    tickMs: 20,
    retryBaseMs: 20,
  });
}

/** Backfills `range` once, then appends to it twice: three segments per day, each of other rows. */
async function fragmented(range: string, days: number, from: string) {
  const rows = [4, 3, 5];
  for (const [i, rowsPerDay] of rows.entries()) {
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: DS, append: i > 0 }) },
      templateName: "daily.json",
      range: parseInterval(range),
      vars: { dataDir: writeDailyDataset({ from, days, rowsPerDay }) },
      specVersion: String(i),
      cluster: clusterOf(client as DruidClient),
    });
    await (store as Store).createJob(plan.job, plan.tasks);
    expect((await run(plan.job.id)).job.state).toBe("done");
  }
}

const request = (range: string, extra: Partial<CompactRequest> = {}): CompactRequest => ({
  datasource: DS,
  interval: parseInterval(range),
  cluster: clusterOf(client as DruidClient),
  ...extra,
});

async function judged(range: string, band = DEFAULT_SIZE_BAND) {
  const c = client as DruidClient;
  const [used, served] = await Promise.all([c.metadataSegments(DS, [range]), c.servedSegments(DS)]);
  return { used, ...judgeChunks(DS, parseInterval(range), used, new Set(served), band) };
}

const compactSubmissions = () =>
  (sim as SimHandle).stats().submissions.filter((s) => s.id?.startsWith("segops_compact_"));

describe("segops compact on the emulator", () => {
  it("compacts a fragmented month: same rows and totals, one version and one segment a day, a rerun plans nothing", async () => {
    await start();
    const range = "2026-06-01/2026-07-01";
    await fragmented(range, 30, "2026-06-01");
    const c = client as DruidClient;
    const whole = parseInterval(range);
    const before = await chunkTotals(c, DS, whole, new AbortController().signal);
    expect(before.rows).toBe(30 * 12);
    expect(Object.keys(before.sums).sort()).toEqual(["added", "count"]);

    const plan = planCompaction(await inspectCompaction(c, request(range)));
    expect(plan.tasks).toHaveLength(30);
    expect(plan.chunks.every((ch) => ch.inputs.length === 3)).toBe(true);
    expect(plan.chunks[0]?.reasons).toEqual(["3 segments, 3 below the size band"]);
    // Planning changed nothing.
    expect(compactSubmissions()).toHaveLength(0);

    await (store as Store).createJob(plan.job, plan.tasks);
    const r = await run(plan.job.id);
    expect(r.job.state).toBe("done");
    // With a budget of one compaction at a time, the 29 others wait without being claimed over and over:
    // a few deferrals each time the budget frees (the driver claims several at once), not a ledger write
    // and event a tick per waiting chunk (650 such deferrals here without isEligible, up to 50,000 before
    // the driver yielded). At most 7 (the concurrency less one) each of the 30 times it frees.
    const events = await (store as Store).listEvents({ jobId: plan.job.id, limit: 1_000_000 });
    expect(events.filter((e) => /compaction budget/.test(e.reason)).length).toBeLessThan(300);
    expect(events.length).toBeLessThan(1200);

    expect(await chunkTotals(c, DS, whole, new AbortController().signal)).toEqual(before);
    const after = await judged(range);
    expect(after.verdicts).toHaveLength(30);
    for (const v of after.verdicts) {
      expect(v.reasons).toEqual([]);
      expect(v.inputs).toHaveLength(1);
    }
    for (const chunk of after.report.chunks) expect(chunk.liveVersions).toHaveLength(1);
    const live = new Set(after.verdicts.flatMap((v) => v.inputs));
    const compacted = after.used.filter((s) => live.has(segmentId(s)));
    expect(
      compacted.every((s) => (s.lastCompactionState as { partitionsSpec?: unknown })?.partitionsSpec),
    ).toBe(true);
    expect(compactSubmissions().filter((s) => s.accepted)).toHaveLength(30);

    // Nothing is fragmented any more: the same request plans no chunk.
    expect(planCompaction(await inspectCompaction(c, request(range))).tasks).toEqual([]);
  }, 120_000); // a month ingested and compacted end to end: 4 s alone (60 s when the driver starved the event loop)

  it("splits a chunk by maxRowsPerSegment and judges the split healthy; --all takes healthy chunks too", async () => {
    await start();
    const range = "2026-05-01/2026-05-03";
    await fragmented(range, 2, "2026-05-01");
    const c = client as DruidClient;
    const band = { ...DEFAULT_SIZE_BAND, maxRows: 8 };
    const plan = planCompaction(
      await inspectCompaction(c, request(range, { sizeBand: band, maxRowsPerSegment: 8 })),
    );
    expect(plan.tasks).toHaveLength(2);
    await (store as Store).createJob(plan.job, plan.tasks);
    expect((await run(plan.job.id)).job.state).toBe("done");
    const after = await judged(range, band);
    // 12 rows a day (4 + 3 + 5) at most 8 per segment: two segments, and nothing left to merge.
    for (const v of after.verdicts) {
      expect(v.inputs).toHaveLength(2);
      expect(v.reasons).toEqual([]);
    }
    const rows = after.used
      .filter((s) => new Set(after.verdicts.flatMap((v) => v.inputs)).has(segmentId(s)))
      .map((s) => s.totalRows ?? 0)
      .sort();
    expect(rows).toHaveLength(4);
    expect(rows.every((n) => n <= 8)).toBe(true);
    expect(rows.reduce((a, b) => a + b, 0)).toBe(24);
    expect(planCompaction(await inspectCompaction(c, request(range, { sizeBand: band }))).tasks).toEqual([]);
    expect(
      planCompaction(await inspectCompaction(c, request(range, { sizeBand: band, all: true }))).tasks,
    ).toHaveLength(2);
  });

  it("skips a chunk a running task locks; an ingestion taking the lock wins and the compaction runs again after it", async () => {
    // Emulated time moves only while `ticking`: frozen while a compaction runs, it cannot finish before the
    // ingestion that overtakes it has been submitted, however slow the machine.
    const clock = new ManualClock(Date.UTC(2026, 10, 30, 12));
    let ticking = true;
    const ticker = setInterval(() => {
      if (ticking) clock.advance(2000);
    }, 5);
    onTestFinished(() => clearInterval(ticker));
    await start({ clock, timeScale: 1, baseDurationMs: 600_000, perRowMs: 0 });
    const range = "2026-04-01/2026-04-03";
    await fragmented(range, 2, "2026-04-01");
    const c = client as DruidClient;
    const day1 = "2026-04-01T00:00:00.000Z/2026-04-02T00:00:00.000Z";
    const day2 = "2026-04-02T00:00:00.000Z/2026-04-03T00:00:00.000Z";
    const replacement = writeDailyDataset({ from: "2026-04-01", days: 2, rowsPerDay: 7 });
    const ingest = (id: string, day: string, simDurationMs: number) => {
      const spec = dailyTemplate({ datasource: DS }) as { spec: Record<string, Record<string, unknown>> };
      const io = spec.spec.ioConfig as Record<string, unknown>;
      const source = io.inputSource as Record<string, unknown>;
      source.baseDir = replacement;
      source.filter = `events-${day.slice(0, 10)}.json`;
      (spec.spec.dataSchema?.granularitySpec as Record<string, unknown>).intervals = [day];
      return c.submitTask({ ...spec, id, context: { simDurationMs } } as never);
    };

    // Another user's ingestion of day 1 is running: the plan leaves day 1 out.
    await ingest("other_day1", day1, 3_600_000);
    await until("the other ingestion to run", async () => (await c.lockedIntervals(DS)).length > 0, {
      timeoutMs: 30_000,
    });
    ticking = false;
    const plan = planCompaction(await inspectCompaction(c, request(range)));
    expect(plan.skipped).toEqual([{ interval: day1, lockedBy: day1 }]);
    expect(plan.chunks.map((ch) => ch.interval)).toEqual([day2]);
    ticking = true;

    // The compaction of day 2 starts; an ingestion of day 2 (priority 50 over 25) takes its lock.
    await (store as Store).createJob(plan.job, plan.tasks);
    const job = run(plan.job.id);
    const engine = (sim as SimHandle).engine;
    await until(
      "the compaction to run",
      async () => [...engine.tasks.values()].some((t) => t.type === "compact" && t.phase === "running"),
      { timeoutMs: 30_000 },
    );
    ticking = false;
    const day2Before = await chunkTotals(c, DS, parseInterval(day2), new AbortController().signal);
    await ingest("other_day2", day2, 1000);
    ticking = true;
    const r = await job;
    expect(r.job.state).toBe("done");

    const compactions = compactSubmissions();
    expect(compactions.map((s) => [s.id?.replace(/^.*_/, ""), s.accepted])).toEqual([
      ["1", true],
      ["2", true],
    ]);
    const first = engine.tasks.get(compactions[0]?.id ?? "");
    expect(first?.errorMsg).toMatch(/^Lock revoked/);
    // The second attempt compacted the ingestion's data: 7 rows, one version.
    const totals = await chunkTotals(c, DS, parseInterval(day2), new AbortController().signal);
    expect(totals.rows).toBe(7);
    expect(day2Before.rows).toBe(12);
    const after = await judged(day2);
    expect(after.report.chunks[0]?.liveVersions).toHaveLength(1);
    const [progress] = (await (store as Store).listTasks(plan.job.id)).map((t) => t.progress);
    expect(progress).toMatchObject({ step: "done", before: { rows: 7 }, after: { rows: 7 } });
  });
});

describe("segops compact beside another writer", () => {
  it("a chunk another ingestion replaced after it was measured ends superseded (done), not as a data alarm", async () => {
    await start();
    const range = "2026-04-01/2026-04-02";
    await fragmented(range, 1, "2026-04-01");
    const c = client as DruidClient;
    const plan = planCompaction(await inspectCompaction(c, request(range)));
    expect(plan.tasks).toHaveLength(1);
    // Another writer replaces the day with one row between the measure and the compaction's submit.
    let replaced: string | null = null;
    const replace = async () => {
      const other = await openStore("sqlite::memory:");
      try {
        const job = planIngestJob({
          kind: "run",
          template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
          templateName: "daily.json",
          range: parseInterval(range),
          vars: { dataDir: writeDailyDataset({ from: "2026-04-01", days: 1, rowsPerDay: 1 }) },
          specVersion: "other",
          cluster: clusterOf(c),
        });
        await other.createJob(job.job, job.tasks);
        const r = await runJob({
          store: other,
          client: c,
          clock: systemClock,
          jobId: job.job.id,
          tickMs: 20,
        });
        expect(r.job.state).toBe("done");
        const used = await c.metadataSegments(DS, [range]);
        return used
          .map((s) => s.version)
          .sort()
          .at(-1) as string;
      } finally {
        await other.close();
      }
    };
    const racing = new Proxy(c, {
      get(target, prop) {
        if (prop === "submitTask")
          return async (...args: Parameters<DruidClient["submitTask"]>) => {
            if ((args[0] as { type?: string }).type === "compact" && replaced === null)
              replaced = await replace();
            return target.submitTask(...args);
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await (store as Store).createJob(plan.job, plan.tasks);
    const r = await runJob({
      store: store as Store,
      client: racing,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      retryBaseMs: 20,
    });
    expect(replaced).not.toBeNull();
    expect(r.job.state).toBe("done");
    const [task] = await (store as Store).listTasks(plan.job.id);
    expect(task?.progress).toMatchObject({
      step: "done",
      outcome: "superseded",
      before: { rows: 12 },
      after: { rows: 1 },
    });
    expect(task?.progress.note).toContain(
      `the chunk was replaced by another writer since it was measured (version ${replaced}`,
    );
    // The data served is the other writer's: one row.
    expect((await chunkTotals(c, DS, parseInterval(range), new AbortController().signal)).rows).toBe(1);
  });
});

describe("segops compact (the command)", () => {
  it("a compaction SIGKILLed while its segments load finishes on the same command, each chunk compacted once; dry run and bad flags change nothing", async () => {
    await start({ timeScale: 100 });
    const range = "2026-03-01/2026-03-04";
    await fragmented(range, 3, "2026-03-01");
    const c = client as DruidClient;
    const whole = parseInterval(range);
    const before = await chunkTotals(c, DS, whole, new AbortController().signal);
    const ledgerPath = join(mkdtempSync(join(tmpdir(), "segops-compact-")), "ledger.db");
    const args = [
      "compact",
      DS,
      "--interval",
      range,
      "--druid",
      (sim as SimHandle).url,
      "--ledger",
      `sqlite:${ledgerPath}`,
      "--tick",
      "50",
      "--lease",
      "3000",
      "--json",
    ];
    const bad = await runCli([...args, "--min-segment-mb", "900"]).done;
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--min-segment-mb \(900\) must be below --max-segment-mb \(700\)/);
    const dry = await runCli([...args, "--dry-run"]).done;
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, skipped: [] });
    expect(JSON.parse(dry.stdout).chunks).toHaveLength(3);
    expect(compactSubmissions()).toEqual([]);
    expect(existsSync(ledgerPath)).toBe(false);

    // The compacted segments never load for now: the first run waits for them until it is killed.
    (sim as SimHandle).setNeverLoad(DS, true);
    const first = runCli(args);
    const engine = (sim as SimHandle).engine;
    await until(
      "every compaction succeeded and the run waits for the loads",
      () =>
        [...engine.tasks.values()].filter((t) => t.type === "compact" && t.phase === "success").length === 3,
      { timeoutMs: 60_000, whileRunning: first },
    );
    first.child.kill("SIGKILL");
    expect((await first.done).signal).toBe("SIGKILL");
    (sim as SimHandle).setNeverLoad(DS, false);
    engine.loadNow(DS);

    const second = await runCli(args).done;
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ state: "done", counts: { done: 3 } });
    // The same command resumed the crashed run's job: the ledger holds one compaction job.
    const ledger = await openStore(`sqlite:${ledgerPath}`);
    expect((await ledger.listJobs({ kind: "compact" })).map((j) => j.state)).toEqual(["done"]);
    await ledger.close();
    // One compact task per chunk, each submitted once: the rerun resumed, it did not compact again.
    expect(compactSubmissions().map((s) => s.accepted)).toEqual([true, true, true]);
    // Druid's compaction budget (compactionTaskSlotRatio 0.1 of 4 slots: one) held: never two at once.
    expect(
      compactionSlotBudget(
        await c.compactionConfig(),
        (await c.totalWorkerCapacity()).currentClusterCapacity,
      ),
    ).toBe(1);
    const spans = compactSubmissions().map((sub) => {
      const events = engine.stats.events.get(sub.id ?? "") ?? [];
      const at = (e: string) => events.find((x) => x.event === e)?.at ?? Number.NaN;
      return [at("running"), at("success")] as const;
    });
    for (const [a, b] of spans) expect(a < b).toBe(true);
    expect(spans.filter(([a1, b1], i) => spans.some(([a2, b2], j) => i !== j && a1 < b2 && a2 < b1))).toEqual(
      [],
    );
    expect(await chunkTotals(c, DS, whole, new AbortController().signal)).toEqual(before);
    const after = await judged(range);
    for (const v of after.verdicts) expect(v.inputs).toHaveLength(1);

    const third = await runCli(args).done;
    expect(third.code, third.stderr).toBe(0);
    expect(JSON.parse(third.stdout)).toMatchObject({ chunks: [] });
    expect(compactSubmissions()).toHaveLength(3);
  }, 120_000);
});

describe("taskSlotBudget", () => {
  it("is a ratio of the slots, capped, at least one; null without a capacity", () => {
    expect(
      compactionSlotBudget({ compactionTaskSlotRatio: 0.1, maxCompactionTaskSlots: 2147483647 }, 100),
    ).toBe(10);
    expect(compactionSlotBudget({ compactionTaskSlotRatio: 0.5, maxCompactionTaskSlots: 3 }, 100)).toBe(3);
    expect(compactionSlotBudget({}, 4)).toBe(1);
    expect(taskSlotBudget(0.25, undefined, 40)).toBe(10);
    expect(taskSlotBudget(0.1, 5, 0)).toBeNull();
  });
});

describe("sameData", () => {
  const t = (rows: number, sums: Record<string, number | null>) => ({ rows, sums });
  it("accepts equal rows and totals, floating sums to a relative 1e-9", () => {
    expect(sameData(t(10, { a: 5, d: 0.1 + 0.2 }), t(10, { a: 5, d: 0.3 }), false)).toBeNull();
  });
  it("names what changed", () => {
    expect(sameData(t(10, { a: 5 }), t(9, { a: 5 }), false)).toBe("rows 10 → 9");
    expect(sameData(t(10, { a: 5 }), t(10, { a: 6 }), false)).toBe("SUM(a) 5 → 6");
    expect(sameData(t(10, { a: 5 }), t(10, {}), false)).toBe("SUM(a) 5 → null");
  });
  it("lets a rolled-up compaction merge rows, never add them", () => {
    expect(sameData(t(10, { a: 5 }), t(8, { a: 5 }), true)).toBeNull();
    expect(sameData(t(10, { a: 5 }), t(11, { a: 5 }), true)).toBe("rows 10 → 11");
  });
});

describe("compactionVerdict", () => {
  const t = (rows: number) => ({ rows, sums: { v: rows * 10 } });
  const seg = (version: string, compacted: boolean, partitionNum = 0): DataSegment =>
    ({
      dataSource: DS,
      interval: "2026-04-01T00:00:00.000Z/2026-04-02T00:00:00.000Z",
      version,
      shardSpec: { type: "numbered", partitionNum, partitions: 0 },
      size: 1,
      ...(compacted ? { lastCompactionState: { partitionsSpec: { type: "dynamic" } } } : {}),
    }) as unknown as DataSegment;
  const measured = ["v1"];

  it("is the same data when the totals match", () => {
    const own = seg("v3", true);
    expect(compactionVerdict({ before: t(12), after: t(12), measured, live: [own], seen: [own] })).toEqual({
      kind: "same",
    });
  });
  it("is another writer's when a version newer than the measured ones is not the compaction's own", () => {
    // The compaction ran on the other writer's version v2 (now overshadowed, or unused).
    const own = seg("v3", true);
    expect(
      compactionVerdict({
        before: t(12),
        after: t(1),
        measured,
        live: [own],
        seen: [seg("v1", false), seg("v2", false), own],
      }),
    ).toEqual({ kind: "superseded", versions: ["v2"], changed: "rows 12 → 1" });
    // Or the other writer's version overshadows the compaction's.
    expect(
      compactionVerdict({
        before: t(12),
        after: t(1),
        measured,
        live: [seg("v4", false)],
        seen: [own, seg("v4", false)],
      }),
    ).toMatchObject({ kind: "superseded", versions: ["v4"] });
  });
  it("is an append into the chunk when live segments were not written by the compaction and no version is new", () => {
    const own = seg("v3", true);
    expect(
      compactionVerdict({
        before: t(12),
        after: t(13),
        measured,
        live: [own, seg("v3", false, 1)],
        seen: [own],
      }),
    ).toEqual({ kind: "rewritten", changed: "rows 12 → 13" });
  });
  it("is the compaction's doing when the totals differ under its own version alone", () => {
    const own = seg("v3", true);
    expect(
      compactionVerdict({
        before: t(12),
        after: t(11),
        measured,
        live: [own],
        seen: [seg("v1", false), own],
      }),
    ).toEqual({ kind: "changed", changed: "rows 12 → 11" });
  });
});
