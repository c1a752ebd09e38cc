import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { ManualClock, systemClock } from "../../src/core/clock.js";
// The kill's retention is measured on the cluster's clock: the emulator's runs ahead (time scale).
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { clusterOf } from "../../src/druid/cluster.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { runJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { inspectKill, killSlotBudget, planKill } from "../../src/ops/index.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { segmentId } from "../../src/work/segments.js";
import { runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * `segops kill`: after a replace, the overshadowed (now unused) segments are deleted for good and nothing
 * used or served is touched; the plan (a dry run) changes nothing; a chunk whose live version is not served
 * yet is refused; versions and retention narrow what goes; a rerun submits no second kill task.
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

const DS = "killme";
const RANGE = "2026-06-01/2026-06-04";

async function backfill(dataDir: string, specVersion: string) {
  const plan = planIngestJob({
    kind: "backfill",
    template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
    templateName: "daily.json",
    range: parseInterval(RANGE),
    vars: { dataDir },
    specVersion,
    cluster: clusterOf(client as DruidClient),
  });
  await (store as Store).createJob(plan.job, plan.tasks);
  const r = await runJob({
    store: store as Store,
    client: client as DruidClient,
    clock: systemClock,
    jobId: plan.job.id,
    tickMs: 20,
  });
  expect(r.job.state).toBe("done");
}

/** Three days written twice: the first version's segments end up unused (overshadowed). */
async function replacedTwice(options: Parameters<typeof startSim>[0] = {}) {
  sim = await startSim({ timeScale: 100, handoffDelayMs: 1000, unusedDelayMs: 2000, seed: 9, ...options });
  client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
  store = await openStore("sqlite::memory:");
  await backfill(writeDailyDataset({ from: "2026-06-01", days: 3, rowsPerDay: 4 }), "1");
  await backfill(writeDailyDataset({ from: "2026-06-01", days: 3, rowsPerDay: 6 }), "2");
  const c = client;
  await until("the first version is unused", async () => (await c.unusedSegments(DS, RANGE)).length === 3, {
    timeoutMs: 30_000,
  });
}

const request = (extra: Partial<Parameters<typeof planKill>[0]["request"]> = {}) => ({
  datasource: DS,
  interval: parseInterval(RANGE),
  cluster: clusterOf(client as DruidClient),
  ...extra,
});

/** A third version of the first day, published and never loaded: the chunk's live version is not served. */
async function publishUnloaded() {
  const c = client as DruidClient;
  (sim as SimHandle).setNeverLoad(DS, true);
  const spec = planIngestJob({
    kind: "run",
    template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
    templateName: "daily.json",
    range: parseInterval("2026-06-01/2026-06-02"),
    vars: { dataDir: writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 8 }) },
    specVersion: "3",
  }).tasks[0]?.payload?.spec as Record<string, unknown>;
  const { taskId } = await c.submitTask({ ...spec, id: "segops_kill_test_unloaded" } as never);
  await until(
    "the new version is published",
    async () => {
      const st = (await c.taskStatus(taskId)).status;
      if (st?.statusCode === "FAILED") throw new Error(String(st.errorMsg));
      return st?.statusCode === "SUCCESS";
    },
    { timeoutMs: 30_000 },
  );
}

/**
 * The emulator (and the client and ledger of the test) on a clock that moves only while `tick(true)`: frozen,
 * its tasks stay RUNNING however slow the machine.
 */
async function startTickingSim(): Promise<(on: boolean) => void> {
  const clock = new ManualClock(Date.UTC(2026, 10, 30, 12));
  let ticking = true;
  const ticker = setInterval(() => {
    if (ticking) clock.advance(1000);
  }, 5);
  onTestFinished(() => clearInterval(ticker));
  sim = await startSim({ clock, timeScale: 1, handoffDelayMs: 1000, unusedDelayMs: 2000, seed: 9 });
  client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
  store = await openStore("sqlite::memory:");
  return (on) => {
    ticking = on;
  };
}

/**
 * Two versions of three days (the first unused), then `segops kill --yes` SIGKILLed while a kill task runs,
 * emulated time frozen from then until `tick(true)`: the crashed run's job is open in the ledger.
 */
