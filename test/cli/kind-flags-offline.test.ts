import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli-process.js";

/**
 * A segment operation's malformed flag is refused by its request's schema before anything is asked of
 * Druid or the ledger: exit 2 naming the flag, even with Druid unreachable (exit 4 would send the user
 * looking for an outage that is not there).
 */
const NOWHERE = ["--druid", "http://127.0.0.1:1", "--ledger", "sqlite::memory:"];

describe("segment operations' flags checked before connecting", () => {
  it.each([
    ["kill", ["kill", "wiki", "--interval", "2026-01-01/yesterday", "--yes"], "--interval"],
    ["kill", ["kill", "wiki", "--interval", "2026-01-01/P1D", "--older-than", "P30X"], "--older-than"],
    ["rollback", ["rollback", "wiki", "--interval", "2026-01-01/P1D", "--before", "last week"], "--before"],
    ["compact", ["compact", "wiki", "--interval", "2026-13-01/P1D"], "--interval"],
  ])("%s %j: exit 2 naming %s, Druid never asked", async (_kind, args, flag) => {
    const r = await runCli([...args, ...NOWHERE]).done;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(flag);
    expect(r.stderr).not.toMatch(/unreachable|ECONNREFUSED/i);
  });
});
