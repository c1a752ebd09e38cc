import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { pino } from "pino";
import YAML from "yaml";
import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import { VERSION } from "../../core/version.js";
import { isLoopback } from "../../serve/auth.js";
import { startService } from "../../serve/server.js";
import { DEFAULT_RETRY_BUDGET_S, openLedger } from "../context.js";
import { type DruidFlags, druidOptionsFrom } from "../options.js";

/** `segops serve`'s implementation, loaded when it runs (its flags are in serve.ts). */

export interface ServeFlags extends DruidFlags {
  host: string;
  port: number;
  apiTokenFile?: string;
  maxConcurrency: number;
  /** The deprecated name of `maxConcurrency` (`--concurrency`, `SEGOPS_CONCURRENCY`, `concurrency:`). */
  concurrency?: number;
  logLevel: string;
  config?: string;
  poisonAfter: number;
  handoffTimeout: number;
  druidOutageTimeout: number;
  stallTimeout: number;
  drainTimeout: number;
  maxBody: number;
  maxPartitionsPerRequest: number;
  tick: number;
  lease: number;
  ledger: string;
}

/**
 * Applies `--config` under flags and environment: a setting the command line or a `SEGOPS_*` variable
 * gave is kept; one left at its default takes the file's value, parsed as the flag would parse it.
 */
export function applyConfigFile(cmd: Command, path: string): void {
  let value: unknown;
  try {
    value = YAML.parse(readFileSync(path, "utf8"), { schema: "core", uniqueKeys: true });
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`--config ${path}: cannot read it: ${why}`, { flag: "--config" });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new UsageError(`--config ${path}: expected a mapping of settings (e.g. port: 7077)`, {
      flag: "--config",
    });
  const byName = new Map(cmd.options.map((o) => [o.attributeName(), o]));
  for (const o of cmd.options) if (o.long) byName.set(o.long.replace(/^--/, ""), o);
  for (const [key, raw] of Object.entries(value)) {
    const option = byName.get(key);
    if (!option || key === "config") {
      throw new UsageError(
        `--config ${path}: unknown setting "${key}" (settings are named as serve's flags)`,
        {
          flag: "--config",
        },
      );
    }
    const name = option.attributeName();
    const refuse = (problem: string): never => {
      throw new UsageError(`--config ${path}: ${key}: ${problem}`, { flag: "--config" });
    };
    // A setting has the type its flag's value has: a switch is true or false; any other setting is one
    // string (or a number, written as text). A list, a mapping or null was handed on as it was: `druid: 0`
    // crashed the URL check (exit 1, "text.lastIndexOf is not a function"), `insecure: "no"` turned TLS
    // verification off, and `port: [80]` was read as 80.
    let parsed: unknown;
    if (option.isBoolean()) {
      if (typeof raw !== "boolean") refuse(`expected true or false, got ${describeValue(raw)}`);
      parsed = raw;
    } else {
      if (typeof raw !== "string" && !(typeof raw === "number" && Number.isFinite(raw)))
        refuse(`expected a single value (text or a number), got ${describeValue(raw)}`);
      try {
        // The flag's own parser (numbers, choices): the file's value means what the flag's would.
        parsed = option.parseArg ? option.parseArg(String(raw), undefined) : String(raw);
      } catch (error) {
        refuse((error as Error).message);
      }
    }
    // Checked even when a flag or variable overrides it: a wrong file is refused, not half-read.
    const source = cmd.getOptionValueSource(name);
    if (source !== undefined && source !== "default") continue;
    cmd.setOptionValueWithSource(name, parsed, "config");
  }
}

/**
 * `--concurrency` (or `SEGOPS_CONCURRENCY`, or `concurrency:` in the config file) is the old name of
 * `--max-concurrency`: taken where the new name was not set, with the warning to print; the new name wins.
 */
export function deprecatedConcurrency(cmd: Command, f: ServeFlags): string | undefined {
  if (f.concurrency === undefined) return undefined;
  const source = cmd.getOptionValueSource("concurrency");
  const old =
    source === "env"
      ? "SEGOPS_CONCURRENCY"
      : source === "config"
        ? "concurrency (in --config)"
        : "--concurrency";
  const now =
    source === "env"
      ? "SEGOPS_MAX_CONCURRENCY"
      : source === "config"
        ? "max-concurrency"
        : "--max-concurrency";
  const newSource = cmd.getOptionValueSource("maxConcurrency");
  if (newSource === undefined || newSource === "default") {
    f.maxConcurrency = f.concurrency;
    return `warning: ${old} is deprecated: use ${now} (the same setting; every command now names it so)`;
  }
  return `warning: ${old} is deprecated and ignored: ${now} is set (${f.maxConcurrency})`;
}

