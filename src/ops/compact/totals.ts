import type { Interval } from "../../core/interval.js";
import type { DruidClient } from "../../druid/client.js";
import type { DataSegment } from "../../druid/types.js";
import type { ChunkTotals } from "./types.js";

/**
 * What a compaction must keep: a chunk's rows and the sum of every numeric column, read through the Broker
 * before and after, and the verdict on a difference (the compaction's doing, or another writer's).
 */

const NUMERIC = new Set(["BIGINT", "DOUBLE", "FLOAT", "DECIMAL", "INTEGER", "REAL"]);

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Rows and the sum of every numeric column of `interval`, as the Broker answers them. */
export async function chunkTotals(
  client: DruidClient,
  datasource: string,
  interval: Interval,
  signal: AbortSignal,
): Promise<ChunkTotals> {
  const columns = await client.sql<{ COLUMN_NAME: string; DATA_TYPE: string }>(
    `SELECT "COLUMN_NAME", "DATA_TYPE" FROM INFORMATION_SCHEMA.COLUMNS WHERE "TABLE_SCHEMA" = 'druid' AND "TABLE_NAME" = ?`,
    { parameters: [{ type: "VARCHAR", value: datasource }], signal },
  );
  const numeric = columns.rows
    .filter((c) => c.COLUMN_NAME !== "__time" && NUMERIC.has(c.DATA_TYPE))
    .map((c) => c.COLUMN_NAME)
    .sort();
  const sums = numeric.map((c, i) => `, SUM(${quoted(c)}) AS "s${i}"`).join("");
  const result = await client.sql<Record<string, unknown>>(
    `SELECT COUNT(*) AS "rows"${sums} FROM ${quoted(datasource)} WHERE "__time" >= ? AND "__time" < ?`,
    {
      // TIMESTAMP parameters are epoch milliseconds: Druid 33 fails on strings (docs/druid-api.md §3.6).
      parameters: [
        { type: "TIMESTAMP", value: interval.start },
        { type: "TIMESTAMP", value: interval.end },
      ],
      signal,
    },
  );
  const row = result.rows[0] ?? {};
  return {
    rows: Number(row.rows ?? 0),
    sums: Object.fromEntries(
      numeric.map((c, i) => {
        const v = row[`s${i}`];
        return [c, v === null || v === undefined ? null : Number(v)];
      }),
    ),
  };
}

/**
 * Whether compaction kept the data: the same column totals (floating sums to 1e-9 relative: compaction
 * adds rows in another order) and the same rows — or fewer, where the compacted segments are rolled up
 * (rows with equal dimensions in two segments become one; their metrics add up).
 */
export function sameData(before: ChunkTotals, after: ChunkTotals, rolledUp: boolean): string | null {
  if (after.rows > before.rows || (!rolledUp && after.rows !== before.rows))
    return `rows ${before.rows} → ${after.rows}`;
  const names = new Set([...Object.keys(before.sums), ...Object.keys(after.sums)]);
  for (const name of [...names].sort()) {
    const a = before.sums[name] ?? null;
    const b = after.sums[name] ?? null;
    if (a === b) continue;
    if (a === null || b === null) return `SUM(${name}) ${a} → ${b}`;
    if (Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))) return `SUM(${name}) ${a} → ${b}`;
  }
  return null;
}

/** What the audit concludes from the totals and the chunk's segments (see {@link compactionVerdict}). */
export type CompactionVerdict =
  | { kind: "same" }
  | { kind: "superseded"; versions: string[]; changed: string }
  | { kind: "rewritten"; changed: string }
  | { kind: "changed"; changed: string };

/**
 * Tells "compaction changed the data" from "another writer changed the chunk" (pure). The measured totals
 * are of the versions live at `measure`; a version newer than those that is not the compaction's own (its
 * output carries `lastCompactionState`), found used or unused in the chunk, is another writer's: it replaced
 * the chunk after it was measured, so the totals cannot be compared (the compaction may well have run on
 * its data). Live segments not written by a compaction with no such version are an append into the chunk:
 * measure and compact again. Only totals that differ under the compaction's own version are an alarm.
 * @param live the chunk's live segments now. @param seen every segment of the chunk now, used or unused.
 */
export function compactionVerdict(o: {
  before: ChunkTotals;
  after: ChunkTotals;
  measured: readonly string[];
  live: readonly DataSegment[];
  seen: readonly DataSegment[];
}): CompactionVerdict {
  const changed = sameData(o.before, o.after, rolledUp(o.live));
  if (changed === null) return { kind: "same" };
  const newest = [...o.measured].sort().at(-1) ?? "";
  const own = new Set(
    [...o.live, ...o.seen].filter((s) => s.lastCompactionState && s.version > newest).map((s) => s.version),
  );
  const foreign = [
    ...new Set(o.seen.filter((s) => s.version > newest && !own.has(s.version)).map((s) => s.version)),
  ].sort();
  if (foreign.length > 0) return { kind: "superseded", versions: foreign, changed };
  if (!o.live.every((s) => s.lastCompactionState)) return { kind: "rewritten", changed };
  return { kind: "changed", changed };
}

/** Whether the segments are a rolled-up compaction's output: rows with equal dimensions were merged. */
export function rolledUp(segments: readonly DataSegment[]): boolean {
  return (
    segments.length > 0 &&
    segments.every((s) => {
      const g = (s.lastCompactionState as { granularitySpec?: { rollup?: unknown } } | undefined)
        ?.granularitySpec;
      return g?.rollup === true;
    })
  );
}
