import { main, type ProgramOptions } from "../../src/cli/main.js";

/** What `segops …` run in this process printed, and its exit code. */
export interface CliOutcome {
  code: number;
  out: string;
  err: string;
}

/**
 * `segops …` in this process (fast: no Node start-up, so fuzzers can run hundreds): stdout and stderr
 * captured, `process.exitCode` left as it was. `options` as `main` takes them (e.g. the kinds it runs).
 */
export async function segopsInProcess(args: string[], options?: ProgramOptions): Promise<CliOutcome> {
  let out = "";
  let err = "";
  const { write: stdout } = process.stdout;
  const { write: stderr } = process.stderr;
  const exitCode = process.exitCode;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await main(["node", "segops", ...args], options), out, err };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
    process.exitCode = exitCode;
  }
}
