import { bucketsOverlapping, type Granularity } from "../core/granularity.js";
import { formatInterval, type Interval, intersection, parseInterval } from "../core/interval.js";
import { liveTimeline, type TimelinePiece, type TimelineSegment } from "./timeline.js";

/**
 * The version audit (architecture doc, step 6): after handoff, every time chunk of the interval has exactly
 * one live version, it is ours, it is served, and nothing was appended twice. Pure: the caller fetches the
 * used segments (metadata, including overshadowed) and marks which ones the Coordinator serves.
 */

export type ViolationKind =
  | "mixed-versions"
  | "not-ours"
  | "not-served"
  | "duplicate-append"
  | "rows-mismatch"
  | "missing-version";

export interface Violation {
  chunk: string;
  kind: ViolationKind;
  message: string;
}

export interface ChunkAudit {
  interval: string;
  liveVersions: string[];
  segments: number;
  rows: number | null;
  bytes: number;
  tombstone: boolean;
  appendedPartitions: number;
  notes: string[];
}

export interface SizeBand {
  /** Smallest healthy segment, bytes. @default 300 MB */
  minBytes: number;
  /** Largest healthy segment, bytes. @default 700 MB */
  maxBytes: number;
  /** Most rows per healthy segment. @default 5,000,000 */
  maxRows: number;
}

export const DEFAULT_SIZE_BAND: SizeBand = {
  minBytes: 300 * 1024 * 1024,
  maxBytes: 700 * 1024 * 1024,
  maxRows: 5_000_000,
};

export interface AuditExpectation {
  /** The version our task published; chunks where it has segments must show it live. */
  version?: string;
  /** `append` jobs join an existing version, so the version check does not apply to them. */
  mode?: "replace" | "append";
  /** Exact live rows expected per chunk (canonical interval string → rows), when the caller knows them. */
  rowsPerChunk?: Readonly<Record<string, number>>;
}

export interface AuditInput {
  datasource: string;
  interval: Interval;
  /** Used segments overlapping the interval, including overshadowed ones (docs/druid-api.md §3.4 POST form). */
  segments: readonly TimelineSegment[];
  /** Time chunks are buckets of this granularity; without it, each live (interval, version) set is a chunk. */
  granularity?: Granularity;
  expect?: AuditExpectation;
  sizeBand?: SizeBand;
  /**
   * Where gaps are looked for. @default the interval; an audit of all time passes the span of the
   * datasource's segments, so the centuries before the first and after the last are not gaps.
   */
  gapsWithin?: Interval;
}

/** What Druid shows of a gap: no used segment is live there, or only tombstones are (a replace with no rows). */
export type DruidGapReason = "no-segments" | "tombstone";

/**
 * Why the ledger left a gap: the partition that covers it was dead-lettered, failed, was canceled or has not
 * run to its end (pending), or a kill job deleted the segments there.
 */
export type LedgerGapReason = "dead-lettered" | "failed" | "canceled" | "pending" | "killed";

export type GapReason = DruidGapReason | LedgerGapReason;

/**
 * A part of the audited interval with no live data. Without a granularity a gap is a merged uncovered
 * stretch; with one, a stretch is cut at its buckets; a gap the ledger explains is one partition's part of
 * it, named with its job and partition (and the partition's last error, when it has one).
 */
export interface Gap {
  interval: string;
  /** Druid's reason until the ledger explains it (explainGaps); the ledger's reason replaces it. */
  reason: GapReason;
  job?: string;
  task?: string;
  error?: string;
}

/** What the ledger says about a stretch of time of the datasource: one partition of one job. */
export interface GapFact {
  interval: Interval;
  /** null: data should be there (a done ingestion): it explains nothing, and it hides older facts. */
  reason: LedgerGapReason | null;
  job: string;
  task: string;
  /** When the partition last changed: the newest fact over a stretch is the one that holds. */
  at: number;
  error?: string | null;
}

export interface CompactionCandidate {
  segment: string;
  reason: "small" | "large" | "rows";
  sizeBytes: number;
  rows: number | null;
}

export interface AuditReport {
  datasource: string;
  interval: string;
  ok: boolean;
  chunks: ChunkAudit[];
  violations: Violation[];
  compactionCandidates: CompactionCandidate[];
  totals: { rows: number | null; bytes: number; segments: number };
  /** Parts of the interval with no live data, oldest first; not a violation (`ok` ignores them). */
  gaps: Gap[];
}

