import { describe, expect, it } from "vitest";
import { backoffBackfill, pollEvery, pollWithBackoff, pool } from "../../bench/lib/baselines.js";
import { logNormalDurations } from "../../bench/lib/durations.js";
import { withBenchEnv } from "../../bench/lib/env.js";
import { finishedAt } from "../../bench/lib/sim-events.js";
import type { TaskSpec } from "../../src/druid/client.js";

/**
 * A smoke test of the polling and backfill benchmark code (no timing: the figures are `npm run bench`'s): the baseline
 * pollers see every task end, never before the emulator ended it, with the request pattern their recipe
 * has; the duration mix is seeded.
 */
const noop = (id: string, ms: number) =>
  ({ type: "noop", id, context: { simDurationMs: ms } }) as unknown as TaskSpec;

describe("bench baselines", () => {
  it("the capped-backoff poller, the pool and the sequential poller see every task end, after it ended", async () => {
    await withBenchEnv({ timeScale: 100, sim: { capacity: 8, seed: 1, handoffDelayMs: 0 } }, async (env) => {
      const clock = env.time.clock;
      const seen = await backoffBackfill(
        env.client,
        [noop("b0", 10_000), noop("b1", 20_000), noop("b2", 5_000)],
        { clock, poolSize: 2 },
      );
      expect(seen.map((s) => s.outcome)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS"]);
      const tasks = env.sim.stats().tasks;
      for (const s of seen)
        expect(s.at).toBeGreaterThanOrEqual(finishedAt(tasks, s.id) ?? Number.POSITIVE_INFINITY);
      // Asked at 0, 2, 6, 14, 30 s (delays doubling from 2 s): at most 4 + 5 + 3 GETs for these three, however
      // the machine's load stretches them; at least one each.
      const gets = env.sim.stats().requests["GET /druid/indexer/v1/task/:taskId/status"] ?? 0;
      expect(gets).toBeGreaterThanOrEqual(3);
      expect(gets).toBeLessThanOrEqual(12);

      const { taskId } = await env.client.submitTask(noop("s0", 3000));
      expect((await pollEvery(env.client, taskId, clock, 1000)).outcome).toBe("SUCCESS");
      const late = await pollWithBackoff(
        env.client,
        (await env.client.submitTask(noop("d0", 600_000))).taskId,
        {
          clock,
          deadline: clock.now() + 5000,
        },
      );
      expect(late.outcome).toBe("DEADLINE");
    });
  }, 30_000);

  it("the pool keeps at most its size in flight and the order of its items", async () => {
    let running = 0;
    let most = 0;
    const out = await pool([5, 1, 3, 2], 2, async (x) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, x));
      running--;
      return x * 10;
    });
    expect(out).toEqual([50, 10, 30, 20]);
    expect(most).toBe(2);
  });

  it("log-normal durations are seeded and clamped", () => {
    const a = logNormalDurations(500, 16, { medianMs: 120_000, sigma: 0.6, minMs: 20_000, maxMs: 600_000 });
    expect(
      logNormalDurations(500, 16, { medianMs: 120_000, sigma: 0.6, minMs: 20_000, maxMs: 600_000 }),
    ).toEqual(a);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(20_000);
    expect(Math.max(...a)).toBeLessThanOrEqual(600_000);
    const sorted = [...a].sort((x, y) => x - y);
    const median = sorted[250] as number;
    expect(median).toBeGreaterThan(100_000);
    expect(median).toBeLessThan(140_000);
  });
});
