import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** The library's root entry is small and loads no emulator or database driver until used. */

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const HOOK = fileURLToPath(new URL("./helpers/record-loads.mjs", import.meta.url));

/** Runs `code` in a bare Node process (from source, through tsx) and returns every module URL it resolved. */
function loadsOf(code: string): string[] {
  const record = join(mkdtempSync(join(tmpdir(), "segops-loads-")), "loads.txt");
  const result = spawnSync(
    process.execPath,
    ["--import", "tsx", "--import", HOOK, "--input-type=module", "-e", code],
    {
      cwd: ROOT,
      env: { ...process.env, SEGOPS_RECORD_LOADS: record },
      encoding: "utf8",
    },
  );
  expect(result.status, result.stderr).toBe(0);
  return readFileSync(record, "utf8").split("\n").filter(Boolean);
}

describe("the library's root entry", () => {
  it("does not load pg, better-sqlite3 or the emulator when imported", () => {
    const loads = loadsOf(
      `const segops = await import("./src/index.ts"); if (typeof segops.runJob !== "function") process.exit(3);`,
    );
    expect(loads.some((u) => u.includes("/src/index.ts"))).toBe(true);
    expect(
      loads.filter((u) => /\/node_modules\/(pg|better-sqlite3)\//.test(u) || u.includes("/src/sim/")),
    ).toEqual([]);
  });

  it("loads the SQLite driver only once a SQLite ledger is opened, and never pg", () => {
    const loads = loadsOf(
      `const { openStore } = await import("./src/index.ts"); const s = await openStore("sqlite::memory:"); await s.close();`,
    );
    expect(loads.some((u) => u.includes("/node_modules/better-sqlite3/"))).toBe(true);
    expect(loads.some((u) => /\/node_modules\/pg\//.test(u))).toBe(false);
  });

  it("exports a curated set: the calls a user makes, not the internals", async () => {
    const root = await import("../src/index.js");
    const names = Object.keys(root).sort();
    expect(names).toEqual(
      [
        "ClusterMismatchError",
        "DEFAULT_GATES",
        "DruidClient",
        "DruidError",
        "ExitCode",
        "InvalidSpecError",
        "KINDS",
        "LedgerError",
        "SegopsError",
        "TaskAbort",
        "TaskDefer",
        "TaskProgress",
        "TaskRetry",
        "UsageError",
        "clusterOf",
        "formatJobReport",
        "jobReport",
        "openStore",
        "planIngestJob",
        "readTemplateFile",
        "runJob",
        "settleJob",
        "systemClock",
      ].sort(),
    );
  });
});
