import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { openStore } from "../../src/ledger/open.js";
import type { Store } from "../../src/ledger/store.js";
import { runCli } from "../helpers/cli-process.js";

const work = mkdtempSync(join(tmpdir(), "segops-regress-l-"));

/**
 * Kills a CLI that hangs (the bug being guarded against); a hang then fails the assertions, not the suite.
 * Generous: these commands take a few seconds on a loaded machine, and the cap is no speed check.
 */
async function runBounded(args: string[], ms = 60_000) {
  const run = runCli(args);
  const guard = setTimeout(() => run.child.kill("SIGKILL"), ms);
  try {
    return await run.done;
  } finally {
    clearTimeout(guard);
  }
}

async function withStore<T>(path: string, fn: (s: Store) => Promise<T>, clock?: ManualClock): Promise<T> {
  const store = await openStore(`sqlite:${path}`, clock ? { clock } : {});
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

const KIND = "ingest";

async function makeJob(store: Store, id: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${id}/p${i}`);
  await store.createJob(
    { id, kind: "backfill", options: {} },
    ids.map((t, i) => ({ id: t, kind: KIND, payload: { interval: `2026-01-0${i + 1}/P1D` } })),
  );
  return ids;
}

async function finish(store: Store, owner: string, ids: string[], to: "done" | "failed"): Promise<void> {
  const claimed = await store.claim({ kind: KIND, owner, leaseMs: 60_000, limit: 100, ids });
  for (const t of claimed) {
    await store.transition({ id: t.id, owner, version: t.version }, { to, reason: `test ${to}` });
  }
}

describe("ledger URLs are checked before connecting", () => {
  const cases = [
    ["mysql://u:S3cr3t@h/db", /unsupported ledger URL mysql:\/\/u:\*\*\*@h\/db/],
    ["postgres://u@h:99999/db", /port/],
    ["postgres://u:S3cr3t@h/db?schema=a;drop", /schema "a;drop"/],
    ["postgres://u:S3cr3t@/db", /host/],
    ["sqlite:", /empty SQLite ledger path/],
    // A raw @ or / in the password: parsers disagree where it ends, so redaction could miss part of it.
    ["postgres://u:pa@S3cr3t@127.0.0.1:1/db", /percent-encode/],
    ["postgres://u:12/S3cr3t@h/db", /percent-encode/],
  ] as const;
  for (const [url, why] of cases) {
    it(`--ledger ${url} is invalid input (exit 2), naming --ledger and the expected forms`, async () => {
      const r = await runBounded(["jobs", "--ledger", url]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^segops: --ledger: /);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toContain("sqlite:PATH");
      expect(r.stderr).toContain("postgres://user@host[:port]/db[?schema=name]");
      expect(r.stdout + r.stderr).not.toContain("S3cr3t");
    });
  }

  it("openStore refuses a malformed ledger URL as a usage error, password hidden", async () => {
    const error = await openStore("postgres://u:S3cr3t@h:99999/db").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "Usage" });
    expect(
      JSON.stringify({ m: (error as Error).message, d: (error as { details?: unknown }).details }),
    ).not.toContain("S3cr3t");
  });
});

describe("an uncreatable SQLite directory", () => {
  it("--ledger sqlite:/proc/nope/l.db fails at once with exit 4, naming the path and the OS reason", async () => {
    const r = await runBounded(["cancel", "some-job", "--ledger", "sqlite:/proc/nope/l.db"]);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("/proc/nope");
    expect(r.stderr).toMatch(/ENOENT|no such file/);
  });
});

describe("read-only commands never create a ledger", () => {
  for (const args of [["status"], ["jobs"], ["dlq", "list"], ["status", "--json"], ["jobs", "--json"]]) {
    it(`segops ${args.join(" ")} in a new directory creates no ledger and says so, exit 0`, async () => {
      const dir = mkdtempSync(join(work, "fresh-"));
      const path = join(dir, ".segops", "ledger.db");
      const r = await runBounded([...args, "--ledger", `sqlite:${path}`]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toContain(`no ledger at ${path} (nothing has run here yet)`);
      expect(existsSync(path)).toBe(false);
      expect(existsSync(join(dir, ".segops"))).toBe(false);
      if (args.includes("--json")) expect(JSON.parse(r.stdout)).toEqual(args[0] === "jobs" ? [] : null);
    });
  }

  for (const args of [
    ["status", "some-job"],
    ["dlq", "show", "some-task"],
  ]) {
    it(`segops ${args.join(" ")} (a specific one) in a new directory exits 2, creating nothing`, async () => {
      const dir = mkdtempSync(join(work, "fresh-"));
      const path = join(dir, "ledger.db");
      const r = await runBounded([...args, "--ledger", `sqlite:${path}`]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`no ledger at ${path} (nothing has run here yet)`);
      expect(existsSync(path)).toBe(false);
    });
  }
});

describe("status with nothing to show", () => {
  it("segops status on an existing ledger with no jobs exits 0 like a missing one", async () => {
    const path = join(work, "empty.db");
    await withStore(path, async () => undefined);
    const r = await runBounded(["status", "--ledger", `sqlite:${path}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`no jobs in sqlite:${path}`);
    const named = await runBounded(["status", "nope", "--ledger", `sqlite:${path}`]);
    expect(named.code).toBe(2);
  });
});

