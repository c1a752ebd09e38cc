// The chaos harness's second family: several actors at once. Three `segops serve` hosts share one real
// PostgreSQL ledger (a cluster of the run's own, so it can be restarted) and one emulated Druid, and meet:
// - racing identical requests: bursts of identical POST /api/v1/backfills at once across the hosts, some
//   with `"new": true` (at most one open job over the same inputs; the others found again or refused 409);
// - a second version of part of the range posted mid-run (its chunks replaced, the first version unused);
// - segment operations through the CLI (`segops compact`, `kill`, `rollback`) over the same days, on the
//   shared ledger (where the chunk key keeps them from running beside an ingestion of the chunk, and the
//   hosts may run them too) or on a ledger of their own (another writer nothing serialises), some SIGKILLed
//   and run again;
// - seeded disturbances: a host SIGSTOPped past its lease and SIGCONTed, a host SIGKILLed and started again,
//   PostgreSQL stopped (every session terminated) and started again.
// The plan of a run (what, when, where) is drawn from its seed; the interleaving of real processes is the
// machine's. The checker (multi-actor-check.ts) then proves what each run must hold, and every surviving
// host is shown to bring a fresh job to done alone. Runnable alone: `npm run chaos -- --multi --runs 6`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { isActive } from "../../src/sim/engine.js";
import { type Rng, seededRng } from "../../src/sim/rng.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { type CliResult, type CliRun, runCli, until } from "../helpers/cli-process.js";
import { dailyTemplate } from "../helpers/dataset.js";
import { nextDay, sqlCount } from "../helpers/sql-count.js";
import { type RestartablePostgres, startRestartablePostgres } from "../serve/pg-restart-cluster.js";
import { type CheckInput, checkMultiActor, type OpRun } from "./multi-actor-check.js";

export interface MultiActorOptions {
  seed: number;
  /** Days (partitions) of the main backfill. @default 36 */
  days?: number;
  /** `segops serve` hosts. @default 3 */
  hosts?: number;
}

export interface MultiActorFigures {
  seed: number;
  days: number;
  hosts: number;
  /** Ingest partitions in the shared ledger, every job's. */
  partitions: number;
  /** Ingest jobs in the shared ledger. */
  jobs: number;
  hostPauses: number;
  hostKills: number;
  pgRestarts: number;
  /** Identical POSTs sent in the bursts. */
  racingRequests: number;
  /** Their answers by status ("201", "200", "409", …). */
  answers: Record<string, number>;
  /** Segment operations run (each CLI command to its end, reruns included in one). */
  segmentOps: number;
  /** Their outcomes ("kill done", "compact refused: …"). */
  opOutcomes: Record<string, number>;
  /** CLI segment operations SIGKILLed mid-run (then run again). */
  opKills: number;
  /** Partitions claimed after another owner's lease ran out (the pauses, kills and outages really hit). */
  takeovers: number;
  /** Claims by a host of partitions of a CLI segment operation on the shared ledger. */
  opClaimsByHosts: number;
  /** Segment operations run on a ledger of their own (another writer nothing in segops serialises). */
  opsOnOwnLedger: number;
  acceptedSubmissions: number;
  /** Ingest partitions that ended superseded: another writer replaced the chunk (documented). */
  supersededIngest: number;
  /** Ingest partitions whose data another ledger's rollback marked unused before they ended (documented). */
  rolledBackIngest: number;
  /** Partitions not done at the end, or failed without a documented reason (goal 0). */
  lost: number;
  /** Task ids accepted twice, or partitions with two successful Druid tasks (goal 0). */
  doubled: number;
  /** Ingest jobs over the same inputs open at once (goal 0). */
  openTwice: number;
  /** Hosts that exited by themselves or did not bring a fresh job to done alone (goal 0). */
  stalledHosts: number;
  /** Done partitions whose chunk is not served (goal 0). */
  unservedDone: number;
  /** Days whose rows in Druid differ from the source's (goal 0). */
  rowMismatches: number;
}

export interface MultiActorRun {
  figures: MultiActorFigures;
  /** Broken invariants, each in words (empty = the run holds every guarantee). */
  violations: string[];
}

export const DS = "multi";
const FRESH = "multi_fresh";
const FROM = "2025-03-01";
export const LEASE_MS = 2000;
const TICK_MS = 50;

