import { useEffect, useMemo, useState } from "preact/hooks";
import { api, enc, type GapReason, type Timeline, type TimelineGap, type TimelineSegment } from "./api";
import { bytes, interval, num } from "./format";

/**
 * A datasource's segment timeline: time across, one row per version (newest on top), each segment drawn
 * as live (solid), overshadowed (hatched), unused (outlined, dashed) or a tombstone (crossed), with
 * compaction candidates outlined; hover or focus shows its size and rows. Parts of the range with no live data
 * (gaps) are drawn as marked empty stretches across every row, labelled "gap", and listed with the ledger's
 * reason. Below: the version audit's chunks for the range shown (one live version per chunk is the healthy
 * state) and every segment as a table.
 */

const STATUS_LABEL = { live: "live", overshadowed: "overshadowed", unused: "unused" } as const;

const GAP_WORDS: Record<GapReason, string> = {
  "no-segments": "no segments",
  tombstone: "tombstone, no rows",
  "dead-lettered": "dead-lettered",
  failed: "failed",
  canceled: "canceled",
  pending: "not run to its end yet",
  killed: "killed",
};

function gapLabel(g: TimelineGap): string {
  return `gap ${interval(g.interval)}: no live data (${GAP_WORDS[g.reason]}${g.job ? ` ${g.reason === "killed" ? "by" : "in"} job ${g.job}` : ""})`;
}

function segLabel(s: TimelineSegment): string {
  return `${interval(`${s.start}/${s.end}`)} version ${s.version}: ${s.tombstone ? "tombstone, " : ""}${STATUS_LABEL[s.status]}, ${bytes(s.sizeBytes)}, ${num(s.rows)} rows${s.compactionCandidate ? `, compaction candidate (${s.compactionCandidate})` : ""}`;
}

