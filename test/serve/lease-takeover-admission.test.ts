import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { type SimHandle, startSim } from "../../src/sim/index.js";
import { type CliRun, runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate, writeDailyDataset } from "../helpers/dataset.js";
import { startPostgres, type TestPostgres } from "../helpers/postgres.js";

/**
 * A `segops serve` host paused past its lease (SIGSTOP here; a GC or VM pause, or a cut from PostgreSQL,
 * in production) loses its partitions to another host. Once it runs again it must let go of the
 * admission reservations (its per-host worker-slot cap) of the partitions it no longer holds: a host that
 * kept them never submitted anything again, and a backfill posted to it stayed new while Druid was idle.
 */

let pg: TestPostgres;
let sim: SimHandle;
let hosts: CliRun[] = [];
let stores: Store[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  // Real time (scale 1) and ten-second tasks: both of host A's tasks are still at Druid when it is stopped.
  sim = await startSim({
    timeScale: 1,
    capacity: 4,
    handoffDelayMs: 200,
    baseDurationMs: 10_000,
    perRowMs: 0,
    seed: 31,
  });
});
afterEach(async () => {
  for (const h of hosts) {
    if (h.exited) continue;
    h.child.kill("SIGCONT");
    h.child.kill("SIGKILL");
  }
  await Promise.all(hosts.map((h) => h.done));
  hosts = [];
  for (const s of stores) await s.close();
  stores = [];
});
afterAll(async () => {
  await sim?.close();
  await pg?.stop();
});

interface Host {
  run: CliRun;
  url: string;
  owner: string;
}

async function startHost(ledger: string): Promise<Host> {
  const run = runCli([
    "serve",
    "--port",
    "0",
    "--ledger",
    ledger,
    "--druid",
    sim.url,
    "--max-concurrency",
    "2",
    "--tick",
    "500",
    "--lease",
    "3000",
    "--log-level",
    "warn",
  ]);
  hosts.push(run);
  let match: RegExpExecArray | null = null;
  await until(
    "the service listens",
    () => {
      match = /listening on (\S+) \(owner (\S+)\)/.exec(run.output().stderr);
      return match !== null;
    },
    { timeoutMs: 60_000, whileRunning: run },
  );
  const [, url, owner] = match as unknown as [string, string, string];
  return { run, url, owner };
}

async function api(host: Host, path: string, init: RequestInit = {}) {
  const res = await fetch(`${host.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function createBackfill(host: Host, datasource: string, from: string): Promise<string> {
  const dataDir = writeDailyDataset({
    from,
    days: 2,
    rowsPerDay: 4,
    dir: join(mkdtempSync(join(tmpdir(), "segops-takeover-")), "data"),
  });
  const to = new Date(Date.parse(`${from}T00:00:00Z`) + 2 * 86_400_000).toISOString().slice(0, 10);
  const res = await api(host, "/api/v1/backfills", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ template: dailyTemplate({ datasource }), from, to, vars: { dataDir } }),
  });
  expect(res.status).toBe(201);
  return res.json.id as string;
}

/** Long-polls a host (at most 60 s a call) until the job ends or `capMs` has passed; the last answer. */
async function waitForEnd(host: Host, id: string, capMs: number) {
  const giveUp = Date.now() + capMs;
  for (;;) {
    const r = await api(host, `/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=60`);
    if (r.status !== 200 || r.json.ended || Date.now() > giveUp) return r;
  }
}

/** The host's `segops_admission_reserved_slots` (null while it is absent: slots not seen yet). */
async function reservedSlots(host: Host): Promise<number | null> {
  const res = await fetch(`${host.url}/metrics`);
  const line = (await res.text()).split("\n").find((l) => l.startsWith("segops_admission_reserved_slots "));
  return line === undefined ? null : Number(line.split(" ")[1]);
}

function acceptedOf(datasource: string): string[] {
  return sim
    .stats()
    .submissions.filter((s) => s.accepted && s.id?.includes(datasource))
    .map((s) => s.id as string);
}

describe("segops serve: a host paused past its lease", () => {
  it("lets go of the admission slots of the partitions taken over meanwhile, and runs the next backfill", async () => {
    const ledger = pg.freshUrl();
    const store = await openStore(ledger);
    stores.push(store);
    const a = await startHost(ledger);
    const first = await createBackfill(a, "takeover_first", "2026-01-01");
    await until(
      "both partitions of the first backfill accepted by Druid",
      () => acceptedOf("takeover_first").length === 2,
      {
        timeoutMs: 120_000,
        whileRunning: a.run,
      },
    );
    const b = await startHost(ledger);

    a.run.child.kill("SIGSTOP");
    let seen = "";
    try {
      await until(
        "host B holds both partitions of the first backfill",
        async () => {
          const tasks = await store.listTasks(first);
          seen = JSON.stringify(tasks.map((t) => [t.id, t.state, t.leaseOwner]));
          return tasks.length === 2 && tasks.every((t) => t.state === "running" && t.leaseOwner === b.owner);
        },
        { timeoutMs: 120_000, whileRunning: b.run },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; partitions seen: ${seen}`);
    } finally {
      a.run.child.kill("SIGCONT");
    }
    const events = await store.listEvents({ jobId: first, limit: 1000 });
    const takenOver = events.filter(
      (e) => e.actor === b.owner && e.reason.startsWith("claimed after the lease"),
    );
    expect(new Set(takenOver.map((e) => e.taskId)).size).toBe(2);

    const firstEnded = await waitForEnd(b, first, 240_000);
    expect(firstEnded.json).toMatchObject({ ended: true, job: { state: "done" } });
    b.run.child.kill("SIGTERM");
    const bExit = await b.run.done;
    expect(bExit.code, bExit.stderr).toBe(0);

    // Host A alone now: Druid is idle, so only reservations A kept for partitions it lost could hold it back.
    const second = await createBackfill(a, "takeover_second", "2026-02-01");
    const secondEnded = await waitForEnd(a, second, 240_000);
    expect(
      secondEnded.json,
      `the second backfill on host A did not end; A reserves ${await reservedSlots(a)} slot(s); job: ${JSON.stringify(secondEnded.json?.job)}`,
    ).toMatchObject({ ended: true, job: { state: "done" } });
    const claims = (await store.listEvents({ jobId: second, limit: 1000 })).filter((e) =>
      e.reason.startsWith("claimed"),
    );
    expect(new Set(claims.map((e) => e.actor))).toEqual(new Set([a.owner]));

    let reserved: number | null = null;
    try {
      await until(
        "host A reserves no slots",
        async () => {
          reserved = await reservedSlots(a);
          return reserved === 0;
        },
        { timeoutMs: 60_000, whileRunning: a.run },
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}; it reports ${reserved}`);
    }

    // Each partition's Druid task accepted once: B reattached to A's tasks instead of submitting again.
    for (const datasource of ["takeover_first", "takeover_second"]) {
      const accepted = acceptedOf(datasource);
      expect(accepted, datasource).toHaveLength(2);
      expect(new Set(accepted).size, datasource).toBe(2);
    }
  }, 600_000);
});
