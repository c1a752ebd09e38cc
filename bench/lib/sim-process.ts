import { type ChildProcess, spawn } from "node:child_process";

/** `segops sim` running in a process of its own (so its CPU is not the measured process's). */
export interface SimProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** SIGTERM (the emulator saves its state), SIGKILL after 5 s; resolves once it exited. */
  stop(): Promise<void>;
}

/**
 * Starts `segops sim --port 0 …args` with `node …nodeArgs` and resolves with its URL once it prints the
 * "listening on" line; rejects with its stderr's start if it exits first, or after `startTimeoutMs`.
 */
export async function startSimProcess(options: {
  /** What node runs before `sim`: the compiled bin, or `--import tsx src/cli/bin.ts`. */
  nodeArgs: string[];
  args?: string[];
  cwd: string;
  /** @default 20000 */
  startTimeoutMs?: number;
}): Promise<SimProcess> {
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  const child = spawn(
    process.execPath,
    [...options.nodeArgs, "sim", "--port", "0", ...(options.args ?? [])],
    {
      cwd: options.cwd,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        child.stdout?.off("data", onData);
        resolve(m[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.on("exit", (code) => reject(new Error(`segops sim exited ${code}: ${err.trim().slice(0, 300)}`)));
    setTimeout(
      () => reject(new Error(`segops sim did not start within ${timeoutMs / 1000} s`)),
      timeoutMs,
    ).unref();
  });
  child.stdout?.resume();
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const kill = setTimeout(() => child.kill("SIGKILL"), 5000);
        child.once("exit", () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}