function chunkWindows(input: AuditInput, pieces: TimelinePiece[]): Interval[] {
  if (input.granularity && input.granularity.kind === "period") {
    return bucketsOverlapping(input.granularity, input.interval)
      .map((b) => intersection(b, input.interval))
      .filter((b): b is Interval => b !== null);
  }
  // Without a granularity, a chunk is a run of pieces whose live segments share an interval: a MONTH
  // segment partly overshadowed by DAY segments stays one chunk, so its mixed versions are visible.
  const windows: Interval[] = [];
  for (const p of pieces) {
    if (!p.liveVersion) continue;
    const span = p.live.reduce<Interval>(
      (acc, s) => ({ start: Math.min(acc.start, s.start), end: Math.max(acc.end, s.end) }),
      { start: p.start, end: p.end },
    );
    const clipped = intersection(span, input.interval) ?? p;
    const last = windows[windows.length - 1];
    if (last && clipped.start < last.end)
      windows[windows.length - 1] = { start: last.start, end: Math.max(last.end, clipped.end) };
    else windows.push(clipped);
  }
  return windows;
}

function sumRows(segments: readonly TimelineSegment[]): number | null {
  let rows = 0;
  for (const s of segments) {
    if (s.numRows === null) return null;
    rows += s.numRows;
  }
  return rows;
}

interface Stretch extends Interval {
  reason: GapReason;
  job?: string;
  task?: string;
  error?: string;
}

const sameCause = (a: Stretch, b: Stretch) => a.reason === b.reason && a.job === b.job && a.task === b.task;

/** Adjacent stretches with the same cause as one. */
function mergeStretches(stretches: readonly Stretch[]): Stretch[] {
  const out: Stretch[] = [];
  for (const s of stretches) {
    const last = out[out.length - 1];
    if (last && last.end === s.start && sameCause(last, s)) out[out.length - 1] = { ...last, end: s.end };
    else out.push({ ...s });
  }
  return out;
}

function toGap(s: Stretch): Gap {
  return {
    interval: formatInterval(s),
    reason: s.reason,
    ...(s.job !== undefined ? { job: s.job } : {}),
    ...(s.task !== undefined ? { task: s.task } : {}),
    ...(s.error !== undefined ? { error: s.error } : {}),
  };
}

/** The parts of `within` that no live data covers, merged, cut at the granularity's buckets when given. */
function findGaps(pieces: readonly TimelinePiece[], within: Interval, granularity?: Granularity): Gap[] {
  const empty: Stretch[] = [];
  for (const p of pieces) {
    const reason: DruidGapReason | null =
      p.liveVersion === null ? "no-segments" : p.live.every((s) => s.tombstone) ? "tombstone" : null;
    const clipped = reason ? intersection(p, within) : null;
    if (reason && clipped) empty.push({ ...clipped, reason });
  }
  const merged = mergeStretches(empty);
  if (granularity?.kind !== "period") return merged.map(toGap);
  return merged.flatMap((m) =>
    bucketsOverlapping(granularity, m)
      .map((b) => intersection(b, m))
      .filter((b): b is Interval => b !== null)
      .map((b) => toGap({ ...m, ...b })),
  );
}

/**
 * Gaps with the ledger's reasons: each gap is cut where the partitions of `facts` begin and end, and each
 * piece takes the reason of the newest fact over it (a done ingestion newer than a dead letter means the
 * ledger cannot say why data is missing: the piece keeps Druid's reason). Pieces no fact explains merge
 * again; an explained piece stays one partition's. Pure.
 */
export function explainGaps(gaps: readonly Gap[], facts: readonly GapFact[]): Gap[] {
  const out: Gap[] = [];
  for (const gap of gaps) {
    const span = parseInterval(gap.interval);
    const over = facts.filter((f) => f.interval.start < span.end && span.start < f.interval.end);
    if (over.length === 0) {
      out.push(gap);
      continue;
    }
    const cuts = new Set([span.start, span.end]);
    for (const f of over) {
      if (f.interval.start > span.start && f.interval.start < span.end) cuts.add(f.interval.start);
      if (f.interval.end > span.start && f.interval.end < span.end) cuts.add(f.interval.end);
    }
    const bounds = [...cuts].sort((a, b) => a - b);
    const pieces: Stretch[] = [];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const piece = { start: bounds[i] as number, end: bounds[i + 1] as number };
      const newest = over
        .filter((f) => f.interval.start <= piece.start && piece.end <= f.interval.end)
        .reduce<GapFact | null>(
          (best, f) => (!best || f.at > best.at || (f.at === best.at && f.task > best.task) ? f : best),
          null,
        );
      pieces.push(
        newest?.reason
          ? {
              ...piece,
              reason: newest.reason,
              job: newest.job,
              task: newest.task,
              ...(newest.error ? { error: newest.error } : {}),
            }
          : { ...piece, reason: gap.reason },
      );
    }
    out.push(...mergeStretches(pieces).map(toGap));
  }
  return out;
}

