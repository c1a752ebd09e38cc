import { performance } from "node:perf_hooks";
import type { Clock } from "../../src/core/clock.js";

/**
 * Sim time with a known origin. The emulator's own `timeScale` hides the moment its scaled clock started,
 * so a benchmark could not map a task's finish (a sim-time event) back to the real instant the poller
 * should have seen it. This clock is handed to `startSim` with `timeScale` left at 1: sim time is
 * `origin + (real elapsed − real time paused) × scale`, and the mapping is exact in both directions.
 *
 * `pause()` freezes sim time, so submitting a thousand tasks (which costs the emulator real time) does not
 * let the early ones run before the last is in: after `resume()` they all run from the same sim instant.
 */
export interface SimTime {
  /** The clock to pass as `startSim({ clock })`. */
  readonly clock: Clock;
  readonly scale: number;
  /** Real time now, in ms on the `performance.now()` axis. */
  realNow(): number;
  /** Freezes sim time until `resume()`. */
  pause(): void;
  resume(): void;
  /** The real instant (`performance.now()` axis) at which sim time reached `simMs` (since the last resume). */
  toReal(simMs: number): number;
  /** The sim time at the real instant `realMs` (not inside a pause). */
  toSim(realMs: number): number;
  /** Real milliseconds that `simMs` of sim time take. */
  realDuration(simMs: number): number;
  /**
   * The epoch instant (ms, `performance.timeOrigin` + `performance.now()`) at which sim time was `originMs`,
   * pauses so far taken out: another process's `simTime(scale, originMs, { startEpochMs })` then keeps the
   * same sim time (both read the machine's one clock), so an emulator in its own process and the poller agree.
   */
  startEpochMs(): number;
}

export function simTime(
  scale: number,
  originMs: number = Date.now(),
  at?: { startEpochMs: number },
): SimTime {
  if (!(scale > 0 && Number.isFinite(scale))) throw new RangeError(`Expected a scale above 0, got ${scale}`);
  const p0 = at ? at.startEpochMs - performance.timeOrigin : performance.now();
  let pausedTotal = 0;
  let pausedAt: number | null = null;
  const running = (real: number) => real - p0 - pausedTotal - (pausedAt === null ? 0 : real - pausedAt);
  const clock: Clock = {
    now: () => Math.floor(originMs + running(performance.now()) * scale),
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const onAbort = () => {
          clearTimeout(timer);
          reject(signal?.reason);
        };
        const timer = setTimeout(
          () => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          },
          Math.max(0, ms / scale),
        );
        signal?.addEventListener("abort", onAbort, { once: true });
      }),
  };
  return {
    clock,
    scale,
    realNow: () => performance.now(),
    pause: () => {
      pausedAt ??= performance.now();
    },
    resume: () => {
      if (pausedAt === null) return;
      pausedTotal += performance.now() - pausedAt;
      pausedAt = null;
    },
    toReal: (simMs) => p0 + pausedTotal + (simMs - originMs) / scale,
    toSim: (realMs) => originMs + running(realMs) * scale,
    realDuration: (simMs) => simMs / scale,
    startEpochMs: () => performance.timeOrigin + p0 + pausedTotal,
  };
}
