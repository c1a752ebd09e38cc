import { DruidClient } from "../../src/druid/client.js";
import type { SimOptions } from "../../src/sim/options.js";
import { type SimHandle, startSim } from "../../src/sim/server.js";
import { type SimTime, simTime } from "./sim-time.js";

/** One emulator + one client for one benchmark variant, so each variant's counts and slots are its own. */
export interface BenchEnv {
  sim: SimHandle;
  client: DruidClient;
  time: SimTime;
}

export interface BenchEnvOptions {
  /** Sim ms per real ms. */
  timeScale: number;
  /** Emulator options (clock and timeScale are set here). */
  sim: Omit<SimOptions, "clock" | "timeScale">;
  /** Keep-alive connections of the client (the same for every variant). @default 16 */
  connections?: number;
}

export async function withBenchEnv<T>(
  options: BenchEnvOptions,
  fn: (env: BenchEnv) => Promise<T>,
): Promise<T> {
  const time = simTime(options.timeScale);
  const sim = await startSim({ ...options.sim, clock: time.clock });
  const client = new DruidClient({ url: sim.url, connections: options.connections ?? 16 });
  try {
    return await fn({ sim, client, time });
  } finally {
    await client.close();
    await sim.close();
  }
}

/** Runs `fn` over `items` with at most `limit` in flight, keeping order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T, i);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
