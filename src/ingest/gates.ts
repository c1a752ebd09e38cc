import type { JsonObject } from "../ledger/types.js";

/**
 * Data gates: "done" is decided on Druid's row counters, not on its SUCCESS. Druid's native batch default
 * `maxParseExceptions` is unlimited, so a day of corrupt input SUCCEEDS with 0 rows; these gates turn that
 * into a failed partition with the evidence. Pure.
 *
 * Druid's counters are disjoint (`RowIngestionMeters`, docs `ingestion/tasks.md#task-reports`):
 * `processed` rows parsed cleanly, `processedWithError` were ingested with a bad column, `unparseable`
 * could not be parsed at all, `thrownAway` were filtered out or outside the intervals on purpose.
 */

export interface RowStats {
  processed: number;
  processedWithError: number;
  unparseable: number;
  thrownAway: number;
}

/** How many parse errors a partition may have: a count, or a share of the rows it read. */
export type UnparseableLimit = { kind: "count"; max: number } | { kind: "percent"; max: number };

export interface DataGates {
  /** Rows with a parse error (unparseable + ingested with an error) allowed per partition. @default 0 */
  maxUnparseable: UnparseableLimit;
  /** Fewest rows a partition must ingest (0 = any number; an empty input is still fine). @default 0 */
  minRows: number;
  /**
   * The most a replace may shrink its interval, in percent of the rows it served before (`--max-row-drop`).
   * @default none (only a drop to nothing is refused, unless `--allow-empty`)
   */
  maxRowDrop?: number;
}

/**
 * Why the default is 0: a partition with a parse error is not complete, and only an absolute limit can be
 * handed to Druid (`maxParseExceptions`), which then fails the task at once — before a replace swaps a good
 * day for a bad one. A percentage is checked after the task, when its segments are already published.
 */
export const DEFAULT_GATES: DataGates = { maxUnparseable: { kind: "count", max: 0 }, minRows: 0 };

/** Parses `--max-unparseable`: `N` (rows) or `P%` (of the rows read). Null when malformed. */
export function parseUnparseableLimit(text: string): UnparseableLimit | null {
  const percent = /^(\d+(?:\.\d+)?)%$/.exec(text);
  if (percent) {
    const max = Number(percent[1]);
    return max <= 100 ? { kind: "percent", max } : null;
  }
  return /^\d+$/.test(text) ? { kind: "count", max: Number(text) } : null;
}

export function formatUnparseableLimit(limit: UnparseableLimit): string {
  return limit.kind === "count" ? String(limit.max) : `${limit.max}%`;
}

/** Parses `--max-row-drop`: `P%`, a percentage from 0 to 100. Null when malformed. */
export function parseRowDrop(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)%$/.exec(text);
  const p = m ? Number(m[1]) : Number.NaN;
  return Number.isFinite(p) && p <= 100 ? p : null;
}

/**
 * `--max-row-drop`: the rows a replace ingested against the rows its interval served before. Ingested
 * rows are counted before rollup and served ones after it, so with rollup a drop can only look smaller
 * than it is: the gate never refuses more than it should. Null when it passes or cannot be judged.
 */
export function checkRowDrop(
  ingested: number | null,
  before: number | null,
  maxDrop: number | undefined,
): string | null {
  if (maxDrop === undefined || ingested === null || before === null || before === 0) return null;
  const drop = ((before - ingested) / before) * 100;
  if (drop <= maxDrop) return null;
  return `${ingested} row(s) ingested where ${before} were served: a drop of ${drop.toFixed(1)}%, more than --max-row-drop ${maxDrop}%`;
}

/** Rows the attempt ingested (before rollup). */
export function rowsIngested(s: RowStats): number {
  return s.processed + s.processedWithError;
}

/** Rows with a parse error, as Druid counts them against `maxParseExceptions`. */
export function parseErrors(s: RowStats): number {
  return s.unparseable + s.processedWithError;
}

export function describeRowStats(s: RowStats): string {
  return `processed ${s.processed}, with errors ${s.processedWithError}, unparseable ${s.unparseable}, thrown away ${s.thrownAway}`;
}

/** The first verdict that fails, or null when the counters pass every gate. */
export function checkDataGates(
  stats: RowStats,
  gates: DataGates,
  firstErrors: readonly string[] = [],
): string | null {
  const read = stats.processed + stats.processedWithError + stats.unparseable + stats.thrownAway;
  const ingested = rowsIngested(stats);
  const errors = parseErrors(stats);
  const evidence = `(${describeRowStats(stats)})${firstErrors.length > 0 ? `; first parse errors: ${firstErrors.slice(0, 3).join(" | ")}` : ""}`;
  // Rows that were all filtered out on purpose are a legitimate empty partition; parse failures are not.
  if (ingested === 0 && stats.unparseable > 0)
    return `the input produced ${read} row(s) but none was ingested ${evidence}`;
  const limit = gates.maxUnparseable;
  const over = limit.kind === "count" ? errors > limit.max : read > 0 && (errors * 100) / read > limit.max;
  if (over)
    return `${errors} row(s) with parse errors exceed --max-unparseable ${formatUnparseableLimit(limit)} ${evidence}`;
  if (ingested < gates.minRows)
    return `${ingested} row(s) ingested, fewer than --min-rows ${gates.minRows} ${evidence}`;
  return null;
}

/**
 * Hands an absolute limit to Druid so it stops early (`tuningConfig.maxParseExceptions`), and asks it to
 * keep a few parse errors for the report (`maxSavedParseExceptions`), unless the spec sets them. Returns
 * the tuningConfig to render; the rendered values are part of the spec and so of the task id.
 */
export function tuningWithGates(tuning: JsonObject | undefined, gates: DataGates): JsonObject {
  const out: JsonObject = { ...(tuning ?? {}) };
  const unset = (key: string) => out[key] === undefined || out[key] === null;
  if (unset("maxParseExceptions") && gates.maxUnparseable.kind === "count")
    out.maxParseExceptions = gates.maxUnparseable.max;
  if (unset("maxSavedParseExceptions")) out.maxSavedParseExceptions = 5;
  return out;
}

/**
 * The first parse-error messages of a report's `unparseableEvents` (`{phase: [event…]}`): Druid writes
 * `ParseExceptionReport` objects (`details`, `errorType`, `input`); older versions and the emulator, strings.
 */
export function firstParseErrors(unparseableEvents: unknown, limit = 5): string[] {
  if (!unparseableEvents || typeof unparseableEvents !== "object") return [];
  const out: string[] = [];
  for (const list of Object.values(unparseableEvents as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue;
    for (const e of list) {
      if (out.length >= limit) return out;
      if (typeof e === "string") out.push(e);
      else if (e && typeof e === "object") {
        const r = e as { details?: unknown; message?: unknown };
        const detail = Array.isArray(r.details) ? r.details.find((d) => typeof d === "string") : undefined;
        const text = typeof detail === "string" ? detail : typeof r.message === "string" ? r.message : null;
        if (text) out.push(text);
      }
    }
  }
  return out;
}
