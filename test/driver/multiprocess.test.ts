import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";

const WORKER = fileURLToPath(new URL("./fixtures/mp-worker.ts", import.meta.url));
const TASKS = 500;
const KEYS = 50;

interface Execution {
  task_id: string;
  key: string;
  pid: number;
  started: Date;
  ended: Date | null;
  won: boolean;
}

function startWorker(url: string): {
  child: ChildProcess;
  exit: Promise<{ code: number | null; out: string }>;
} {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, url, "mp-job"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (b) => {
    out += String(b);
  });
  child.stderr?.on("data", (b) => {
    out += String(b);
  });
  const exit = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, out })),
  );
  return { child, exit };
}

describe("four OS processes on one PostgreSQL ledger", () => {
  let server: TestPostgres;
  let db: pg.Client;
  let url: string;

  beforeAll(async () => {
    server = await startPostgres();
    url = server.freshUrl();
    const schema = new URL(url).searchParams.get("schema");
    db = new pg.Client({ connectionString: server.url, options: `-c search_path=${schema}` });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await server?.stop();
  });

  it("run 500 keyed tasks exactly once to completion, without overlap, and lose nothing to a SIGKILL", async () => {
    const store = await openStore(url);
    await store.createJob(
      { id: "mp-job", kind: "test" },
      Array.from({ length: TASKS }, (_, i) => ({
        id: `t${String(i).padStart(3, "0")}`,
        kind: "mp",
        exclusionKey: `k${i % KEYS}`,
      })),
    );
    await db.query(`CREATE TABLE executions (
      id BIGSERIAL PRIMARY KEY, task_id TEXT NOT NULL, key TEXT NOT NULL, pid INTEGER NOT NULL,
      started TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(), ended TIMESTAMPTZ, won BOOLEAN NOT NULL DEFAULT FALSE)`);

    const workers = Array.from({ length: 4 }, () => startWorker(url));
    const victim = workers[0]!;
    // Kill one process mid-run: once the cluster has done real work and the victim is inside one of the long
    // (300 ms) handlers, so the kill lands mid-handler. Watched until the work runs out, not for a set time: on a
    // loaded machine a look can take longer than a handler's first half, so any started handler still open counts.
    let killedAt: Date | undefined;
    let left = TASKS;
    while (!killedAt && left > 0) {
      const { rows } = await db.query(
        `SELECT (SELECT count(*) FROM executions WHERE ended IS NOT NULL) AS done,
          (SELECT count(DISTINCT task_id) FROM executions WHERE won) AS won,
          (SELECT count(*) FROM executions WHERE pid = $1 AND ended IS NULL AND task_id LIKE '%0') AS busy`,
        [victim.child.pid],
      );
      left = TASKS - Number(rows[0].won);
      if (Number(rows[0].done) >= 100 && Number(rows[0].busy) > 0) {
        victim.child.kill("SIGKILL");
        killedAt = (await db.query("SELECT clock_timestamp() AS now")).rows[0].now as Date;
      } else {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    expect(killedAt, "the victim never had a handler in flight after 100 executions").toBeDefined();
    const results = await Promise.all(workers.map((w) => w.exit));
    expect((await victim.exit).code).toBeNull();
    for (const r of results.slice(1)) {
      expect(r.code, r.out).toBe(0);
      expect(JSON.parse(r.out.trim().split("\n").at(-1) ?? "{}")).toMatchObject({ reason: "idle" });
    }

    const counts = await store.countTasks("mp-job");
    expect(counts).toMatchObject({ done: TASKS, new: 0, running: 0, suspended: 0, failed: 0, dead: 0 });
    // The ledger says who won each terminal commit: the actor of the task's one `done` event.
    const winnerPid = new Map<string, number>();
    for (const e of await store.listEvents({ jobId: "mp-job", limit: 100_000 })) {
      if (e.toState !== "done" || e.taskId === null) continue;
      expect(winnerPid.has(e.taskId), `second done commit of ${e.taskId}`).toBe(false);
      winnerPid.set(e.taskId, Number(e.actor.split(":")[1]));
    }
    expect(winnerPid.size).toBe(TASKS);
    await store.close();

    const executions = (await db.query("SELECT * FROM executions ORDER BY started, id")).rows as Execution[];
    const byTask = new Map<string, Execution[]>();
    for (const e of executions) byTask.set(e.task_id, [...(byTask.get(e.task_id) ?? []), e]);
    expect(byTask.size).toBe(TASKS);
    const victimPid = victim.child.pid;
    // "Exactly once to completion": the process that committed `done` ran the task exactly once, to its
    // end; any other execution of the task belongs to the killed process (it died mid-handler, or after
    // its handler but before its commit). onFinish ran for the winner's execution only — except that
    // the killed process may have died between its commit and its onFinish.
    let reExecuted = 0;
    for (const [task, runs] of byTask) {
      const winner = winnerPid.get(task);
      const won = runs.filter((e) => e.pid === winner);
      expect(won, task).toHaveLength(1);
      expect(won[0]?.ended, task).not.toBeNull();
      for (const e of runs) if (e.pid !== winner) expect(e.pid, `extra execution of ${task}`).toBe(victimPid);
      if (runs.length > 1) reExecuted++;
      const flagged = runs.filter((e) => e.won);
      if (winner === victimPid) expect(flagged.length, task).toBeLessThanOrEqual(1);
      else expect(flagged, task).toEqual(won);
    }
    // The killed process held at most `concurrency` (4) tasks when it died.
    expect(reExecuted).toBeLessThanOrEqual(4);
    expect(executions.some((e) => e.pid === victimPid && e.ended === null)).toBe(true);
    // No two executions of one key overlap; a killed execution lasted until the kill.
    const byKey = new Map<string, Execution[]>();
    for (const e of executions) byKey.set(e.key, [...(byKey.get(e.key) ?? []), e]);
    for (const [key, runs] of byKey) {
      for (let i = 1; i < runs.length; i++) {
        const prev = runs[i - 1]!;
        const prevEnd = (prev.ended ?? killedAt)!.getTime();
        expect(runs[i]!.started.getTime(), `overlap on ${key}`).toBeGreaterThanOrEqual(prevEnd);
      }
    }
    const pids = new Set(executions.map((e) => e.pid));
    expect(pids.size).toBe(4);
  }, 120_000);
});
