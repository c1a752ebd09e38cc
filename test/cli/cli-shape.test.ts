import { describe, expect, it } from "vitest";
import { segopsInProcess } from "../helpers/cli-in-process.js";

/** The CLI's shape: what a command line it cannot take gets, and what each command's help offers. */

describe("a command line missing what the command needs", () => {
  it("gets the error, one usage line and where the help is — not the whole help", async () => {
    const r = await segopsInProcess(["backfill", "t.json", "--to", "2026-02-01"]);
    expect(r.code).toBe(2);
    expect(r.err.trim().split("\n")).toEqual([
      "error: required option '--from <date>' not specified",
      "usage: segops backfill <template> --from <date> --to <date> [options]",
      "see segops backfill --help",
    ]);
  });

  it("a subcommand's usage names it whole", async () => {
    const r = await segopsInProcess(["dlq", "show"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("usage: segops dlq show <id> [options]\nsee segops dlq show --help\n");
    expect(r.err).not.toContain("Options:");
  });
});

describe("help", () => {
  it("marks the options a command cannot run without, and shows them in its usage", async () => {
    const r = await segopsInProcess(["backfill", "--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: segops backfill <template> --from <date> --to <date> \[options\]$/m);
    const options = r.out.slice(r.out.indexOf("Options:"));
    const from = options.slice(options.indexOf("--from"), options.indexOf("--to <date>"));
    expect(from).toContain("(required)");
    const granularity = options.slice(
      options.indexOf("--granularity"),
      options.indexOf("--granularity") + 160,
    );
    expect(granularity).not.toContain("(required)");
    const kill = await segopsInProcess(["kill", "--help"]);
    expect(kill.out).toMatch(/--interval <interval>\s+the interval to clean[^\n]*\n?[^\n]*\(required\)/);
  });
});
