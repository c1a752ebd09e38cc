import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/ledger/open.js";

const WORKER = fileURLToPath(new URL("./fixtures/sqlite-worker.ts", import.meta.url));

function run(path: string): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, path, "sq-job"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (b) => {
    out += String(b);
  });
  child.stderr.on("data", (b) => {
    out += String(b);
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, out })));
}

describe("several processes on one SQLite ledger file", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "segops-sqlite-mp-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("three processes share the work and run every task exactly once", async () => {
    const path = join(dir, "ledger.db");
    const store = await openStore(`sqlite:${path}`);
    await store.createJob(
      { id: "sq-job", kind: "test" },
      Array.from({ length: 90 }, (_, i) => ({ id: `t${i}`, kind: "sq", exclusionKey: `k${i % 9}` })),
    );
    const db = new Database(path);
    db.exec("CREATE TABLE executions (task_id TEXT NOT NULL, pid INTEGER NOT NULL)");
    const results = await Promise.all([run(path), run(path), run(path)]);
    for (const r of results) expect(r.code, r.out).toBe(0);
    expect(await store.countTasks("sq-job")).toMatchObject({ done: 90, new: 0, running: 0, suspended: 0 });
    const perTask = db.prepare("SELECT task_id, count(*) AS n FROM executions GROUP BY task_id").all() as {
      n: number;
    }[];
    expect(perTask).toHaveLength(90);
    expect(perTask.every((r) => r.n === 1)).toBe(true);
    db.close();
    await store.close();
  }, 60_000);
});
