import { Command, CommanderError } from "commander";
import { type ErrorCode, ExitCode, SegopsError } from "../core/errors.js";
import { VERSION } from "../core/version.js";
import { registerCommands } from "./commands/index.js";
import type { Kinds } from "./commands/kind-flags.js";
import { helpConfiguration, shortUsageAfterErrors } from "./usage.js";

/** What a program is built with. */
export interface ProgramOptions {
  /**
   * The kinds of work it runs; each whose request declares a command gets it (as `ServiceOptions.kinds`
   * gives the service's routes). @default this build's kinds (their commands from the light list)
   */
  kinds?: Kinds;
}

/**
 * Builds the `segops` program; exported so tests can drive the CLI in-process. Registrations are light:
 * each command imports its implementation when it runs, so `segops --help` starts at once.
 */
export async function buildProgram(options: ProgramOptions = {}): Promise<Command> {
  const program = new Command("segops")
    .description("Segment Ops for Apache Druid: idempotent, handoff-gated batch ingestion and backfills")
    .version(VERSION)
    // The program's own options (`--version`) only before a command: `segops kill … --version V` is the
    // kill's version filter, which the program's `--version` used to swallow (printing 0.1.0, exit 0).
    .enablePositionalOptions()
    .configureHelp(helpConfiguration)
    .exitOverride();
  await registerCommands(program, options.kinds);
  // After every command is registered: each gets its own usage line.
  shortUsageAfterErrors(program);
  return program;
}

/** Error codes that mean bad input from the user: exit 2, nothing submitted. */
const USAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "Usage",
  "InvalidSpec",
  "SpecRejected",
  "Template",
  "Interval",
  "Granularity",
  "TaskId",
  "Partition",
]);

/** Maps an error escaping a command to the architecture's exit codes. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
  if (error instanceof SegopsError) {
    if (USAGE_CODES.has(error.code)) return ExitCode.Usage;
    if (error.code === "Unreachable" || error.code === "Ledger") return ExitCode.Unreachable;
  }
  return ExitCode.SomeFailed;
}

export async function main(argv: string[], options: ProgramOptions = {}): Promise<number> {
  try {
    await (await buildProgram(options)).parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : ExitCode.Ok;
  } catch (error) {
    if (!(error instanceof CommanderError)) {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`segops: ${message}\n`);
    }
    return exitCodeFor(error);
  }
}