async function crashedKill() {
  // Frozen, the kill tasks stay RUNNING until the CLI is killed.
  const tick = await startTickingSim();
  await backfill(writeDailyDataset({ from: "2026-06-01", days: 3, rowsPerDay: 4 }), "1");
  await backfill(writeDailyDataset({ from: "2026-06-01", days: 3, rowsPerDay: 6 }), "2");
  const c = client as DruidClient;
  await until("the first version is unused", async () => (await c.unusedSegments(DS, RANGE)).length === 3, {
    timeoutMs: 30_000,
  });
  const { url, engine } = sim as SimHandle;
  const ledgerPath = join(mkdtempSync(join(tmpdir(), "segops-kill-")), "ledger.db");
  const args = [
    "kill",
    DS,
    "--interval",
    RANGE,
    "--batch-size",
    "1",
    "--yes",
    "--druid",
    url,
    "--ledger",
    `sqlite:${ledgerPath}`,
    "--tick",
    "50",
    "--lease",
    "3000",
    "--json",
  ];
  const first = runCli(args);
  await until(
    "a kill task runs",
    () => [...engine.tasks.values()].some((t) => t.type === "kill" && t.phase === "running"),
    { timeoutMs: 60_000, whileRunning: first },
  );
  tick(false);
  first.child.kill("SIGKILL");
  expect((await first.done).signal).toBe("SIGKILL");
  return { args, ledgerPath, engine, tick };
}

