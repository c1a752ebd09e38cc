import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "pg";
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
});
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

async function startHost(ledger: string, druid = sim.url): Promise<Host> {
  const run = runCli([
    "serve",
    "--port",
    "0",
    "--ledger",
    ledger,
    "--druid",
    druid,
    "--max-concurrency",
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

async function createBackfill(host: Host, datasource: string, days: number, from = "2026-01-01") {
  const work = mkdtempSync(join(tmpdir(), "segops-multi-"));
  const dataDir = writeDailyDataset({ from, days, rowsPerDay: 4, dir: join(work, "data") });
  const to = new Date(Date.parse(`${from}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
  const res = await api(host, "/api/v1/backfills", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      template: dailyTemplate({ datasource }),
      from,
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
    a.run.child.kill("SIGKILL");
    expect((await a.run.done).signal).toBe("SIGKILL");
    // What A held when it died (read after its death: a partition it finished just before the kill is not
    // B's to take over).
    const heldAtKill = (await store.listTasks(id)).filter(
      (t) => t.state === "running" && t.leaseOwner === a.owner,
    );

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

  it("four hosts, 500 partitions: one SIGKILLed, one cut off from PostgreSQL mid-run; every partition done once, the cut-off host waits the outage out and commits nothing about what others took over", async () => {
    // A faster cluster of its own: 16 slots, half-second tasks.
    const fast = await startSim({
      timeScale: 1,
      capacity: 16,
      handoffDelayMs: 50,
      baseDurationMs: 500,
      perRowMs: 0,
      seed: 29,
    });
    try {
      const ledger = pg.freshUrl();
      const schema = new URL(ledger).searchParams.get("schema") as string;
      const [a, b, c] = await Promise.all([
        startHost(ledger, fast.url),
        startHost(ledger, fast.url),
        startHost(ledger, fast.url),
      ]);
      // Host D logs in as a role of its own, so that it alone can be cut off.
      const role = `segops_${schema}`;
      const admin = new postgres.Client({ connectionString: pg.url });
      await admin.connect();
      try {
        await admin.query(`CREATE ROLE "${role}" LOGIN PASSWORD 'd-password'`);
        const database = new URL(ledger).pathname.slice(1) || "postgres";
        await admin.query(`GRANT CREATE ON DATABASE "${database}" TO "${role}"`);
        await admin.query(`GRANT ALL ON SCHEMA "${schema}" TO "${role}"`);
        await admin.query(`GRANT ALL ON ALL TABLES IN SCHEMA "${schema}" TO "${role}"`);
        await admin.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA "${schema}" TO "${role}"`);
        const dUrl = new URL(ledger);
        dUrl.username = role;
        dUrl.password = "d-password";
        const d = await startHost(dUrl.toString(), fast.url);
        const store = await ledgerStore(ledger);
        const id = await createBackfill(a, "multi_four", 500, "2024-01-01");
        // A waiter on host A, long-polling (at most 300 s a call) until the job ends.
        const waiter = (async () => {
          for (;;) {
            const r = await api(a, `/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=300`);
            if (r.status !== 200 || r.json.ended) return r;
          }
        })();
        const done = async () => (await store.countTasks(id)).done ?? 0;
        await until(
          "every host holds partitions and 100 are done",
          async () => {
            const tasks = await store.listTasks(id);
            const owners = new Set(tasks.filter((t) => t.state === "running").map((t) => t.leaseOwner));
            return [b, d].every((h) => owners.has(h.owner)) && (await done()) >= 100;
          },
          { timeoutMs: 300_000, whileRunning: d.run },
        );
        b.run.child.kill("SIGKILL");
        // D loses PostgreSQL: it cannot log in again, and its sessions are ended.
        await admin.query(`ALTER ROLE "${role}" NOLOGIN`);
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", [
          role,
        ]);
        const heldByD = (await store.listTasks(id)).filter(
          (t) => t.state === "running" && t.leaseOwner === d.owner,
        );
        await until("300 partitions done without B and D", async () => (await done()) >= 300, {
          timeoutMs: 300_000,
        });
        await admin.query(`ALTER ROLE "${role}" LOGIN`);

        const ended = await waiter;
        expect(ended.status).toBe(200);
        expect(ended.json).toMatchObject({ ended: true, job: { state: "done" } });
        expect(ended.json.job.counts.done).toBe(500);
        // Druid's side: each partition's task accepted once, and no partition with two successes.
        const accepted = fast.stats().submissions.filter((s) => s.accepted && s.id?.includes("multi_four"));
        expect(accepted).toHaveLength(500);
        expect(new Set(accepted.map((s) => s.id)).size).toBe(500);
        // The partitions D held when it was cut off were taken over by the others, and D wrote nothing
        // about them after the others took them (its lease was gone: every write is a compare-and-set).
        const events = await store.listEvents({ jobId: id, limit: 100_000 });
        for (const t of heldByD) {
          const takeover = events.find(
            (e) => e.taskId === t.id && e.actor !== d.owner && e.reason.startsWith("claimed after the lease"),
          );
          expect(takeover, t.id).toBeDefined();
          const late = events.filter(
            (e) => e.taskId === t.id && e.actor === d.owner && e.at > (takeover?.at ?? 0),
          );
          expect(late, t.id).toEqual([]);
        }
        expect(heldByD.length).toBeGreaterThan(0);
        // D rode the outage out: still running, it said so, and it claimed work again once it could log in.
        // (Before the fix in PostgresExecutor.tx the dropped session crashed it with an unhandled 'error'
        // event; before the worker waited ledger outages out, it stopped with exit 4.)
        for (const h of [a, c, d]) expect(h.run.exited, h.run.exited?.stderr.slice(-3000)).toBeNull();
        const dLog = d.run.output().stdout;
        expect(dLog).toContain("the ledger does not answer");
        await until("D claims work again", () => d.run.output().stdout.includes("the ledger answers again"), {
          timeoutMs: 60_000,
          whileRunning: d.run,
        });
      } finally {
        await admin.query(`ALTER ROLE "${role}" LOGIN`).catch(() => undefined);
        await admin.end();
      }
    } finally {
      await fast.close();
    }
  }, 600_000);
});
