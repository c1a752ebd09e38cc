import { describe, expect, it } from "vitest";
import { parallelTask, startTestSim } from "../helpers/sim.js";

const V1 = "/druid/indexer/v1";

describe("task status and listings (docs/druid-api.md §2.3–§2.6, §2.8, §2.9)", () => {
  it("reports a running task with duration -1, epoch queueInsertionTime and its peon location", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "t1", context: { simDurationMs: 10_000 } }));
    const res = await s.get(`${V1}/task/t1/status`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      task: "t1",
      status: {
        id: "t1",
        groupId: "t1",
        type: "index_parallel",
        createdTime: "2026-03-01T00:00:00.000Z",
        queueInsertionTime: "1970-01-01T00:00:00.000Z",
        statusCode: "RUNNING",
        status: "RUNNING",
        runnerStatusCode: "RUNNING",
        duration: -1,
        location: { host: "localhost", port: 8100, tlsPort: -1 },
        dataSource: "wiki",
        errorMsg: null,
      },
    });
  });

  it("completes after its sim duration with the run time as duration", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "t1", context: { simDurationMs: 10_000 } }));
    await s.advance(9_999);
    expect((await s.get(`${V1}/task/t1/status`)).json.status.statusCode).toBe("RUNNING");
    await s.advance(1);
    const status = (await s.get(`${V1}/task/t1/status`)).json.status;
    expect(status).toMatchObject({
      statusCode: "SUCCESS",
      status: "SUCCESS",
      duration: 10_000,
      errorMsg: null,
    });
    // The status endpoint hard-codes WAITING for tasks the runner forgot (docs/druid-api.md §2.3).
    expect(status.runnerStatusCode).toBe("WAITING");
  });

  it("fails a task with context.simFail after its run", async () => {
    const s = await startTestSim();
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "f", context: { simDurationMs: 100, simFail: "Custom failure" } }),
    );
    await s.advance(100);
    expect((await s.get(`${V1}/task/f/status`)).json.status).toMatchObject({
      statusCode: "FAILED",
      errorMsg: "Custom failure",
    });
  });

  it("fails only the first simFailAttempts tasks sharing a key", async () => {
    const s = await startTestSim();
    const ctx = { simDurationMs: 100, simFailAttempts: 1, simFailKey: "p1" };
    await s.post(`${V1}/task`, parallelTask({ id: "a1", context: ctx }));
    await s.advance(100);
    await s.post(`${V1}/task`, parallelTask({ id: "a2", context: ctx }));
    await s.advance(100);
    const res = await s.post(`${V1}/taskStatus`, ["a1", "a2"]);
    expect(res.json.a1).toMatchObject({
      status: "FAILED",
      errorMsg: "Failed in phase[segment generation]. See task logs for details.",
    });
    expect(res.json.a2).toMatchObject({ status: "SUCCESS", errorMsg: null });
  });

  it("answers 404 text/plain for unknown ids on every /task/{id} endpoint", async () => {
    const s = await startTestSim();
    for (const [method, path] of [
      ["GET", "status"],
      ["GET", ""],
      ["GET", "reports"],
      ["GET", "log"],
      ["POST", "shutdown"],
    ] as const) {
      const url = `${V1}/task/nope${path ? `/${path}` : ""}`;
      const res = method === "GET" ? await s.get(url) : await s.post(url, "");
      expect(res.status).toBe(404);
      expect(res.contentType).toBe("text/plain");
      expect(res.text).toBe("Cannot find any task with id: [nope]");
    }
  });

  it("handles ids with colons and dots in the path (generated ids contain an ISO time)", async () => {
    const s = await startTestSim();
    const id = (await s.post(`${V1}/task`, parallelTask())).json.task as string;
    const res = await s.get(`${V1}/task/${encodeURIComponent(id)}/status`);
    expect(res.status).toBe(200);
    expect(res.json.task).toBe(id);
  });

  it("serves a short plain-text task log with the lifecycle and the failure", async () => {
    const s = await startTestSim();
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "lg", context: { simDurationMs: 10, simFail: "bad row" } }),
    );
    await s.advance(10);
    const log = await s.get(`${V1}/task/lg/log`);
    expect(log.contentType).toBe("text/plain");
    expect(log.text.split("\n").filter(Boolean)).toEqual([
      "2026-03-01T00:00:00.000Z INFO [task-runner] Task[lg] submitted",
      "2026-03-01T00:00:00.000Z INFO [task-runner] Task[lg] pending",
      "2026-03-01T00:00:00.000Z INFO [task-runner] Task[lg] running",
      "2026-03-01T00:00:00.010Z INFO [task-runner] Task[lg] failed",
      "ERROR [task-runner] Task[lg] failed: bad row",
    ]);
  });

  it("serves the stored payload with id, groupId and the context defaults", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "p1" }));
    const res = await s.get(`${V1}/task/p1`);
    expect(res.status).toBe(200);
    expect(res.json.task).toBe("p1");
    expect(res.json.payload).toMatchObject({
      type: "index_parallel",
      id: "p1",
      groupId: "p1",
      dataSource: "wiki",
      context: { forceTimeChunkLock: true, useLineageBasedSegmentAllocation: true, simRows: 1000 },
    });
    expect(res.json.payload.spec.dataSchema.dataSource).toBe("wiki");
  });

  it("bulk taskStatus omits unknown ids and rejects an empty list in plain text", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "b1" }));
    const res = await s.post(`${V1}/taskStatus`, ["b1", "unknown"]);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      b1: {
        id: "b1",
        status: "RUNNING",
        duration: -1,
        errorMsg: null,
        location: { host: "localhost", port: 8100, tlsPort: -1 },
      },
    });
    expect((await s.post(`${V1}/taskStatus`, ["unknown"])).json).toEqual({});
    const empty = await s.post(`${V1}/taskStatus`, []);
    expect(empty.status).toBe(400);
    expect(empty.text).toBe("No Task IDs provided.");
    expect((await s.post(`${V1}/taskStatus`, "[]", "text/plain")).status).toBe(415);
  });

  it("lists complete tasks first (newest first, NONE) then active ones, with filters", async () => {
    const s = await startTestSim({ capacity: 1 });
    await s.post(`${V1}/task`, parallelTask({ id: "c1", context: { simDurationMs: 10 } }));
    await s.advance(10);
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "c2", dataSource: "other", intervals: null, context: { simDurationMs: 10 } }),
    );
    await s.advance(10);
    await s.post(`${V1}/task`, parallelTask({ id: "r1", context: { simDurationMs: 1000 } }));
    await s.post(`${V1}/task`, parallelTask({ id: "p1", dataSource: "other", intervals: null }));
    const all = (await s.get(`${V1}/tasks`)).json as Array<Record<string, unknown>>;
    expect(all.map((t) => [t.id, t.statusCode, t.runnerStatusCode])).toEqual([
      ["c2", "SUCCESS", "NONE"],
      ["c1", "SUCCESS", "NONE"],
      ["r1", "RUNNING", "RUNNING"],
      ["p1", "RUNNING", "PENDING"],
    ]);
    expect(all[2]?.queueInsertionTime).toBe("2026-03-01T00:00:00.020Z");
    const ids = async (q: string) =>
      ((await s.get(`${V1}/${q}`)).json as Array<{ id: string }>).map((t) => t.id);
    expect(await ids("tasks?state=complete&max=1")).toEqual(["c2"]);
    expect(await ids("tasks?state=RUNNING")).toEqual(["r1"]);
    expect(await ids("tasks?datasource=other")).toEqual(["c2", "p1"]);
    expect(await ids("tasks?type=noop")).toEqual([]);
    expect(await ids("pendingTasks")).toEqual(["p1"]);
    expect(await ids("runningTasks")).toEqual(["r1"]);
    expect(await ids("completeTasks?n=1")).toEqual(["c2"]);
    expect(await ids("waitingTasks")).toEqual([]);
    const bad = await s.get(`${V1}/tasks?state=done`);
    expect(bad.status).toBe(400);
    expect(bad.contentType).toBe("text/plain");
    expect(bad.text).toBe("Invalid task state[done]. Must be one of [pending, waiting, running, complete].");
  });

  it("keeps complete tasks in /tasks only within the createdTimeInterval length (default 24 h)", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "old", context: { simDurationMs: 10 } }));
    await s.advance(2 * 3600_000);
    const ids = async (q: string) =>
      ((await s.get(`${V1}/${q}`)).json as Array<{ id: string }>).map((t) => t.id);
    expect(await ids("tasks?state=complete")).toEqual(["old"]);
    expect(await ids("tasks?state=complete&createdTimeInterval=2026-01-01T00_2026-01-01T01")).toEqual([]);
    expect((await s.get(`${V1}/tasks?createdTimeInterval=garbage`)).status).toBe(500);
  });

  it("shuts down an active task as FAILED 'Shutdown request from user' and no-ops on complete ones", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "x", context: { simDurationMs: 1000 } }));
    const res = await s.post(`${V1}/task/x/shutdown`, "");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ task: "x" });
    const status = (await s.get(`${V1}/task/x/status`)).json.status;
    expect(status).toMatchObject({ statusCode: "FAILED", errorMsg: "Shutdown request from user" });
    const again = await s.post(`${V1}/task/x/shutdown`, "");
    expect(again.status).toBe(200);
    expect((await s.get(`${V1}/task/x/status`)).json.status).toEqual(status);
  });

  it("shuts down all active tasks of a datasource, or 404s with an empty body when there are none", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "a", intervals: ["2026-01-01/2026-01-02"] }));
    await s.post(`${V1}/task`, parallelTask({ id: "b", intervals: ["2026-01-05/2026-01-06"] }));
    const res = await s.post(`${V1}/datasources/wiki/shutdownAllTasks`, "");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ dataSource: "wiki" });
    const st = (await s.post(`${V1}/taskStatus`, ["a", "b"])).json;
    expect([st.a.status, st.b.status]).toEqual(["FAILED", "FAILED"]);
    const none = await s.post(`${V1}/datasources/wiki/shutdownAllTasks`, "");
    expect(none.status).toBe(404);
    expect(none.text).toBe("");
  });

  it("shows workers with real slot use, total capacity, the leader URL and isLeader", async () => {
    const s = await startTestSim({ capacity: 5 });
    await s.post(
      `${V1}/task`,
      parallelTask({ id: "w", inputSource: { type: "s3" }, tuningConfig: { maxNumConcurrentSubTasks: 3 } }),
    );
    const workers = (await s.get(`${V1}/workers`)).json;
    expect(workers).toHaveLength(1);
    expect(workers[0]).toMatchObject({
      worker: {
        scheme: "http",
        host: "localhost:8091",
        capacity: 5,
        version: "0",
        category: "_default_worker_category",
      },
      currCapacityUsed: 4,
      // The supervisor's own slot counts as index_parallel, its three sub-tasks' as theirs (ImmutableWorkerInfo).
      currParallelIndexCapacityUsed: 1,
      currCapacityUsedByTaskType: { index_parallel: 1, single_phase_sub_task: 3 },
      runningTasks: ["w"],
    });
    expect(workers[0]).not.toHaveProperty("blacklistedUntil");
    expect((await s.get(`${V1}/totalWorkerCapacity`)).json).toEqual({
      currentClusterCapacity: 5,
      maximumCapacityWithAutoScale: -1,
      usedClusterCapacity: 4,
    });
    const leader = await s.get(`${V1}/leader`);
    expect(leader.status).toBe(200);
    expect(leader.text).toBe(s.url);
    const isLeader = await s.get(`${V1}/isLeader`);
    expect([isLeader.status, isLeader.json]).toEqual([200, { leader: true }]);
    expect((await s.get("/status/health")).text).toBe("true");
  });

  it("answers unknown routes 404 and known paths with the wrong method 405", async () => {
    const s = await startTestSim();
    expect((await s.get("/druid/indexer/v1/nothing")).status).toBe(404);
    expect((await s.get(`${V1}/taskStatus`)).status).toBe(405);
  });

  it("counts requests per normalised route and records each task's timeline", async () => {
    const s = await startTestSim();
    await s.post(`${V1}/task`, parallelTask({ id: "e1", context: { simDurationMs: 100 } }));
    await s.get(`${V1}/task/e1/status`);
    await s.get(`${V1}/task/e1/status`);
    await s.advance(100);
    const stats = s.sim.stats();
    expect(stats.requests).toMatchObject({
      "GET /druid/indexer/v1/task/:taskId/status": 2,
      "POST /druid/indexer/v1/task": 1,
    });
    expect(stats.tasks.e1?.map((e) => e.event)).toEqual([
      "submitted",
      "pending",
      "running",
      "published",
      "success",
    ]);
    expect(stats.tasks.e1?.at(-1)?.at).toBe("2026-03-01T00:00:00.100Z");
    s.sim.resetStats();
    expect(s.sim.stats().requests).toEqual({});
  });
});
