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

describe("each command offers its own flags", () => {
  const helpOf = async (...command: string[]) => (await segopsInProcess([...command, "--help"])).out;

  it("segment operations offer no ingest flags; those that wait for serving offer --handoff-timeout", async () => {
    for (const name of ["kill", "rollback", "compact"]) {
      const help = await helpOf(name);
      expect(help, name).toContain("--max-concurrency <n>");
      expect(help, name).not.toContain("--poison-after");
      expect(help, name).not.toContain("--var");
    }
    expect(await helpOf("kill")).not.toContain("--handoff-timeout");
    expect(await helpOf("compact")).toMatch(/--handoff-timeout <s>\s+fail a chunk whose compacted segments/);
    expect(await helpOf("rollback")).toMatch(/--handoff-timeout <s>\s+fail a chunk whose restored version/);
    for (const name of ["run", "backfill", "resume"]) {
      const help = await helpOf(name);
      expect(help, name).toContain("--poison-after <n>");
      expect(help, name).toContain("--handoff-timeout <s>");
    }
  });

  it("an ingest flag given to a segment operation is refused by name", async () => {
    const r = await segopsInProcess(["kill", "wiki", "--interval", "2026-01-01/P1D", "--poison-after", "2"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("error: unknown option '--poison-after'");
    expect(r.err).toContain("see segops kill --help");
  });
});
