// The multi-actor checker: after a run of multi-actor.ts it reads Druid's side (Broker SQL, the emulator's
// submission log, tasks and timeline) and segops' side (the shared PostgreSQL ledger, each segment
// operation's own ledger, the answers to the racing requests, the CLI exits) and names every broken
// guarantee. What several writers may legitimately leave is allowed only in its documented words: an ingest
// partition superseded by another writer, or whose data is gone because another ledger's rollback marked
// its version unused (the rollback planned that version), a kill refused while a chunk has no used version
// or a rollback of it is unfinished, a rollback stopped because newer data was published meanwhile, a
// compaction whose chunk another writer replaced (done, outcome superseded).
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import type { EventRow, JobRow, TaskRow } from "../../src/ledger/types.js";
import type { SimHandle } from "../../src/sim/server.js";
import type { CliResult } from "../helpers/cli-process.js";
import { nextDay, sqlCount } from "../helpers/sql-count.js";
import type { MultiActorFigures } from "./multi-actor.js";

/** One segment operation: its command's runs (the first maybe SIGKILLed, then the same command again). */
export interface OpRun {
  kind: "compact" | "kill" | "rollback";
  interval: string;
  ledger: string;
  /** On the hosts' PostgreSQL ledger (else a SQLite ledger of its own). */
  shared: boolean;
  results: CliResult[];
}

export interface CheckInput {
  sim: SimHandle;
  /** The shared ledger. */
  store: Store;
  datasource: string;
  /** Rows per day of the source dataset. */
  source: ReadonlyMap<string, number>;
  answers: Array<{ burst: string; isNew: boolean; status: number; text: string }>;
  ops: OpRun[];
  /** Lease owner ids of every `segops serve` host of the run (killed ones too). */
  hostOwners: ReadonlySet<string>;
  violations: string[];
}

type Checked = Pick<
  MultiActorFigures,
  | "partitions"
  | "jobs"
  | "acceptedSubmissions"
  | "supersededIngest"
  | "rolledBackIngest"
  | "lost"
  | "doubled"
  | "openTwice"
  | "unservedDone"
  | "rowMismatches"
  | "answers"
  | "opOutcomes"
  | "takeovers"
  | "opClaimsByHosts"
  | "opsOnOwnLedger"
>;

/** Refusals a segment operation may answer before it changes anything (exit 2), in their documented words. */
const PLAN_REFUSALS: Array<[RegExp, string]> = [
  [/cannot kill in .*: no version of it is used/, "refused: a chunk has no used version"],
  [/cannot kill in .*: a rollback of it is not finished/, "refused: a rollback of the chunk is unfinished"],
  [
    /cannot kill in .*: the live version of the chunks is not fully served yet/,
    "refused: live version not served yet",
  ],
  [
    /cannot roll back: .* is gone \(killed, or never written\)/,
    "refused: the target is gone or never written",
  ],
  [/cannot roll back: no segment of .* has/, "refused: no segment has the target"],
  [/cannot roll back: version .* lacks partition/, "refused: the target lacks partitions (killed)"],
];

/** Why a partition of each kind may end failed when other writers meet it, in its documented words. */
const FAILURES: Record<string, Array<[RegExp, string]>> = {
  ingest: [[/^superseded: a newer version .* replaced ours/, "superseded by another writer"]],
  kill: [[/refused to kill in .*: no version of it is used any more/, "refused: no used version any more"]],
  rollback: [
    [/published after the rollback was planned/, "stopped: newer data published meanwhile"],
    [/since the rollback was planned \(killed\?\)/, "stopped: the target was killed meanwhile"],
    [
      /a newer version is used again in .*: an ingestion ran during the rollback/,
      "stopped: an ingestion ran meanwhile",
    ],
  ],
  compact: [],
};

const TERMINAL = new Set(["done", "failed", "dead"]);

interface LedgerRows {
  label: string;
  jobs: JobRow[];
  tasks: TaskRow[];
  events: EventRow[];
}

async function readLedger(store: Store, label: string): Promise<LedgerRows> {
  const jobs = await store.listJobs({ limit: 10_000 });
  const tasks: TaskRow[] = [];
  const events: EventRow[] = [];
  for (const j of jobs) {
    tasks.push(...(await store.listTasks(j.id)));
    events.push(...(await store.listEvents({ jobId: j.id, limit: 100_000 })));
  }
  return { label, jobs, tasks, events };
}

