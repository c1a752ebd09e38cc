import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startTestService, type TestService } from "../helpers/serve.js";

/**
 * A request's own `maxConcurrency` and `poisonAfter` apply in `segops serve`, under the service's own
 * settings: one job capped at one partition at Druid beside another running at the service's cap, and a
 * job dead-lettering a poison partition after one failure where the service's default waits for three.
 */

async function ended(t: TestService, id: string) {
  const res = await t.call(`/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=60`);
  expect(res.json.ended, res.text).toBe(true);
  return res.json;
}

/** The emulator's [running, end] span of every accepted task whose id starts with `prefix`. */
function spans(t: TestService, prefix: string): Array<readonly [number, number]> {
  return t.sim
    .stats()
    .submissions.filter((s) => s.accepted && s.id?.startsWith(prefix))
    .map((s) => {
      const events = t.sim.engine.stats.events.get(s.id ?? "") ?? [];
      const at = (e: string) => Date.parse(events.find((x) => x.event === e)?.at ?? "");
      return [at("running"), [at("success"), at("failed")].find(Number.isFinite) ?? Number.NaN] as const;
    });
}

const overlapping = (list: Array<readonly [number, number]>) =>
  Math.max(0, ...list.map(([a, b]) => list.filter(([c, d]) => c < b && a < d).length));

describe("segops serve: a job's own settings", () => {
  it("maxConcurrency caps that job's partitions at Druid; another job runs at the service's cap", async () => {
    const t = await startTestService({ token: null, service: { concurrency: 4 } });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 6, rowsPerDay: 5 });
    const body = (datasource: string, extra: Record<string, unknown> = {}) => ({
      template: dailyTemplate({ datasource }),
      from: "2026-01-01",
      to: "2026-01-07",
      vars: { dataDir },
      ...extra,
    });
    const [a, b] = await Promise.all([
      t.call("/api/v1/backfills", { json: body("settings_one", { maxConcurrency: 1 }) }),
      t.call("/api/v1/backfills", { json: body("settings_many") }),
    ]);
    expect([a.status, b.status]).toEqual([201, 201]);
    const [doneA, doneB] = await Promise.all([ended(t, a.json.id), ended(t, b.json.id)]);
    expect(doneA.job.counts.done).toBe(6);
    expect(doneB.job.counts.done).toBe(6);
    const one = spans(t, "segops_settings_one");
    const many = spans(t, "segops_settings_many");
    expect(one).toHaveLength(6);
    expect(many).toHaveLength(6);
    expect(overlapping(one)).toBe(1);
    expect(overlapping(many)).toBeGreaterThan(1);
  });

  it("poisonAfter dead-letters that job's poison partition after one failure (the service waits for three)", async () => {
    const t = await startTestService({ token: null });
    const dataDir = writeDailyDataset({ from: "2026-01-01", days: 2, rowsPerDay: 5 });
    writeFileSync(
      join(dataDir, "events-2026-01-02.json"),
      '{"ts": "2026-01-02T01:00:00Z", "channel": "#c1"\n',
    );
    const res = await t.call("/api/v1/backfills", {
      json: {
        template: dailyTemplate({ datasource: "settings_poison" }),
        from: "2026-01-01",
        to: "2026-01-03",
        vars: { dataDir },
        poisonAfter: 1,
      },
    });
    expect(res.status, res.text).toBe(201);
    const done = await ended(t, res.json.id);
    expect(done.job.counts).toMatchObject({ done: 1, dead: 1 });
    const dead = (await t.store.listTasks(res.json.id)).find((p) => p.state === "dead");
    expect(dead?.attempt).toBe(1);
    expect(spans(t, "segops_settings_poison").filter(([, end]) => Number.isFinite(end))).toHaveLength(2);
  });
});
