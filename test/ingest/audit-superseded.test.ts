import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { formatInterval, parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { clusterOf } from "../../src/druid/cluster.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestProgress } from "../../src/ingest/types.js";
import { runJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { servedIdsIn } from "../../src/work/segments.js";
import { until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * An ingest partition whose chunk another writer's compaction replaced after the handoff step had seen ours
 * live and served. Nothing serialises the two (the compaction runs from another ledger), and the host that
 * checkpointed the handoff stops there: the host that takes the partition over resumes at the audit, which
 * reads the chunk afresh and finds the newer version. That is what the handoff step calls superseded, and the
 * audit must say the same, not "audit failed … not-ours" (found once by the multi-actor chaos campaign).
 *
 * In two forms: our overshadowed version still used when the audit reads it, and already marked unused. Druid's
 * Coordinator marks a segment unused once complete newer segments over it are served (its duty
 * `MarkOvershadowedSegmentsAsUnused`, run every `druid.coordinator.period`, PT60S by default), so on a real
 * cluster the resumed audit may well find ours gone from the used metadata: that is superseded too, not
 * "missing-version".
 */

const DS = "supersededaudit";
const DAY = "2026-06-01/2026-06-02";
const LEASE_MS = 2000;

/**
 * The ledger as seen by a host SIGSTOPped right after it checkpointed the handoff: every later call (its
 * heartbeat, its commit of the audit it goes on to run from the handoff's reads) waits until `resume`, when
 * the ledger refuses the late writes of a lease another host took over.
 */
function pausedAfterHandoff(store: Store) {
  let resume = () => {};
  const resumed = new Promise<void>((r) => {
    resume = r;
  });
  let paused = false;
  const pausedStore = new Proxy(store, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        if (paused) await resumed;
        const result = await value.apply(target, args);
        if (prop === "checkpoint" && (args[1] as IngestProgress).step === "audit") paused = true;
        return result;
      };
    },
  });
  return { store: pausedStore, isPaused: () => paused, resume: () => resume() };
}

describe("an ingest partition taken over between handoff and audit while another writer compacts its chunk", () => {
  let sim: SimHandle | undefined;
  let client: DruidClient | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await client?.close();
    await store?.close();
    await sim?.close();
    sim = client = store = undefined;
  });

  const forms = [
    // The Coordinator marks overshadowed segments unused a day later, as in the chaos run: our version is still
    // in the metadata when the audit reads it.
    { form: "ours still used", unusedDelayMs: 86_400_000, oursUsed: true },
    // A second after the compaction's segments load (1 s of sim time): ours is unused before host B reads it.
    { form: "ours already marked unused by the Coordinator", unusedDelayMs: 1000, oursUsed: false },
  ];

  it.each(forms)(
    "ends superseded by the compaction's version, as the handoff step would say ($form)",
    async ({ unusedDelayMs, oursUsed }) => {
      sim = await startSim({ timeScale: 100, handoffDelayMs: 1000, unusedDelayMs, seed: 7 });
      client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
      store = await openStore("sqlite::memory:");
      const c = client;
      const plan = planIngestJob({
        kind: "backfill",
        template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
        templateName: "daily.json",
        range: parseInterval(DAY),
        vars: { dataDir: writeDailyDataset({ from: "2026-06-01", days: 1, rowsPerDay: 6 }) },
        specVersion: "1",
        cluster: clusterOf(c),
      });
      await store.createJob(plan.job, plan.tasks);
      const run = { store, client: c, clock: systemClock, jobId: plan.job.id, tickMs: 20, leaseMs: LEASE_MS };
      const ledger = store;
      const partition = async () => {
        const [task] = await ledger.listTasks(plan.job.id);
        if (!task) throw new Error("the job has no partition");
        return { state: task.state, error: task.lastError, progress: task.progress as IngestProgress };
      };

      const hostA = pausedAfterHandoff(store);
      const first = runJob({ ...run, store: hostA.store, owner: "host-a" });
      await until("host A checkpointed the handoff", hostA.isPaused);
      const ours = (await partition()).progress.version as string;
      expect(ours).toBeTruthy();

      // Another writer compacts the chunk, straight at Druid: a newer version of the same rows.
      const compactId = "other-ledger_compact_supersededaudit_20260601";
      await c.submitTask({
        type: "compact",
        id: compactId,
        dataSource: DS,
        ioConfig: { type: "compact", inputSpec: { type: "interval", interval: DAY } },
      } as never);
      let newer = "";
      await until("the compaction's version is live and served", async () => {
        const used = await c.metadataSegments(DS, [DAY]);
        const served = await servedIdsIn(c, DS, DAY);
        const theirs = used.filter((s) => s.version > ours);
        newer = theirs[0]?.version ?? "";
        return theirs.length > 0 && theirs.every((s) => served.has(s.identifier as string));
      });
      const oursInMetadata = async () =>
        (await c.metadataSegments(DS, [DAY])).some((s) => s.version === ours);
      if (!oursUsed)
        await until(
          "the Coordinator marked our overshadowed version unused",
          async () => !(await oursInMetadata()),
        );
      expect(await oursInMetadata()).toBe(oursUsed);

      // Host B takes the partition over once host A's lease has run out, and resumes at the audit.
      const second = await runJob({ ...run, owner: "host-b" });
      expect(second.job.state).toBe("failed");
      const failed = (await store.listEvents({ jobId: plan.job.id })).filter(
        (e) => e.taskId !== null && e.toState === "failed",
      );
      expect(failed.map((e) => e.actor)).toEqual(["host-b"]);
      const ended = await partition();
      expect({ state: ended.state, error: ended.error, outcome: ended.progress.outcome }).toEqual({
        state: "failed",
        error: `superseded: a newer version (${newer}) replaced ours (${ours}) in ${formatInterval(parseInterval(DAY))} after it was handed off`,
        outcome: "superseded",
      });

      // Host A wakes: the done it computed from the handoff's reads is refused (the lease is host B's).
      hostA.resume();
      await first;
      const final = await partition();
      expect({ state: final.state, outcome: final.progress.outcome }).toEqual({
        state: "failed",
        outcome: "superseded",
      });
    },
    120_000,
  );
});