describe("segops kill on the emulator", () => {
  it("deletes exactly the unused segments; used and served ones stay; a rerun submits nothing new", async () => {
    await replacedTwice();
    const c = client as DruidClient;
    const usedBefore = (await c.metadataSegments(DS, [RANGE])).map(segmentId).sort();
    const servedBefore = (await c.servedSegments(DS)).sort();
    const unusedBefore = (await c.unusedSegments(DS, RANGE)).map((u) => segmentId(u.segment)).sort();
    const plan = planKill(await inspectKill(c, request({ batchSize: 2 }), (sim as SimHandle).engine.now));
    // The plan alone (what a dry run shows) names every segment and changes nothing.
    expect(plan.batches.flatMap((b) => b.segmentIds).sort()).toEqual(unusedBefore);
    // One partition per time chunk (each keyed like the chunk's ingestion), however big the batch size.
    expect(plan.batches.map((b) => b.segmentIds.length)).toEqual([1, 1, 1]);
    expect(plan.tasks.map((t) => t.exclusionKey)).toEqual(plan.batches.map((b) => `${DS}|${b.interval}`));
    expect((await c.unusedSegments(DS, RANGE)).length).toBe(3);
    await (store as Store).createJob(plan.job, plan.tasks);
    const r = await runJob({
      store: store as Store,
      client: c,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
    });
    expect(r.job.state).toBe("done");
    expect(await c.unusedSegments(DS, RANGE)).toEqual([]);
    expect((await c.metadataSegments(DS, [RANGE])).map(segmentId).sort()).toEqual(usedBefore);
    expect((await c.servedSegments(DS)).sort()).toEqual(servedBefore);
    const kills = (sim as SimHandle).stats().submissions.filter((s) => s.id?.startsWith("segops_kill_"));
    expect(kills.filter((s) => s.accepted)).toHaveLength(3);
    // The same job again: every partition is done, nothing is submitted.
    const again = await runJob({
      store: store as Store,
      client: c,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
    });
    expect(again.job.state).toBe("done");
    expect(
      (sim as SimHandle).stats().submissions.filter((s) => s.id?.startsWith("segops_kill_")),
    ).toHaveLength(3);
  });

  it("narrows by version and retention, and refuses chunks whose live version is not served", async () => {
    await replacedTwice();
    const c = client as DruidClient;
    const none = planKill(
      await inspectKill(
        c,
        request({ versions: ["1999-01-01T00:00:00.000Z"] }),
        (sim as SimHandle).engine.now,
      ),
    );
    expect(none.tasks).toEqual([]);
    // Marked unused a moment ago: a 30-day retention keeps them all.
    const young = planKill(
      await inspectKill(c, request({ olderThanMs: 30 * 86_400_000 }), (sim as SimHandle).engine.now),
    );
    expect(young.tasks).toEqual([]);
    // A new version that never loads: its chunks' predecessors are the way back; killing them is refused.
    await publishUnloaded();
    const facts = await inspectKill(c, request(), (sim as SimHandle).engine.now);
    expect(() => planKill(facts)).toThrow(/the live version of the chunks is not fully served yet/);
  });

  it("a kill SIGKILLed while its tasks run finishes on the same command: each kill task submitted once", async () => {
    const { args, ledgerPath, engine, tick } = await crashedKill();
    const c = client as DruidClient;
    const before = (sim as SimHandle).stats().submissions.filter((s) => s.id?.startsWith("segops_kill_"));
    expect(before.length).toBeGreaterThan(0);
    tick(true);

    const second = await runCli(args).done;
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ state: "done", counts: { done: 3 } });
    expect(await c.unusedSegments(DS, RANGE)).toEqual([]);
    const kills = (sim as SimHandle).stats().submissions.filter((s) => s.id?.startsWith("segops_kill_"));
    // Three batches, three kill tasks, each accepted once: the rerun resumed the crashed run's job. A batch
    // whose submit had not been checkpointed when the CLI died is submitted again under the same id, which
    // Druid refuses as a duplicate (the reattach): no second kill task.
    const accepted = kills.filter((k) => k.accepted).map((k) => k.id);
    expect(accepted).toHaveLength(3);
    expect(new Set(accepted).size).toBe(3);
    for (const k of kills.filter((k) => !k.accepted)) {
      expect(accepted).toContain(k.id);
      expect(k.status).toBe(400);
    }
    // Druid's kill budget (killTaskSlotRatio 0.1 of the slots, at least one) held: never two kills at once.
    const budget = killSlotBudget(
      await c.coordinatorDynamicConfig(),
      (await c.totalWorkerCapacity()).currentClusterCapacity,
    );
    expect(budget).toBe(1);
    const spans = accepted.map((id) => {
      const events = engine.stats.events.get(id ?? "") ?? [];
      const at = (e: string) => events.find((x) => x.event === e)?.at ?? Number.NaN;
      return [at("running"), at("success")] as const;
    });
    for (const [a, b] of spans) expect(a < b).toBe(true);
    const overlapping = spans.filter(([a1, b1], i) =>
      spans.some(([a2, b2], j) => i !== j && a1 < b2 && a2 < b1),
    );
    expect(overlapping).toEqual([]);
    const ledger = await openStore(`sqlite:${ledgerPath}`);
    expect((await ledger.listJobs({ kind: "kill" })).map((j) => j.state)).toEqual(["done"]);
    await ledger.close();
  }, 120_000);

  it("a crashed kill is finished by its rerun even when a new plan would now refuse", async () => {
    const { args, ledgerPath, tick } = await crashedKill();
    tick(true);
    // Since the crash another writer published a version that is not served: planned now, this kill
    // would be refused. The crashed run's job was planned when all was served; its rerun resumes it.
    await publishUnloaded();
    const dry = await runCli(args.filter((a) => a !== "--yes")).done;
    expect(dry.code).toBe(2);
    expect(dry.stderr).toMatch(/the live version of the chunks is not fully served yet/);
    const ledger = await openStore(`sqlite:${ledgerPath}`);
    onTestFinished(() => ledger.close());
    const [crashed] = await ledger.listJobs({ kind: "kill" });
    expect(crashed?.state).toBe("open");

    const rerun = await runCli(args).done;
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ job: crashed?.id, state: "done", counts: { done: 3 } });
    expect((await ledger.listJobs({ kind: "kill" })).map((j) => [j.id, j.state])).toEqual([
      [crashed?.id, "done"],
    ]);
    // What the crashed run planned is gone; what became unused after its cut-off (the second version of
    // the first day, overshadowed by the third) stays.
    const planned = (await ledger.listTasks(crashed?.id ?? "")).flatMap(
      (t) => (t.payload as { segmentIds: string[] }).segmentIds,
    );
    expect(planned).toHaveLength(3);
    const left = (await (client as DruidClient).unusedSegments(DS, RANGE)).map((u) => segmentId(u.segment));
    expect(left.filter((id) => planned.includes(id))).toEqual([]);
  }, 120_000);
});

