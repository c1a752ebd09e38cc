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
 * Several `segops serve` processes on one real PostgreSQL ledger split a backfill created through the
 * API. A host SIGKILLed mid-run loses nothing and doubles nothing: its partitions are taken over once
 * its lease expires, the Druid task ids are deterministic (a resubmission is a duplicate, reattached),
 * and a waiter on the surviving host sees the job end. A host stopped with SIGTERM hands its partitions
 * back at once and exits 0.
 */

let pg: TestPostgres;
let sim: SimHandle;
let hosts: CliRun[] = [];
let stores: Store[] = [];

beforeAll(async () => {
  pg = await startPostgres();
  // Real time (scale 1): each partition takes about 1.5 s, 8 slots for two hosts of 4 each.
  sim = await startSim({
    timeScale: 1,
    capacity: 8,
    handoffDelayMs: 100,
    baseDurationMs: 1500,
    perRowMs: 0,
    seed: 23,
  });
}, 60_000);
afterEach(async () => {
  for (const h of hosts) if (!h.exited) h.child.kill("SIGKILL");
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
    "--concurrency",
    "4",
    "--tick",
    "50",
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

async function createBackfill(host: Host, datasource: string, days: number) {
  const work = mkdtempSync(join(tmpdir(), "segops-multi-"));
  const dataDir = writeDailyDataset({ from: "2026-01-01", days, rowsPerDay: 4, dir: join(work, "data") });
  const to = new Date(Date.UTC(2026, 0, 1 + days)).toISOString().slice(0, 10);
  const res = await api(host, "/api/v1/backfills", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      template: dailyTemplate({ datasource }),
      from: "2026-01-01",
      to,
      vars: { dataDir },
    }),
  });
  expect(res.status).toBe(201);
  return res.json.id as string;
}

async function ledgerStore(url: string): Promise<Store> {
  const store = await openStore(url);
  stores.push(store);
  return store;
}

describe("segops serve: several hosts on one PostgreSQL ledger", () => {
  it("a 50-partition backfill survives a SIGKILLed host: every partition done once, a waiter on the survivor sees the end", async () => {
    const ledger = pg.freshUrl();
    const [a, b] = await Promise.all([startHost(ledger), startHost(ledger)]);
    const store = await ledgerStore(ledger);
    const id = await createBackfill(a, "multi_kill", 50);
    const waiter = api(b, `/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=300`);
    // Kill A while it holds partitions (leased to it, running) and some are done already.
    await until(
      "host A holds running partitions and some are done",
      async () => {
        const tasks = await store.listTasks(id);
        const held = tasks.filter((t) => t.state === "running" && t.leaseOwner === a.owner).length;
        return held > 0 && tasks.some((t) => t.state === "done");
      },
      { timeoutMs: 120_000, whileRunning: a.run },
    );
    const heldAtKill = (await store.listTasks(id)).filter(
      (t) => t.state === "running" && t.leaseOwner === a.owner,
    );
    a.run.child.kill("SIGKILL");
    expect((await a.run.done).signal).toBe("SIGKILL");

    const ended = await waiter;
    expect(ended.status).toBe(200);
    expect(ended.json).toMatchObject({ ended: true, job: { state: "done" } });
    expect(ended.json.job.counts.done).toBe(50);

    // The emulator's submission log: each partition's Druid task accepted exactly once.
    const accepted = sim.stats().submissions.filter((s) => s.accepted && s.id?.includes("multi_kill"));
    expect(accepted).toHaveLength(50);
    expect(new Set(accepted.map((s) => s.id)).size).toBe(50);
    // B took over what A held when it died, after A's lease expired.
    const events = await store.listEvents({ jobId: id, limit: 10_000 });
    const takenOver = events.filter(
      (e) => e.actor === b.owner && e.reason.startsWith("claimed after the lease"),
    );
    expect(new Set(takenOver.map((e) => e.taskId))).toEqual(new Set(heldAtKill.map((t) => t.id)));
    expect((await store.getJob(id))?.state).toBe("done");
  }, 240_000);

  it("SIGTERM drains a host: exit 0, its partitions handed back and taken at once by the other host", async () => {
    const ledger = pg.freshUrl();
    const [a, b] = await Promise.all([startHost(ledger), startHost(ledger)]);
    const store = await ledgerStore(ledger);
    const id = await createBackfill(a, "multi_term", 24);
    await until(
      "host A holds running partitions",
      async () => (await store.listTasks(id)).some((t) => t.state === "running" && t.leaseOwner === a.owner),
      { timeoutMs: 120_000, whileRunning: a.run },
    );
    a.run.child.kill("SIGTERM");
    const exit = await a.run.done;
    expect(exit.code, exit.stderr).toBe(0);
    const handedBack = (await store.listEvents({ jobId: id, limit: 10_000 })).filter(
      (e) => e.actor === a.owner && e.reason === "handed back: driver shutting down",
    );
    expect(handedBack.length).toBeGreaterThan(0);
    // Nothing left leased to A: every partition it held is suspended and due now.
    const now = Date.now();
    for (const t of await store.listTasks(id)) {
      if (t.leaseOwner === a.owner)
        expect(t.state === "running" && (t.leaseExpiresAt ?? 0) > now).toBe(false);
    }
    const ended = await api(b, `/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=300`);
    expect(ended.json).toMatchObject({ ended: true, job: { state: "done" } });
    const events = await store.listEvents({ jobId: id, limit: 10_000 });
    const handed = new Set(handedBack.map((e) => e.taskId));
    // B claimed each handed-back partition as due work, not as a takeover of an expired lease.
    const bClaims = events.filter(
      (e) =>
        e.actor === b.owner && e.taskId !== null && handed.has(e.taskId) && e.reason.startsWith("claimed"),
    );
    expect(new Set(bClaims.map((e) => e.taskId))).toEqual(handed);
    expect(bClaims.map((e) => e.reason).filter((r) => r !== "claimed")).toEqual([]);
    const accepted = sim.stats().submissions.filter((s) => s.accepted && s.id?.includes("multi_term"));
    expect(new Set(accepted.map((s) => s.id)).size).toBe(accepted.length);
    expect(accepted).toHaveLength(24);
  }, 240_000);
});
