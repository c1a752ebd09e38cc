import { describe, expect, it } from "vitest";
import { DruidClient } from "../../src/druid/client.js";
import { until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { type ApiResult, otherUsersTask, startTestService, type TestService } from "../helpers/serve.js";

/**
 * Segment operations through `segops serve` on the emulator: a fragmented datasource compacted, rolled
 * back to the version before the compaction and the compaction's segments killed, each through its POST
 * and run by the service's worker; dry runs and bad requests store nothing.
 */

const DS = "api_segments";
const INTERVAL = "2026-01-01/2026-01-05";

async function waitDone(t: TestService, res: ApiResult): Promise<ApiResult> {
  expect(res.status, res.text).toBe(201);
  const id = res.json.id as string;
  const ended = await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=60`);
  expect(ended.json.ended, ended.text).toBe(true);
  expect(ended.json.job.state, ended.text).toBe("done");
  return ended;
}

const jobs = async (t: TestService) => (await t.store.listJobs({ limit: 1000 })).length;

describe("segops serve: segment operations", () => {
  it("compacts a fragmented datasource, rolls it back to the version before, and kills what the rollback left unused", async () => {
    // Druid's clock is the service's (time scale 1, short tasks): a kill compares the time a segment was
    // marked unused, in Druid's time, with the service's now.
    const t = await startTestService({
      token: null,
      sim: { timeScale: 1, baseDurationMs: 200, handoffDelayMs: 200, unusedDelayMs: 200 },
    });
    const client = new DruidClient({ url: t.sim.url, retry: { baseMs: 5, capMs: 50 } });
    try {
      // Two segments a day: a backfill, then an append of other rows into the same version.
      for (const [i, rowsPerDay] of [4, 3].entries()) {
        const dataDir = writeDailyDataset({ from: "2026-01-01", days: 4, rowsPerDay });
        await waitDone(
          t,
          await t.call("/api/v1/backfills", {
            json: {
              template: dailyTemplate({ datasource: DS, append: i > 0 }),
              from: "2026-01-01",
              to: "2026-01-05",
              vars: { dataDir },
              specVersion: String(i),
            },
          }),
        );
      }
      const before = await client.metadataSegments(DS, [INTERVAL]);
      const original = [...new Set(before.map((s) => s.version))];
      expect(original).toHaveLength(4);
      expect(before).toHaveLength(8);

      // A dry run: the plan, nothing stored.
      const count = await jobs(t);
      const dry = await t.call("/api/v1/compactions", {
        json: { datasource: DS, interval: INTERVAL, minSegmentMb: 1, maxSegmentMb: 2, dryRun: true },
      });
      expect(dry.status, dry.text).toBe(200);
      expect(dry.json).toMatchObject({ kind: "compact", dryRun: true, tasks: 4 });
      expect(dry.json.items[0].what).toMatch(/^compact 2 segment\(s\)/);
      expect(await jobs(t)).toBe(count);

      const body = { datasource: DS, interval: INTERVAL, minSegmentMb: 1, maxSegmentMb: 2 };
      const compacted = await waitDone(t, await t.call("/api/v1/compactions", { json: body }));
      expect(compacted.json.job.kind).toBe("compact");
      expect(compacted.json.job.counts.done).toBe(4);
      const after = await client.metadataSegments(DS, [INTERVAL]);
      const live = after.filter((s) => !original.includes(s.version));
      expect(live).toHaveLength(4);
      // Asked again, there is nothing left to compact: the plan, no job.
      const again = await t.call("/api/v1/compactions", { json: body });
      expect(again.status, again.text).toBe(200);
      expect(again.json).toMatchObject({ kind: "compact", dryRun: false, tasks: 0 });

      // Roll every day back to the version the backfill wrote (one version per day: `before` the
      // compaction's versions, which are newer than every day's original one).
      const newest = [...original].sort().at(-1) as string;
      const cutoff = new Date(Date.parse(newest) + 1).toISOString();
      const rollback = await t.call("/api/v1/rollbacks", {
        json: { datasource: DS, interval: INTERVAL, before: cutoff, dryRun: true },
      });
      expect(rollback.status, rollback.text).toBe(200);
      expect(rollback.json).toMatchObject({ kind: "rollback", dryRun: true, tasks: 4 });
      expect(rollback.json.items.map((i: { what: string }) => i.what).join("\n")).toMatch(/mark .* unused/);
      await waitDone(
        t,
        await t.call("/api/v1/rollbacks", { json: { datasource: DS, interval: INTERVAL, before: cutoff } }),
      );
      const restored = await client.metadataSegments(DS, [INTERVAL]);
      expect(restored.map((s) => s.version).sort()).toEqual(before.map((s) => s.version).sort());

      // The compaction's segments are unused now: a kill is a dry run unless told otherwise.
      const killBody = { datasource: DS, interval: INTERVAL, batchSize: 1 };
      const plan = await t.call("/api/v1/kills", { json: killBody });
      expect(plan.status, plan.text).toBe(200);
      expect(plan.json).toMatchObject({ kind: "kill", dryRun: true });
      expect(plan.json.tasks).toBeGreaterThan(0);
      expect((await client.unusedSegments(DS, INTERVAL)).length).toBe(4);
      await waitDone(t, await t.call("/api/v1/kills", { json: { ...killBody, dryRun: false } }));
      expect(await client.unusedSegments(DS, INTERVAL)).toEqual([]);
      // Four kill tasks, one at a time: Druid's kill budget (killTaskSlotRatio 0.1 of 8 slots, at least one)
      // holds in the service as in the CLI.
      const kills = t.sim.stats().submissions.filter((k) => k.accepted && k.id?.startsWith("segops_kill_"));
      expect(kills).toHaveLength(4);
      const spans = kills.map((k) => {
        const events = t.sim.engine.stats.events.get(k.id ?? "") ?? [];
        const at = (e: string) => events.find((x) => x.event === e)?.at ?? Number.NaN;
        return [at("running"), at("success")] as const;
      });
      for (const [a, b] of spans) expect(a < b).toBe(true);
      const overlapping = spans.filter(([a1, b1], i) =>
        spans.some(([a2, b2], j) => i !== j && a1 < b2 && a2 < b1),
      );
      expect(overlapping).toEqual([]);
      expect((await client.metadataSegments(DS, [INTERVAL])).length).toBe(8);
    } finally {
      await client.close();
    }
  }, 120_000);

  it("the same request while its job is open answers with that job, even when a new plan would refuse", async () => {
    // One worker slot, held by another user's task: the kill job waits for it, open.
    const t = await startTestService({
      token: null,
      sim: { timeScale: 1, capacity: 1, baseDurationMs: 200, handoffDelayMs: 200, unusedDelayMs: 200 },
    });
    const client = new DruidClient({ url: t.sim.url, retry: { baseMs: 5, capMs: 50 } });
    try {
      const day = "2026-01-01/2026-01-02";
      for (const specVersion of ["0", "1"]) {
        const dataDir = writeDailyDataset({ from: "2026-01-01", days: 1, rowsPerDay: 3 });
        await waitDone(
          t,
          await t.call("/api/v1/runs", {
            json: {
              template: dailyTemplate({ datasource: DS }),
              interval: day,
              vars: { dataDir },
              specVersion,
            },
          }),
        );
      }
      await until(
        "the first version is unused",
        async () => (await client.unusedSegments(DS, day)).length === 1,
        {
          timeoutMs: 30_000,
        },
      );
      await otherUsersTask(t);
      const body = { datasource: DS, interval: day, dryRun: false };
      const first = await t.call("/api/v1/kills", { json: body });
      expect(first.status, first.text).toBe(201);
      // Then the chunk's live version is marked unused by hand: planned now, the kill is refused (its
      // unused versions would be the chunk's only copies)…
      expect(await client.markSegments(DS, "unused", { interval: day })).toBe(1);
      const dry = await t.call("/api/v1/kills", { json: { ...body, dryRun: true } });
      expect(dry.status, dry.text).toBe(400);
      expect(dry.json.detail ?? dry.text).toMatch(/no version of it is used/);
      // …but the same request names the job already open: the answer is that job, nothing planned.
      const count = await jobs(t);
      const again = await t.call("/api/v1/kills", { json: body });
      expect(again.status, again.text).toBe(200);
      expect(again.json).toMatchObject({ id: first.json.id, state: "open" });
      expect(await jobs(t)).toBe(count);
    } finally {
      await client.close();
    }
  }, 120_000);

  it("refuses a bad request naming the field, and stores nothing", async () => {
    const t = await startTestService({ token: null });
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["/api/v1/compactions", { datasource: DS, interval: "2026-01-05/2026-01-01" }, "interval"],
      [
        "/api/v1/compactions",
        { datasource: DS, interval: INTERVAL, minSegmentMb: 9, maxSegmentMb: 2 },
        "minSegmentMb",
      ],
      ["/api/v1/compactions", { datasource: DS, interval: INTERVAL, extra: 1 }, ""],
      ["/api/v1/compactions", { datasource: "", interval: INTERVAL }, "datasource"],
      ["/api/v1/rollbacks", { datasource: DS, interval: INTERVAL }, "toVersion"],
      [
        "/api/v1/rollbacks",
        { datasource: DS, interval: INTERVAL, toVersion: "v", before: "2026-01-01" },
        "toVersion",
      ],
      ["/api/v1/rollbacks", { datasource: DS, interval: INTERVAL, before: "yesterday" }, "before"],
      // Well-formed, refused by the plan: no segment has that version.
      [
        "/api/v1/rollbacks",
        { datasource: DS, interval: INTERVAL, toVersion: "2020-01-01T00:00:00.000Z" },
        "toVersion",
      ],
      ["/api/v1/kills", { datasource: DS, interval: INTERVAL, olderThan: "30 days" }, "olderThan"],
      ["/api/v1/kills", { datasource: DS, interval: INTERVAL, batchSize: 0 }, "batchSize"],
    ];
    for (const [path, json, field] of cases) {
      const res = await t.call(path, { json });
      expect(res.status, `${path} ${JSON.stringify(json)}: ${res.text}`).toBe(400);
      expect(res.json.type).toMatch(/invalid-request/);
      if (field) expect(res.json.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
    const unplanned = await t.call("/api/v1/rollbacks", {
      json: { datasource: DS, interval: INTERVAL, toVersion: "2020-01-01T00:00:00.000Z" },
    });
    expect(unplanned.json.errors).toEqual([
      { in: "body", path: "toVersion", message: expect.stringMatching(/^no segment of .* has version 2020/) },
    ]);
    expect(await jobs(t)).toBe(0);
    // Nothing reached Druid's task queue.
    expect(t.sim.stats().submissions).toEqual([]);
  });
});
