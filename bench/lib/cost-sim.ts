/**
 * The cost benchmark's emulator in a process of its own, as a real Druid is: the poller's event loop is then
 * not the emulator's (one process holding segops, its ledger and the emulator stalled every tick by the
 * emulator's work, at 1,000 partitions). Forked by `startCostSim`; started with its seeded history, it sends
 * the parent `{ url, startEpochMs }`, the epoch instant its sim time started from, so the parent's clock
 * (`simTime(scale, origin, { startEpochMs })`) reads the same sim time. Ends on "stop" or when the parent goes.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type HistoryOptions, seedHistory } from "../../src/sim/history.js";
import type { SimOptions } from "../../src/sim/options.js";
import { startSim } from "../../src/sim/server.js";
import { type SimTime, simTime } from "./sim-time.js";

export interface CostSimOptions {
  timeScale: number;
  originMs: number;
  sim: Omit<SimOptions, "clock" | "timeScale">;
  history: HistoryOptions;
}

export interface CostSim {
  readonly url: string;
  /** The parent's view of the emulator's sim time. */
  readonly time: SimTime;
  stop(): Promise<void>;
}

interface Ready {
  url: string;
  startEpochMs: number;
}

/** Starts the emulator with its history in a child process (tsx, as the benchmark runs). */
export async function startCostSim(options: CostSimOptions): Promise<CostSim> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [JSON.stringify(options)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once("message", (m) => resolve(m as Ready));
    child.once("exit", (code) =>
      reject(new Error(`the cost benchmark's emulator exited ${code} before it started`)),
    );
  });
  return {
    url: ready.url,
    time: simTime(options.timeScale, options.originMs, { startEpochMs: ready.startEpochMs }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.send("stop");
      }),
  };
}

async function child(options: CostSimOptions): Promise<void> {
  const time = simTime(options.timeScale, options.originMs);
  const sim = await startSim({ ...options.sim, clock: time.clock });
  time.pause();
  seedHistory(sim.engine, options.history);
  time.resume();
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await sim.close();
    process.exit(0);
  };
  process.on("message", (m) => {
    if (m === "stop") void stop();
  });
  process.on("disconnect", () => void stop());
  process.send?.({ url: sim.url, startEpochMs: time.startEpochMs() } satisfies Ready);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href)
  await child(JSON.parse(process.argv[2] ?? "{}") as CostSimOptions);