const intervalOf = (t: TaskRow): string | undefined => {
  const i = (t.payload as { interval?: unknown }).interval;
  return typeof i === "string" ? i : undefined;
};

export async function checkMultiActor(input: CheckInput): Promise<Checked> {
  const { sim, violations } = input;
  const engine = sim.engine;
  engine.sync();

  // Rows per day in Druid, as a user would count them, against the source's.
  let rowMismatches = 0;
  for (const [day, rows] of input.source) {
    const got = await sqlCount(sim.url, input.datasource, day, nextDay(day));
    if (got !== rows) {
      rowMismatches++;
      violations.push(`${day}: Druid serves ${got} rows, the source has ${rows}`);
    }
  }

  // Never twice: each task id accepted once, no partition (an id without its attempt) with two successes.
  let doubled = 0;
  const accepted = sim
    .stats()
    .submissions.filter((s) => s.accepted && s.id)
    .map((s) => s.id as string);
  const times = new Map<string, number>();
  for (const id of accepted) times.set(id, (times.get(id) ?? 0) + 1);
  for (const [id, n] of times)
    if (n > 1) {
      doubled++;
      violations.push(`task id ${id} was accepted ${n} times`);
    }
  const byPartition = new Map<string, string[]>();
  for (const id of times.keys()) {
    const partition = id.replace(/_a\d+$/, "");
    byPartition.set(partition, [...(byPartition.get(partition) ?? []), id]);
  }
  for (const [partition, ids] of byPartition) {
    const successes = ids.filter((id) => engine.tasks.get(id)?.phase === "success");
    if (successes.length > 1) {
      doubled++;
      violations.push(
        `partition ${partition} has ${successes.length} successful tasks: ${successes.join(", ")}`,
      );
    }
  }

  // Both sides of each ledger: the shared one and each operation's own.
  const ledgers: LedgerRows[] = [await readLedger(input.store, "shared")];
  for (const op of input.ops.filter((o) => !o.shared)) {
    const own = await openStore(op.ledger, { mustExist: true }).catch(() => null);
    if (!own) continue; // refused before it created its ledger
    try {
      ledgers.push(await readLedger(own, op.ledger));
    } finally {
      await own.close();
    }
  }

  let lost = 0;
  let supersededIngest = 0;
  let unservedDone = 0;
  const opOutcomes: Record<string, number> = {};
  const count = (key: string) => {
    opOutcomes[key] = (opOutcomes[key] ?? 0) + 1;
  };
  const visible = engine.store.visible(input.datasource, engine.now).filter((s) => !s.tombstone);
  const liveIn = (interval: string) => {
    const [a, b] = interval.split("/");
    const start = Date.parse(a ?? "");
    const end = Date.parse(b ?? "");
    return visible.filter((s) => s.interval.start >= start && s.interval.end <= end);
  };
  // Versions a rollback planned to mark unused (an ingestion's whose partition had not ended yet may be
  // one, when the rollback is another ledger's: that partition's data is gone, by the operator's hand).
  const rolledBack = new Set(
    ledgers.flatMap((l) =>
      l.tasks
        .filter((t) => t.kind === "rollback" && (t.progress as { step?: string }).step !== undefined)
        .flatMap((t) => (t.payload as { newerVersions?: string[] }).newerVersions ?? []),
    ),
  );
  // Chunks a rollback began to restore (past its plan), with the version it restores: a version of an
  // ingestion newer than that, over the same chunk, was taken away by the operator too (e.g. an ingestion
  // compacted by another ledger, then rolled back to before both).
  const restoredTo = ledgers.flatMap((l) =>
    l.tasks
      .filter((t) => t.kind === "rollback" && (t.progress as { step?: string }).step !== undefined)
      .map((t) => t.payload as { interval: string; toVersion: string }),
  );
  const rolledBackOver = (interval: string, version: string) =>
    restoredTo.some((r) => r.interval === interval && r.toVersion < version);
  const publishedBy = new Map(engine.store.all(input.datasource).map((s) => [s.taskId, s.version]));
  let rolledBackIngest = 0;
  // Versions a done partition vouches for: what it published, or restored.
  const vouched = new Set<string>();
  for (const l of ledgers) {
    for (const t of l.tasks) {
      const where = `${l.label === "shared" ? "" : `${l.label}: `}${t.kind} partition ${t.id}`;
      if (!TERMINAL.has(t.state)) {
        lost++;
        violations.push(`${where} is still ${t.state}: ${t.lastError ?? ""}`);
        continue;
      }
      if (t.state !== "done") {
        const p = t.progress as { version?: string; outcome?: string; taskId?: string };
        // The version its attempt published: recorded, or (marked unused before segops first looked, so
        // never recorded) the one Druid's store (or, once killed, its task) says that attempt published.
        const version =
          p.version ??
          publishedBy.get(p.taskId ?? "") ??
          engine.tasks.get(p.taskId ?? "")?.version ??
          undefined;
        // Lost at handoff, or at the audit (its version missing, an older one live again): the same rollback.
        const gone = p.outcome === "lost" || p.outcome === "audit-failed";
        const interval = (t.payload as { interval?: string }).interval ?? "";
        const operators = version && (rolledBack.has(version) || rolledBackOver(interval, version));
        if (t.kind === "ingest" && gone && operators) {
          rolledBackIngest++;
          continue;
        }
        const documented = (FAILURES[t.kind] ?? []).find(([re]) => re.test(t.lastError ?? ""));
        if (!documented) {
          lost++;
          violations.push(`${where} ended ${t.state}: ${t.lastError ?? "(no error)"}`);
        } else if (t.kind === "ingest") supersededIngest++;
        else count(`${t.kind} partition ${documented[1]}`);
        continue;
      }
      const p = t.progress as { version?: string; liveVersion?: string; outcome?: string };
      if (t.kind === "ingest" && p.version) vouched.add(p.version);
      if (t.kind === "compact" && p.liveVersion) vouched.add(p.liveVersion);
      if (t.kind === "rollback") vouched.add(String((t.payload as { toVersion?: unknown }).toVersion));
      if (t.kind === "compact" && p.outcome === "superseded") count("compact partition superseded (done)");
      // Done: its chunk has live data, all of it served.
      const interval = intervalOf(t);
      if (interval === undefined) continue;
      const live = liveIn(interval);
      if (live.length === 0 || !live.every((s) => engine.isServed(s))) {
        unservedDone++;
        violations.push(
          `${where} is done but ${interval} ${live.length === 0 ? "has no live segment" : "is not served"}`,
        );
      }
    }
  }

  // One live version per day, and one a done partition vouches for.
  for (const day of input.source.keys()) {
    const live = liveIn(`${day}T00:00:00.000Z/${nextDay(day)}T00:00:00.000Z`);
    const versions = [...new Set(live.map((s) => s.version))];
    if (versions.length > 1) violations.push(`${day} has live versions ${versions.join(", ")}`);
    for (const v of versions)
      if (!vouched.has(v)) violations.push(`${day} serves version ${v}, which no done partition recorded`);
  }

  // At most one open ingest job over the same inputs: no job over them created while another one had
  // partitions to run (the `new` guard's promise), judged in the ledger's own order of events.
  let openTwice = 0;
  const shared = ledgers[0] as LedgerRows;
  const ingestJobs = shared.jobs.filter((j) => j.kind === "backfill" || j.kind === "run");
  const ordered = [...shared.events].sort((x, y) => x.id - y.id);
  const createdEvent = new Map<string, EventRow>();
  for (const e of ordered) if (e.taskId === null && e.fromState === null) createdEvent.set(e.jobId, e);
  /** A job's partitions not ended just before event `id`, with the last event of it before then. */
  const leftBefore = (jobId: string, id: number) => {
    const state = new Map<string, string>();
    let last: EventRow | undefined;
    for (const e of ordered) {
      if (e.id >= id) break;
      if (e.jobId !== jobId) continue;
      last = e;
      if (e.taskId !== null) state.set(e.taskId, e.toState);
    }
    return { left: [...state.values()].filter((s) => !TERMINAL.has(s)).length, last };
  };
  const baseOf = (j: JobRow) => String(j.options.baseId ?? j.id);
  const groups = new Map<string, JobRow[]>();
  for (const j of ingestJobs) groups.set(baseOf(j), [...(groups.get(baseOf(j)) ?? []), j]);
  for (const jobs of groups.values()) {
    for (const b of jobs) {
      const created = createdEvent.get(b.id);
      if (!created) continue;
      for (const a of jobs) {
        const aCreated = createdEvent.get(a.id);
        if (a === b || !aCreated || aCreated.id > created.id) continue;
        const { left, last } = leftBefore(a.id, created.id);
        if (left === 0) continue;
        openTwice++;
        violations.push(
          `jobs ${a.id} and ${b.id} over the same inputs were open at once: ${b.id} created ${b.createdAt - a.createdAt} ms after ${a.id}, which had ${left} partition(s) left (its last event before: ${last ? `${last.taskId ?? "job"} ${last.fromState}→${last.toState} "${last.reason}" by ${last.actor}` : "none"})`,
        );
      }
    }
  }

  // The racing requests: each found its job again (200), created it (201) or was refused naming one (409).
  const answers: Record<string, number> = {};
  const jobIds = new Set(shared.jobs.map((j) => j.id));
  for (const a of input.answers) {
    answers[String(a.status)] = (answers[String(a.status)] ?? 0) + 1;
    let body: { id?: string; detail?: string } = {};
    try {
      body = JSON.parse(a.text) as typeof body;
    } catch {
      // judged below by its status
    }
    const ok =
      ((a.status === 200 || a.status === 201) && body.id !== undefined && jobIds.has(body.id)) ||
      (a.status === 409 && [...jobIds].some((id) => body.detail?.includes(id)));
    if (!ok)
      violations.push(
        `a racing request (${a.burst}${a.isNew ? ", new" : ""}) was answered ${a.status}: ${a.text.slice(0, 300)}`,
      );
  }

  // How far the actors really met: partitions claimed after another owner's lease ran out, and partitions
  // of the CLI's segment operations on the shared ledger that a host claimed.
  const takeovers = shared.events.filter((e) => e.reason.startsWith("claimed after the lease")).length;
  const opJobs = new Set(
    shared.jobs.filter((j) => ["compact", "kill", "rollback"].includes(j.kind)).map((j) => j.id),
  );
  const opClaimsByHosts = shared.events.filter(
    (e) => opJobs.has(e.jobId) && e.reason.startsWith("claimed") && input.hostOwners.has(e.actor),
  ).length;

  // Each segment operation's last run: done, or a documented refusal.
  for (const op of input.ops) {
    const last = op.results.at(-1);
    const what = `${op.kind} ${op.interval} (${op.shared ? "shared ledger" : "own ledger"})`;
    if (!last) continue;
    if (last.code === 0) {
      // Partitions done in any of its runs' reports (a run after a SIGKILL may find the work done).
      const done = op.results.reduce((n, r) => {
        try {
          return n + ((JSON.parse(r.stdout) as { counts?: { done?: number } }).counts?.done ?? 0);
        } catch {
          return n; // a plan summary (nothing to do), or no report (SIGKILLed)
        }
      }, 0);
      const crashed = op.results.some((r) => r.signal === "SIGKILL") ? " (SIGKILLed, run again)" : "";
      count(done > 0 ? `${op.kind} done${crashed}` : `${op.kind} done, nothing to do${crashed}`);
      continue;
    }
    if (last.code === 2) {
      const refusal = PLAN_REFUSALS.find(([re]) => re.test(last.stderr));
      if (refusal) {
        count(`${op.kind} ${refusal[1]}`);
        continue;
      }
    }
    // Exit 1: some partition failed; the ledger check above judged each failure's reason.
    if (last.code === 1) {
      count(`${op.kind} ended 1 (partitions stopped)`);
      continue;
    }
    violations.push(`${what} exited ${last.code ?? last.signal}: ${last.stderr.slice(-600)}`);
  }

  return {
    partitions: shared.tasks.filter((t) => t.kind === "ingest").length,
    jobs: ingestJobs.length,
    acceptedSubmissions: accepted.length,
    supersededIngest,
    rolledBackIngest,
    lost,
    doubled,
    openTwice,
    unservedDone,
    rowMismatches,
    answers,
    opOutcomes,
    takeovers,
    opClaimsByHosts,
    opsOnOwnLedger: input.ops.filter((op) => !op.shared).length,
  };
}
