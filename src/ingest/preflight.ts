import { formatInterval, type Interval } from "../core/interval.js";
import type { JsonObject } from "../ledger/types.js";
import { externInputs } from "../spec/extern.js";
import type { LiveData } from "../work/timeline.js";

/**
 * The pre-flight of a replace (pure): before a partition's task may replace the live data of its
 * interval, Druid's own sampler reads the partition's input (any input source Druid can read, with
 * Druid's credentials: docs/druid-api.md §2.12) and segops judges what it yields. An input that
 * provably yields no row inside the interval, over an interval that serves data now, is refused: a replace
 * would publish a tombstone over the live rows (Druid's `dropExisting`) or overshadow them with nothing.
 * Where the sample is not conclusive (cut at its row limit) the partition goes on and the data gates decide.
 */

/** Rows the sampler reads at most per partition; Druid's own ceiling is 5,000 (`SamplerConfig`). */
export const PREFLIGHT_ROWS = 1_000;
/** Druid stops reading the input after this long and answers with what it read. */
export const PREFLIGHT_TIMEOUT_MS = 10_000;

/** The evidence a pre-flight keeps in the partition's progress. */
export interface PreflightEvidence {
  /** Rows the sampler read (including unparseable ones). */
  rowsRead: number;
  /** Rows that parsed and indexed. */
  rowsIndexed: number;
  /** Indexed rows whose time falls inside the partition's interval. */
  rowsInInterval: number;
  /** The sampler read the whole input (fewer rows than asked): the counts are the input's, not a sample's. */
  complete: boolean;
  /** Rows carried the partition's time (native); false: only whether the input has rows is known (SQL). */
  timed?: boolean;
  /** The first parse errors the sampler reported. */
  parseErrors: string[];
  live: LiveData;
}

/** One row of the sampler's answer, as segops reads it. */
export interface SampledRow {
  parsed?: Record<string, unknown> | null;
  unparseable?: boolean | null;
  error?: string | null;
}

/** The sampler's answer, as segops reads it. */
export interface SampleAnswer {
  numRowsRead: number;
  numRowsIndexed: number;
  data: readonly SampledRow[];
}

/** What the pre-flight reads of a partition's payload (the ingest payload's fields). */
export interface PreflightPayload {
  kind?: "sql";
  mode: "replace" | "append";
  allowEmpty?: boolean;
  spec: JsonObject;
}

/** Whether a partition gets a pre-flight: a replace over live data, unless the user allowed it to empty. */
export function needsPreflight(payload: PreflightPayload, live: LiveData): boolean {
  return payload.mode === "replace" && payload.allowEmpty !== true && live.segments > 0;
}

/** The sampler request of a partition, and whether its rows carry the partition's time. */
export interface SamplerRequest {
  spec: JsonObject;
  /**
   * True for a native spec (its timestampSpec gives each row its time); false for SQL, whose time comes
   * from the SELECT: the sample then says only whether the input has rows at all.
   */
  timed: boolean;
}

/**
 * The sampler request for a partition: a native one's own ingestion spec (dataSchema with the timestamp
 * and transform, ioConfig with the input source and format); an SQL one's `EXTERN` input (when it reads
 * exactly one) with a timestamp column that never exists and a fixed `missingValue`, as Druid's web
 * console samples raw input. Null when there is nothing to sample.
 */
export function samplerSpecOf(payload: PreflightPayload): SamplerRequest | null {
  const samplerConfig = { numRows: PREFLIGHT_ROWS, timeoutMs: PREFLIGHT_TIMEOUT_MS };
  if (payload.kind === "sql") {
    const query = payload.spec.query;
    const inputs = typeof query === "string" ? externInputs(query) : [];
    const only = inputs.length === 1 ? inputs[0] : undefined;
    if (!only) return null;
    return {
      timed: false,
      spec: {
        type: "index",
        spec: {
          dataSchema: {
            dataSource: "segops_preflight",
            timestampSpec: {
              column: "!!!_segops_no_such_column_!!!",
              missingValue: "2000-01-01T00:00:00.000Z",
            },
            dimensionsSpec: {},
            granularitySpec: { rollup: false },
          },
          ioConfig: { type: "index", inputSource: only.inputSource, inputFormat: only.inputFormat },
        },
        samplerConfig,
      },
    };
  }
  const inner = payload.spec.spec as JsonObject | undefined;
  const io = inner?.ioConfig as JsonObject | undefined;
  if (!inner?.dataSchema || !io?.inputSource) return null;
  // Druid registers one sampler spec, `index` (an IndexIngestionSpec): the parallel task's ioConfig is read
  // as an `index` one (the same input fields), and its tuningConfig, which sampling does not need, is left out.
  const { inputSource, inputFormat } = io;
  return {
    timed: true,
    spec: {
      type: "index",
      spec: {
        dataSchema: inner.dataSchema,
        ioConfig: { type: "index", inputSource, ...(inputFormat !== undefined ? { inputFormat } : {}) },
      },
      samplerConfig,
    },
  };
}

