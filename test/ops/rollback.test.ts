import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/core/clock.js";
import { parseInterval } from "../../src/core/interval.js";
import { DruidClient } from "../../src/druid/client.js";
import { clusterOf } from "../../src/druid/cluster.js";
import { planIngestJob } from "../../src/ingest/plan.js";
import { runJob } from "../../src/jobs/engine.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { inspectRollback, planRollback } from "../../src/ops/index.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";

/**
 * `segops rollback`: a bad replace of two days is rolled back to the version before it — the old version
 * is the one live and served version again and the audit passes; impossible rollbacks (a killed version,
 * newer data reaching outside the interval) are refused before anything changes; a rollback killed
 * mid-run finishes when rerun.
 */

let sim: SimHandle | undefined;
let client: DruidClient | undefined;
let store: Store | undefined;
afterEach(async () => {
  await client?.close();
  await store?.close();
  await sim?.close();
  sim = client = store = undefined;
});

const DS = "rollme";

async function backfill(dataDir: string, from: string, to: string, specVersion: string) {
  const plan = planIngestJob({
    kind: "backfill",
    template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
    templateName: "daily.json",
    range: { start: Date.parse(from), end: Date.parse(to) },
    vars: { dataDir },
    specVersion,
    cluster: clusterOf(client as DruidClient),
  });
  await (store as Store).createJob(plan.job, plan.tasks);
  const result = await runJob({
    store: store as Store,
    client: client as DruidClient,
    clock: systemClock,
    jobId: plan.job.id,
    tickMs: 20,
  });
  expect(result.job.state).toBe("done");
}

/** Three days of 10 rows (version A), then days 2–3 replaced with 3 rows each (version B). */
async function badReplace(options: Parameters<typeof startSim>[0] = {}) {
  sim = await startSim({ timeScale: 100, handoffDelayMs: 2000, unusedDelayMs: 5000, seed: 3, ...options });
  client = new DruidClient({ url: sim.url, retry: { baseMs: 5, capMs: 50 } });
  store = await openStore("sqlite::memory:");
  const good = writeDailyDataset({ from: "2026-05-01", days: 3, rowsPerDay: 10 });
  const bad = writeDailyDataset({ from: "2026-05-02", days: 2, rowsPerDay: 3 });
  await backfill(good, "2026-05-01", "2026-05-04", "1");
  const versionsA = await versionsByDay();
  await backfill(bad, "2026-05-02", "2026-05-04", "2");
  // "Before the bad replace": its oldest version (each day's task locks its own version).
  const after = await versionsByDay();
  const before = [after["2026-05-02"], after["2026-05-03"]].sort()[0] as string;
  return { versionsA, before };
}

/** The newest used version of each day. */
async function versionsByDay(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const s of await (client as DruidClient).metadataSegments(DS, ["2026-05-01/2026-05-04"])) {
    const day = s.interval.slice(0, 10);
    if (!out[day] || s.version > (out[day] as string)) out[day] = s.version;
  }
  return out;
}

async function liveRows(): Promise<Record<string, { version: string; rows: number }>> {
  const used = await (client as DruidClient).metadataSegments(DS, ["2026-05-01/2026-05-04"]);
  const served = new Set(await (client as DruidClient).servedSegments(DS));
  const out: Record<string, { version: string; rows: number }> = {};
  // The newest used version per day is the live one (one segment per day here).
  for (const s of used.sort((a, b) => (a.version < b.version ? -1 : 1))) {
    if (!served.has(`${s.dataSource}_${s.interval.replace("/", "_")}_${s.version}`)) continue;
    out[s.interval.slice(0, 10)] = { version: s.version, rows: Number(s.totalRows ?? s.num_rows ?? -1) };
  }
  return out;
}