export interface Host {
  run: CliRun;
  url: string;
  owner: string;
  /** Ended by the harness (SIGKILL): its exit is not a violation. */
  killed: boolean;
}

const dayAt = (i: number) =>
  new Date(Date.parse(`${FROM}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10);

/** One file a day, a seeded number of rows each (2 to 12), in the shape `dailyTemplate` reads. */
function writeSeededDataset(dir: string, from: string, days: number, rng: Rng): Map<string, number> {
  mkdirSync(dir, { recursive: true });
  const rows = new Map<string, number>();
  const start = Date.parse(`${from}T00:00:00Z`);
  for (let d = 0; d < days; d++) {
    const dayStart = start + d * 86_400_000;
    const day = new Date(dayStart).toISOString().slice(0, 10);
    const n = rng.int(2, 12);
    const lines = Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        ts: new Date(dayStart + Math.floor((i * 86_400_000) / n)).toISOString(),
        channel: `#c${i % 5}`,
        page: `p${(i * 7 + d) % 11}`,
        added: (i % 13) + 1,
      }),
    );
    writeFileSync(join(dir, `events-${day}.json`), `${lines.join("\n")}\n`);
    rows.set(day, n);
  }
  return rows;
}

export async function startHost(ledger: string, druid: string): Promise<Host> {
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
    String(TICK_MS),
    "--lease",
    String(LEASE_MS),
    "--log-level",
    "warn",
  ]);
  let match: RegExpExecArray | null = null;
  try {
    await until(
      "the service listens",
      () => {
        match = /listening on (\S+) \(owner (\S+)\)/.exec(run.output().stderr);
        return match !== null;
      },
      { timeoutMs: 120_000, whileRunning: run },
    );
  } catch (error) {
    if (!run.exited) run.child.kill("SIGKILL");
    throw error;
  }
  const [, url, owner] = match as unknown as [string, string, string];
  return { run, url, owner, killed: false };
}

type Disturbance =
  | { kind: "pause"; at: number; host: number; ms: number }
  | { kind: "kill"; at: number; host: number }
  | { kind: "pg"; at: number; downMs: number };

interface OpPlan {
  kind: "compact" | "kill" | "rollback";
  at: number;
  /** Day indexes [from, to) of the interval as drawn (a kill's or rollback's is chosen when it starts). */
  from: number;
  to: number;
  /** Day indexes [lo, hi) a kill's or rollback's interval is chosen within. */
  lo: number;
  hi: number;
  shared: boolean;
  /** SIGKILL the first run after this long (then the same command again). */
  crashAfterMs: number | null;
}

interface BurstPlan {
  label: string;
  at: number;
  sends: Array<{ host: number; isNew: boolean }>;
}

/** Everything a run does, drawn from its seed up front (the order of draws never depends on timing). */
function drawPlan(rng: Rng, days: number, hosts: number) {
  const burst = (label: string, at: number): BurstPlan => {
    const n = rng.int(6, 14);
    const share = 0.2 + rng.next() * 0.5;
    return {
      label,
      at,
      sends: Array.from({ length: n }, () => ({ host: rng.int(0, hosts - 1), isNew: rng.next() < share })),
    };
  };
  const first = burst("whole range", 0);
  // The second version: the first half of the range or so, posted once part of the first has run.
  const v2From = rng.int(0, Math.floor(days / 4));
  const v2To = Math.min(days, v2From + rng.int(Math.floor(days / 3), Math.floor(days / 2)));
  const second = burst("second version", rng.int(Math.floor(days * 0.3), Math.floor(days * 0.7)));
  // Sometimes the whole range asked again later: found again, or (once the first job is finished) a `new`
  // job that ingests it again.
  const third = rng.next() < 0.5 ? burst("whole range again", rng.int(days, days + v2To - v2From)) : null;
  const total = days + (v2To - v2From);
  const disturbances: Disturbance[] = [];
  const pauses = rng.int(1, 2);
  for (let i = 0; i < pauses; i++)
    disturbances.push({
      kind: "pause",
      at: rng.int(2, total),
      host: rng.int(0, hosts - 1),
      ms: Math.round(LEASE_MS * (1.5 + rng.next() * 1.5)),
    });
  if (rng.next() < 0.75)
    disturbances.push({ kind: "kill", at: rng.int(2, total), host: rng.int(0, hosts - 1) });
  if (rng.next() < 0.75)
    disturbances.push({
      kind: "pg",
      at: rng.int(2, total),
      downMs: Math.round(LEASE_MS * (1 + rng.next() * 1.5)),
    });
  disturbances.sort((a, b) => a.at - b.at);
  const kinds: OpPlan["kind"][] = ["compact", "kill", "rollback"];
  for (let i = rng.int(0, 2); i > 0; i--) kinds.push(kinds[rng.int(0, 2)] as OpPlan["kind"]);
  const ops: OpPlan[] = kinds.map((kind) => {
    // Mostly inside the second version's days (where there is something to kill or roll back).
    const inside = kind === "compact" ? rng.next() < 0.5 : rng.next() < 0.85;
    const lo = inside ? v2From : 0;
    const hi = inside ? v2To : days;
    const from = rng.int(lo, Math.max(lo, hi - 2));
    const to = Math.min(hi, from + rng.int(1, 6));
    return {
      kind,
      at: second.at + rng.int(0, v2To - v2From + 4),
      from,
      to: Math.max(to, from + 1),
      lo,
      hi,
      shared: rng.next() < 0.5,
      crashAfterMs: rng.next() < 0.3 ? rng.int(300, 3000) : null,
    };
  });
  ops.sort((a, b) => a.at - b.at);
  return { first, second, third, v2From, v2To, disturbances, ops };
}

