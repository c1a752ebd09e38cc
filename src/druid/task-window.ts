/**
 * A `createdTimeInterval` for `GET /druid/indexer/v1/tasks` that covers every task created since a moment and no
 * more. Druid keeps only the interval's length and counts it back from its own now (`TaskQueryTool`,
 * docs/druid-api.md §12), and without one it lists every complete task of the last
 * `recentlyFinishedThreshold` (24 h): on a busy cluster thousands, growing with the cluster's history. A window
 * from `since` to now, with `marginMs` on either side for the skew between segops' clock and the Overlord's,
 * keeps the list to the tasks that can matter.
 */
export const CREATED_WINDOW_MARGIN_MS = 3_600_000;

export function createdSince(sinceMs: number, nowMs: number, marginMs = CREATED_WINDOW_MARGIN_MS): string {
  if (!Number.isFinite(sinceMs) || !Number.isFinite(nowMs) || !(marginMs >= 0))
    throw new RangeError(
      `Expected finite times and a margin from 0 up, got since ${sinceMs}, now ${nowMs}, margin ${marginMs}`,
    );
  const from = Math.min(sinceMs, nowMs) - marginMs;
  return `${new Date(from).toISOString()}/${new Date(nowMs + marginMs).toISOString()}`;
}