const GAP_WORDS: Record<GapReason, string> = {
  "no-segments": "no segments",
  tombstone: "tombstone, no rows",
  "dead-lettered": "dead-lettered",
  failed: "failed",
  canceled: "canceled",
  pending: "not run to its end yet",
  killed: "killed",
};

/**
 * One gap in words: `2026-01-09/2026-01-10 (dead-lettered in job J: error)`; midnight times are left out,
 * and `inJob: false` leaves the job out (a job's own report).
 */
export function describeGap(gap: Gap, options: { inJob?: boolean } = {}): string {
  const where = gap.interval.replace(/T00:00:00\.000Z/g, "");
  const job =
    gap.job && options.inJob !== false ? ` ${gap.reason === "killed" ? "by" : "in"} job ${gap.job}` : "";
  const error = gap.error ? `: ${gap.error.length > 120 ? `${gap.error.slice(0, 117)}...` : gap.error}` : "";
  return `${where} (${GAP_WORDS[gap.reason]}${job}${error})`;
}

export function auditTimeline(input: AuditInput): AuditReport {
  const pieces = liveTimeline(input.segments, input.interval);
  const violations: Violation[] = [];
  const chunks: ChunkAudit[] = [];
  const liveById = new Map<string, TimelineSegment>();
  const candidates = new Map<string, CompactionCandidate>();
  const band = input.sizeBand ?? DEFAULT_SIZE_BAND;
  for (const window of chunkWindows(input, pieces)) {
    const audit = auditChunk(input, pieces, window);
    for (const s of audit.live) liveById.set(s.id, s);
    // A segment spanning several chunks is judged once, in the first.
    for (const c of chunkCompactionCandidates(audit.live, band))
      if (!candidates.has(c.segment)) candidates.set(c.segment, c);
    violations.push(...audit.violations);
    chunks.push(audit.chunk);
  }
  const missing = missingVersion(input, pieces);
  if (missing) violations.push(missing);
  const within = input.gapsWithin ? intersection(input.gapsWithin, input.interval) : input.interval;
  return {
    datasource: input.datasource,
    interval: formatInterval(input.interval),
    ok: violations.length === 0,
    chunks,
    violations,
    compactionCandidates: [...candidates.values()],
    totals: totals(chunks, liveById.size),
    gaps: within ? findGaps(pieces, within, input.granularity) : [],
  };
}

/** One time chunk: its live segments, what is wrong there and what is worth saying. */
function auditChunk(
  input: AuditInput,
  pieces: readonly TimelinePiece[],
  window: Interval,
): { chunk: ChunkAudit; violations: Violation[]; live: TimelineSegment[] } {
  const name = formatInterval(window);
  const inChunk = pieces.filter((p) => p.start < window.end && window.start < p.end);
  const versions = [
    ...new Set(inChunk.map((p) => p.liveVersion).filter((v): v is string => v !== null)),
  ].sort();
  const live = [...new Map(inChunk.flatMap((p) => p.live).map((s) => [s.id, s])).values()];
  const appended = live.filter((s) => s.partitionNum >= s.corePartitions);
  const violations: Violation[] = [];
  const notes: string[] = [];
  const chunkIssue = (kind: ViolationKind, message: string) =>
    violations.push({ chunk: name, kind, message });

  if (versions.length > 1) {
    chunkIssue(
      "mixed-versions",
      `${versions.length} live versions in one time chunk (${versions.join(", ")}): it is partly overshadowed`,
    );
  }
  const ownership = versionOwnership(input, window, inChunk, versions);
  if (ownership?.kind === "not-ours") chunkIssue("not-ours", ownership.message);
  else if (ownership) notes.push(ownership.message);
  const unserved = live.filter((s) => !s.served && !s.tombstone);
  if (unserved.length > 0) {
    chunkIssue(
      "not-served",
      `${unserved.length} live segment(s) not served: ${unserved.map((s) => s.id).join(", ")}`,
    );
  }
  for (const message of duplicateAppends(live)) chunkIssue("duplicate-append", message);
  const rows = sumRows(live.filter((s) => !s.tombstone));
  const expectedRows = input.expect?.rowsPerChunk?.[name];
  if (expectedRows !== undefined && rows !== null && rows !== expectedRows)
    chunkIssue("rows-mismatch", `live rows ${rows} differ from the expected ${expectedRows}`);
  if (appended.length > 0)
    notes.push(`${appended.length} appended partition(s) on version ${appended[0]?.version}`);
  const chunk: ChunkAudit = {
    interval: name,
    liveVersions: versions,
    segments: live.length,
    rows,
    bytes: live.reduce((sum, s) => sum + (s.tombstone ? 0 : s.sizeBytes), 0),
    tombstone: live.length > 0 && live.every((s) => s.tombstone),
    appendedPartitions: appended.length,
    notes,
  };
  return { chunk, violations, live };
}

