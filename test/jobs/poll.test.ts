import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { DruidClient } from "../../src/druid/client.js";
import { statusLookupFor } from "../../src/jobs/engine.js";
import { type PolledTask, pollTasks } from "../../src/jobs/poll.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { StatusBatcher, type TaskStatusSnapshot } from "../../src/work/status-batcher.js";

let sim: SimHandle | undefined;
let client: DruidClient | undefined;
afterEach(async () => {
  await client?.close();
  await sim?.close();
});

/** A task that finishes after `durationMs` of emulator time (no input data needed); its own day, so no lock waits. */
function task(id: string, day: number, durationMs: number) {
  const start = new Date(Date.UTC(2026, 0, 1 + day)).toISOString();
  const end = new Date(Date.UTC(2026, 0, 2 + day)).toISOString();
  return {
    type: "index_parallel",
    id,
    spec: {
      dataSchema: {
        dataSource: "polled",
        timestampSpec: { column: "ts" },
        dimensionsSpec: { dimensions: [] },
        granularitySpec: { segmentGranularity: "day", intervals: [`${start}/${end}`] },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "s3", uris: ["s3://b/x.json"] },
        inputFormat: { type: "json" },
        appendToExisting: true,
      },
      tuningConfig: { type: "index_parallel", partitionsSpec: { type: "dynamic" } },
    },
    context: { simDurationMs: durationMs },
  };
}

describe("poll", () => {
  it("watches 200 tasks of mixed durations: done about one tick after the slowest, with one bulk request per tick", async () => {
    const tickMs = 1000;
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    sim = await startSim({ clock, capacity: 1000, handoffDelayMs: 0 });
    client = new DruidClient({ url: sim.url });
    const durations = Array.from({ length: 200 }, (_, i) => 1000 + ((i * 7919) % 60) * 1000 + (i % 3) * 250);
    const ids = durations.map((_, i) => `poll_${String(i).padStart(3, "0")}`);
    for (const [i, id] of ids.entries()) await client.submitTask(task(id, i, durations[i] as number));
    sim.resetStats();

    const batcher = new StatusBatcher({ lookup: statusLookupFor(client), clock, tickMs });
    const seen: PolledTask[] = [];
    let finished = false;
    const polling = pollTasks(ids, { batcher, clock, onTerminal: (t) => seen.push(t) }).then((r) => {
      finished = true;
      return r;
    });
    // Drive the shared clock one tick at a time, letting each bulk request complete over real HTTP.
    for (let tick = 1; !finished && tick <= 120; tick++) {
      await clock.advance(tickMs);
      while (!finished && (batcher.stats.lookups < tick || clock.pendingSleeps === 0)) {
        await new Promise((r) => setTimeout(r, 1));
      }
    }
    const results = await polling;
    await batcher.stop();

    expect(results.every((r) => r.outcome === "SUCCESS")).toBe(true);
    expect(new Set(seen.map((t) => t.id)).size).toBe(200);
    const slowest = Math.max(...durations);
    const last = Math.max(...results.map((r) => r.elapsedMs));
    expect(last).toBeGreaterThanOrEqual(slowest);
    expect(last).toBeLessThanOrEqual(slowest + tickMs);
    // Each task is seen within one tick of finishing (emulator time).
    for (const [i, r] of results.entries()) {
      expect(r.elapsedMs - (durations[i] as number)).toBeGreaterThanOrEqual(0);
      expect(r.elapsedMs - (durations[i] as number)).toBeLessThanOrEqual(tickMs);
    }
    const requests = sim.stats().requests;
    expect(requests["POST /druid/indexer/v1/taskStatus"]).toBe(batcher.stats.lookups);
    expect(batcher.stats.lookups).toBeLessThanOrEqual(Math.ceil(slowest / tickMs) + 1);
    expect(requests["GET /druid/indexer/v1/task/:taskId/status"] ?? 0).toBe(0);
  }, 60_000);

  it("settles every task in one loop: outcomes, unknown ids after 3 answers, the deadline for the rest, in id order", async () => {
    // No emulator here: the afterEach must not close the previous test's again.
    sim = undefined;
    client = undefined;
    const clock = new ManualClock(0);
    let lookups = 0;
    const batcher = new StatusBatcher({
      clock,
      tickMs: 1000,
      lookup: async (ids) => {
        lookups++;
        const out = new Map<string, TaskStatusSnapshot>();
        for (const id of ids) {
          if (id === "gone") continue;
          const ended = id === "ok" ? lookups >= 2 : id === "bad" ? lookups >= 1 : false;
          const state = !ended ? "RUNNING" : id === "ok" ? "SUCCESS" : "FAILED";
          out.set(id, { id, state, duration: ended ? 5 : -1, errorMsg: state === "FAILED" ? "boom" : null });
        }
        return out;
      },
    });
    const seen: string[] = [];
    const polling = pollTasks(["slow", "ok", "gone", "bad", "ok"], {
      batcher,
      clock,
      deadlineMs: 10_000,
      onTerminal: (t) => seen.push(`${t.id} ${t.outcome}`),
    });
    for (let i = 0; i < 12; i++) await clock.advance(1000);
    const results = await polling;
    await batcher.stop();
    expect(results.map((r) => [r.id, r.outcome])).toEqual([
      ["slow", "DEADLINE"],
      ["ok", "SUCCESS"],
      ["gone", "UNKNOWN"],
      ["bad", "FAILED"],
    ]);
    expect(results[3]?.errorMsg).toBe("boom");
    expect(seen).toEqual(["bad FAILED", "ok SUCCESS", "gone UNKNOWN"]);
    // One bulk lookup a tick for all of them until the deadline.
    expect(lookups).toBeLessThanOrEqual(10);
  });
});
