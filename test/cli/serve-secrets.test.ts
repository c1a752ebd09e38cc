import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { registerServe } from "../../src/cli/commands/serve.js";
import {
  applyConfigFile,
  type ServeFlags,
  secretVariablesOverConfig,
} from "../../src/cli/commands/serve-action.js";

/**
 * `segops serve`'s secrets follow the settings' order (flags > environment > config file): a secret's own
 * variable outranks a file named only in the config file; a file named by a flag or by its `SEGOPS_*_FILE`
 * variable still wins (docs/operations.md, "Configuration").
 */

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
});

async function settings(args: string[], env: Record<string, string>): Promise<ServeFlags> {
  Object.assign(process.env, env);
  const config = join(mkdtempSync(join(tmpdir(), "segops-secrets-")), "serve.yaml");
  writeFileSync(config, "api-token-file: /etc/segops/api-token\ntoken-file: /etc/segops/druid-token\n");
  const program = new Command("segops").exitOverride();
  registerServe(program);
  const serve = program.commands.find((c) => c.name() === "serve") as Command;
  serve.action(() => undefined); // parse only: nothing is served
  await program.parseAsync(["serve", ...args], { from: "user" });
  applyConfigFile(serve, config);
  secretVariablesOverConfig(serve, process.env);
  return serve.opts<ServeFlags>();
}

describe("segops serve: secrets in the config file", () => {
  it("without the secret's variable, the config file's token files are used", async () => {
    const flags = await settings([], {});
    expect(flags.apiTokenFile).toBe("/etc/segops/api-token");
    expect(flags.tokenFile).toBe("/etc/segops/druid-token");
  });

  it("SEGOPS_API_TOKEN and SEGOPS_DRUID_TOKEN outrank token files named only in the config file", async () => {
    const flags = await settings([], {
      SEGOPS_API_TOKEN: "x".repeat(16),
      SEGOPS_DRUID_TOKEN: "y".repeat(16),
    });
    expect(flags.apiTokenFile).toBeUndefined();
    expect(flags.tokenFile).toBeUndefined();
  });

  it("a token file from a flag or from SEGOPS_API_TOKEN_FILE still wins over SEGOPS_API_TOKEN", async () => {
    const flag = await settings(["--api-token-file", "/run/token"], { SEGOPS_API_TOKEN: "x".repeat(16) });
    expect(flag.apiTokenFile).toBe("/run/token");
    const variable = await settings([], {
      SEGOPS_API_TOKEN: "x".repeat(16),
      SEGOPS_API_TOKEN_FILE: "/run/env-token",
    });
    expect(variable.apiTokenFile).toBe("/run/env-token");
  });
});
