import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { registerServe } from "../../src/cli/commands/serve.js";
import { applyConfigFile, type ServeFlags } from "../../src/cli/commands/serve-action.js";

/** `segops serve --stall-timeout`: seconds, from the flag, `SEGOPS_STALL_TIMEOUT` or the config file. */

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

async function parse(args: string[], config?: string): Promise<ServeFlags> {
  const program = new Command("segops").exitOverride().configureOutput({ writeErr: () => undefined });
  registerServe(program);
  const serve = program.commands.find((c) => c.name() === "serve") as Command;
  serve.exitOverride().configureOutput({ writeErr: () => undefined });
  serve.action(() => undefined); // parse only: nothing is served
  await program.parseAsync(["serve", ...args], { from: "user" });
  if (config) applyConfigFile(serve, config);
  return serve.opts<ServeFlags>();
}

function file(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "segops-config-")), "serve.yaml");
  writeFileSync(path, text);
  return path;
}

describe("segops serve --stall-timeout", () => {
  it("300 s by default; the flag, then SEGOPS_STALL_TIMEOUT, then the config file set it", async () => {
    expect((await parse([])).stallTimeout).toBe(300);
    expect((await parse([], file("stall-timeout: 90\n"))).stallTimeout).toBe(90);
    expect((await parse([], file("stallTimeout: 45.5\n"))).stallTimeout).toBe(45.5);
    process.env.SEGOPS_STALL_TIMEOUT = "120";
    expect((await parse([], file("stall-timeout: 90\n"))).stallTimeout).toBe(120);
    expect((await parse(["--stall-timeout", "600"], file("stall-timeout: 90\n"))).stallTimeout).toBe(600);
  });

  it("a duration above 0 or nothing", async () => {
    await expect(parse(["--stall-timeout", "0"])).rejects.toThrow(/--stall-timeout/);
    await expect(parse(["--stall-timeout", "soon"])).rejects.toThrow(/--stall-timeout/);
    await expect(parse([], file("stall-timeout: -5\n"))).rejects.toThrow(/stall-timeout: --stall-timeout/);
  });
});