describe("segops rollback on the emulator", () => {
  it("rolls a bad replace back: each day's old version is the one live, served version again, rows as before", async () => {
    const { versionsA, before } = await badReplace();
    expect((await liveRows())["2026-05-02"]?.rows).toBe(3);
    const request = {
      datasource: DS,
      interval: parseInterval("2026-05-01/2026-05-04"),
      target: { before },
      cluster: clusterOf(client as DruidClient),
    };
    const plan = planRollback(await inspectRollback(client as DruidClient, request));
    // Day 1 was not replaced: nothing to do there.
    expect(plan.chunks.map((c) => [c.interval.slice(0, 10), c.toVersion])).toEqual([
      ["2026-05-02", versionsA["2026-05-02"]],
      ["2026-05-03", versionsA["2026-05-03"]],
    ]);
    expect(plan.chunks.every((c) => c.newerVersions.length === 1)).toBe(true);
    await (store as Store).createJob(plan.job, plan.tasks);
    const result = await runJob({
      store: store as Store,
      client: client as DruidClient,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
    });
    expect(result.job.state).toBe("done");
    const after = await liveRows();
    expect(after).toEqual({
      "2026-05-01": { version: versionsA["2026-05-01"], rows: 10 },
      "2026-05-02": { version: versionsA["2026-05-02"], rows: 10 },
      "2026-05-03": { version: versionsA["2026-05-03"], rows: 10 },
    });
    const tasks = await (store as Store).listTasks(plan.job.id);
    expect(tasks.map((t) => t.progress.audit)).toEqual([
      { ok: true, liveVersions: [versionsA["2026-05-02"]] },
      { ok: true, liveVersions: [versionsA["2026-05-03"]] },
    ]);
    // Planning it again finds nothing to do: the rollback is idempotent.
    expect(planRollback(await inspectRollback(client as DruidClient, request)).tasks).toEqual([]);
  });

  it("refuses, changing nothing, when the version was killed or is unknown", async () => {
    const { versionsA, before } = await badReplace();
    const c = client as DruidClient;
    const unknown = await inspectRollback(c, {
      datasource: DS,
      interval: parseInterval("2026-05-02/2026-05-04"),
      target: { version: "2020-01-01T00:00:00.000Z" },
    });
    expect(() => planRollback(unknown)).toThrow(
      /has version 2020-01-01T00:00:00.000Z \(killed, or never written\); versions there: /,
    );
    // Kill version A's overshadowed (now unused) segments of days 2–3.
    await until(
      "version A of days 2–3 is unused",
      async () => (await c.unusedSegments(DS, "2026-05-02/2026-05-04")).length === 2,
      { timeoutMs: 30_000 },
    );
    const kill = await c.submitTask({
      type: "kill",
      dataSource: DS,
      interval: "2026-05-02/2026-05-04",
    } as never);
    await until(
      "the kill task succeeded",
      async () => (await c.taskStatus(kill.taskId)).status?.statusCode === "SUCCESS",
      {
        timeoutMs: 30_000,
      },
    );
    const live = await liveRows();
    const killed = await inspectRollback(c, {
      datasource: DS,
      interval: parseInterval("2026-05-01/2026-05-04"),
      target: { before },
    });
    expect(() => planRollback(killed)).toThrow(
      /the newest version before .* is gone \(killed, or never written\) for 2026-05-02/,
    );
    const exact = await inspectRollback(c, {
      datasource: DS,
      interval: parseInterval("2026-05-02/2026-05-03"),
      target: { version: versionsA["2026-05-02"] as string },
    });
    expect(() => planRollback(exact)).toThrow(/killed, or never written/);
    expect(await liveRows()).toEqual(live);
    expect(await c.unusedSegments(DS, "2026-05-01/2026-05-04")).toEqual([]);
  });

  it("marks unused only the versions it planned: a newer version published while it retries stops it, still served", async () => {
    const { versionsA } = await badReplace();
    const c = client as DruidClient;
    const day = "2026-05-02/2026-05-03";
    const plan = planRollback(
      await inspectRollback(c, {
        datasource: DS,
        interval: parseInterval(day),
        target: { version: versionsA["2026-05-02"] as string },
        cluster: clusterOf(c),
      }),
    );
    expect(plan.chunks).toHaveLength(1);
    const planned = plan.chunks[0]?.newerVersions ?? [];
    // Another writer's ingestion of the day, in its own ledger.
    const fresh = async (): Promise<string> => {
      const other = await openStore("sqlite::memory:");
      try {
        const job = planIngestJob({
          kind: "run",
          template: { kind: "task", value: dailyTemplate({ datasource: DS }) },
          templateName: "daily.json",
          range: parseInterval(day),
          vars: { dataDir: writeDailyDataset({ from: "2026-05-02", days: 1, rowsPerDay: 5 }) },
          specVersion: "3",
          cluster: clusterOf(c),
        });
        await other.createJob(job.job, job.tasks);
        const r = await runJob({
          store: other,
          client: c,
          clock: systemClock,
          jobId: job.job.id,
          tickMs: 20,
        });
        expect(r.job.state).toBe("done");
      } finally {
        await other.close();
      }
      return (await versionsByDay())["2026-05-02"] as string;
    };
    // The rollback's first markUnused fails (as Druid's 500s did); a newer version is published meanwhile.
    let v3: string | null = null;
    const flaky = new Proxy(c, {
      get(target, prop) {
        if (prop === "markSegments")
          return async (...args: Parameters<DruidClient["markSegments"]>) => {
            if (args[1] === "unused" && v3 === null) {
              v3 = await fresh();
              throw new Error("Druid answered 500 (simulated)");
            }
            return target.markSegments(...args);
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await (store as Store).createJob(plan.job, plan.tasks);
    const result = await runJob({
      store: store as Store,
      client: flaky,
      clock: systemClock,
      jobId: plan.job.id,
      tickMs: 20,
      retryBaseMs: 20,
    });
    expect(v3).not.toBeNull();
    expect(planned).not.toContain(v3);
    expect(result.job.state).toBe("failed");
    const [task] = await (store as Store).listTasks(plan.job.id);
    expect(task?.state).toBe("failed");
    expect(task?.lastError).toContain(
      `a newer version ${v3} was published after the rollback was planned: roll back again if that is what you want`,
    );
    expect(task?.progress.stopped).toEqual(expect.any(String));
    // The new data is still the live, served version of the day; nothing of it was marked unused.
    expect((await liveRows())["2026-05-02"]).toEqual({ version: v3, rows: 5 });
    const unused = await c.unusedSegments(DS, day);
    expect(unused.some((u) => u.segment.version === v3)).toBe(false);
  });

  it("a rollback SIGKILLed while the old version loads finishes when the same command runs again; --dry-run changes nothing", async () => {
    const { versionsA, before } = await badReplace();
    const c = client as DruidClient;
    const ledger = `sqlite:${join(mkdtempSync(join(tmpdir(), "segops-rollback-")), "ledger.db")}`;
    const args = [
      "rollback",
      DS,
      "--interval",
      "2026-05-02/2026-05-04",
      "--before",
      before,
      "--druid",
      (sim as SimHandle).url,
      "--ledger",
      ledger,
      "--tick",
      "50",
      "--lease",
      "3000",
      "--json",
    ];
    const dry = await runCli([...args, "--dry-run"]).done;
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).chunks).toHaveLength(2);
    expect((await versionsByDay())["2026-05-02"]).not.toBe(versionsA["2026-05-02"]);
    // Segments marked used never load for now: the first run waits for them until it is killed.
    (sim as SimHandle).setNeverLoad(DS, true);
    const first = runCli(args);
    await until(
      "the rollback marked the old versions used and waits for them to load",
      async () => {
        const used = await c.metadataSegments(DS, ["2026-05-02/2026-05-04"]);
        return used.length === 2 && used.every((s) => s.version === versionsA[s.interval.slice(0, 10)]);
      },
      { timeoutMs: 60_000, whileRunning: first },
    );
    // It is waiting: the old versions are used but not served, and its partitions are not done.
    const served = new Set(await c.servedSegments(DS));
    const used = await c.metadataSegments(DS, ["2026-05-02/2026-05-04"]);
    expect(used.some((s) => served.has(`${DS}_${s.interval.replace("/", "_")}_${s.version}`))).toBe(false);
    first.child.kill("SIGKILL");
    expect((await first.done).signal).toBe("SIGKILL");
    // The loads complete: the rerun finds the marks done and only waits for them to be served.
    (sim as SimHandle).setNeverLoad(DS, false);
    (sim as SimHandle).engine.loadNow(DS);
    const second = await runCli(args).done;
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ state: "done", counts: { done: 2 } });
    expect(await liveRows()).toEqual({
      "2026-05-01": { version: versionsA["2026-05-01"], rows: 10 },
      "2026-05-02": { version: versionsA["2026-05-02"], rows: 10 },
      "2026-05-03": { version: versionsA["2026-05-03"], rows: 10 },
    });
  }, 120_000);
});
