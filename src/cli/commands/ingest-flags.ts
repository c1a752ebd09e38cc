import { type Command, InvalidArgumentError, Option } from "commander";
import { DEFAULTS } from "../../core/defaults.js";
import {
  addDruidOptions,
  addLedgerOption,
  type DruidFlags,
  durationMs,
  durationSeconds,
  positiveInt,
} from "../options.js";
import { collect } from "./render.js";

/**
 * The flags of `run`, `backfill` and `resume` (light: commander and the flag helpers), apart from what the
 * commands do (ingest-common.ts), so that registering them loads nothing else.
 */

/** Flags shared by `run` and `backfill`. */
export interface IngestFlags extends DruidFlags {
  var: string[];
  specVersion?: string;
  prefix?: string;
  maxConcurrency: number;
  poisonAfter: number;
  handoffTimeout: number;
  tick: number;
  lease: number;
  deadline?: number;
  druidOutageTimeout: number;
  new?: boolean;
  sourceVersion?: string;
  allowEmpty?: boolean;
  maxRowDrop?: string;
  maxUnparseable: string;
  minRows: number;
  json?: boolean;
  ledger: string;
}

/** A count flag where 0 means "no minimum": plain decimal digits only. */
function nonNegativeInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n))
      throw new InvalidArgumentError(`${name} must be a whole number from 0 up, got "${value}"`);
    return n;
  };
}

/** Druid's `maxParseExceptions` is a Java int: the most rows a count may allow. */
const MAX_PARSE_EXCEPTIONS = 2_147_483_647;

/**
 * `--max-unparseable`: a count above what Druid's `maxParseExceptions` holds is refused here, naming the
 * flag (it was refused later as an invalid spec, naming only `spec.tuningConfig.maxParseExceptions`);
 * anything else is checked with the request (a count or a percentage).
 */
function unparseableCount(value: string): string {
  if (/^[0-9]+$/.test(value) && Number(value) > MAX_PARSE_EXCEPTIONS)
    throw new InvalidArgumentError(
      `--max-unparseable: a row count is at most ${MAX_PARSE_EXCEPTIONS} (Druid's maxParseExceptions), got "${value}"`,
    );
  return value;
}

/**
 * What a command's work uses of the run-control flags: an ingestion's partitions are dead-lettered after
 * `--poison-after` failures and wait for their handoff; a segment operation's are not dead-lettered, and
 * only some wait for their segments to be served (compact, rollback; a kill deletes). `--help` offers what
 * the command uses, nothing else.
 */
export interface RunControl {
  /** Defaults come from the stored job (`resume`). */
  fromJob?: boolean;
  /** `--poison-after`. @default true */
  poison?: boolean;
  /** `--handoff-timeout`, with its meaning in words. @default the ingest's */
  handoff?: string | false;
}

/** Flags that steer a run (not part of a job's identity): shared by run, backfill, resume and the kinds'. */
export function addRunControlOptions(command: Command, defaults: RunControl = {}): Command {
  const concurrency = "partitions in flight at once";
  const poison = "dead-letter after N same-class failures";
  command.option(
    "--max-concurrency <n>",
    defaults.fromJob ? `${concurrency} (default: the job's)` : concurrency,
    positiveInt("--max-concurrency"),
    ...(defaults.fromJob ? [] : [DEFAULTS.maxConcurrency]),
  );
  if (defaults.poison !== false)
    command.option(
      "--poison-after <n>",
      defaults.fromJob ? `${poison} (default: the job's)` : poison,
      positiveInt("--poison-after"),
      ...(defaults.fromJob ? [] : [DEFAULTS.poisonAfter]),
    );
  if (defaults.handoff !== false)
    command.option(
      "--handoff-timeout <s>",
      defaults.handoff ?? "fail a partition not queryable this long after SUCCESS",
      durationSeconds("--handoff-timeout"),
      DEFAULTS.handoffTimeoutMs / 1000,
    );
  return command
    .option(
      "--druid-outage-timeout <s>",
      "stop (exit 4, resumable) when Druid has not answered for this long",
      durationSeconds("--druid-outage-timeout"),
      DEFAULTS.druidOutageTimeoutMs / 1000,
    )
    .addOption(
      new Option("--tick <ms>", "polling cadence in ms")
        .argParser(durationMs("--tick"))
        .default(DEFAULTS.tickMs)
        .hideHelp(),
    )
    .addOption(
      new Option("--lease <ms>", "ledger lease: how long a crashed process's partitions stay locked")
        .argParser(durationMs("--lease"))
        .default(DEFAULTS.leaseMs)
        .hideHelp(),
    )
    .option(
      "--deadline <s>",
      "stop after S seconds, leaving the job resumable (exit 3)",
      durationSeconds("--deadline"),
    )
    .option("--json", "print the final report as JSON (no progress display)");
}

export function addIngestOptions(command: Command): Command {
  addDruidOptions(command);
  addLedgerOption(command);
  command
    .option("--var <k=v>", "template variable (repeatable)", collect, [])
    .option("--spec-version <v>", "spec version: changing it forces new Druid task ids")
    .option("--prefix <p>", "Druid task id prefix", "segops")
    .option(
      "--max-unparseable <n|p%>",
      "rows with parse errors a partition may have: a count (handed to Druid as maxParseExceptions) or a percentage",
      unparseableCount,
      "0",
    )
    .option("--min-rows <n>", "fewest rows a partition must ingest", nonNegativeInt("--min-rows"), 0)
    .option(
      "--source-version <v>",
      "the input's version (an upstream run id, a file's ETag): the same version reattaches, another is new work (default: fingerprint local and http inputs)",
    )
    .option(
      "--max-row-drop <p%>",
      "undo a replace that shrinks its interval by more than this share of the rows served before (default: only a drop to nothing is refused)",
    )
    .option(
      "--allow-empty",
      "let a partition whose input yields no rows replace live data (refused otherwise, nothing submitted)",
    )
    .option("--new", "start a new job (new Druid task ids) instead of resuming the one these inputs name");
  return addRunControlOptions(command);
}

/** `backfill`'s flags. */
export type BackfillFlags = IngestFlags & { from: string; to: string; granularity?: string };
