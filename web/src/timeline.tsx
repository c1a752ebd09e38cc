import { useEffect, useMemo, useState } from "preact/hooks";
import { api, enc, type GapReason, type Timeline, type TimelineGap, type TimelineSegment } from "./api";
import { bytes, interval, num } from "./format";
import { ticks } from "./timeline-axis";

/**
 * A datasource's segment timeline: time across, one lane per state of a time chunk — its live version
 * (coloured and patterned by whether segops published it, it is served, not served, or a tombstone, with
 * compaction candidates outlined), overshadowed versions, unused versions, and gaps (parts of the range with
 * no live data, labelled "gap", with the ledger's reason). The server aggregates the segments per chunk, so
 * a 90-day backfill with re-runs draws a few hundred shapes, not one row per version. Hover a chunk for its
 * figures; click it (or its row's button in the chunks table, for the keyboard) to list its versions and
 * segments. The range is the URL's `?interval=` (the form pushes it: back, forward and reload keep it), and
 * the chunk shown is its `&chunk=`.
 */

type Chunk = Timeline["chunks"][number];
type LiveState = NonNullable<Chunk["live"]>["state"];

const STATUS_LABEL = { live: "live", overshadowed: "overshadowed", unused: "unused" } as const;

const LIVE_WORDS: Record<LiveState, string> = {
  ours: "ours (published by segops), served",
  served: "another writer's, served",
  "not-served": "not served",
  tombstone: "tombstone, no rows",
};

const GAP_WORDS: Record<GapReason, string> = {
  "no-segments": "no segments",
  tombstone: "tombstone, no rows",
  "dead-lettered": "dead-lettered",
  failed: "failed",
  canceled: "canceled",
  pending: "not run to its end yet",
  killed: "killed",
};

const LANES = ["Live version", "Overshadowed", "Unused", "Gaps"] as const;

function gapLabel(g: TimelineGap): string {
  return `gap ${interval(g.interval)}: no live data (${GAP_WORDS[g.reason]}${g.job ? ` ${g.reason === "killed" ? "by" : "in"} job ${g.job}` : ""})`;
}

function liveLabel(c: Chunk): string {
  const l = c.live;
  if (!l) return `${interval(c.interval)}: no live version`;
  return `${interval(c.interval)} version ${l.version}: live, ${LIVE_WORDS[l.state]}, ${l.segments} segment${l.segments === 1 ? "" : "s"}, ${bytes(l.bytes)}, ${num(l.rows)} rows${l.candidates ? `, ${l.candidates} compaction candidate(s)` : ""}`;
}

function countLabel(c: Chunk, what: "overshadowed" | "unused"): string {
  const n = c[what];
  return `${interval(c.interval)}: ${n.versions} ${what} version${n.versions === 1 ? "" : "s"}, ${n.segments} segment${n.segments === 1 ? "" : "s"}`;
}

function segStatus(s: TimelineSegment): string {
  return `${s.tombstone ? "tombstone, " : ""}${STATUS_LABEL[s.status]}${s.compactionCandidate ? `, compaction candidate (${s.compactionCandidate})` : ""}`;
}

/** The hash for a datasource, a range and a chunk (empty parts left out). */
function hashOf(datasource: string, range: string, chunk: string | null): string {
  const q = new URLSearchParams();
  if (range) q.set("interval", range);
  if (chunk) q.set("chunk", chunk);
  const text = q.toString();
  return `#/datasources/${enc(datasource)}${text ? `?${text}` : ""}`;
}

