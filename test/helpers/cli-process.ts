import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = fileURLToPath(new URL("../../src/cli/bin.ts", import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  /** Set once the process has exited, so condition loops never wait on a dead child. */
  exited: CliResult | null;
  /** Resolves with the exit code (or the killing signal) and everything printed. */
  done: Promise<CliResult>;
  /** What the process has printed so far (while it runs). */
  output(): { stdout: string; stderr: string };
}

/** Runs `segops …` from source in a real OS process (so it can be SIGKILLed like a crashed host). */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): CliRun {
  const child = spawn(process.execPath, ["--import", "tsx", BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const run: CliRun = {
    child,
    exited: null,
    done: Promise.resolve({ code: null, signal: null, stdout, stderr }),
    output: () => ({ stdout, stderr }),
  };
  run.done = new Promise((resolve) =>
    child.on("close", (code, signal) => {
      run.exited = { code, signal, stdout, stderr };
      resolve(run.exited);
    }),
  );
  return run;
}

/**
 * Waits for a condition that another process will make true. Not a timing assertion: the cap (60 s unless
 * given) only ends a wait that would never end, so make it generous; on a loaded machine the same work
 * takes several times as long. A wait that gives up says how long it waited and, given `state`, what it
 * saw last.
 */
export async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  options: { timeoutMs?: number; whileRunning?: CliRun; state?: () => unknown } = {},
): Promise<void> {
  const started = Date.now();
  const giveUp = started + (options.timeoutMs ?? 60_000);
  while (!(await check())) {
    const exited = options.whileRunning?.exited;
    if (exited) throw new Error(`process exited (${exited.code}) before: ${what}\n${exited.stderr}`);
    if (Date.now() > giveUp) {
      const seen = options.state ? `; it saw: ${JSON.stringify(await options.state())}` : "";
      throw new Error(
        `gave up after ${((Date.now() - started) / 1000).toFixed(1)} s waiting for: ${what}${seen}`,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The arguments of `segops run` (a range given as `interval`) or `segops backfill` (`from`/`to`) over a
 * template reading `dataDir`, against `druid`, with a SQLite ledger at `ledgerPath`: what most CLI tests
 * start from, before the flags under test.
 */
export function ingestArgs(o: {
  template: string;
  dataDir: string;
  druid: string;
  ledgerPath: string;
  range: { interval: string } | { from: string; to: string };
}): string[] {
  const range =
    "interval" in o.range
      ? ["run", o.template, "--interval", o.range.interval]
      : ["backfill", o.template, "--from", o.range.from, "--to", o.range.to];
  return [
    ...range,
    "--var",
    `dataDir=${o.dataDir}`,
    "--druid",
    o.druid,
    "--ledger",
    `sqlite:${o.ledgerPath}`,
  ];
}
