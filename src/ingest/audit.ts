import { bucketsOverlapping, type Granularity } from "../core/granularity.js";
import { formatInterval, type Interval, intersection } from "../core/interval.js";
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

export function auditTimeline(input: AuditInput): AuditReport {
  const band = input.sizeBand ?? DEFAULT_SIZE_BAND;
  const expect = input.expect ?? {};
  const pieces = liveTimeline(input.segments, input.interval);
  const violations: Violation[] = [];
  const chunks: ChunkAudit[] = [];
  const liveById = new Map<string, TimelineSegment>();

  for (const window of chunkWindows(input, pieces)) {
    const name = formatInterval(window);
    const inChunk = pieces.filter((p) => p.start < window.end && window.start < p.end);
    const versions = [
      ...new Set(inChunk.map((p) => p.liveVersion).filter((v): v is string => v !== null)),
    ].sort();
    const live = [...new Map(inChunk.flatMap((p) => p.live).map((s) => [s.id, s])).values()];
    for (const s of live) liveById.set(s.id, s);
    const notes: string[] = [];
    const core = live.filter((s) => s.partitionNum < s.corePartitions);
    const appended = live.filter((s) => s.partitionNum >= s.corePartitions);

    if (versions.length > 1) {
      violations.push({
        chunk: name,
        kind: "mixed-versions",
        message: `${versions.length} live versions in one time chunk (${versions.join(", ")}): it is partly overshadowed`,
      });
    }
    if (expect.version && expect.mode !== "append") {
      const oursHere = input.segments.some(
        (s) => s.version === expect.version && s.start < window.end && window.start < s.end,
      );
      const foreign = versions.filter((v) => v !== expect.version);
      if (oursHere && foreign.length > 0) {
        violations.push({
          chunk: name,
          kind: "not-ours",
          message: `live version ${foreign.join(", ")} is not ours (${expect.version})`,
        });
      } else if (!oursHere && versions.length > 0) {
        notes.push(
          `no new rows here; older version ${versions.join(", ")} kept (replace without dropExisting)`,
        );
      } else if (!oursHere && versions.length === 0 && inChunk.some((p) => p.liveVersion === null)) {
        notes.push("no data in this chunk");
      }
    }
    const unserved = live.filter((s) => !s.served && !s.tombstone);
    if (unserved.length > 0) {
      violations.push({
        chunk: name,
        kind: "not-served",
        message: `${unserved.length} live segment(s) not served: ${unserved.map((s) => s.id).join(", ")}`,
      });
    }
    // Appending identical data twice leaves partition sets with identical row counts and sizes.
    const seen = new Map<string, string>();
    for (const s of [...core, ...appended]) {
      if (s.tombstone || s.numRows === null) continue;
      const fingerprint = `${s.start}/${s.end}/${s.numRows}/${s.sizeBytes}`;
      const twin = seen.get(fingerprint);
      if (twin && s.partitionNum >= s.corePartitions) {
        violations.push({
          chunk: name,
          kind: "duplicate-append",
          message: `appended segment ${s.id} duplicates ${twin} (${s.numRows} rows, ${s.sizeBytes} bytes): rows are counted twice`,
        });
      }
      seen.set(fingerprint, s.id);
    }
    const rows = sumRows(live.filter((s) => !s.tombstone));
    const expectedRows = expect.rowsPerChunk?.[name];
    if (expectedRows !== undefined && rows !== null && rows !== expectedRows) {
      violations.push({
        chunk: name,
        kind: "rows-mismatch",
        message: `live rows ${rows} differ from the expected ${expectedRows}`,
      });
    }
    if (appended.length > 0)
      notes.push(`${appended.length} appended partition(s) on version ${appended[0]?.version}`);
    chunks.push({
      interval: name,
      liveVersions: versions,
      segments: live.length,
      rows,
      bytes: live.reduce((sum, s) => sum + (s.tombstone ? 0 : s.sizeBytes), 0),
      tombstone: live.length > 0 && live.every((s) => s.tombstone),
      appendedPartitions: appended.length,
      notes,
    });
  }

  if (
    expect.version &&
    expect.mode !== "append" &&
    !input.segments.some((s) => s.version === expect.version)
  ) {
    const anyLive = pieces.some((p) => p.liveVersion !== null);
    if (anyLive) {
      violations.push({
        chunk: formatInterval(input.interval),
        kind: "missing-version",
        message: `no segment of our version ${expect.version} is in the metadata store`,
      });
    }
  }

  const compactionCandidates: CompactionCandidate[] = [];
  for (const s of liveById.values()) {
    if (s.tombstone) continue;
    const reason =
      s.numRows !== null && s.numRows > band.maxRows
        ? "rows"
        : s.sizeBytes > band.maxBytes
          ? "large"
          : s.sizeBytes < band.minBytes
            ? "small"
            : null;
    if (reason) compactionCandidates.push({ segment: s.id, reason, sizeBytes: s.sizeBytes, rows: s.numRows });
  }

  const rowsList = chunks.map((c) => c.rows);
  return {
    datasource: input.datasource,
    interval: formatInterval(input.interval),
    ok: violations.length === 0,
    chunks,
    violations,
    compactionCandidates,
    totals: {
      rows: rowsList.some((r) => r === null) ? null : rowsList.reduce<number>((a, r) => a + (r ?? 0), 0),
      bytes: chunks.reduce((a, c) => a + c.bytes, 0),
      segments: liveById.size,
    },
  };
}
