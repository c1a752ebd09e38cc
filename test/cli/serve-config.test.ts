import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { registerServe } from "../../src/cli/commands/serve.js";
import { applyConfigFile, type ServeFlags } from "../../src/cli/commands/serve-action.js";

/** `segops serve` settings: flags, then environment, then `--config`, then defaults. */

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

async function parse(args: string[], config?: string): Promise<ServeFlags> {
  const program = new Command("segops").exitOverride();
  registerServe(program);
  const serve = program.commands.find((c) => c.name() === "serve") as Command;
  serve.action(() => undefined); // parse only: nothing is served
  await program.parseAsync(["serve", ...args], { from: "user" });
  if (config) applyConfigFile(serve, config);
  return serve.opts<ServeFlags>();
}

function file(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "segops-config-")), name);
  writeFileSync(path, text);
  return path;
}

describe("segops serve configuration", () => {
  it("a flag beats the environment, which beats the config file, which beats the default", async () => {
    const config = file("serve.yaml", "port: 9001\nconcurrency: 3\nlog-level: debug\nhost: 127.0.0.2\n");
    process.env.SEGOPS_CONCURRENCY = "5";
    process.env.SEGOPS_HOST = "127.0.0.3";
    const flags = await parse(["--host", "127.0.0.4"], config);
    expect(flags.host).toBe("127.0.0.4"); // flag
    expect(flags.concurrency).toBe(5); // environment
    expect(flags.port).toBe(9001); // file (parsed as the flag parses it: a number)
    expect(flags.logLevel).toBe("debug"); // file, kebab-case name
    expect(flags.drainTimeout).toBe(30); // default
    const json = file("serve.json", JSON.stringify({ drainTimeout: 5, maxBody: 1024 }));
    const fromJson = await parse([], json);
    expect(fromJson.drainTimeout).toBe(5);
    expect(fromJson.maxBody).toBe(1024);
  });

  it("a bad config file is refused naming the setting: unknown, malformed, or not a mapping", async () => {
    await expect(parse([], file("a.yaml", "colour: red\n"))).rejects.toThrow(/unknown setting "colour"/);
    await expect(parse([], file("b.yaml", "port: lots\n"))).rejects.toThrow(
      /port: --port must be a whole number/,
    );
    await expect(parse([], file("c.yaml", "log-level: loud\n"))).rejects.toThrow(
      /log-level: Allowed choices are fatal, error/,
    );
    await expect(parse([], file("d.yaml", "- 1\n- 2\n"))).rejects.toThrow(/expected a mapping/);
    await expect(parse([], "/nonexistent/serve.yaml")).rejects.toThrow(/cannot read it: ENOENT/);
  });
});
