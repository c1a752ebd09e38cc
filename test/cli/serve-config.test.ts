import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { registerServe } from "../../src/cli/commands/serve.js";
import {
  applyConfigFile,
  deprecatedConcurrency,
  type ServeFlags,
} from "../../src/cli/commands/serve-action.js";
import { segopsInProcess } from "../helpers/cli-in-process.js";

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
    const config = file("serve.yaml", "port: 9001\nmax-concurrency: 3\nlog-level: debug\nhost: 127.0.0.2\n");
    process.env.SEGOPS_MAX_CONCURRENCY = "5";
    process.env.SEGOPS_HOST = "127.0.0.3";
    const flags = await parse(["--host", "127.0.0.4"], config);
    expect(flags.host).toBe("127.0.0.4"); // flag
    expect(flags.maxConcurrency).toBe(5); // environment
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

describe("serve's --max-concurrency, named as every other command names it", () => {
  async function parsed(args: string[], config?: string) {
    const program = new Command("segops").exitOverride();
    registerServe(program);
    const serve = program.commands.find((c) => c.name() === "serve") as Command;
    serve.action(() => undefined);
    await program.parseAsync(["serve", ...args], { from: "user" });
    if (config) applyConfigFile(serve, config);
    const flags = serve.opts<ServeFlags>();
    return { flags, warning: deprecatedConcurrency(serve, flags) };
  }

  it("takes the old --concurrency (flag, variable or config key), with a warning naming the new one", async () => {
    const flag = await parsed(["--concurrency", "3"]);
    expect(flag.flags.maxConcurrency).toBe(3);
    expect(flag.warning).toBe(
      "warning: --concurrency is deprecated: use --max-concurrency (the same setting; every command now names it so)",
    );
    process.env.SEGOPS_CONCURRENCY = "4";
    const env = await parsed([]);
    expect(env.flags.maxConcurrency).toBe(4);
    expect(env.warning).toMatch(/^warning: SEGOPS_CONCURRENCY is deprecated: use SEGOPS_MAX_CONCURRENCY/);
    delete process.env.SEGOPS_CONCURRENCY;
    const config = await parsed([], file("old.yaml", "concurrency: 6\n"));
    expect(config.flags.maxConcurrency).toBe(6);
    expect(config.warning).toMatch(
      /^warning: concurrency \(in --config\) is deprecated: use max-concurrency/,
    );
  });

  it("the new name wins over the old, and says the old one is ignored", async () => {
    const both = await parsed(["--max-concurrency", "2", "--concurrency", "9"]);
    expect(both.flags.maxConcurrency).toBe(2);
    expect(both.warning).toBe(
      "warning: --concurrency is deprecated and ignored: --max-concurrency is set (2)",
    );
    expect((await parsed(["--max-concurrency", "2"])).warning).toBeUndefined();
  });

  it("help offers --max-concurrency, not the old name", async () => {
    const r = await segopsInProcess(["serve", "--help"]);
    expect(r.out).toContain("--max-concurrency <n>");
    expect(r.out).not.toContain("--concurrency");
  });
});