/**
 * For a replace with a known version: a violation when another version is live where ours has segments,
 * else a note when ours has none here (older data kept, or none at all); null when there is nothing to say.
 */
function versionOwnership(
  input: AuditInput,
  window: Interval,
  inChunk: readonly TimelinePiece[],
  versions: readonly string[],
): { kind: "not-ours" | "note"; message: string } | null {
  const expect = input.expect ?? {};
  if (!expect.version || expect.mode === "append") return null;
  const oursHere = input.segments.some(
    (s) => s.version === expect.version && s.start < window.end && window.start < s.end,
  );
  const foreign = versions.filter((v) => v !== expect.version);
  if (oursHere && foreign.length > 0)
    return {
      kind: "not-ours",
      message: `live version ${foreign.join(", ")} is not ours (${expect.version})`,
    };
  if (!oursHere && versions.length > 0) {
    return {
      kind: "note",
      message: `no new rows here; older version ${versions.join(", ")} kept (replace without dropExisting)`,
    };
  }
  if (!oursHere && versions.length === 0 && inChunk.some((p) => p.liveVersion === null))
    return { kind: "note", message: "no data in this chunk" };
  return null;
}

/** Appending identical data twice leaves partition sets with identical row counts and sizes. */
function duplicateAppends(live: readonly TimelineSegment[]): string[] {
  const core = live.filter((s) => s.partitionNum < s.corePartitions);
  const appended = live.filter((s) => s.partitionNum >= s.corePartitions);
  const messages: string[] = [];
  const seen = new Map<string, string>();
  for (const s of [...core, ...appended]) {
    if (s.tombstone || s.numRows === null) continue;
    const fingerprint = `${s.start}/${s.end}/${s.numRows}/${s.sizeBytes}`;
    const twin = seen.get(fingerprint);
    if (twin && s.partitionNum >= s.corePartitions) {
      messages.push(
        `appended segment ${s.id} duplicates ${twin} (${s.numRows} rows, ${s.sizeBytes} bytes): rows are counted twice`,
      );
    }
    seen.set(fingerprint, s.id);
  }
  return messages;
}

/** A replace's version that is nowhere in the metadata store while data is live: someone else's won. */
function missingVersion(input: AuditInput, pieces: readonly TimelinePiece[]): Violation | null {
  const expect = input.expect ?? {};
  if (!expect.version || expect.mode === "append" || input.segments.some((s) => s.version === expect.version))
    return null;
  if (!pieces.some((p) => p.liveVersion !== null)) return null;
  return {
    chunk: formatInterval(input.interval),
    kind: "missing-version",
    message: `no segment of our version ${expect.version} is in the metadata store`,
  };
}

/**
 * How many segments a chunk's data needs under the band's caps (at least one): fewer than it has means
 * compaction would merge some of them.
 */
export function segmentsNeeded(rows: number | null, bytes: number, band: SizeBand): number {
  return Math.max(1, rows === null ? 1 : Math.ceil(rows / band.maxRows), Math.ceil(bytes / band.maxBytes));
}

/**
 * The live segments of one time chunk that compacting the chunk would change (docs/operations.md,
 * "Compaction candidates"): a segment above the band's rows or bytes (compaction splits it), and the small
 * segments of a chunk holding more segments than its rows and bytes need (compaction merges them). A small
 * segment that is all the chunk needs is no candidate: compacting it would write it again as it is, so a
 * small datasource is not flagged forever, right after its compaction included.
 */
export function chunkCompactionCandidates(
  live: readonly TimelineSegment[],
  band: SizeBand,
): CompactionCandidate[] {
  const data = live.filter((s) => !s.tombstone);
  const rows = sumRows(data);
  const bytes = data.reduce((sum, s) => sum + s.sizeBytes, 0);
  const mergeable = data.length > segmentsNeeded(rows, bytes, band);
  const out: CompactionCandidate[] = [];
  for (const s of data) {
    const reason =
      s.numRows !== null && s.numRows > band.maxRows
        ? "rows"
        : s.sizeBytes > band.maxBytes
          ? "large"
          : mergeable && s.sizeBytes < band.minBytes
            ? "small"
            : null;
    if (reason) out.push({ segment: s.id, reason, sizeBytes: s.sizeBytes, rows: s.numRows });
  }
  return out;
}

/** The interval's rows (null when a chunk's are unknown), bytes and live segments. */
function totals(chunks: readonly ChunkAudit[], segments: number): AuditReport["totals"] {
  const rowsList = chunks.map((c) => c.rows);
  return {
    rows: rowsList.some((r) => r === null) ? null : rowsList.reduce<number>((a, r) => a + (r ?? 0), 0),
    bytes: chunks.reduce((a, c) => a + c.bytes, 0),
    segments,
  };
}
