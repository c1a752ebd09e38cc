import type { Clock } from "../../src/core/clock.js";
import type { DruidClient, TaskSpec } from "../../src/druid/client.js";

/**
 * The pollers users run today, written the way their recipes write them, so segops is measured against
 * them in the same run on the same emulator. Every wait goes through the clock it is given (the benchmark's
 * scaled sim clock), so "2 s doubling to 30 s" means emulated seconds.
 */

export type BaselineOutcome = "SUCCESS" | "FAILED" | "TIMEOUT" | "DEADLINE";

export interface Seen {
  id: string;
  outcome: BaselineOutcome;
  /** Clock time (the clock handed in) at which the poller saw the outcome. */
  at: number;
}

export interface BackoffOptions {
  clock: Clock;
  /** First delay after a RUNNING answer. @default 2000 */
  initialMs?: number;
  /** The delay doubles up to this cap. @default 30000 */
  capMs?: number;
  /** Give up on one task after this long. @default 6 h */
  perTaskTimeoutMs?: number;
  /** Give up on everything at this clock time. @default never */
  deadline?: number;
}

const TERMINAL = new Set(["SUCCESS", "FAILED"]);

/**
 * Baseline 1's inner loop, the capped-backoff recipe: `GET /task/{id}/status`; terminal → done; else sleep
 * the delay (2 s, doubling to a 30 s cap) and ask again, until the per-task timeout or the overall deadline.
 */
export async function pollWithBackoff(client: DruidClient, id: string, o: BackoffOptions): Promise<Seen> {
  const started = o.clock.now();
  const cap = o.capMs ?? 30_000;
  const timeout = started + (o.perTaskTimeoutMs ?? 6 * 3_600_000);
  const deadline = o.deadline ?? Number.POSITIVE_INFINITY;
  let delay = o.initialMs ?? 2000;
  for (;;) {
    const { status } = await client.taskStatus(id);
    const now = o.clock.now();
    if (status && TERMINAL.has(status.statusCode))
      return { id, outcome: status.statusCode as BaselineOutcome, at: now };
    if (now + delay > deadline) return { id, outcome: "DEADLINE", at: now };
    if (now + delay > timeout) return { id, outcome: "TIMEOUT", at: now };
    await o.clock.sleep(delay);
    delay = Math.min(delay * 2, cap);
  }
}

/** Baselines 2 and 3's inner loop (Airflow's `DruidHook`, a naive script): GET the status every `everyMs`. */
export async function pollEvery(
  client: DruidClient,
  id: string,
  clock: Clock,
  everyMs: number,
): Promise<Seen> {
  for (;;) {
    const { status } = await client.taskStatus(id);
    if (status && TERMINAL.has(status.statusCode))
      return { id, outcome: status.statusCode as BaselineOutcome, at: clock.now() };
    await clock.sleep(everyMs);
  }
}

/**
 * A bounded pool of `size` workers over `items` (the "concurrent futures" recipe: `ThreadPoolExecutor(16)`
 * and one future per item); each worker takes the next item when its current one is done.
 */
export async function pool<T, R>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return out;
}

/** Baseline 1 as a backfill: 16 workers, each submits a spec and polls it with capped backoff, then the next. */
export function backoffBackfill(
  client: DruidClient,
  specs: readonly TaskSpec[],
  o: BackoffOptions & { poolSize?: number },
): Promise<Seen[]> {
  return pool(specs, o.poolSize ?? 16, async (spec) => {
    const { taskId } = await client.submitTask(spec);
    return pollWithBackoff(client, taskId, o);
  });
}

/** Baselines 2/3 as a backfill: submit one spec, poll it every `everyMs` until it ends, then the next. */
export async function sequentialBackfill(
  client: DruidClient,
  specs: readonly TaskSpec[],
  clock: Clock,
  everyMs: number,
): Promise<Seen[]> {
  const seen: Seen[] = [];
  for (const spec of specs) {
    const { taskId } = await client.submitTask(spec);
    seen.push(await pollEvery(client, taskId, clock, everyMs));
  }
  return seen;
}
