import { afterEach, expect } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { formatInterval, parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import type { IngestProgress } from "../../src/ingest/types.js";
import { runIngestJob } from "../../src/jobs/engine.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { dailyTemplate, writeDailyDataset } from "./dataset.js";

/**
 * Compaction skip intervals across hosts and after a cancel, on an emulated Druid 39, against one ledger
 * (test/ingest/compaction-leftovers.test.ts on SQLite, compaction-leftovers.postgres.test.ts on PostgreSQL): a
 * second host's partition shares the month, and the next run takes out what a canceled job left.
 */
let sim: SimHandle | undefined;
let store: Store | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
  sim = store = client = undefined;
});

const DS = "leftovers";
const CO = "/druid/coordinator/v1";
const APRIL = formatInterval(parseInterval("2026-04-01/2026-05-01"));

export async function sharedMonthAndLeftover(openLedger: () => Promise<Store>): Promise<void> {
  sim = await startSim({
    druidVersion: 39,
    timeScale: 200,
    handoffDelayMs: 2000,
    baseDurationMs: 2000,
    seed: 7,
  });
  const handle = sim;
  client = new DruidClient({ url: handle.url, retry: { baseMs: 5, capMs: 50 } });
  store = await openLedger();
  const ledger = store;
  const dataDir = writeDailyDataset({ from: "2026-04-01", days: 40, rowsPerDay: 5 });
  // Monthly auto-compaction: a day's partition keeps the whole month out of compaction's reach.
  const config = { dataSource: DS, granularitySpec: { segmentGranularity: "MONTH" } };
  const post = async (body: unknown) =>
    (
      await fetch(`${handle.url}${CO}/config/compaction`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "Content-Type": "application/json" },
      })
    ).status;
  expect(await post(config)).toBe(200);
  const skipIntervals = () =>
    ((handle.engine.compactionConfigs.get(DS)?.skipIntervals ?? []) as string[]).map((i) =>
      formatInterval(parseInterval(i)),
    );
  const job = async (day: string) => {
    const plan = planIngestJob({
      kind: "run",
      template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
      templateName: "t.json",
      range: parseInterval(`${day}/P1D`),
      vars: { dataDir },
      specVersion: day,
    });
    await ledger.createJob(plan.job, plan.tasks);
    return plan;
  };
  const run = (jobId: string) =>
    runIngestJob({ store: ledger, client: client as DruidClient, clock: systemClock, jobId, tickMs: 20 });

  // Host B is writing April 20: it added April to the skip intervals and recorded it, then went quiet.
  const b = await job("2026-04-20");
  const [claimed] = await ledger.claim({
    kind: "ingest",
    owner: "host-b",
    leaseMs: 60_000,
    limit: 1,
    jobIds: [b.job.id],
  });
  expect(claimed).toBeDefined();
  const held = await ledger.checkpoint(
    { id: claimed?.id as string, owner: "host-b", version: claimed?.version as number },
    { ...(claimed?.progress ?? {}), compactionSkip: APRIL },
  );
  expect(held).not.toBeNull();
  expect(await post({ ...config, skipIntervals: [APRIL] })).toBe(200);

  // This host runs April 2: the entry is there and host B's, so its partition holds it too and leaves it in.
  const a = await job("2026-04-02");
  expect((await run(a.job.id)).counts).toMatchObject({ done: 1 });
  const [aTask] = await ledger.listTasks(a.job.id);
  expect((aTask?.progress as IngestProgress | undefined)?.compactionSkip).toBe(APRIL);
  expect(skipIntervals()).toEqual([APRIL]);

  // Host B hands its partition back and its job is canceled while nobody runs it: ended failed, no host's end
  // step ran, and April stays in the list, recorded only by finished partitions.
  expect(
    await ledger.transition(
      { id: held?.id as string, owner: "host-b", version: held?.version as number },
      { to: "suspended", reason: "host stopping", runAt: systemClock.now() + 60_000 },
    ),
  ).not.toBeNull();
  await ledger.cancelJob(b.job.id, "not needed");
  expect((await ledger.listTasks(b.job.id))[0]?.state).toBe("failed");
  expect(skipIntervals()).toEqual([APRIL]);

  // The next run on this ledger (May 3, its own month) takes April out as well as its own entry.
  const c = await job("2026-05-03");
  expect((await run(c.job.id)).counts).toMatchObject({ done: 1 });
  expect(skipIntervals()).toEqual([]);
  expect(handle.engine.compactionConfigs.get(DS)).toMatchObject(config);
}
