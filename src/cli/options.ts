import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { type Command, InvalidArgumentError, Option } from "commander";
import { DEFAULTS } from "../core/defaults.js";
import { UsageError } from "../core/errors.js";
import type { DruidAuth, DruidHttpOptions } from "../druid/http.js";
import { redactUserinfo } from "../druid/redact.js";
import { parseRequestBudget } from "../druid/request-budget.js";

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
    .option("--insecure", "do not verify TLS certificates (throwaway test clusters only)")
    .addOption(
      new Option(
        "--druid-request-budget <n/s>",
        "at most N requests a second to each Druid host; calls past it wait (status lookups first, admission reads last)",
      ).argParser((raw) => {
        try {
          return parseRequestBudget("--druid-request-budget", raw);
        } catch (error) {
          throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
        }
      }),
    )
    .addOption(
      new Option(
        "--retry-budget <s>",
        "seconds one Druid call (and the startup check) may spend waiting between retries",
      )
        .argParser(durationSeconds("--retry-budget"))
        .hideHelp(),
    )
    .addOption(
      new Option("--retry-base <ms>", "first retry's backoff ceiling in ms (doubles per retry)")
        .argParser(durationMs("--retry-base"))
        .hideHelp(),
    );
}

/** `--druid-outage-timeout`: one default and help text for every command that waits on Druid. */
export function addDruidOutageTimeoutOption(command: Command): Command {
  return command.option(
    "--druid-outage-timeout <s>",
    "stop (exit 4, resumable) when Druid has not answered for this long",
    durationSeconds("--druid-outage-timeout"),
    DEFAULTS.druidOutageTimeoutMs / 1000,
  );
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
  retryBudget?: number;
  retryBase?: number;
  /** `--druid-request-budget`: requests a second per Druid host. */
  druidRequestBudget?: number;
}

/** Why a file could not be read, in words, with the OS code for searching. */
function unreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    ENOENT: "no such file",
    EISDIR: "it is a directory",
    EACCES: "permission denied",
    ENOTDIR: "a parent is not a directory",
  };
  return code ? `${words[code] ?? "unreadable"} (${code})` : "unreadable";
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Reads `--ca-file` once and checks it holds PEM certificates, so a wrong file fails as bad input now. */
function readCaFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`--ca-file ${path}: cannot read it: ${unreadable(error)}`, { flag: "--ca-file" });
  }
  const blocks = text.match(PEM_CERT) ?? [];
  if (blocks.length === 0) {
    throw new UsageError(
      `--ca-file ${path}: no PEM certificate in it: expected at least one "-----BEGIN CERTIFICATE-----" block`,
      { flag: "--ca-file" },
    );
  }
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new UsageError(
        `--ca-file ${path}: certificate ${i + 1} of ${blocks.length} is not a valid PEM certificate: ${(error as Error).message}`,
        { flag: "--ca-file" },
      );
    }
  }
  return text;
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
    // Userinfo redacted: a password typed into a URL must not come back in the error.
    throw new UsageError(
      `${flag}: malformed URL "${redactUserinfo(value)}"; expected e.g. http://localhost:8888`,
      { flag },
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    // `localhost:8888` parses as the scheme "localhost:": say the whole value, and what to write.
    const shown = redactUserinfo(value);
    const fix = value.includes("://") ? "" : `: add the scheme, e.g. http://${shown}`;
    throw new UsageError(`${flag}: expected http(s)://host:port, got ${shown}${fix}`, { flag });
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
  // An empty path is refused as unreadable, never taken for "no file" (the variable would be used instead).
  const token =
    flags.tokenFile !== undefined ? readSecret(flags.tokenFile, "--token-file") : env.SEGOPS_DRUID_TOKEN;
  if (flags.user) {
    const password =
      flags.passwordFile !== undefined
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
  if (flags.druidRequestBudget !== undefined) options.requestBudget = { perSecond: flags.druidRequestBudget };
  if (flags.caFile !== undefined || flags.insecure) {
    const ca = flags.caFile !== undefined ? readCaFile(flags.caFile) : undefined;
    options.tls = { ...(ca !== undefined ? { ca } : {}), rejectUnauthorized: !flags.insecure };
  }
  return options;
}

/**
 * Commander argument parsers for numeric flags, naming the flag in their error. Only plain decimal
 * digits: `Number()` alone would also take "0x2", "1e3", " 3", "+3" and "" (as 0).
 */
export function positiveInt(name: string, max?: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n < 1 || (max !== undefined && n > max))
      throw new InvalidArgumentError(
        `${name} must be a whole number from 1 ${max !== undefined ? `to ${max}` : "up"}, got "${value}"`,
      );
    return n;
  };
}

export function positiveNumber(name: string, max?: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^[0-9]+(\.[0-9]+)?$/.test(value) || !Number.isFinite(n) || n <= 0 || (max !== undefined && n > max))
      throw new InvalidArgumentError(
        `${name} must be a number above 0${max !== undefined ? ` and at most ${max}` : ""} in decimal digits (e.g. 30 or 0.5), got "${value}"`,
      );
    return n;
  };
}

/**
 * The longest wait Node can set a timer for (2^31 − 1 ms, 24.8 days): a longer one fires after 1 ms
 * (`TimeoutOverflowWarning`), so a huge `--tick` or `--lease` made a busy loop of the run.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A duration flag in milliseconds: a whole number from 1 to {@link MAX_TIMER_MS}. */
export function durationMs(name: string) {
  return positiveInt(name, MAX_TIMER_MS);
}

/** A duration flag in seconds: above 0, at most {@link MAX_TIMER_MS} ms (2,147,483 s). */
export function durationSeconds(name: string) {
  return positiveNumber(name, Math.floor(MAX_TIMER_MS / 1000));
}
