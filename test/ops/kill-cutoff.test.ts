import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { TaskRetry } from "../../src/driver/signals.js";
import { DruidClient } from "../../src/druid/client.js";
import { clusterOf } from "../../src/druid/cluster.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { runJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { inspectKill, planKill } from "../../src/ops/index.js";
import type { KillPayload } from "../../src/ops/kill/plan.js";
import { verifyKill } from "../../src/ops/kill/steps.js";
import type { KillProgress } from "../../src/ops/kill/types.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { segmentId } from "../../src/work/segments.js";
import { until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { CHUNK, DS, fakeClient, fakePart, fakeTaskIO, segment, thrown } from "./fakes.js";

/**
 * A kill deletes what was unused at its plan's cut-off (`maxUsedStatusLastUpdatedTime`), and Druid's kill
 * task leaves a segment marked unused after it. A planned segment that another writer used again (a
 * rollback of another ledger) and a newer version made unused again after the cut-off is such a segment:
 * the kill's verify step must not wait for it to go. (It retried until its retries ran out, about ten
 * minutes, and ended failed; found by the multi-actor chaos campaign.)
 */

const CUTOFF = Date.UTC(2026, 0, 1, 12);
const doomed = [segment("v1"), segment("v1", { partitionNum: 1 })];
const live = segment("v3");
const payload: KillPayload = {
  datasource: DS,
  interval: CHUNK,
  versions: null,
  maxUsedStatusLastUpdatedTime: CUTOFF,
  segmentIds: doomed.map(segmentId),
  bytes: 2000,
  taskId: "segops_kill_wiki_20260101_abc",
};

const unusedSince = (since: number) =>
  fakeClient(
    { used: [live], unused: [] },
    { unusedSegments: async () => doomed.map((s) => ({ segment: s, unusedSince: since })) },
  );

describe("verify of a kill whose planned segments were unused again after its cut-off", () => {
  it("is done: what Druid's kill left, it left as the cut-off says", async () => {
    const a = fakePart<KillPayload, KillProgress>(payload, { step: "verify" });
    await verifyKill(a, fakeTaskIO(unusedSince(CUTOFF + 60_000)));
    expect(a.progress()).toMatchObject({ step: "done", left: [] });
  });

  it("still retries for a planned segment unused since before the cut-off (the kill should have deleted it)", async () => {
    const a = fakePart<KillPayload, KillProgress>(payload, { step: "verify" });
    const e = await thrown(verifyKill(a, fakeTaskIO(unusedSince(CUTOFF))));
    expect(e).toBeInstanceOf(TaskRetry);
    expect(a.progress()).toMatchObject({ step: "verify", left: doomed.map(segmentId) });
  });
});

describe("a kill on the emulator, its planned version used again by a rollback and overshadowed again", () => {
  let sim: SimHandle | undefined;
  let client: DruidClient | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await client?.close();
    await store?.close();
    await sim?.close();
    sim = client = store = undefined;
  });

  const KDS = "killcutoff";
  const DAY = "2026-06-01/2026-06-02";
  const ingest = async (rows: number, specVersion: string) => {
    const plan = planIngestJob({
      kind: "backfill",
      template: { kind: "task", value: dailyTemplate({ datasource: KDS }) },
      templateName: "daily.json",
      range: parseInterval(DAY),
      vars: { dataDir: writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: rows }) },
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
  };

  it("ends done at once, leaving that version to a later kill", async () => {
    sim = await startSim({ timeScale: 100, handoffDelayMs: 1000, unusedDelayMs: 2000, seed: 9 });
    client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
    store = await openStore("sqlite::memory:");
    const c = client;
    const versions = async (kind: "used" | "unused") =>
      kind === "used"
        ? [...new Set((await c.metadataSegments(KDS, [DAY])).map((s) => s.version))]
        : [...new Set((await c.unusedSegments(KDS, DAY)).map((u) => u.segment.version))];
    await ingest(4, "1");
    const [v1] = await versions("used");
    await ingest(6, "2");
    await until("the first version is unused", async () => (await versions("unused")).includes(v1 as string));
    const plan = planKill(
      await inspectKill(
        c,
        { datasource: KDS, interval: parseInterval(DAY), cluster: clusterOf(c) },
        sim.engine.now,
      ),
    );
    expect(plan.batches.flatMap((b) => b.segmentIds).every((id) => id.includes(v1 as string))).toBe(true);
    // After the plan: another ledger's rollback to the first version, then a newer ingestion over it.
    const [v2] = await versions("used");
    await c.markSegments(KDS, "unused", { interval: DAY, versions: [v2 as string] });
    await c.markSegments(KDS, "used", { interval: DAY, versions: [v1 as string] });
    await ingest(8, "3");
    await until("the first version is unused again", async () =>
      (await versions("unused")).includes(v1 as string),
    );
    await store.createJob(plan.job, plan.tasks);
    // A cap only against a hang (the kill retried for about ten minutes): the claim is "done", not a time.
    await runJob({
      store,
      client: c,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      signal: AbortSignal.timeout(60_000),
    });
    const [task] = await store.listTasks(plan.job.id);
    expect({ state: task?.state, error: task?.lastError ?? null }).toEqual({ state: "done", error: null });
    // Druid's kill left it (unused after the cut-off): still there for a later kill.
    expect(await versions("unused")).toContain(v1);
  }, 120_000);
});
