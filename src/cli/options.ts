import { readFileSync } from "node:fs";
import { type Command, InvalidArgumentError, Option } from "commander";
import { UsageError } from "../core/errors.js";
import type { DruidAuth, DruidHttpOptions } from "../druid/http.js";

/**
 * Flags shared by every command that talks to Druid or the ledger. Secrets are never taken from argv
 * (other users can read it in `ps`): passwords and tokens come from the environment or a file.
 */

export const DEFAULT_LEDGER = "sqlite:.segops/ledger.db";

export function addDruidOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--druid <url>", "Druid Router (or single-server) base URL").env("SEGOPS_DRUID_URL"),
    )
    .option("--overlord <url>", "Overlord base URL (defaults to --druid)")
    .option("--coordinator <url>", "Coordinator base URL (defaults to --druid)")
    .option("--broker <url>", "Broker base URL for SQL (defaults to --druid)")
    .addOption(
      new Option(
        "--user <name>",
        "basic-auth user; password from SEGOPS_DRUID_PASSWORD or --password-file",
      ).env("SEGOPS_DRUID_USER"),
    )
    .option("--password-file <path>", "file holding the basic-auth password")
    .option("--token-file <path>", "file holding a bearer token (or set SEGOPS_DRUID_TOKEN)")
    .option("--ca-file <path>", "PEM file with extra CA certificates for https URLs")
    .option("--insecure", "do not verify TLS certificates (throwaway test clusters only)");
}

export function addLedgerOption(command: Command): Command {
  return command.addOption(
    new Option("--ledger <url>", "ledger URL: sqlite:PATH or postgres://…")
      .env("SEGOPS_LEDGER")
      .default(DEFAULT_LEDGER),
  );
}

export interface DruidFlags {
  druid?: string;
  overlord?: string;
  coordinator?: string;
  broker?: string;
  user?: string;
  passwordFile?: string;
  tokenFile?: string;
  caFile?: string;
  insecure?: boolean;
}

function readSecret(path: string, flag: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new UsageError(
      `cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
    );
  }
}

function checkUrl(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag}: "${value}" is not a URL; expected e.g. http://localhost:8888`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`${flag}: expected an http:// or https:// URL, got ${url.protocol}`);
  }
  if (url.username || url.password) {
    throw new UsageError(`${flag}: do not put credentials in the URL; use --user with SEGOPS_DRUID_PASSWORD`);
  }
  return value.replace(/\/+$/, "");
}

/** Turns the shared flags (and environment) into client options; throws UsageError naming the flag. */
export function druidOptionsFrom(flags: DruidFlags, env: NodeJS.ProcessEnv = process.env): DruidHttpOptions {
  const url = checkUrl("--druid", flags.druid);
  const overlordUrl = checkUrl("--overlord", flags.overlord) ?? url;
  const coordinatorUrl = checkUrl("--coordinator", flags.coordinator) ?? url;
  const brokerUrl = checkUrl("--broker", flags.broker) ?? url;
  if (!overlordUrl || !coordinatorUrl) {
    throw new UsageError(
      "no Druid URL: pass --druid URL (or --overlord and --coordinator), or set SEGOPS_DRUID_URL",
    );
  }
  let auth: DruidAuth | undefined;
  const token = flags.tokenFile ? readSecret(flags.tokenFile, "--token-file") : env.SEGOPS_DRUID_TOKEN;
  if (flags.user) {
    const password = flags.passwordFile
      ? readSecret(flags.passwordFile, "--password-file")
      : env.SEGOPS_DRUID_PASSWORD;
    if (password === undefined) {
      throw new UsageError("--user needs a password: set SEGOPS_DRUID_PASSWORD or pass --password-file");
    }
    auth = { type: "basic", username: flags.user, password };
  } else if (token) {
    auth = { type: "bearer", token };
  }
  const options: DruidHttpOptions = { overlordUrl, coordinatorUrl };
  if (url) options.url = url;
  if (brokerUrl) options.brokerUrl = brokerUrl;
  if (auth) options.auth = auth;
  if (flags.caFile || flags.insecure) {
    options.tls = { ...(flags.caFile ? { caFile: flags.caFile } : {}), rejectUnauthorized: !flags.insecure };
  }
  return options;
}

/** Commander argument parsers for numeric flags, naming the flag in their error. */
export function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1)
      throw new InvalidArgumentError(`${name} must be a whole number from 1 up, got "${value}"`);
    return n;
  };
}

export function positiveNumber(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${name} must be a number above 0, got "${value}"`);
    return n;
  };
}
