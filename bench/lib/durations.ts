import { seededRng } from "../../src/sim/rng.js";

/**
 * A seeded mix of batch-task durations (sim ms), shaped like a day of ingestion: most tasks short, a
 * tail of long ones. 60 % take 1–3 min, 30 % 3–6 min, 10 % 6–10 min. The first task is pinned to the
 * maximum, so every N has the same slowest task.
 */
export function mixedDurations(n: number, seed: number, maxMs = 600_000): number[] {
  const rng = seededRng(seed);
  const minute = maxMs / 10;
  const out = Array.from({ length: n }, () => {
    const r = rng.next();
    const [lo, hi] = r < 0.6 ? [1, 3] : r < 0.9 ? [3, 6] : [6, 10];
    return Math.round((lo + (hi - lo) * rng.next()) * minute);
  });
  if (n > 0) out[0] = maxMs;
  return out;
}

/**
 * `k` durations spread evenly over the distribution of `all` (midpoint quantiles), so a small sample run
 * sequentially has about the same mean as the whole set and can be scaled up to it honestly.
 */
export function representativeSample(all: readonly number[], k: number): number[] {
  const sorted = [...all].sort((a, b) => a - b);
  const size = Math.min(k, sorted.length);
  return Array.from(
    { length: size },
    (_, j) => sorted[Math.min(sorted.length - 1, Math.floor(((j + 0.5) / size) * sorted.length))] as number,
  );
}

/**
 * Seeded log-normal durations (sim ms): `exp(ln(median) + sigma · z)` with z standard normal (Box–Muller),
 * clamped to [minMs, maxMs]. Batch task durations are skewed this way: most near the median, a long tail.
 */
export function logNormalDurations(
  n: number,
  seed: number,
  options: { medianMs: number; sigma: number; minMs?: number; maxMs?: number },
): number[] {
  const rng = seededRng(seed);
  const mu = Math.log(options.medianMs);
  const lo = options.minMs ?? 0;
  const hi = options.maxMs ?? Number.POSITIVE_INFINITY;
  return Array.from({ length: n }, () => {
    const u1 = Math.max(rng.next(), 1e-12);
    const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * rng.next());
    return Math.round(Math.min(hi, Math.max(lo, Math.exp(mu + options.sigma * z))));
  });
}
