import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Command } from "commander";
import { UsageError } from "../../core/errors.js";
import type { FaultRule, SimOptions } from "../../sim/index.js";

/**
 * This module is also `sim`'s registration, loaded for every `segops` start: the emulator is imported
 * when it is started, and yaml (synchronously, `simOptionsFromFlags` is sync) when a faults file is read.
 */
const requireLazily = createRequire(import.meta.url);

/** Raw `segops sim` flags as commander hands them over. */
export interface SimFlags {
  port?: string;
  host?: string;
  capacity?: string;
  workers?: string;
  timeScale?: string;
  seed?: string;
  handoffDelay?: string;
  faults?: string;
  dataDir?: string;
  druidVersion?: string;
  virtualStorage?: boolean;
}

function number(
  flag: string,
  value: string | undefined,
  check: (n: number) => boolean,
  expected: string,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || !check(n))
    throw new UsageError(`${flag} must be ${expected}, got "${value}"`, { flag, value });
  return n;
}

/** Reads a JSON or YAML file holding an array of fault rules. */
export function readFaultsFile(path: string): FaultRule[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read --faults file ${path}: ${(error as Error).message}`, { path });
  }
  let rules: unknown;
  try {
    rules = (requireLazily("yaml") as typeof import("yaml")).parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`--faults file ${path} is neither JSON nor YAML: ${(error as Error).message}`, {
      path,
    });
  }
  if (!Array.isArray(rules))
    throw new UsageError(`--faults file ${path} must hold an array of fault rules`, { path });
  return rules as FaultRule[];
}

/** Turns flags into `startSim` options, with usage errors naming the flag. */
export function simOptionsFromFlags(flags: SimFlags): SimOptions {
  const int = (n: number) => Number.isInteger(n);
  const options: SimOptions = {
    port: number(
      "--port",
      flags.port ?? "8888",
      (n) => int(n) && n >= 0 && n < 65536,
      "a port number (0–65535)",
    ),
    host: flags.host ?? "127.0.0.1",
  };
  const capacity = number("--capacity", flags.capacity, (n) => int(n) && n >= 1, "a whole number from 1");
  const workers = number("--workers", flags.workers, (n) => int(n) && n >= 1, "a whole number from 1");
  const timeScale = number("--time-scale", flags.timeScale, (n) => n > 0, "a number above 0");
  const seed = number("--seed", flags.seed, int, "a whole number");
  const handoff = number(
    "--handoff-delay",
    flags.handoffDelay,
    (n) => n >= 0,
    "a number of sim milliseconds from 0",
  );
  const druidVersion = number(
    "--druid-version",
    flags.druidVersion,
    (n) => int(n) && n > 0,
    "a Druid major version",
  );
  if (capacity !== undefined) options.capacity = capacity;
  if (workers !== undefined) options.workers = workers;
  if (timeScale !== undefined) options.timeScale = timeScale;
  if (seed !== undefined) options.seed = seed;
  if (handoff !== undefined) options.handoffDelayMs = handoff;
  if (druidVersion !== undefined) options.druidVersion = druidVersion;
  if (flags.virtualStorage) options.virtualStorage = true;
  if (flags.faults) options.faults = readFaultsFile(flags.faults);
  if (flags.dataDir) options.dataDir = flags.dataDir;
  return options;
}

/**
 * What a sped-up emulator hides: data becomes queryable a handoff after SUCCESS, seconds on a real Druid, a
 * blink here. A check that queries right after SUCCESS passes on the emulator and fails on Druid, so say so.
 */
export function handoffRaceNote(timeScale: number, handoffDelayMs: number): string | null {
  if (timeScale <= 1) return null;
  const real = handoffDelayMs / timeScale;
  const shown = real >= 1000 ? `${(real / 1000).toFixed(1)} s` : `${Math.round(real)} ms`;
  return `note: at --time-scale ${timeScale} a task's data becomes queryable ${shown} after SUCCESS (a handoff of ${handoffDelayMs / 1000} s of Druid time); on a real Druid it takes seconds or more, so a query right after SUCCESS that passes here can find nothing there: wait for handoff (segops run/backfill do; segops wait --handoff), or run the emulator at --time-scale 1 to see the race`;
}

/** Runs the emulator until `stop` aborts, printing its URL; closes cleanly. */
export async function serveSim(
  options: SimOptions,
  stop: AbortSignal,
  write: (line: string) => void,
): Promise<void> {
  const emulator = await import("../../sim/index.js");
  let sim: Awaited<ReturnType<typeof emulator.startSim>>;
  try {
    sim = await emulator.startSim(options);
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new UsageError(
        `port ${options.port} is already in use on ${options.host ?? "127.0.0.1"}; pick another with --port (0 = any free port)`,
      );
    }
    throw error;
  }
  write(
    `Druid emulator listening on ${sim.url} as Druid ${sim.druidVersion}.0.0 (Overlord, Coordinator and Broker SQL paths)`,
  );
  const note = handoffRaceNote(options.timeScale ?? 1, sim.engine.options.handoffDelayMs);
  if (note) write(note);
  if (!stop.aborted)
    await new Promise<void>((resolve) => stop.addEventListener("abort", () => resolve(), { once: true }));
  await sim.close();
  write("Druid emulator stopped");
}

export function registerSim(program: Command): void {
  program
    .command("sim")
    .description(
      "run the Druid emulator (Overlord + Coordinator + Broker SQL on one port) for trying segops without a cluster",
    )
    .option("--port <n>", "port to listen on (0 = any free port)", "8888")
    .option("--host <host>", "interface to listen on", "127.0.0.1")
    .option("--capacity <n>", "worker slots per emulated MiddleManager (default 4)")
    .option("--workers <n>", "number of emulated MiddleManagers (default 1)")
    .option(
      "--time-scale <x>",
      "sim milliseconds per real millisecond, e.g. 1000 makes a 10 s task take 10 ms (default 1)",
    )
    .option("--seed <n>", "seed for ids, durations, synthetic rows and fault rates (default 1)")
    .option("--handoff-delay <ms>", "sim ms from publish until segments are served (default 5000)")
    .option("--faults <file>", "JSON or YAML file with an array of fault rules")
    .option("--data-dir <dir>", "persist tasks and segments in this directory across restarts")
    .option(
      "--druid-version <n>",
      "Druid release to emulate, 33 to 39: its /status version and the bodies and behaviours that differ (docs/druid-versions.md; default 38)",
    )
    .option(
      "--virtual-storage",
      "the Historical runs in virtual storage mode (Druid 35 and newer): segments are announced when assigned and loaded when queried",
    )
    .action(async (flags: SimFlags) => {
      const options = simOptionsFromFlags(flags);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      try {
        await serveSim(options, stop.signal, (line) => process.stdout.write(`${line}\n`));
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
    });
}
