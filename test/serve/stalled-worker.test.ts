import { describe, expect, it } from "vitest";
import { until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { type ApiResult, otherUsersTask, startTestService, type TestService } from "../helpers/serve.js";

/**
 * A `segops serve` host that cannot make progress says so: partitions are due for its worker, it holds
 * none and claims none, and nothing already reported excuses it. `/readyz` answers 503 with since when and
 * why, and `segops_worker_stalled` is 1, until it moves again. Waiting for worker slots other tasks hold is
 * reported on its own (the blocked gauge) and is no stall.
 */

async function backfillOneDay(t: TestService, datasource: string) {
  const dataDir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 3 });
  const created = await t.call("/api/v1/backfills", {
    json: {
      template: dailyTemplate({ datasource }),
      from: "2026-01-01",
      to: "2026-01-02",
      vars: { dataDir },
    },
  });
  expect(created.status, created.text).toBe(201);
  return created.json.id as string;
}

/** One gauge of `/metrics` (null when absent). */
async function gauge(t: TestService, name: string): Promise<number | null> {
  const text = (await t.call("/metrics")).text;
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? null : Number(line.split(" ")[1]);
}

async function waitForReadyz(t: TestService, what: string, check: (r: ApiResult) => boolean) {
  let last: unknown;
  try {
    await until(
      what,
      async () => {
        const r = await t.call("/readyz");
        last = r.json;
        return check(r);
      },
      { timeoutMs: 120_000 },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; /readyz said ${JSON.stringify(last)}`);
  }
}

describe("segops serve: a stalled worker", () => {
  it("holding admission slots for partitions it no longer holds: /readyz 503 with since when and why, the gauge at 1; once they go it moves, and both clear", async () => {
    const t = await startTestService({ service: { concurrency: 1, stallTimeoutMs: 300 } });
    const ready = await t.call("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.json.worker).toMatchObject({ state: "running", stalled: false });
    const started = Date.parse(ready.json.worker.lastProgressAt);
    expect(Number.isFinite(started)).toBe(true);
    expect(ready.json.worker.stalledSince).toBeUndefined();
    expect(await gauge(t, "segops_worker_stalled")).toBe(0);
    expect(await gauge(t, "segops_worker_last_progress_timestamp_seconds")).toBe(started / 1000);

    // What a host that lost its partitions to another kept before its runners let go of them: a
    // reservation of the only slot its --max-concurrency allows, for a partition it does not hold.
    const admission = t.service.worker.machinery.admission;
    admission.track("partition-another-host-took", 1, "its_druid_task");
    const id = await backfillOneDay(t, "stalled");

    await waitForReadyz(t, "/readyz says the worker is stalled", (r) => r.status === 503);
    const stalled = (await t.call("/readyz")).json;
    expect(stalled).toMatchObject({
      ready: false,
      ledger: { ok: true },
      druid: { ok: true },
      worker: { state: "running", inFlight: 0, stalled: true },
    });
    const since = Date.parse(stalled.worker.stalledSince);
    expect(since).toBeGreaterThanOrEqual(started);
    expect(stalled.worker.reason).toMatch(/partitions of its jobs are due, it holds none/);
    expect(stalled.worker.reason).toContain("max-concurrency, with 1 partition(s) counted in flight");
    expect(await gauge(t, "segops_worker_stalled")).toBe(1);
    // Logged at the worker's next look (readiness reads the state itself, as of the request).
    await until("the stall is logged", () => t.logs.some((l) => l.includes("the worker is stalled")));
    expect(t.sim.stats().submissions).toEqual([]);
    expect((await t.store.countTasks(id)).new).toBe(1);

    admission.untrack("partition-another-host-took");
    const ended = await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=120`);
    expect(ended.json).toMatchObject({ ended: true, job: { state: "done" } });
    await waitForReadyz(t, "/readyz is ready again", (r) => r.status === 200 && !r.json.worker.stalled);
    const after = (await t.call("/readyz")).json.worker;
    expect(after.stalledSince).toBeUndefined();
    expect(after.reason).toBeUndefined();
    expect(Date.parse(after.lastProgressAt)).toBeGreaterThanOrEqual(since);
    expect(await gauge(t, "segops_worker_stalled")).toBe(0);
    expect(await gauge(t, "segops_worker_last_progress_timestamp_seconds")).toBe(
      Date.parse(after.lastProgressAt) / 1000,
    );
    await until("its end is logged", () => t.logs.some((l) => l.includes("the worker is no longer stalled")));
  });

  it("waiting for worker slots other tasks hold is reported as blocked, not as a stall", async () => {
    const t = await startTestService({
      sim: { capacity: 1, workers: 1 },
      service: { stallTimeoutMs: 1000 },
    });
    const blocker = await otherUsersTask(t);
    const id = await backfillOneDay(t, "blocked_not_stalled");
    // Blocked for four stall timeouts (the gauge holds since when): readiness and the stall gauge stay quiet.
    await until(
      "the worker has been blocked for four stall timeouts",
      async () => {
        const since = await gauge(t, "segops_admission_blocked_since_timestamp_seconds");
        return since !== null && Date.now() - since * 1000 > 4000;
      },
      { timeoutMs: 120_000 },
    );
    const ready = await t.call("/readyz");
    expect(ready.status, JSON.stringify(ready.json)).toBe(200);
    expect(ready.json.worker.stalled).toBe(false);
    expect(await gauge(t, "segops_worker_stalled")).toBe(0);
    expect(t.logs.some((l) => l.includes("the worker is stalled"))).toBe(false);
    await blocker.free();
    const ended = await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=120`);
    expect(ended.json).toMatchObject({ ended: true, job: { state: "done" } });
  });
});
