import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { pino } from "pino";
import YAML from "yaml";
import { systemClock } from "../../core/clock.js";
import { UsageError } from "../../core/errors.js";
import { startService } from "../../serve/server.js";
import { DEFAULT_RETRY_BUDGET_S, openLedger } from "../context.js";
import { type DruidFlags, druidOptionsFrom } from "../options.js";

/** `segops serve`'s implementation, loaded when it runs (its flags are in serve.ts). */

export interface ServeFlags extends DruidFlags {
  host: string;
  port: number;
  apiTokenFile?: string;
  concurrency: number;
  logLevel: string;
  config?: string;
  poisonAfter: number;
  handoffTimeout: number;
  druidOutageTimeout: number;
  drainTimeout: number;
  maxBody: number;
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
    const source = cmd.getOptionValueSource(name);
    if (source !== undefined && source !== "default") continue;
    let parsed: unknown = raw;
    try {
      // The flag's own parser (numbers, choices): the file's value means what the flag's would.
      if (option.parseArg) parsed = option.parseArg(String(raw), undefined);
    } catch (error) {
      throw new UsageError(`--config ${path}: ${key}: ${(error as Error).message}`, { flag: "--config" });
    }
    cmd.setOptionValueWithSource(name, parsed, "config");
  }
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
  if (flags.apiTokenFile) {
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
  if (flags.config) {
    applyConfigFile(cmd, flags.config);
    secretVariablesOverConfig(cmd);
  }
  const f = cmd.opts<ServeFlags>();
  const token = readToken(f);
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
      concurrency: f.concurrency,
      tickMs: f.tick,
      leaseMs: f.lease,
      handoffTimeoutMs: f.handoffTimeout * 1000,
      poisonAfter: f.poisonAfter,
      outageTimeoutMs: f.druidOutageTimeout * 1000,
      drainTimeoutMs: f.drainTimeout * 1000,
      maxBodyBytes: f.maxBody,
      version: "0.1.0",
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