export function TimelineView({ datasource, query }: { datasource: string; query: URLSearchParams }) {
  const [ds, setDs] = useState(datasource);
  const [range, setRange] = useState(query.get("interval") ?? "");
  const [data, setData] = useState<Timeline | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [hover, setHover] = useState<string | null>(null);

  useEffect(() => {
    setDs(datasource);
    setData(null);
    if (!datasource) return;
    // Without an interval (none, or empty), the timeline is of all time.
    const within = query.get("interval") || undefined;
    api
      .get("/api/v1/datasources/{datasource}/timeline", { path: { datasource }, query: { interval: within } })
      .then((t) => {
        setData(t);
        setError(null);
      })
      .catch((e) => setError(String((e as Error).message)));
  }, [datasource, query.toString()]);

  const show = (e: Event) => {
    e.preventDefault();
    location.hash = `#/datasources/${enc(ds.trim())}${range.trim() ? `?interval=${enc(range.trim())}` : ""}`;
  };

  const audit = data?.audit ?? null;
  const versions = useMemo(
    () => [...new Set((data?.segments ?? []).map((s) => s.version))].sort().reverse(),
    [data],
  );
  const gaps = useMemo(
    () =>
      (data?.gaps ?? []).map((g) => {
        const [a = "", b = ""] = g.interval.split("/");
        return { gap: g, start: Date.parse(a), end: Date.parse(b) };
      }),
    [data],
  );
  const [t0, t1] = useMemo(() => {
    const spans = [
      ...(data?.segments ?? []).map((s) => [Date.parse(s.start), Date.parse(s.end)]),
      ...gaps.map((g) => [g.start, g.end]),
    ];
    if (spans.length === 0) return [0, 1];
    return [Math.min(...spans.map((s) => s[0] ?? 0)), Math.max(...spans.map((s) => s[1] ?? 0))];
  }, [data, gaps]);

  const W = 1000;
  const ROW = 26;
  const LEFT = 0;
  const x = (t: number) => LEFT + ((t - t0) / Math.max(1, t1 - t0)) * (W - LEFT);
  const rows = Math.max(1, versions.length);
  const H = rows * ROW + 24;

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
              <span class="swatch seg-live" aria-hidden="true" /> live
            </li>
            <li>
              <span class="swatch seg-overshadowed" aria-hidden="true" /> overshadowed
            </li>
            <li>
              <span class="swatch seg-unused" aria-hidden="true" /> unused
            </li>
            <li>
              <span class="swatch seg-tombstone" aria-hidden="true" /> tombstone
            </li>
            <li>
              <span class="swatch seg-candidate" aria-hidden="true" /> compaction candidate
            </li>
            <li>
              <span class="swatch seg-gap" aria-hidden="true" /> gap (no live data)
            </li>
          </ul>
          {(data.segments.length > 0 || gaps.length > 0) && (
            <div class="timeline-wrap">
              <svg
                class="timeline"
                viewBox={`0 0 ${W} ${H}`}
                role="img"
                aria-label={`${data.segments.length} segments in ${versions.length} versions${gaps.length ? `, ${gaps.length} gaps` : ""}; the tables below list them`}
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
                  <pattern id="p-cross" width="8" height="8" patternUnits="userSpaceOnUse">
                    <path d="M0 0L8 8M8 0L0 8" class="hatch" />
                  </pattern>
                  <pattern id="p-gap" width="8" height="8" patternUnits="userSpaceOnUse">
                    <circle cx="4" cy="4" r="1.2" class="gap-dot" />
                  </pattern>
                </defs>
                {gaps.map(({ gap, start, end }) => {
                  const a = x(start);
                  const b = x(end);
                  return (
                    // biome-ignore lint/a11y/noStaticElementInteractions: hover only repeats what the gaps table lists
                    <g
                      key={gap.interval}
                      class="gap"
                      data-gap={gap.reason}
                      onMouseEnter={() => setHover(gapLabel(gap))}
                      onMouseLeave={() => setHover(null)}
                    >
                      <rect x={a} y={0} width={Math.max(2, b - a)} height={rows * ROW}>
                        <title>{gapLabel(gap)}</title>
                      </rect>
                      {b - a >= 24 && (
                        <text x={(a + b) / 2} y={14} text-anchor="middle" class="gap-label">
                          gap
                        </text>
                      )}
                    </g>
                  );
                })}
                {versions.map((v, row) => (
                  <g key={v}>
                    <line x1={0} x2={W} y1={row * ROW + ROW} y2={row * ROW + ROW} class="rule" />
                    {data.segments
                      .filter((s) => s.version === v)
                      .map((s) => {
                        const a = x(Date.parse(s.start));
                        const b = x(Date.parse(s.end));
                        return (
                          // biome-ignore lint/a11y/noStaticElementInteractions: hover only repeats what the tables below list
                          <rect
                            x={a + 0.5}
                            y={row * ROW + 3}
                            width={Math.max(1, b - a - 1)}
                            height={ROW - 6}
                            class={`seg seg-${s.status}${s.tombstone ? " seg-tombstone" : ""}${s.compactionCandidate ? " seg-candidate" : ""}`}
                            data-status={s.status}
                            onMouseEnter={() => setHover(segLabel(s))}
                            onMouseLeave={() => setHover(null)}
                          >
                            <title>{segLabel(s)}</title>
                          </rect>
                        );
                      })}
                  </g>
                ))}
                <text x={2} y={H - 6} class="axis">
                  {new Date(t0).toISOString().slice(0, 10)}
                </text>
                <text x={W - 2} y={H - 6} class="axis" text-anchor="end">
                  {new Date(t1).toISOString().slice(0, 10)}
                </text>
              </svg>
              <div class="versions" aria-hidden="true">
                {versions.map((v) => (
                  <div style={{ height: `${ROW}px` }} class="mono">
                    {v}
                  </div>
                ))}
              </div>
            </div>
          )}
          <p class="hover-info" aria-live="polite">
            {hover ?? "Hover a segment for its size and rows."}
          </p>
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
                </tr>
              </thead>
              <tbody>
                {audit.chunks.map((c) => (
                  <tr data-chunk={c.interval}>
                    <td>{interval(c.interval)}</td>
                    <td data-live-versions={c.liveVersions.length}>
                      {c.liveVersions.length} <span class="mono">{c.liveVersions.join(", ")}</span>
                    </td>
                    <td>{c.segments}</td>
                    <td>{num(c.rows)}</td>
                    <td>{bytes(c.bytes)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <details>
            <summary>
              All {data.segments.length} segments{data.truncated ? " (the newest 5,000)" : ""}
            </summary>
            <div class="table-wrap">
              <table class="segments">
                <thead>
                  <tr>
                    <th scope="col">Interval</th>
                    <th scope="col">Version</th>
                    <th scope="col">Status</th>
                    <th scope="col">Size</th>
                    <th scope="col">Rows</th>
                    <th scope="col">Served</th>
                  </tr>
                </thead>
                <tbody>
                  {data.segments.map((s) => (
                    <tr data-status={s.status}>
                      <td>{interval(`${s.start}/${s.end}`)}</td>
                      <td class="mono">{s.version}</td>
                      <td>
                        {s.tombstone ? "tombstone, " : ""}
                        {STATUS_LABEL[s.status]}
                        {s.compactionCandidate ? `, compaction candidate (${s.compactionCandidate})` : ""}
                      </td>
                      <td>{bytes(s.sizeBytes)}</td>
                      <td>{num(s.rows)}</td>
                      <td>{s.served ? "yes" : "no"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </>
      )}
    </section>
  );
}