/**
 * The sampler's answer judged against the partition's interval. `elapsedMs` is how long the sampler took:
 * Druid stops reading silently at its timeout (`TimedShutoffInputSourceReader`), so an answer that came
 * near it may be a cut read, never proof of an empty input.
 */
export function judgeSample(
  answer: SampleAnswer,
  interval: Interval,
  live: LiveData,
  elapsedMs: number,
  timed = true,
): PreflightEvidence {
  let inInterval = 0;
  const parseErrors: string[] = [];
  for (const row of answer.data) {
    if (row.unparseable) {
      if (row.error && parseErrors.length < 3) parseErrors.push(row.error);
      continue;
    }
    const t = row.parsed?.__time;
    if (typeof t === "number" && t >= interval.start && t < interval.end) inInterval++;
  }
  return {
    rowsRead: answer.numRowsRead,
    rowsIndexed: answer.numRowsIndexed,
    rowsInInterval: inInterval,
    complete: answer.numRowsRead < PREFLIGHT_ROWS && elapsedMs < PREFLIGHT_TIMEOUT_MS * 0.8,
    timed,
    parseErrors,
    live,
  };
}

/** Null when the partition may go on; otherwise why it is refused, in words a user can act on. */
export function refusal(
  evidence: PreflightEvidence,
  interval: Interval,
  sourceDescription: string,
): string | null {
  if (!evidence.complete) return null;
  if (evidence.timed === false ? evidence.rowsRead > 0 : evidence.rowsInInterval > 0) return null;
  const where = formatInterval(interval);
  const yielded =
    evidence.rowsRead === 0
      ? `its input (${sourceDescription}) yields no rows`
      : evidence.rowsIndexed === 0
        ? `none of the ${evidence.rowsRead} row(s) its input (${sourceDescription}) yields parses${evidence.parseErrors[0] ? ` (first error: ${evidence.parseErrors[0]})` : ""}`
        : `none of the ${evidence.rowsIndexed} row(s) its input (${sourceDescription}) yields falls inside the interval`;
  const { live } = evidence;
  const rows = live.rows !== null ? `${live.rows.toLocaleString("en-US")} row(s) in ` : "";
  return `refused to replace ${where}: ${yielded}, while ${rows}${live.segments} segment(s) of version ${live.versions.join(", ")} are live there; nothing was submitted and the live data is untouched. If the input has not landed yet, rerun once it has (changed input is new work); if the interval is meant to become empty, rerun with --allow-empty (API: "allowEmpty": true)`;
}

/** The input source in a few words, without secrets: type and where (never credentials or properties). */
export function describeInputSource(payload: PreflightPayload): string {
  const source =
    payload.kind === "sql"
      ? typeof payload.spec.query === "string"
        ? externInputs(payload.spec.query)[0]?.inputSource
        : undefined
      : (((payload.spec.spec as JsonObject | undefined)?.ioConfig as JsonObject | undefined)?.inputSource as
          | JsonObject
          | undefined);
  if (!source) return "no input source";
  if (source.type === "local") {
    const parts = [
      typeof source.baseDir === "string" ? `baseDir ${source.baseDir}` : null,
      typeof source.filter === "string" ? `filter ${source.filter}` : null,
      Array.isArray(source.files) ? `${source.files.length} file(s)` : null,
    ].filter((p) => p !== null);
    return `local ${parts.join(", ")}`;
  }
  const uris = Array.isArray(source.uris)
    ? source.uris
    : Array.isArray(source.prefixes)
      ? source.prefixes
      : null;
  return `${String(source.type)}${uris ? `, ${uris.length} location(s)` : ""}`;
}