export async function runMultiActor(options: MultiActorOptions): Promise<MultiActorRun> {
  const days = options.days ?? 36;
  const hostCount = options.hosts ?? 3;
  const rng = seededRng(options.seed * 104_729 + 7);
  const plan = drawPlan(rng, days, hostCount);
  const work = mkdtempSync(join(tmpdir(), `segops-multi-${options.seed}-`));
  const dataDir = join(work, "data");
  const source = writeSeededDataset(dataDir, FROM, days, rng);
  const freshDir = join(work, "fresh");
  const freshRows = writeSeededDataset(freshDir, "2027-01-01", 3 * (hostCount + 2), rng);

  const violations: string[] = [];
  const pg: RestartablePostgres = await startRestartablePostgres();
  const ledger = `${pg.url}?schema=multi_${options.seed}`;
  // Real time (scale 1): segops measures a kill's unused-since on its own clock, Druid's must agree.
  const sim: SimHandle = await startSim({
    seed: options.seed,
    timeScale: 1,
    capacity: 8,
    baseDurationMs: 1500,
    perRowMs: 0,
    handoffDelayMs: 150,
    unusedDelayMs: 300,
  });
  const hosts: Host[] = [];
  const retired: Host[] = [];
  let store: Store | null = null;
  try {
    // Each host kept as it starts, so that one failing to start leaves none behind unaccounted for.
    await Promise.all(
      Array.from({ length: hostCount }, async () => {
        hosts.push(await startHost(ledger, sim.url));
      }),
    );
    const accepted = () => sim.stats().submissions.filter((s) => s.accepted).length;
    // A trigger point: the k-th accepted submission, or earlier if nothing is left to run (no task
    // active in Druid and none accepted for 3 s: the work so far ended before the point).
    let lastAccepted = { count: 0, at: Date.now() };
    const reached = (k: number) => {
      const n = accepted();
      if (n !== lastAccepted.count) lastAccepted = { count: n, at: Date.now() };
      if (n >= k) return true;
      sim.engine.sync();
      return ![...sim.engine.tasks.values()].some(isActive) && Date.now() - lastAccepted.at > 3000;
    };
    const trigger = (k: number) =>
      until(`${k} accepted submissions`, () => reached(k), { timeoutMs: 600_000 });

    // Kills and PostgreSQL restarts are not sent into a burst (a request to a host being killed has no
    // answer to judge); pauses are (the requests wait for the host).
    let exclusive: Promise<unknown> = Promise.resolve();
    const alone = <T>(fn: () => Promise<T>): Promise<T> => {
      const next = exclusive.then(fn, fn);
      exclusive = next.catch(() => undefined);
      return next;
    };

    const template = dailyTemplate({ datasource: DS });
    const v1Body = {
      template,
      templateName: "daily.json",
      from: dayAt(0),
      to: dayAt(days),
      vars: { dataDir },
    };
    let v2Posted: string | null = null;
    const answers: CheckInput["answers"] = [];
    const sendBurst = (b: BurstPlan, body: Record<string, unknown>) =>
      alone(async () => {
        const sent = await Promise.all(
          b.sends.map(async (s) => {
            const host = hosts[s.host % hosts.length] as Host;
            const res = await postOnce(
              `${host.url}/api/v1/backfills`,
              JSON.stringify({ ...body, ...(s.isNew ? { new: true } : {}) }),
            );
            return { burst: b.label, isNew: s.isNew, ...res };
          }),
        );
        answers.push(...sent);
      });

    const bursts = (async () => {
      await sendBurst(plan.first, v1Body);
      await trigger(plan.second.at);
      v2Posted = new Date().toISOString();
      await sendBurst(plan.second, {
        ...v1Body,
        from: dayAt(plan.v2From),
        to: dayAt(plan.v2To),
        specVersion: "2",
      });
      if (plan.third) {
        await trigger(plan.third.at);
        await sendBurst(plan.third, v1Body);
      }
    })();

    let hostPauses = 0;
    let hostKills = 0;
    let pgRestarts = 0;
    const disturbances = (async () => {
      for (const d of plan.disturbances) {
        await trigger(d.at);
        if (d.kind === "pause") {
          const host = hosts[d.host] as Host;
          host.run.child.kill("SIGSTOP");
          hostPauses++;
          await delay(d.ms); // the pause itself: past the lease, so the others take its partitions over
          host.run.child.kill("SIGCONT");
        } else if (d.kind === "kill") {
          await alone(async () => {
            const host = hosts[d.host] as Host;
            host.killed = true;
            host.run.child.kill("SIGKILL");
            await host.run.done;
            hostKills++;
            retired.push(host);
            hosts[d.host] = await startHost(ledger, sim.url);
          });
        } else {
          await alone(async () => {
            await pg.stopServer();
            pgRestarts++;
            await delay(d.downMs); // the outage itself
            await pg.startServer();
          });
        }
      }
    })();

    const opRuns: OpRun[] = [];
    let opKills = 0;
    const before = () => v2Posted ?? new Date().toISOString();
    const runOp = async (op: OpPlan, index: number): Promise<void> => {
      // As an operator would, a kill or rollback looks first (at Druid's segments) for days it has
      // something to do on, waiting for some (bounded: until the work so far is over); none, the drawn days.
      const wanted =
        op.kind === "kill" ? killable(sim) : op.kind === "rollback" ? restorable(sim, before()) : null;
      if (wanted)
        await until(
          "days to work on",
          () => window(op, wanted) !== null || reached(Number.POSITIVE_INFINITY),
          {
            timeoutMs: 600_000,
          },
        );
      const [from, to] = (wanted && window(op, wanted)) ?? [op.from, op.to];
      const interval = `${dayAt(from)}/${dayAt(to)}`;
      const opLedger = op.shared ? ledger : `sqlite:${join(work, `op-${index}.db`)}`;
      const extra =
        op.kind === "compact" ? ["--all"] : op.kind === "kill" ? ["--yes"] : ["--before", before()];
      const args = [
        op.kind,
        DS,
        "--interval",
        interval,
        ...extra,
        "--druid",
        sim.url,
        "--ledger",
        opLedger,
        "--tick",
        String(TICK_MS),
        "--lease",
        String(LEASE_MS),
        "--json",
      ];
      const results: CliResult[] = [];
      for (let round = 0; round < 10; round++) {
        const cli = runCli(args);
        if (round === 0 && op.crashAfterMs !== null) {
          await Promise.race([delay(op.crashAfterMs), cli.done]); // the crash point
          if (!cli.exited) {
            cli.child.kill("SIGKILL");
            opKills++;
          }
        }
        // A segment operation that has not ended after 5 minutes is stuck: stopped, and said so.
        const cap = new AbortController();
        const capped = await Promise.race([
          cli.done,
          delay(300_000, null, { signal: cap.signal }).catch(() => undefined),
        ]);
        cap.abort();
        if (capped === null) {
          cli.child.kill("SIGKILL");
          violations.push(
            `${op.kind} ${interval} had not ended after 300 s: ${cli.output().stderr.slice(-600)}`,
          );
        }
        const r = await cli.done;
        results.push(r);
        // Stopped (SIGKILL, the ledger away: exit 4, a deadline: exit 3): the same command again.
        if (capped === null || (r.signal === null && r.code !== 3 && r.code !== 4)) break;
        if (op.shared) await until("PostgreSQL answers", () => pg.isReady(), { timeoutMs: 120_000 });
      }
      opRuns.push({ kind: op.kind, interval, ledger: opLedger, shared: op.shared, results });
    };
    const ops = (async () => {
      const running: Promise<void>[] = [];
      for (const [i, op] of plan.ops.entries()) {
        await trigger(op.at);
        await until("the second version posted", () => v2Posted !== null, { timeoutMs: 600_000 });
        running.push(runOp(op, i));
      }
      await Promise.all(running);
    })();

    await Promise.all([bursts, disturbances, ops]);

    // Settle: every partition of every job terminal, Druid idle and its live segments served. A cap that
    // runs out is a violation (stuck), not an error of the harness.
    store = await openStore(ledger);
    const ledgerStore = store;
    const unsettled = async () => {
      const open: string[] = [];
      for (const job of await ledgerStore.listJobs({ limit: 10_000 })) {
        const c = await ledgerStore.countTasks(job.id);
        const left = (c.new ?? 0) + (c.running ?? 0) + (c.suspended ?? 0);
        if (left > 0) open.push(`${job.id}: ${JSON.stringify(c)}`);
      }
      return open;
    };
    await until("every partition of every job ended", async () => (await unsettled()).length === 0, {
      timeoutMs: 300_000,
    }).catch(async () => {
      violations.push(`stuck after 300 s: ${(await unsettled()).join("; ")}`);
    });
    const idle = () => {
      sim.engine.sync();
      const tasks = [...sim.engine.tasks.values()];
      const unserved = sim.engine.store
        .visible(DS, sim.engine.now)
        .filter((s) => !s.tombstone && !sim.engine.isServed(s));
      return !tasks.some(isActive) && unserved.length === 0;
    };
    await until("Druid idle, its live segments served", idle, { timeoutMs: 120_000 }).catch(() => {
      violations.push("Druid still had active tasks or unserved live segments 120 s after the run");
    });

    const checked = await checkMultiActor({
      sim,
      store,
      datasource: DS,
      source,
      answers,
      ops: opRuns,
      hostOwners: new Set([...hosts, ...retired].map((h) => h.owner)),
      violations,
    });

    // Every host progresses: each one alone (the others paused; idle, they hold nothing) brings a fresh
    // two-day job to done, claimed by itself.
    let stalledHosts = 0;
    for (const h of [...hosts, ...retired]) {
      if (h.run.exited && !h.killed) {
        stalledHosts++;
        violations.push(
          `host ${h.owner} exited by itself (${h.run.exited.code}): ${h.run.exited.stderr.slice(-1500)}`,
        );
      }
    }
    for (const [i, host] of hosts.entries()) {
      if (host.run.exited) continue;
      const others = hosts.filter((h) => h !== host && !h.run.exited);
      for (const o of others) o.run.child.kill("SIGSTOP");
      try {
        const from = `2027-01-${String(1 + 3 * i).padStart(2, "0")}`;
        const to = nextDay(nextDay(from));
        const problem = await freshJobDone(host, store, {
          template: dailyTemplate({ datasource: FRESH }),
          templateName: "daily.json",
          from,
          to,
          vars: { dataDir: freshDir },
        });
        const rows = await sqlCount(sim.url, FRESH, from, to);
        const expected = (freshRows.get(from) ?? 0) + (freshRows.get(nextDay(from)) ?? 0);
        if (problem === null && rows !== expected)
          violations.push(
            `host ${host.owner}'s fresh job is done but Druid has ${rows} rows, not ${expected}`,
          );
        if (problem !== null) {
          stalledHosts++;
          violations.push(`host ${host.owner} did not progress afterwards: ${problem}`);
        }
      } finally {
        for (const o of others) o.run.child.kill("SIGCONT");
      }
    }

    return {
      figures: {
        seed: options.seed,
        days,
        hosts: hostCount,
        ...checked,
        hostPauses,
        hostKills,
        pgRestarts,
        racingRequests: answers.length,
        segmentOps: opRuns.length,
        opKills,
        stalledHosts,
      },
      violations,
    };
  } finally {
    await store?.close().catch(() => undefined);
    for (const h of [...hosts, ...retired]) {
      if (!h.run.exited) {
        h.run.child.kill("SIGCONT");
        h.run.child.kill("SIGKILL");
      }
    }
    await Promise.all([...hosts, ...retired].map((h) => h.run.done));
    await sim.close();
    await pg.destroy();
    // Kept when something broke, for a look at the ledgers and the data.
    if (violations.length === 0) rmSync(work, { recursive: true, force: true });
  }
}

