/**
 * Ledger benchmark: committed CAS transitions per second, the latency of claiming 1,000 due tasks, and the
 * driver's scan with 100,000 due tasks (`listDue` of 100 then `claim` of those ids, as `Driver` does each
 * cycle), on SQLite (a temp file, WAL) and PostgreSQL (a throwaway cluster with fsync on, or SEGOPS_TEST_PG_URL).
 *
 *   node --import tsx bench/ledger.ts [--quick]     # --quick: 20,000 due tasks instead of 100,000
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { openStore } from "../src/ledger/open.js";
import type { Store } from "../src/ledger/store.js";
import { startPostgres } from "../test/helpers/postgres.js";

const TRANSITIONS = 4000;
const CLAIM = 1000;
const CLAIM_ROUNDS = 5;
const CAS_ROUNDS = 3;
const CONCURRENCY = 8;
/** Due tasks behind the driver's scan; the scan itself reads 100 (`Driver.#claimFor`). */
const QUICK = process.argv.includes("--quick");
const BIG = QUICK ? 20_000 : 100_000;
const SCAN = 100;
const BIG_ROUNDS = 7;

let jobSeq = 0;
async function seed(store: Store, n: number): Promise<string> {
  const jobId = `bench-${++jobSeq}`;
  const tasks = Array.from({ length: n }, (_, i) => ({
    id: `${jobId}-${i}`,
    kind: jobId,
    exclusionKey: `${jobId}-${i}`,
  }));
  await store.createJob({ id: jobId, kind: "bench" }, tasks);
  return jobId;
}

/** Claims N tasks, then commits one CAS transition (running → suspended, with its event) per task. */
async function casPerSecond(store: Store): Promise<number> {
  const kind = await seed(store, TRANSITIONS);
  const held = await store.claim({ kind, owner: "bench", leaseMs: 60_000, limit: TRANSITIONS });
  if (held.length !== TRANSITIONS) throw new Error(`claimed ${held.length} of ${TRANSITIONS}`);
  let next = 0;
  let refused = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < held.length; i = next++) {
        const t = held[i]!;
        const row = await store.transition(
          { id: t.id, owner: "bench", version: t.version },
          { to: "suspended", reason: "bench", runAt: 0 },
        );
        if (!row) refused++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  if (refused) throw new Error(`${refused} CAS refused`);
  return TRANSITIONS / seconds;
}

/** Median latency of one `claim` of 1,000 due tasks (a fresh kind each round). */
async function claimLatencyMs(store: Store): Promise<number> {
  const samples: number[] = [];
  for (let r = 0; r < CLAIM_ROUNDS; r++) {
    const kind = await seed(store, CLAIM);
    const start = performance.now();
    const claimed = await store.claim({ kind, owner: "bench", leaseMs: 60_000, limit: CLAIM });
    samples.push(performance.now() - start);
    if (claimed.length !== CLAIM) throw new Error(`claimed ${claimed.length} of ${CLAIM}`);
  }
  return median(samples);
}

/**
 * With `BIG` due tasks of one job: the median over rounds of one driver cycle's ledger work, `listDue` (limit 100,
 * the job filter the driver sets) then `claim` of the eligible ids, and of a plain `claim` of 100. Each round
 * takes 100 tasks out of the pool, so the pool stays within 2 % of `BIG`.
 */
async function bigScanMs(store: Store): Promise<{ listDue: number; claimIds: number; claim: number }> {
  const jobId = await seed(store, BIG);
  const kind = jobId;
  const list: number[] = [];
  const claimIds: number[] = [];
  const plain: number[] = [];
  for (let r = 0; r < BIG_ROUNDS; r++) {
    let start = performance.now();
    const due = await store.listDue({ kind, limit: SCAN, jobIds: [jobId] });
    list.push(performance.now() - start);
    start = performance.now();
    const held = await store.claim({
      kind,
      owner: "bench",
      leaseMs: 60_000,
      limit: SCAN,
      ids: due.map((t) => t.id),
      jobIds: [jobId],
    });
    claimIds.push(performance.now() - start);
    if (held.length !== SCAN) throw new Error(`claimed ${held.length} of ${SCAN} listed`);
    start = performance.now();
    const more = await store.claim({ kind, owner: "bench", leaseMs: 60_000, limit: SCAN, jobIds: [jobId] });
    plain.push(performance.now() - start);
    if (more.length !== SCAN) throw new Error(`claimed ${more.length} of ${SCAN}`);
  }
  return { listDue: median(list), claimIds: median(claimIds), claim: median(plain) };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Row {
  name: string;
  cas: number;
  claim: number;
  big: Awaited<ReturnType<typeof bigScanMs>>;
}

async function measure(name: string, url: string): Promise<Row> {
  const store = await openStore(url);
  try {
    await casPerSecond(store); // warm-up (statement caches, JIT)
    const cas: number[] = [];
    for (let i = 0; i < CAS_ROUNDS; i++) cas.push(await casPerSecond(store));
    const claim = await claimLatencyMs(store);
    return { name, cas: median(cas), claim, big: await bigScanMs(store) };
  } finally {
    await store.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), "segops-bench-"));
const pg = await startPostgres({ durable: true });
try {
  const rows = [
    await measure("SQLite (WAL, synchronous=NORMAL)", `sqlite:${join(dir, "ledger.db")}`),
    await measure("PostgreSQL (fsync on)", pg.freshUrl()),
  ];
  console.log(
    `| backend | CAS transitions/s (${CONCURRENCY} concurrent, median of ${CAS_ROUNDS}) | claim ${CLAIM} due tasks (median of ${CLAIM_ROUNDS}) | ${BIG.toLocaleString("en")} due: listDue ${SCAN} | then claim those ids | claim ${SCAN} (median of ${BIG_ROUNDS}) |`,
  );
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const r of rows)
    console.log(
      `| ${r.name} | ${Math.round(r.cas).toLocaleString("en")} | ${r.claim.toFixed(1)} ms | ${r.big.listDue.toFixed(1)} ms | ${r.big.claimIds.toFixed(1)} ms | ${r.big.claim.toFixed(1)} ms |`,
    );
  const load = (await import("node:os")).loadavg()[0]?.toFixed(1);
  console.log(
    `\n${(await import("node:os")).cpus().length} CPUs, 1-min load average ${load} at the end of the run`,
  );
} finally {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
