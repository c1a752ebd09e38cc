import { type Command, InvalidArgumentError, Option } from "commander";
import { DEFAULTS } from "../../core/defaults.js";
import { addDruidOptions, addLedgerOption, durationMs, durationSeconds, positiveInt } from "../options.js";
import type { ServeFlags } from "./serve-action.js";

/**
 * The largest `--max-body` (1 GiB): a request body is buffered whole, so a larger limit is no limit. The
 * bounds of `--max-concurrency` and `--poison-after` are those of a job's own (`run --max-concurrency`).
 */
const MAX_BODY_BYTES = 1024 * 1024 * 1024;

/**
 * `segops serve`: the HTTP API, the metrics and a worker for every job of its cluster in the ledger.
 * Settings come from flags, then the environment (`SEGOPS_*`), then `--config FILE` (JSON or YAML, keys
 * named as the flags), then the defaults (docs/operations.md, "Configuration").
 */
export function registerServe(program: Command): void {
  const command = program
    .command("serve")
    .description(
      "run the HTTP API (OpenAPI at /openapi.json), /metrics and a worker for every job of its Druid",
    );
  // In this order in --help: the process, its limits and timeouts, then the hidden tuning knobs.
  for (const option of [...processOptions(), ...limitOptions(), ...hiddenOptions()])
    command.addOption(option);
  addDruidOptions(command);
  addLedgerOption(command);
  command.action(async (flags: ServeFlags, cmd: Command) =>
    (await import("./serve-action.js")).serveAction(flags, cmd),
  );
}

/** Where the service listens, who may call it, how much it runs at once and how it is configured. */
function processOptions(): Option[] {
  return [
    new Option("--host <host>", "address to bind (loopback unless a token is set)")
      .env("SEGOPS_HOST")
      .default("127.0.0.1"),
    new Option("--port <port>", "port to listen on (0: any free one)")
      .env("SEGOPS_PORT")
      .argParser(port)
      .default(7077),
    new Option(
      "--api-token-file <path>",
      "file holding the API's bearer token (or set SEGOPS_API_TOKEN)",
    ).env("SEGOPS_API_TOKEN_FILE"),
    new Option("--max-concurrency <n>", "partitions in flight at once in this process")
      .env("SEGOPS_MAX_CONCURRENCY")
      .argParser(positiveInt("--max-concurrency", 10_000))
      .default(DEFAULTS.maxConcurrency),
    // The old name, as every other command spells it `--max-concurrency`: still taken, with a warning.
    new Option("--concurrency <n>", "deprecated: use --max-concurrency")
      .env("SEGOPS_CONCURRENCY")
      .argParser(positiveInt("--concurrency", 10_000))
      .hideHelp(),
    new Option("--log-level <level>", "log level of the JSON log lines on stdout")
      .env("SEGOPS_LOG_LEVEL")
      .choices(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
      .default("info"),
    new Option("--config <file>", "settings file (JSON or YAML; flags and environment win)").env(
      "SEGOPS_CONFIG",
    ),
  ];
}

/** When partitions are failed, handed back or dead-lettered, and how large a request may be. */
function limitOptions(): Option[] {
  return [
    new Option("--poison-after <n>", "dead-letter after N same-class failures")
      .argParser(positiveInt("--poison-after", 1000))
      .default(DEFAULTS.poisonAfter),
    new Option("--handoff-timeout <s>", "fail a partition not queryable this long after SUCCESS")
      .argParser(durationSeconds("--handoff-timeout"))
      .default(DEFAULTS.handoffTimeoutMs / 1000),
    new Option("--druid-outage-timeout <s>", "hand partitions back while Druid has not answered this long")
      .argParser(durationSeconds("--druid-outage-timeout"))
      .default(DEFAULTS.druidOutageTimeoutMs / 1000),
    new Option(
      "--stall-timeout <s>",
      "not ready (/readyz 503) once partitions have waited this long for a worker that claims none",
    )
      .env("SEGOPS_STALL_TIMEOUT")
      .argParser(durationSeconds("--stall-timeout"))
      .default(DEFAULTS.stallTimeoutMs / 1000),
    new Option("--drain-timeout <s>", "longest a SIGTERM drain may take before connections are cut")
      .argParser(durationSeconds("--drain-timeout"))
      .default(30),
    new Option("--max-body <bytes>", "largest request body accepted (413 above)")
      .argParser(positiveInt("--max-body", MAX_BODY_BYTES))
      .default(4 * 1024 * 1024),
    new Option(
      "--max-partitions-per-request <n>",
      "most partitions one run or backfill request may plan (400 above)",
    )
      .env("SEGOPS_MAX_PARTITIONS_PER_REQUEST")
      .argParser(positiveInt("--max-partitions-per-request", 100_000))
      .default(DEFAULTS.maxPartitionsPerRequest),
  ];
}

/** Cadences for tests and tuning, left out of --help. */
function hiddenOptions(): Option[] {
  return [
    new Option("--tick <ms>", "polling cadence in ms")
      .argParser(durationMs("--tick"))
      .default(DEFAULTS.tickMs)
      .hideHelp(),
    new Option("--lease <ms>", "ledger lease in ms")
      .argParser(durationMs("--lease"))
      .default(DEFAULTS.leaseMs)
      .hideHelp(),
  ];
}

function port(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n > 65535)
    throw new InvalidArgumentError(`--port must be a whole number from 0 to 65535, got "${value}"`);
  return n;
}