/** Posts a fresh job to `host` and waits (bounded) for it to end done, claimed by that host; null if so. */
async function freshJobDone(host: Host, store: Store, body: Record<string, unknown>): Promise<string | null> {
  const res = await fetch(`${host.url}/api/v1/backfills`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const created = (await res.json()) as { id?: string };
  if (res.status !== 201 || !created.id) return `POST answered ${res.status}: ${JSON.stringify(created)}`;
  const id = created.id;
  const giveUp = Date.now() + 180_000;
  let last = "";
  while (Date.now() < giveUp) {
    const r = await fetch(`${host.url}/api/v1/jobs/${encodeURIComponent(id)}/wait?timeout=30`);
    const text = await r.text();
    last = `${r.status} ${text.slice(0, 400)}`;
    if (r.status !== 200) continue;
    const answer = JSON.parse(text) as { ended: boolean; job: { state: string } };
    if (!answer.ended) continue;
    if (answer.job.state !== "done") return `its fresh job ${id} ended ${answer.job.state}: ${last}`;
    const claimers = new Set(
      (await store.listEvents({ jobId: id, limit: 1000 }))
        .filter((e) => e.reason.startsWith("claimed"))
        .map((e) => e.actor),
    );
    if ([...claimers].some((a) => a !== host.owner))
      return `its fresh job ${id} was claimed by ${[...claimers].join(", ")}, not only by it`;
    return claimers.has(host.owner) ? null : `its fresh job ${id} ended with no claim by it`;
  }
  return `its fresh job ${id} had not ended after 180 s: ${last}`;
}

/** Days with an unused segment now (something for a kill to delete). */
function killable(sim: SimHandle): (day: number) => boolean {
  return (day) => {
    const start = Date.parse(`${dayAt(day)}T00:00:00Z`);
    const now = sim.engine.now;
    return sim.engine.store
      .all(DS)
      .some((s) => s.interval.start === start && s.unusedAt !== null && s.unusedAt <= now);
  };
}

/** Days a rollback `--before T` would change: a version older than T to go back to, a used one not older. */
function restorable(sim: SimHandle, before: string): (day: number) => boolean {
  return (day) => {
    const start = Date.parse(`${dayAt(day)}T00:00:00Z`);
    const now = sim.engine.now;
    const segments = sim.engine.store.all(DS).filter((s) => s.interval.start === start);
    return (
      segments.some((s) => s.version < before) &&
      segments.some((s) => s.version >= before && (s.unusedAt === null || now < s.unusedAt))
    );
  };
}

/**
 * From the drawn start (wrapping within [lo, hi)), the first run of days `wanted` holds, at most as long
 * as drawn; null when no day in [lo, hi) qualifies.
 */
function window(op: OpPlan, wanted: (day: number) => boolean): [number, number] | null {
  const span = op.hi - op.lo;
  for (let k = 0; k < span; k++) {
    const first = op.lo + ((((op.from - op.lo + k) % span) + span) % span);
    if (!wanted(first)) continue;
    let last = first + 1;
    while (last < op.hi && last - first < op.to - op.from && wanted(last)) last++;
    return [first, last];
  }
  return null;
}

/**
 * A POST on a connection of its own (no keep-alive): a request sent on an idle pooled connection just as
 * the host closes it (a host resumed from SIGSTOP runs its overdue idle timers at once) would fail in the
 * client before the host ever read it. Status 0: no answer (the error in `text`).
 */
function postOnce(url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: "POST", agent: false, headers: { "content-type": "application/json", connection: "close" } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => {
          text += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        res.on("error", (error) => resolve({ status: 0, text: `answer cut: ${String(error)}` }));
      },
    );
    req.on("error", (error) => resolve({ status: 0, text: `no answer: ${String(error)}` }));
    req.end(body);
  });
}
