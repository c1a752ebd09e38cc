import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim, type TestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";

async function runner(s: TestSim, ids: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const id of ids) {
    const st = (await s.get(`${V1}/task/${id}/status`)).json.status;
    out[id] = st.statusCode === "RUNNING" ? st.runnerStatusCode : st.statusCode;
  }
  return out;
}

describe("scheduling: slots, locks and priorities (docs/druid-api.md §2.3, §4.4)", () => {
  it("keeps tasks PENDING until a slot frees, then starts them FIFO at the moment it frees", async () => {
    const s = await startTestSim({ capacity: 2 });
    for (const [i, ms] of [1000, 2000, 500, 500].entries()) {
      await s.post(
        `${V1}/task`,
        parallelTask({
          id: `t${i}`,
          intervals: [`2026-01-0${i + 1}/2026-01-0${i + 2}`],
          context: { simDurationMs: ms },
        }),
      );
    }
    expect(await runner(s, ["t0", "t1", "t2", "t3"])).toEqual({
      t0: "RUNNING",
      t1: "RUNNING",
      t2: "PENDING",
      t3: "PENDING",
    });
    await s.advance(1000);
    expect(await runner(s, ["t0", "t1", "t2", "t3"])).toEqual({
      t0: "SUCCESS",
      t1: "RUNNING",
      t2: "RUNNING",
      t3: "PENDING",
    });
    // Even if nobody looks until much later, t3 started when t2 ended (t=1500) and ended at t=2000.
    await s.advance(10_000);
    const events = s.sim.stats().tasks;
    expect(events.t3?.find((e) => e.event === "running")?.at).toBe("2026-03-01T00:00:01.500Z");
    expect(events.t3?.find((e) => e.event === "success")?.at).toBe("2026-03-01T00:00:02.000Z");
  });

  it("gives an index_parallel task with k concurrent sub-tasks k+1 slots, and k <= 1 one slot", async () => {
    const s = await startTestSim({ capacity: 4 });
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "k3",
        intervals: ["2026-01-01/2026-01-02"],
        tuningConfig: { maxNumConcurrentSubTasks: 3 },
      }),
    );
    expect(s.sim.stats().slots).toEqual({ capacity: 4, used: 4, maxUsed: 4 });
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "k1",
        intervals: ["2026-01-02/2026-01-03"],
        tuningConfig: { maxNumConcurrentSubTasks: 1 },
      }),
    );
    expect(await runner(s, ["k3", "k1"])).toEqual({ k3: "RUNNING", k1: "PENDING" });
    await s.post(`${V1}/task/k3/shutdown`, "");
    expect(await runner(s, ["k1"])).toEqual({ k1: "RUNNING" });
    expect(s.sim.stats().slots.used).toBe(1);
  });

  it("runs a non-splittable (inline) source sequentially in one slot even with k > 1", async () => {
    const s = await startTestSim({ capacity: 4 });
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "inl",
        inputSource: { type: "inline", data: "" },
        tuningConfig: { maxNumConcurrentSubTasks: 3 },
      }),
    );
    expect(s.sim.stats().slots.used).toBe(1);
  });

  it("spreads slots over several workers and clamps a task needing more than the cluster has", async () => {
    const s = await startTestSim({ capacity: 2, workers: 2 });
    await s.post(`${V1}/task`, parallelTask({ id: "big", tuningConfig: { maxNumConcurrentSubTasks: 9 } }));
    expect(await runner(s, ["big"])).toEqual({ big: "RUNNING" });
    const workers = (await s.get(`${V1}/workers`)).json as Array<{ currCapacityUsed: number }>;
    expect(workers.map((w) => w.currCapacityUsed)).toEqual([2, 2]);
  });

  it("lets a later task overlapping a held lock WAIT (RUNNING/WAITING) until the first ends", async () => {
    const s = await startTestSim({ capacity: 4 });
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "first", intervals: ["2026-01-01/2026-01-03"], context: { simDurationMs: 1000 } }),
    );
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "second", intervals: ["2026-01-02/2026-01-04"], context: { simDurationMs: 1000 } }),
    );
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "other", dataSource: "other", intervals: ["2026-01-02/2026-01-04"] }),
    );
    expect(await runner(s, ["first", "second", "other"])).toEqual({
      first: "RUNNING",
      second: "WAITING",
      other: "RUNNING",
    });
    const waiting = (await s.get(`${V1}/waitingTasks`)).json;
    expect(waiting.map((t: { id: string }) => t.id)).toEqual(["second"]);
    expect(waiting[0]).toMatchObject({
      statusCode: "RUNNING",
      runnerStatusCode: "WAITING",
      location: { host: null, port: -1, tlsPort: -1 },
    });
    expect((await s.get(`${V1}/task/second/reports`)).status).toBe(404);
    await s.advance(1000);
    expect(await runner(s, ["first", "second"])).toEqual({ first: "SUCCESS", second: "RUNNING" });
    expect(s.sim.stats().tasks.second?.map((e) => e.event)).toEqual([
      "submitted",
      "waiting",
      "pending",
      "running",
    ]);
  });

  it("does not let same-or-lower priority tasks revoke a lock", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "hi", context: { priority: 60 } }));
    await s.post(`${V1}/task`, parallelTask({ id: "lo", context: { priority: 40 } }));
    await s.post(`${V1}/task`, parallelTask({ id: "eq", context: { priority: 60 } }));
    expect(await runner(s, ["hi", "lo", "eq"])).toEqual({ hi: "RUNNING", lo: "WAITING", eq: "WAITING" });
  });

  it("revokes a lower-priority task's lock for a later higher-priority task; the victim FAILs", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "victim", context: { simDurationMs: 5000 } }));
    await s.advance(100);
    await s.post(`${V1}/task`, parallelTask({ id: "boss", context: { priority: 75, simDurationMs: 100 } }));
    const victim = (await s.get(`${V1}/task/victim/status`)).json.status;
    expect(victim.statusCode).toBe("FAILED");
    expect(victim.errorMsg).toMatch(
      /^Lock revoked: \[TimeChunkLock\{type=EXCLUSIVE, groupId='victim', dataSource='wiki', interval=2026-01-01T00:00:00\.000Z\/2026-01-02T00:00:00\.000Z, version='2026-03-01T00:00:00\.000Z', priority=50, revoked=true\}\]$/,
    );
    expect(await runner(s, ["boss"])).toEqual({ boss: "RUNNING" });
  });

  it("tries queued tasks in descending priority order", async () => {
    const s = await startTestSim({ capacity: 1 });
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "run", intervals: ["2026-02-01/2026-02-02"], context: { simDurationMs: 100 } }),
    );
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "low", intervals: ["2026-02-02/2026-02-03"], context: { priority: 10 } }),
    );
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "high", intervals: ["2026-02-03/2026-02-04"], context: { priority: 90 } }),
    );
    await s.advance(100);
    expect(await runner(s, ["low", "high"])).toEqual({ low: "PENDING", high: "RUNNING" });
  });

  it("fails a task without intervals whose data chunk is locked by another task", async () => {
    const s = await startTestSim();
    const data = '{"time":"2026-01-01T05:00:00Z","page":"a","user":"u"}\n';
    await s.post(`${V1}/task`, parallelTask({ id: "holder", context: { simDurationMs: 1000 } }));
    await s.post(
      `${V1}/task`,
      parallelTask({
        id: "late",
        intervals: null,
        inputSource: { type: "inline", data },
        context: { simDurationMs: 10 },
      }),
    );
    await s.advance(10);
    expect((await s.get(`${V1}/task/late/status`)).json.status).toMatchObject({
      statusCode: "FAILED",
      errorMsg: "Cannot acquire a lock for interval[2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z]",
    });
  });

  it("derives durations from a seeded model: same seed same durations, rows cost time", async () => {
    const durations = async (seed: number) => {
      const s = await startTestSim({ seed, capacity: 8 });
      for (const [i, rows] of [1000, 1000, 2_000_000].entries()) {
        await s.post(
          `${V1}/task`,
          parallelTask({
            id: `d${i}`,
            intervals: [`2026-01-0${i + 1}/2026-01-0${i + 2}`],
            context: { simRows: rows },
          }),
        );
      }
      await s.advance(3_600_000);
      const st = (await s.post(`${V1}/taskStatus`, ["d0", "d1", "d2"])).json;
      return [st.d0.duration, st.d1.duration, st.d2.duration] as number[];
    };
    const a = await durations(5);
    expect(await durations(5)).toEqual(a);
    expect(a[0]).not.toBe(a[1]);
    expect(a[2]).toBeGreaterThan((a[0] as number) + 50_000);
  });

  it("tracks the peak slot use", async () => {
    const s = await startTestSim({ capacity: 3 });
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "a", intervals: ["2026-01-01/2026-01-02"], context: { simDurationMs: 10 } }),
    );
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "b", intervals: ["2026-01-02/2026-01-03"], context: { simDurationMs: 10 } }),
    );
    await s.advance(10);
    expect(s.sim.stats().slots).toEqual({ capacity: 3, used: 0, maxUsed: 2 });
  });
});