/** A config file's value in words, for a refusal (never more than a few characters of it). */
function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return value.length > 20 ? `"${value.slice(0, 20)}…"` : `"${value}"`;
  return String(value);
}

/**
 * A secret's own variable (`SEGOPS_API_TOKEN`, `SEGOPS_DRUID_TOKEN`, `SEGOPS_DRUID_PASSWORD`) outranks a
 * file named only in the config file, as the environment outranks the config file for every setting; a
 * file named on the command line or in its `SEGOPS_*_FILE` variable still wins.
 */
export function secretVariablesOverConfig(cmd: Command, env: NodeJS.ProcessEnv = process.env): void {
  const secrets = [
    ["apiTokenFile", "SEGOPS_API_TOKEN"],
    ["tokenFile", "SEGOPS_DRUID_TOKEN"],
    ["passwordFile", "SEGOPS_DRUID_PASSWORD"],
  ] as const;
  for (const [file, variable] of secrets) {
    if (cmd.getOptionValueSource(file) === "config" && env[variable] !== undefined)
      cmd.setOptionValueWithSource(file, undefined, "env");
  }
}

function readToken(flags: ServeFlags): string | null {
  // An empty path is a file that cannot be read, not "no token file": it served without a token.
  if (flags.apiTokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.apiTokenFile, "utf8").trim();
    } catch (error) {
      throw new UsageError(
        `--api-token-file ${flags.apiTokenFile}: cannot read it: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
        { flag: "--api-token-file" },
      );
    }
    if (text.length < 16) throw new UsageError("--api-token-file: the token must be at least 16 characters");
    return text;
  }
  const env = process.env.SEGOPS_API_TOKEN;
  if (env !== undefined && env.trim().length < 16)
    throw new UsageError("SEGOPS_API_TOKEN: the token must be at least 16 characters");
  return env?.trim() || null;
}

export async function serveAction(flags: ServeFlags, cmd: Command): Promise<void> {
  // An empty path (`SEGOPS_CONFIG=`) is a file that cannot be read, not "no config file": it served with
  // none of the settings the operator meant to give.
  if (flags.config !== undefined) {
    applyConfigFile(cmd, flags.config);
    secretVariablesOverConfig(cmd);
  }
  const f = cmd.opts<ServeFlags>();
  const warning = deprecatedConcurrency(cmd, f);
  if (warning) process.stderr.write(`${warning}\n`);
  const token = readToken(f);
  // Refused here, naming the flag, before the ledger is opened (the service refuses it too).
  if (token === null && !isLoopback(f.host))
    throw new UsageError(
      `--host ${f.host}: refusing to serve on a non-loopback address without a token: anyone who can reach it could start and cancel work; pass --api-token-file (or set SEGOPS_API_TOKEN), or bind 127.0.0.1`,
      { flag: "--host" },
    );
  const druid = druidOptionsFrom(f);
  const log = pino({ level: f.logLevel, base: { service: "segops" } });
  const store = await openLedger(f.ledger);
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    service = await startService({
      host: f.host,
      port: f.port,
      store,
      druid: {
        ...druid,
        retry: { maxAttempts: 5, maxTotalWaitMs: (f.retryBudget ?? DEFAULT_RETRY_BUDGET_S) * 1000 },
        logger: log,
      },
      clock: systemClock,
      log,
      token,
      concurrency: f.maxConcurrency,
      tickMs: f.tick,
      leaseMs: f.lease,
      handoffTimeoutMs: f.handoffTimeout * 1000,
      poisonAfter: f.poisonAfter,
      outageTimeoutMs: f.druidOutageTimeout * 1000,
      stallTimeoutMs: f.stallTimeout * 1000,
      drainTimeoutMs: f.drainTimeout * 1000,
      maxBodyBytes: f.maxBody,
      maxPartitionsPerRequest: f.maxPartitionsPerRequest,
      version: VERSION,
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  // stderr: a supervisor (and a test) learns the address without parsing the JSON log on stdout.
  process.stderr.write(`segops serve: listening on ${service.url} (owner ${service.owner})\n`);
  const onSignal = (signal: string) => () => void service.stop(signal);
  const term = onSignal("SIGTERM");
  const int = onSignal("SIGINT");
  process.once("SIGTERM", term);
  process.once("SIGINT", int);
  try {
    await service.stopped;
  } finally {
    process.off("SIGTERM", term);
    process.off("SIGINT", int);
    await store.close();
  }
  if (service.worker.failure !== undefined) {
    process.exitCode = 4;
    const why =
      service.worker.failure instanceof Error
        ? service.worker.failure.message
        : String(service.worker.failure);
    process.stderr.write(`segops serve: stopped on a ledger error: ${why}\n`);
  }
}
