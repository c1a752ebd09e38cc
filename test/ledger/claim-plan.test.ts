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

async function plan(statement: Statement): Promise<string[]> {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.db`);
  await (await openStore(`sqlite:${file}`)).close();
  const db = new Database(file);
  try {
    const params = Object.fromEntries(statement.values.map((v, i) => [String(i + 1), v]));
    return (db.prepare(`EXPLAIN QUERY PLAN ${statement.text}`).all(params) as Array<{ detail: string }>).map(
      (r) => r.detail,
    );
  } finally {
    db.close();
  }
}

/**
 * Every freed slot runs a claim cycle: with 10,000 partitions running under live leases, a claim that
 * visited running rows cost 10,000 row visits a cycle (issue 16). SQLite must reach waiting tasks and
 * expired leases through their own partial indexes, never by scanning the table or the running rows.
 */
describe("the SQLite claim reads through the claim indexes", () => {
  const o = { kind: "ingest", owner: "me", leaseMs: 1000, limit: 100, jobIds: ["job"] };
  it.each([
    ["listDue", listDue("sqlite", o, 5)],
    ["selectClaimable", selectClaimable("sqlite", o, 5)],
    ["selectClaimable of some ids", selectClaimable("sqlite", { ...o, ids: ["a", "b"] }, 5)],
  ])("%s", async (_name, statement) => {
    const details = await plan(statement);
    expect(details.some((d) => /SEARCH c USING INDEX tasks_waiting \(kind=\?\)/.test(d))).toBe(true);
    expect(
      details.some((d) => /SEARCH c USING INDEX tasks_leased \(kind=\? AND lease_expires_at<\?\)/.test(d)),
    ).toBe(true);
    expect(details.filter((d) => /^SCAN (c|tasks)\b/.test(d) && !/^SCAN c$/.test(d))).toEqual([]);
    expect(details.some((d) => /tasks_due/.test(d))).toBe(false);
  });
});