describe("--json job state derived from task counts", () => {
  it('--json shows "state": "open" for a job that ended: jobs and status derive done / failed', async () => {
    const path = join(work, "state.db");
    await withStore(path, async (store) => {
      const done = await makeJob(store, "job-done", 2);
      await finish(store, "o1", done, "done");
      const failed = await makeJob(store, "job-failed", 2);
      await finish(store, "o1", failed.slice(0, 1), "done");
      await finish(store, "o1", failed.slice(1), "failed");
      await makeJob(store, "job-open", 1);
      expect((await store.getJob("job-done"))?.state).toBe("open");
    });
    const jobs = await runBounded(["jobs", "--ledger", `sqlite:${path}`, "--json"]);
    expect(jobs.code, jobs.stderr).toBe(0);
    const byId = Object.fromEntries(
      (JSON.parse(jobs.stdout) as Array<{ id: string; state: string }>).map((j) => [j.id, j.state]),
    );
    expect(byId).toEqual({ "job-done": "done", "job-failed": "failed", "job-open": "open" });
    for (const [id, state] of Object.entries(byId)) {
      const status = await runBounded(["status", id, "--ledger", `sqlite:${path}`, "--json"]);
      expect((JSON.parse(status.stdout) as { state: string }).state).toBe(state);
    }
    const human = await runBounded(["jobs", "--ledger", `sqlite:${path}`]);
    expect(human.stdout).toMatch(/job-done {2}done /);
    // Stored state untouched: deriving is display only.
    await withStore(path, async (store) => expect((await store.getJob("job-done"))?.state).toBe("open"));
  });
});

describe("status during a live run", () => {
  it('status during a live run says "running (leased by OWNER until …)", not the resume hint', async () => {
    const path = join(work, "live.db");
    const owner = "otherhost:4242:abc";
    let until = 0;
    await withStore(path, async (store) => {
      const ids = await makeJob(store, "job-live", 3);
      const [claimed] = await store.claim({ kind: KIND, owner, leaseMs: 3_600_000, limit: 1, ids });
      until = claimed?.leaseExpiresAt ?? 0;
    });
    const r = await runBounded(["status", "job-live", "--ledger", `sqlite:${path}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`running (leased by ${owner} until ${new Date(until).toISOString()})`);
    expect(r.stdout).not.toMatch(/rerun|resume with/);
  });

  it("status after a crash (lease expired) still gives the resume hint", async () => {
    const path = join(work, "crashed.db");
    // A clock an hour behind: the lease taken "then" has long expired by the CLI's real clock.
    const past = new ManualClock(Date.now() - 3_600_000);
    await withStore(
      path,
      async (store) => {
        const ids = await makeJob(store, "job-crashed", 2);
        await store.claim({ kind: KIND, owner: "deadhost:1:x", leaseMs: 30_000, limit: 1, ids });
      },
      past,
    );
    const r = await runBounded(["status", "job-crashed", "--ledger", `sqlite:${path}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("leased by");
    expect(r.stdout).toMatch(/UNFINISHED: 2 partition\(s\) left/);
  });
});
