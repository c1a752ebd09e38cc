import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { JOB_VIEW_PARTITIONS } from "../../src/serve/schemas.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { otherUsersTask, startTestService } from "../helpers/serve.js";

/**
 * A large request is one caller's work, not the service's whole afternoon: the partitions one request may
 * plan are capped (a clear 400 above, nothing stored), a job's answer shows a page of its partitions and
 * says how to read the rest, and planning and storing yield to the event loop between pieces.
 */

const days = (n: number) =>
  new Date(Date.parse("2000-01-01T00:00:00Z") + n * 86_400_000).toISOString().slice(0, 10);

function backfillBody(dataDir: string, count: number) {
  return {
    template: dailyTemplate({ datasource: "large_requests" }),
    from: days(0),
    to: days(count),
    vars: { dataDir },
  };
}

describe("large requests to segops serve", () => {
  it("refuses a backfill past maxPartitionsPerRequest with a 400 naming `to` and the setting, and stores nothing", async () => {
    const t = await startTestService({ sim: { capacity: 1 }, service: { maxPartitionsPerRequest: 1200 } });
    await otherUsersTask(t);
    const dataDir = writeDailyDataset({ from: days(0), days: 1, rowsPerDay: 2 });
    const refused = await t.call("/api/v1/backfills", { json: backfillBody(dataDir, 1201) });
    expect(refused.status).toBe(400);
    expect(refused.json.errors).toEqual([
      {
        in: "body",
        path: "to",
        message: expect.stringMatching(
          /gives more than 1,200 partitions, the most one request may plan here \(the service's maxPartitionsPerRequest\): split the range into several requests, or choose a coarser granularity/,
        ),
      },
    ]);
    expect(await t.store.listJobs()).toEqual([]);
    // At the cap it is accepted.
    const accepted = await t.call("/api/v1/backfills", { json: backfillBody(dataDir, 1200) });
    expect(accepted.status).toBe(201);
    expect(accepted.json.partitionCount).toBe(1200);
  });

  it("shows the first page of a large job's partitions and pages through the rest, each once, in time order", async () => {
    // No free worker slot: the job stays as it was planned while it is read.
    const t = await startTestService({ sim: { capacity: 1 } });
    await otherUsersTask(t);
    const dataDir = writeDailyDataset({ from: days(0), days: 1, rowsPerDay: 2 });
    const count = 2 * JOB_VIEW_PARTITIONS + 345;
    const created = await t.call("/api/v1/backfills", { json: backfillBody(dataDir, count) });
    expect(created.status).toBe(201);
    const job = created.json;
    expect(job.partitions).toHaveLength(JOB_VIEW_PARTITIONS);
    expect(job.partitionCount).toBe(count);
    expect(job.counts.new).toBe(count);
    expect(job.partitionsNext).toBe(job.partitions.at(-1).task);
    // A thousandth of the 14 MB a 36,525-partition answer was: the answer's size follows the page.
    expect(created.text.length).toBeLessThan(JOB_VIEW_PARTITIONS * 1200);

    const seen: string[] = job.partitions.map((p: { interval: string }) => p.interval);
    let after: string | null = job.partitionsNext;
    let pages = 0;
    while (after !== null) {
      const page = await t.call(
        `/api/v1/jobs/${encodeURIComponent(job.id)}/partitions?after=${encodeURIComponent(after)}&limit=700`,
      );
      expect(page.status).toBe(200);
      expect(page.json.items.length).toBeLessThanOrEqual(700);
      seen.push(...page.json.items.map((p: { interval: string }) => p.interval));
      after = page.json.next;
      pages++;
    }
    expect(pages).toBe(Math.ceil((count - JOB_VIEW_PARTITIONS) / 700));
    expect(seen).toHaveLength(count);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(count);
    expect(seen[0]).toBe(`${days(0)}T00:00:00.000Z/${days(1)}T00:00:00.000Z`);
    expect(seen.at(-1)).toBe(`${days(count - 1)}T00:00:00.000Z/${days(count)}T00:00:00.000Z`);

    // The same view from GET; a small job shows every partition and no next page.
    const again = await t.call(`/api/v1/jobs/${encodeURIComponent(job.id)}`);
    expect(again.json.partitions.map((p: { task: string }) => p.task)).toEqual(
      job.partitions.map((p: { task: string }) => p.task),
    );
    const small = await t.call("/api/v1/backfills", {
      json: { ...backfillBody(dataDir, 3), template: dailyTemplate({ datasource: "large_requests_small" }) },
    });
    expect([small.json.partitions.length, small.json.partitionCount, small.json.partitionsNext]).toEqual([
      3,
      3,
      null,
    ]);
    const first = await t.call(`/api/v1/jobs/${encodeURIComponent(small.json.id)}/partitions?limit=2`);
    expect(first.json.items).toHaveLength(2);
    expect(first.json.next).toBe(first.json.items[1].task);
    const last = await t.call(
      `/api/v1/jobs/${encodeURIComponent(small.json.id)}/partitions?after=${encodeURIComponent(first.json.next)}`,
    );
    expect([last.json.items.length, last.json.next]).toEqual([1, null]);
    expect((await t.call("/api/v1/jobs/nope/partitions")).status).toBe(404);
    expect((await t.call(`/api/v1/jobs/${encodeURIComponent(job.id)}/partitions?limit=0`)).status).toBe(400);
  });

  it("lets the event loop run while the SQLite ledger stores thousands of partitions", async () => {
    const store = await openStore(`sqlite:${join(mkdtempSync(join(tmpdir(), "segops-large-")), "l.db")}`);
    try {
      const tasks = Array.from({ length: 3000 }, (_, i) => ({
        id: `job_large/${String(i).padStart(5, "0")}`,
        kind: "ingest",
        payload: { interval: days(i) },
      }));
      // A macrotask scheduled before the insert runs before it ends only if the insert yields: SQLite's
      // statements are synchronous, and awaits of resolved promises alone never let a timer or socket in.
      let turns = 0;
      const tick = () => {
        turns++;
        if (!done) setImmediate(tick);
      };
      let done = false;
      setImmediate(tick);
      await store.createJob({ id: "job_large", kind: "backfill", options: {} }, tasks);
      done = true;
      expect(turns).toBeGreaterThanOrEqual(3);
      expect((await store.countTasks("job_large")).new).toBe(3000);
    } finally {
      await store.close();
    }
  });
});
