import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";
import { startTestService } from "../helpers/serve.js";

// "At most one open job over the same inputs" is the database's to enforce: twenty identical `new`
// backfills posted at once to a service on PostgreSQL create one job; the others are refused with 409,
// naming it. (A check-then-create let several through, each ingesting the range again.)

let pg: TestPostgres;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

describe("racing `new` requests on a PostgreSQL ledger", () => {
  it("create one job; the rest are 409 naming it", async () => {
    const t = await startTestService({ ledgerUrl: pg.freshUrl() });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    const body = {
      template: dailyTemplate({ datasource: "race", append: true }),
      templateName: "append.json",
      from: "2026-01-01",
      to: "2026-01-04",
      vars: { dataDir },
      new: true,
    };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => t.call("/api/v1/backfills", { json: body })),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    const id = created[0]?.json.id as string;
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.json.detail).toContain(id);
    }
    const jobs = await t.store.listJobs();
    expect(jobs.map((j) => j.id)).toEqual([id]);
  });
});

describe("plain and `new` requests over the same inputs on a PostgreSQL ledger", () => {
  it("leave one open job: a burst of both creates one, a plain request meeting an unfinished `new` job finds it again", async () => {
    const t = await startTestService({ ledgerUrl: pg.freshUrl() });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 3, rowsPerDay: 5 });
    const body = {
      template: dailyTemplate({ datasource: "mixed", append: true }),
      templateName: "append.json",
      from: "2026-01-01",
      to: "2026-01-04",
      vars: { dataDir },
    };
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        t.call("/api/v1/backfills", { json: i % 2 === 0 ? { ...body, new: true } : body }),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    const id = created[0]?.json.id as string;
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect([200, 409]).toContain(a.status);
      expect(a.status === 200 ? a.json.id : a.json.detail).toContain(id);
    }
    expect((await t.store.listJobs()).map((j) => j.id)).toEqual([id]);
    await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=60`);

    // Ingesting again: a `new` job, and while it is unfinished the same request without `new`.
    t.sim.setNeverLoad("mixed", true);
    const again = await t.call("/api/v1/backfills", { json: { ...body, new: true } });
    expect(again.status).toBe(201);
    const plain = await t.call("/api/v1/backfills", { json: body });
    expect(plain.status).toBe(200);
    expect(plain.json.id).toBe(again.json.id);
    expect((await t.store.listJobs()).map((j) => j.id).sort()).toEqual([id, again.json.id as string].sort());
    t.sim.setNeverLoad("mixed", false);
  });
});

describe("a changed sourceVersion while a partition runs", () => {
  it("is answered 409 naming the busy partition; asked again once it has finished, it runs again", async () => {
    const t = await startTestService();
    // Its segments do not load for now: the partition waits in handoff, running, until they do.
    t.sim.setNeverLoad("busy", true);
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 5 });
    const body = {
      template: dailyTemplate({ datasource: "busy" }),
      templateName: "daily.json",
      from: "2026-01-01",
      to: "2026-01-02",
      vars: { dataDir },
    };
    const first = await t.call("/api/v1/backfills", { json: { ...body, sourceVersion: "v1" } });
    expect(first.status).toBe(201);
    const id = first.json.id as string;
    const task = `${id}/20260101-20260102`;
    for (let i = 0; i < 3000 && (await t.store.getTask(task))?.state !== "running"; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect((await t.store.getTask(task))?.state).toBe("running");
    const changed = await t.call("/api/v1/backfills", { json: { ...body, sourceVersion: "v2" } });
    expect(changed.status).toBe(409);
    expect(changed.json).toMatchObject({
      type: "/problems/partitions-busy",
      instance: `/api/v1/jobs/${encodeURIComponent(id)}`,
    });
    expect(changed.json.detail).toMatch(
      /2026-01-01\/2026-01-02: source changed \(source version v1 → v2\), but it is running now/,
    );
    t.sim.setNeverLoad("busy", false);
    await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=60`);
    const again = await t.call("/api/v1/backfills", { json: { ...body, sourceVersion: "v2" } });
    expect(again.status).toBe(200);
    expect(again.json.state).toBe("open");
    expect(again.json.partitions[0]).toMatchObject({ sourceVersion: "v2" });
  });
});

describe("canceling a large job", () => {
  it("ends its partitions no driver holds at once, so the next job is not kept waiting behind them", async () => {
    const t = await startTestService({ service: { concurrency: 1 } });
    const dataDir = writeDailyDataset({ from: "2020-01-01", days: 2, rowsPerDay: 3 });
    const big = {
      template: dailyTemplate({ datasource: "big" }),
      templateName: "daily.json",
      from: "2020-01-01",
      to: "2025-01-01",
      vars: { dataDir },
    };
    const created = await t.call("/api/v1/backfills", { json: big });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const cancel = await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/cancel`, {
      method: "POST",
      json: {},
    });
    expect(cancel.status).toBe(200);
    // Everything not held by the worker right now ended with the cancel: nothing waits to be claimed.
    const counts = await t.store.countTasks(id);
    expect(counts.new + counts.suspended).toBe(0);
    expect(counts.failed).toBeGreaterThanOrEqual(1826 - 4);

    const small = await t.call("/api/v1/backfills", {
      json: {
        ...big,
        template: dailyTemplate({ datasource: "small" }),
        from: "2020-01-01",
        to: "2020-01-03",
      },
    });
    const ended = await t.call(`/api/v1/jobs/${encodeURIComponent(small.json.id as string)}/wait?timeout=60`);
    expect(ended.json).toMatchObject({ ended: true, job: { state: "done" } });
    const canceled = await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=60`);
    expect(canceled.json).toMatchObject({ ended: true, job: { state: "failed" } });
  }, 90_000);
});
