/** Small pure summaries for benchmark figures. */

/** The q-quantile (0..1) by nearest rank; NaN for an empty list. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export function sum(values: readonly number[]): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : sum(values) / values.length;
}

export interface LatencySummary {
  p50: number;
  p95: number;
  max: number;
}

export function summarize(values: readonly number[]): LatencySummary {
  return { p50: quantile(values, 0.5), p95: quantile(values, 0.95), max: quantile(values, 1) };
}

/** Request counts from `sim.stats().requests` whose `METHOD /pattern` key matches. */
export function countRequests(requests: Record<string, number>, match: (key: string) => boolean): number {
  let n = 0;
  for (const [key, count] of Object.entries(requests)) if (match(key)) n += count;
  return n;
}

const OVERLORD = "/druid/indexer/v1/";

export const isOverlord = (key: string): boolean => key.includes(OVERLORD);
export const isCoordinator = (key: string): boolean => key.includes("/druid/coordinator/v1/");
/** Status lookups: bulk `POST /taskStatus` and per-task `GET /task/{id}/status`. */
export const isStatusLookup = (key: string): boolean =>
  key === `POST ${OVERLORD}taskStatus` ||
  (key.startsWith("GET ") && key.endsWith("/status") && isOverlord(key));