describe("segops kill beside a rollback of the same chunk", () => {
  const DAY = "2026-06-01/2026-06-02";
  const DAY_ISO = "2026-06-01T00:00:00.000Z/2026-06-02T00:00:00.000Z";
  const unusedOfDay = async () =>
    (await (client as DruidClient).unusedSegments(DS, DAY)).map((u) => segmentId(u.segment)).sort();

  it("refuses a chunk left with no used version by a rollback stuck between its marks; the rollback then finishes", async () => {
    // The CLI measures unused-since on its own clock: the emulator's runs at the same pace here.
    await replacedTwice({
      timeScale: 1,
      baseDurationMs: 300,
      perRowMs: 0,
      handoffDelayMs: 300,
      unusedDelayMs: 500,
    });
    const c = client as DruidClient;
    const s = sim as SimHandle;
    const v1 = (await c.unusedSegments(DS, DAY))[0]?.segment.version as string;
    const ledger = `sqlite:${join(mkdtempSync(join(tmpdir(), "segops-kill-rb-")), "ledger.db")}`;
    const common = ["--druid", s.url, "--ledger", ledger, "--tick", "50", "--lease", "3000", "--json"];
    // Druid answers 500 to markUsed for now: the rollback marks the newer version unused and stops there.
    s.setFaults([{ path: `/druid/indexer/v1/datasources/${DS}/markUsed`, kind: "status", status: 500 }]);
    const rollback = runCli(["rollback", DS, "--interval", DAY, "--to-version", v1, ...common]);
    await until(
      "the day has no used segment",
      async () => (await c.metadataSegments(DS, [DAY])).length === 0,
      {
        timeoutMs: 60_000,
        whileRunning: rollback,
      },
    );
    const doomed = await unusedOfDay();
    expect(doomed).toHaveLength(2);
    // From another ledger (which knows no rollback): a chunk with no used version is refused.
    const elsewhere = `sqlite:${join(mkdtempSync(join(tmpdir(), "segops-kill-other-")), "ledger.db")}`;
    const kill = await runCli(["kill", DS, "--interval", DAY, "--yes", ...common, "--ledger", elsewhere])
      .done;
    expect(kill.code, kill.stderr).toBe(2);
    expect(kill.stderr).toContain(`cannot kill in ${DAY_ISO}: no version of it is used`);
    expect(await unusedOfDay()).toEqual(doomed);
    // Naming the versions does not get past the ledger: the rollback of the chunk is unfinished.
    const byVersion = await runCli(["kill", DS, "--interval", DAY, "--version", v1, "--yes", ...common]).done;
    expect(byVersion.code, byVersion.stderr).toBe(2);
    expect(byVersion.stderr).toContain(`cannot kill in ${DAY_ISO}: a rollback of it is not finished`);
    expect(await unusedOfDay()).toEqual(doomed);
    expect(s.stats().submissions.filter((x) => x.id?.startsWith("segops_kill_"))).toEqual([]);
    s.setFaults([]);
    const rolledBack = await rollback.done;
    expect(rolledBack.code, rolledBack.stderr).toBe(0);
    expect((await c.metadataSegments(DS, [DAY])).map((x) => x.version)).toEqual([v1]);
  }, 120_000);

  it("a kill planned before a rollback emptied the chunk refuses at submit, deleting nothing", async () => {
    await replacedTwice();
    const c = client as DruidClient;
    const plan = planKill(
      await inspectKill(c, request({ interval: parseInterval(DAY) }), (sim as SimHandle).engine.now),
    );
    expect(plan.tasks).toHaveLength(1);
    const doomed = await unusedOfDay();
    // Another ledger's rollback marks the live version unused after the plan was made.
    await c.markSegments(DS, "unused", { interval: DAY });
    await until(
      "the day has no used segment",
      async () => (await c.metadataSegments(DS, [DAY])).length === 0,
    );
    await (store as Store).createJob(plan.job, plan.tasks);
    const r = await runJob({
      store: store as Store,
      client: c,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
    });
    expect(r.job.state).toBe("failed");
    const [task] = await (store as Store).listTasks(plan.job.id);
    expect(task?.lastError).toMatch(/refused to kill in .*: no version of it is used any more/);
    expect((await unusedOfDay()).length).toBeGreaterThanOrEqual(doomed.length);
    expect(await unusedOfDay()).toEqual(expect.arrayContaining(doomed));
    expect((sim as SimHandle).stats().submissions.filter((x) => x.id?.startsWith("segops_kill_"))).toEqual(
      [],
    );
  });
});