export function TimelineView({ datasource, query }: { datasource: string; query: URLSearchParams }) {
  const within = query.get("interval") ?? "";
  const [ds, setDs] = useState(datasource);
  const [range, setRange] = useState(within);
  const [data, setData] = useState<Timeline | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [hover, setHover] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(query.get("chunk"));
  const [allShown, setAllShown] = useState(false);

  useEffect(() => {
    // Back and forward change the URL: the boxes follow it.
    setDs(datasource);
    setRange(within);
    setSelected(query.get("chunk"));
    setData(null);
    if (!datasource) return;
    // Without an interval (none, or empty), the timeline is of all time.
    api
      .get("/api/v1/datasources/{datasource}/timeline", {
        path: { datasource },
        query: { interval: within || undefined },
      })
      .then((t) => {
        setData(t);
        setError(null);
      })
      .catch((e) => setError(String((e as Error).message)));
  }, [datasource, within]);

  const show = (e: Event) => {
    e.preventDefault();
    location.hash = hashOf(ds.trim(), range.trim(), null);
  };

  /** Shows a chunk's versions; the URL keeps it without a history entry per click. */
  const select = (chunk: string | null) => {
    setSelected(chunk);
    history.replaceState(history.state, "", hashOf(datasource, within, chunk));
  };

  const audit = data?.audit ?? null;
  const chunks = data?.chunks ?? [];
  const gaps = useMemo(
    () =>
      (data?.gaps ?? []).map((g) => {
        const [a = "", b = ""] = g.interval.split("/");
        return { gap: g, start: Date.parse(a), end: Date.parse(b) };
      }),
    [data],
  );
  const spans = useMemo(
    () =>
      chunks.map((c) => {
        const [a = "", b = ""] = c.interval.split("/");
        return { chunk: c, start: Date.parse(a), end: Date.parse(b) };
      }),
    [data],
  );
  const [t0, t1] = useMemo(() => {
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (const s of [...spans, ...gaps]) {
      lo = Math.min(lo, s.start);
      hi = Math.max(hi, s.end);
    }
    return Number.isFinite(lo) ? [lo, hi] : [0, 1];
  }, [spans, gaps]);
  const byInterval = useMemo(() => new Map(chunks.map((c) => [c.interval, c])), [data]);
  const detail = selected ? (byInterval.get(selected) ?? null) : null;
  const detailSegments = useMemo(
    () => (detail ? (data?.segments ?? []).filter((s) => `${s.start}/${s.end}` === detail.interval) : []),
    [data, detail],
  );

  const W = 1000;
  const LANE = 28;
  const x = (t: number) => ((t - t0) / Math.max(1, t1 - t0)) * W;
  const H = LANES.length * LANE;
  const axis = ticks(t0, t1);
  const laneY = (i: number) => i * LANE + 4;
  const box = (start: number, end: number) => {
    const a = x(start);
    return { x: a + 0.5, width: Math.max(1.5, x(end) - a - 1) };
  };
  const liveCount = chunks.filter((c) => c.live).length;

  return (
    <section aria-labelledby="tl-title">
      <h1 id="tl-title">Segment timeline{datasource ? `: ${datasource}` : ""}</h1>
      <form class="filters" onSubmit={show}>
        <label>
          Datasource{" "}
          <input value={ds} required onInput={(e) => setDs((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Interval{" "}
          <input
            name="interval"
            value={range}
            placeholder="all time, or 2026-01-01/2026-02-01"
            onInput={(e) => setRange((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">Show</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {datasource && !data && !error && <p class="loading">Loading segments…</p>}
      {data && audit && (
        <>
          <p class={`verdict ${audit.ok && gaps.length === 0 ? "ok" : "bad"}`} data-testid="audit-verdict">
            <span aria-hidden="true">{audit.ok && gaps.length === 0 ? "✓ " : "! "}</span>
            {audit.ok
              ? `Audit ok: one live version per chunk, every segment served (${audit.chunks.length} chunks)`
              : (audit.problem ?? `Audit found ${audit.violations.length} problem(s)`)}
            {gaps.length > 0 &&
              `${audit.ok ? ", but" : ";"} ${gaps.length} gap${gaps.length === 1 ? "" : "s"}: part of the range holds no live data`}
          </p>
          {audit.violations.length > 0 && (
            <ul class="violations">
              {audit.violations.map((v) => (
                <li>
                  {interval(v.chunk)}: {v.kind} — {v.message}
                </li>
              ))}
            </ul>
          )}
          <ul class="legend" aria-label="Legend">
            <li>
              <span class="swatch live-ours" aria-hidden="true" /> ours, served
            </li>
            <li>
              <span class="swatch live-served" aria-hidden="true" /> another writer's, served
            </li>
            <li>
              <span class="swatch live-not-served" aria-hidden="true" /> not served
            </li>
            <li>
              <span class="swatch seg-tombstone" aria-hidden="true" /> tombstone
            </li>
            <li>
              <span class="swatch seg-candidate" aria-hidden="true" /> compaction candidate
            </li>
            <li>
              <span class="swatch seg-overshadowed" aria-hidden="true" /> overshadowed
            </li>
            <li>
              <span class="swatch seg-unused" aria-hidden="true" /> unused
            </li>
            <li>
              <span class="swatch seg-gap" aria-hidden="true" /> gap (no live data)
            </li>
          </ul>
          {(chunks.length > 0 || gaps.length > 0) && (
            <div class="lanes-wrap">
              <div class="lane-names" aria-hidden="true">
                {LANES.map((name) => (
                  <div style={{ height: `${LANE}px` }}>{name}</div>
                ))}
              </div>
              <svg
                class="timeline lanes"
                viewBox={`0 0 ${W} ${H}`}
                role="img"
                aria-label={`${data.segments.length} segments in ${chunks.length} time chunks, ${liveCount} with a live version${gaps.length ? `, ${gaps.length} gaps` : ""}; the chunks table below lists them`}
                preserveAspectRatio="none"
                style={{ height: `${H}px` }}
              >
                <defs>
                  <pattern
                    id="p-hatch"
                    width="6"
                    height="6"
                    patternUnits="userSpaceOnUse"
                    patternTransform="rotate(45)"
                  >
                    <line x1="0" y1="0" x2="0" y2="6" class="hatch" />
                  </pattern>
                  <pattern
                    id="p-hatch-bad"
                    width="6"
                    height="6"
                    patternUnits="userSpaceOnUse"
                    patternTransform="rotate(-45)"
                  >
                    <line x1="0" y1="0" x2="0" y2="6" class="hatch-bad" />
                  </pattern>
                  <pattern id="p-stripe" width="5" height="5" patternUnits="userSpaceOnUse">
                    <line x1="1.5" y1="0" x2="1.5" y2="5" class="stripe" />
                  </pattern>
                  <pattern id="p-cross" width="8" height="8" patternUnits="userSpaceOnUse">
                    <path d="M0 0L8 8M8 0L0 8" class="hatch" />
                  </pattern>
                  <pattern id="p-gap" width="8" height="8" patternUnits="userSpaceOnUse">
                    <circle cx="4" cy="4" r="1.2" class="gap-dot" />
                  </pattern>
                </defs>
                {axis.map((t) => (
                  <line class="tick" x1={x(t.at)} x2={x(t.at)} y1={0} y2={LANES.length * LANE} />
                ))}
                {LANES.map((_, i) => (
                  <line x1={0} x2={W} y1={(i + 1) * LANE} y2={(i + 1) * LANE} class="rule" />
                ))}
                {spans.map(({ chunk: c, start, end }) => {
                  const b = box(start, end);
                  const on = selected === c.interval ? " selected" : "";
                  const pick = () => select(selected === c.interval ? null : c.interval);
                  return (
                    <g key={c.interval} data-chunk={c.interval}>
                      {c.live && (
                        // biome-ignore lint/a11y/noStaticElementInteractions: the chunks table's buttons do the same from the keyboard
                        <rect
                          {...b}
                          y={laneY(0)}
                          height={LANE - 8}
                          class={`seg chunk live-${c.live.state}${c.live.state === "tombstone" ? " seg-tombstone" : ""}${c.live.candidates ? " seg-candidate" : ""}${on}`}
                          data-status="live"
                          data-state={c.live.state}
                          data-version={c.live.version}
                          onMouseEnter={() => setHover(liveLabel(c))}
                          onMouseLeave={() => setHover(null)}
                          onClick={pick}
                        >
                          <title>{liveLabel(c)}</title>
                        </rect>
                      )}
                      {c.overshadowed.versions > 0 && (
                        // biome-ignore lint/a11y/noStaticElementInteractions: as the live lane's
                        <rect
                          {...b}
                          y={laneY(1)}
                          height={LANE - 8}
                          class={`seg chunk seg-overshadowed${on}`}
                          data-status="overshadowed"
                          onMouseEnter={() => setHover(countLabel(c, "overshadowed"))}
                          onMouseLeave={() => setHover(null)}
                          onClick={pick}
                        >
                          <title>{countLabel(c, "overshadowed")}</title>
                        </rect>
                      )}
                      {c.unused.versions > 0 && (
                        // biome-ignore lint/a11y/noStaticElementInteractions: as the live lane's
                        <rect
                          {...b}
                          y={laneY(2)}
                          height={LANE - 8}
                          class={`seg chunk seg-unused${on}`}
                          data-status="unused"
                          onMouseEnter={() => setHover(countLabel(c, "unused"))}
                          onMouseLeave={() => setHover(null)}
                          onClick={pick}
                        >
                          <title>{countLabel(c, "unused")}</title>
                        </rect>
                      )}
                    </g>
                  );
                })}
                {gaps.map(({ gap, start, end }) => {
                  const b = box(start, end);
                  return (
                    // biome-ignore lint/a11y/noStaticElementInteractions: hover only repeats what the gaps table lists
                    <g
                      key={gap.interval}
                      class="gap"
                      data-gap={gap.reason}
                      onMouseEnter={() => setHover(gapLabel(gap))}
                      onMouseLeave={() => setHover(null)}
                    >
                      <rect {...b} y={laneY(3)} height={LANE - 8}>
                        <title>{gapLabel(gap)}</title>
                      </rect>
                      {b.width >= 24 && (
                        <text x={b.x + b.width / 2} y={laneY(3) + 15} text-anchor="middle" class="gap-label">
                          gap
                        </text>
                      )}
                    </g>
                  );
                })}
              </svg>
              <span />
              {/* The dates in HTML: SVG text would stretch with the drawing's width. */}
              <div class="lanes-axis" aria-hidden="true">
                {/* A tick at the right edge keeps its line but no label, which would run into the one before. */}
                {axis
                  .filter((t) => x(t.at) <= W - 80)
                  .map((t) => (
                    <span style={{ left: `${(x(t.at) / W) * 100}%` }}>{t.label}</span>
                  ))}
              </div>
            </div>
          )}
          <p class="hover-info" aria-live="polite">
            {hover ?? "Hover a chunk for its figures; click it to list its versions and segments."}
          </p>
          {detail && (
            <ChunkDetail
              chunk={detail}
              segments={detailSegments}
              truncated={data.truncated}
              onClose={() => select(null)}
            />
          )}
          {gaps.length > 0 && (
            <>
              <h2>Gaps (no live data)</h2>
              <div class="table-wrap">
                <table class="gaps">
                  <thead>
                    <tr>
                      <th scope="col">Interval</th>
                      <th scope="col">Why</th>
                      <th scope="col">Job / partition</th>
                    </tr>
                  </thead>
                  <tbody>
                    {gaps.map(({ gap }) => (
                      <tr data-gap={gap.reason} key={gap.interval}>
                        <td>{interval(gap.interval)}</td>
                        <td>
                          {GAP_WORDS[gap.reason]}
                          {gap.error && <div class="err">{gap.error}</div>}
                        </td>
                        <td>
                          {gap.job ? <a href={`#/jobs/${enc(gap.job)}`}>{gap.job}</a> : "–"}
                          {gap.task && <div class="mono">{gap.task}</div>}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )}
          <h2>Chunks (version audit)</h2>
          <div class="table-wrap">
            <table class="chunks">
              <thead>
                <tr>
                  <th scope="col">Chunk</th>
                  <th scope="col">Live versions</th>
                  <th scope="col">Segments</th>
                  <th scope="col">Rows</th>
                  <th scope="col">Size</th>
                  <th scope="col">Older</th>
                </tr>
              </thead>
              <tbody>
                {audit.chunks.map((a) => {
                  const c = byInterval.get(a.interval);
                  return (
                    <tr data-chunk={a.interval}>
                      <td>{interval(a.interval)}</td>
                      <td data-live-versions={a.liveVersions.length}>
                        {a.liveVersions.length} <span class="mono">{a.liveVersions.join(", ")}</span>
                      </td>
                      <td>{a.segments}</td>
                      <td>{num(a.rows)}</td>
                      <td>{bytes(a.bytes)}</td>
                      <td>
                        {c ? (
                          <button
                            type="button"
                            class="quiet"
                            aria-expanded={selected === c.interval}
                            aria-label={`${c.versions.length} version${c.versions.length === 1 ? "" : "s"} of ${interval(c.interval)}`}
                            onClick={() => select(selected === c.interval ? null : c.interval)}
                          >
                            {c.versions.length} version{c.versions.length === 1 ? "" : "s"}
                          </button>
                        ) : (
                          "–"
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <details onToggle={(e) => setAllShown((e.currentTarget as HTMLDetailsElement).open)}>
            <summary>
              All {data.segments.length} segments{data.truncated ? " (the newest 5,000)" : ""}
            </summary>
            {/* Thousands of rows are drawn only when asked for. */}
            {allShown && <SegmentTable segments={data.segments} />}
          </details>
        </>
      )}
    </section>
  );
}

function ChunkDetail({
  chunk,
  segments,
  truncated,
  onClose,
}: {
  chunk: Chunk;
  segments: TimelineSegment[];
  truncated: boolean;
  onClose: () => void;
}) {
  return (
    <section class="chunk-detail" aria-labelledby="chunk-title" data-testid="chunk-detail">
      <div class="chunk-head">
        <h2 id="chunk-title">Chunk {interval(chunk.interval)}</h2>
        <button type="button" class="quiet" onClick={onClose}>
          Close
        </button>
      </div>
      <p>
        {chunk.live ? (
          <>
            Live: version <span class="mono">{chunk.live.version}</span>, {LIVE_WORDS[chunk.live.state]}
          </>
        ) : (
          "No live version"
        )}
        ; {chunk.overshadowed.versions} overshadowed, {chunk.unused.versions} unused version(s).
      </p>
      <div class="table-wrap">
        <table class="chunk-versions">
          <caption>Versions, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Status</th>
              <th scope="col">Segments</th>
              <th scope="col">Rows</th>
              <th scope="col">Size</th>
            </tr>
          </thead>
          <tbody>
            {chunk.versions.map((v) => (
              <tr data-status={v.status}>
                <td class="mono">{v.version}</td>
                <td>
                  {STATUS_LABEL[v.status]}
                  {v.ours ? ", ours" : ""}
                </td>
                <td>{v.segments}</td>
                <td>{num(v.rows)}</td>
                <td>{bytes(v.bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {segments.length > 0 && (
        <SegmentTable
          segments={segments}
          caption={`Segments${truncated ? " (of the newest 5,000 the answer carries)" : ""}`}
        />
      )}
    </section>
  );
}

function SegmentTable({ segments, caption }: { segments: TimelineSegment[]; caption?: string }) {
  return (
    <div class="table-wrap">
      <table class="segments">
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            <th scope="col">Interval</th>
            <th scope="col">Version</th>
            <th scope="col">Partition</th>
            <th scope="col">Status</th>
            <th scope="col">Size</th>
            <th scope="col">Rows</th>
            <th scope="col">Served</th>
          </tr>
        </thead>
        <tbody>
          {segments.map((s) => (
            <tr data-status={s.status}>
              <td>{interval(`${s.start}/${s.end}`)}</td>
              <td class="mono">{s.version}</td>
              <td>{s.partitionNum}</td>
              <td>{segStatus(s)}</td>
              <td>{bytes(s.sizeBytes)}</td>
              <td>{num(s.rows)}</td>
              <td>{s.served ? "yes" : "no"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
