import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";
import { listDue, selectClaimable } from "../../src/ledger/sql/claim.js";
import type { Statement } from "../../src/ledger/sql/statement.js";

const dir = mkdtempSync(join(tmpdir(), "segops-claim-plan-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

async function plan(statement: Statement): Promise<PlanRow[]> {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.db`);
  await (await openStore(`sqlite:${file}`)).close();
  const db = new Database(file);
  try {
    const params = Object.fromEntries(statement.values.map((v, i) => [String(i + 1), v]));
    return db.prepare(`EXPLAIN QUERY PLAN ${statement.text}`).all(params) as PlanRow[];
  } finally {
    db.close();
  }
}

const searches = (rows: PlanRow[], pattern: RegExp) => rows.filter((r) => pattern.test(r.detail));
/** Whether the select that `row` reads for sorts its rows itself (no index gives the order). */
const sortsItself = (rows: PlanRow[], row: PlanRow) =>
  rows.some((r) => r.parent === row.parent && /USE TEMP B-TREE FOR ORDER BY/.test(r.detail));

function expectNoScans(rows: PlanRow[]): void {
  const details = rows.map((r) => r.detail);
  expect(details.filter((d) => /^SCAN (c|tasks)\b/.test(d) && !/^SCAN c$/.test(d))).toEqual([]);
  expect(details.some((d) => /tasks_due/.test(d))).toBe(false);
}

/**
 * Every freed slot runs a claim cycle: with 10,000 partitions running under live leases, a claim that
 * visited running rows cost 10,000 row visits a cycle, and one that sorted every due task cost
 * 160 ms on PostgreSQL with 100,000 due (docs/benchmarks.md). SQLite must read each rank of the claim
 * order through its index: suspended and new tasks in (run_at, id) order, so each rank stops at its limit
 * with nothing to sort; expired leases and canceled tasks (few) through their partial indexes; never by
 * scanning the table or the running rows.
 */
describe("the SQLite claim reads through the claim indexes", () => {
  const o = { kind: "ingest", owner: "me", leaseMs: 1000, limit: 100, jobIds: ["job"] };
  it.each([
    ["listDue", listDue("sqlite", o, 5)],
    ["selectClaimable", selectClaimable("sqlite", o, 5)],
  ])("%s: each rank by its index, the waiting ones in claim order", async (_name, statement) => {
    const rows = await plan(statement);
    const waiting = searches(
      rows,
      /^SEARCH c USING INDEX tasks_waiting_order \(kind=\? AND state=\? AND run_at<\?\)$/,
    );
    expect(waiting).toHaveLength(2);
    for (const row of waiting) expect(sortsItself(rows, row), row.detail).toBe(false);
    expect(
      searches(rows, /^SEARCH c USING INDEX tasks_leased \(kind=\? AND lease_expires_at<\?\)$/),
    ).toHaveLength(1);
    expect(searches(rows, /^SEARCH c USING INDEX tasks_canceled \(kind=\?\)$/)).toHaveLength(1);
    expectNoScans(rows);
  });

  it("selectClaimable of some ids: by primary key, not by an index that holds every waiting task", async () => {
    const rows = await plan(selectClaimable("sqlite", { ...o, ids: ["a", "b"] }, 5));
    expect(rows.filter((r) => /^SEARCH c /.test(r.detail)).map((r) => r.detail)).toEqual([
      "SEARCH c USING INDEX sqlite_autoindex_tasks_1 (id=?)",
    ]);
    expectNoScans(rows);
  });
});