describe("segops kill beside another writer's ingestion of the chunk", () => {
  it("a kill whose lock an ingestion revokes runs again under a new id: the planned segments go, the ingestion's data stays live", async () => {
    // Frozen, the kill task stays RUNNING until the ingestion that overtakes it has been submitted.
    const tick = await startTickingSim();
    const DAY = "2026-06-01/2026-06-02";
    const DAY_ISO = "2026-06-01T00:00:00.000Z/2026-06-02T00:00:00.000Z";
    await backfill(writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 4 }), "1");
    await backfill(writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 6 }), "2");
    const c = client as DruidClient;
    await until("the first version is unused", async () => (await c.unusedSegments(DS, DAY)).length === 1, {
      timeoutMs: 30_000,
    });
    const engine = (sim as SimHandle).engine;
    const plan = planKill(await inspectKill(c, request({ interval: parseInterval(DAY) }), engine.now));
    const [planned] = plan.batches.map((b) => b.segmentIds);
    expect(planned).toHaveLength(1);
    const keptVersion = (await c.metadataSegments(DS, [DAY])).map(segmentId);

    tick(false);
    await (store as Store).createJob(plan.job, plan.tasks);
    const job = runJob({
      store: store as Store,
      client: c,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      retryBaseMs: 20,
    });
    const firstId = plan.batches[0]?.taskId as string;
    await until("the kill task runs", () => engine.tasks.get(firstId)?.phase === "running", {
      timeoutMs: 30_000,
    });
    // Another tool's ingestion of the day (priority 50 over the kill's 0) takes the chunk's lock.
    const spec = dailyTemplate({ datasource: DS }) as { spec: Record<string, Record<string, unknown>> };
    const source = (spec.spec.ioConfig as Record<string, unknown>).inputSource as Record<string, unknown>;
    source.baseDir = writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 9 });
    source.filter = "events-2026-06-01.json";
    (spec.spec.dataSchema?.granularitySpec as Record<string, unknown>).intervals = [DAY_ISO];
    await c.submitTask({ ...spec, id: "other_tool_day1" } as never);
    await until("the kill task fails", () => engine.tasks.get(firstId)?.phase === "failed", {
      timeoutMs: 30_000,
    });
    expect(engine.tasks.get(firstId)?.errorMsg).toMatch(/^Lock revoked: /);
    tick(true);

    const r = await job;
    expect(r.job.state).toBe("done");
    const [task] = await (store as Store).listTasks(plan.job.id);
    expect({ state: task?.state, attempt: task?.attempt }).toEqual({ state: "done", attempt: 2 });
    const kills = (sim as SimHandle).stats().submissions.filter((x) => x.id?.startsWith("segops_kill_"));
    expect(kills.map((k) => [k.id, k.accepted])).toEqual([
      [firstId, true],
      [`${firstId}_a2`, true],
    ]);
    expect(engine.tasks.get(`${firstId}_a2`)?.phase).toBe("success");
    // The planned segment is gone; the version unused only since the ingestion replaced it (after the
    // plan's cut-off) is left alone; the ingestion's segments are the day's live data.
    const unused = (await c.unusedSegments(DS, DAY)).map((u) => segmentId(u.segment));
    expect(unused).not.toContain(planned?.[0]);
    const ingested = engine.tasks.get("other_tool_day1");
    expect(ingested?.phase).toBe("success");
    const used = (await c.metadataSegments(DS, [DAY])).map(segmentId);
    expect([...used, ...unused].sort()).toEqual([...keptVersion, ...(ingested?.segmentIds ?? [])].sort());
    await until("the ingestion's data is served", async () => {
      const served = new Set(await c.servedSegments(DS));
      return (ingested?.segmentIds ?? []).every((id) => served.has(id));
    });
    expect(ingested?.segmentIds?.length).toBeGreaterThan(0);
  }, 120_000);
});

describe("killSlotBudget", () => {
  it("is Druid's kill share of the slots, capped by maxKillTaskSlots, at least one; null without a capacity", () => {
    expect(killSlotBudget({ killTaskSlotRatio: 0.1, maxKillTaskSlots: 2147483647 }, 100)).toBe(10);
    expect(killSlotBudget({ killTaskSlotRatio: 0.5, maxKillTaskSlots: 3 }, 100)).toBe(3);
    expect(killSlotBudget({ killTaskSlotRatio: 0.1 }, 4)).toBe(1);
    expect(killSlotBudget({}, 50)).toBe(5);
    expect(killSlotBudget({ killTaskSlotRatio: 0.1 }, -1)).toBeNull();
  });
});
