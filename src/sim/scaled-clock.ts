import type { Clock } from "../core/clock.js";

/**
 * Sim time: `timeScale` sim milliseconds pass per millisecond of the base clock, measured from the moment
 * the emulator starts, so a 10 s task takes 10 ms of real time at scale 1000. With a `ManualClock` as the
 * base and scale 1, tests move sim time explicitly with `advance()`.
 */
export function scaledClock(base: Clock, timeScale: number): Clock {
  if (timeScale === 1) return base;
  const origin = base.now();
  return {
    now: () => origin + Math.floor((base.now() - origin) * timeScale),
    sleep: (ms, signal) => base.sleep(ms / timeScale, signal),
  };
}
