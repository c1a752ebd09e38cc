import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { api, type DruidLoad, type Quantiles } from "./api";

/**
 * What this host of `segops serve` sees of Druid: worker slots (held by segops, used by other tasks,
 * free) and requests and response bytes per minute by endpoint over the last hour, sampled by the service; detection and
 * handoff latency percentiles from its histograms. Charts are uPlot (canvas); the latest figures are in
 * tables beside them, for screen readers and for reading without colour.
 */

const PALETTE = ["#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2", "#be185d", "#4d7c0f"];

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";
}

function Chart({
  title,
  data,
  series,
  legend = true,
}: {
  title: string;
  data: uPlot.AlignedData;
  series: uPlot.Series[];
  legend?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const axis = {
      stroke: cssVar("--fg-muted"),
      grid: { stroke: cssVar("--rule") },
      ticks: { stroke: cssVar("--rule") },
    };
    plot.current?.destroy();
    plot.current = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 220,
        series: [{}, ...series],
        axes: [axis, axis],
        legend: { show: legend, live: true },
        cursor: { drag: { x: false, y: false } },
      },
      data,
      el,
    );
    const ro = new ResizeObserver(() =>
      plot.current?.setSize({ width: Math.max(280, el.clientWidth), height: 220 }),
    );
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [data, series, legend]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title} (chart; the table beside it has the latest values)`} />
    </figure>
  );
}

/** Bytes as people read them: 812 B, 14.2 KiB, 3.1 MiB. */
function formatBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

const fmt = (v: number | null) =>
  v === null ? "–" : v < 1 ? `${(v * 1000).toFixed(0)} ms` : `${v.toFixed(2)} s`;

/**
 * Why a latency has no figure: none measured yet, or (detection) every end Druid reported came after segops
 * saw it — Druid's clock runs ahead of this host's (the emulator's --time-scale, or clock skew).
 */
function noFigure(q: Quantiles): string | null {
  if (q.count > 0) return null;
  if (q.unmeasured)
    return `None measured: Druid's clock runs ahead of this host's — ${q.unmeasured} partition(s) ended, by Druid's clock, after segops saw them end (an emulator's --time-scale above 1, or clock skew between the hosts)`;
  return "None measured yet: no partition has finished on this host since it started";
}

function QuantileRow({ name, q }: { name: string; q: Quantiles }) {
  const why = noFigure(q);
  return (
    <tr title={why ?? undefined}>
      <th scope="row">
        {name}
        {why && <small class="why">{why}</small>}
      </th>
      <td>{fmt(q.p50)}</td>
      <td>{fmt(q.p90)}</td>
      <td>{fmt(q.p99)}</td>
      <td>{q.count}</td>
    </tr>
  );
}

export function DruidView() {
  const [load, setLoad] = useState<DruidLoad | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    // One read per sample the service takes (10 s by default): the view follows its history.
    const read = async () => {
      try {
        const l = await api.get("/api/v1/druid/load");
        if (stopped) return;
        setLoad(l);
        setError(null);
        timer = setTimeout(read, Math.max(1000, l.sampleMs));
      } catch (e) {
        if (!stopped) setError(String((e as Error).message));
        timer = setTimeout(read, 10_000);
      }
    };
    void read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);

  if (error && !load)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!load) return <p class="loading">Loading…</p>;

  const xs = load.samples.map((s) => Date.parse(s.at) / 1000);
  const ours = load.samples.map((s) => s.ours);
  const others = load.samples.map((s) =>
    s.used === null || s.ours === null ? null : Math.max(0, s.used - s.ours),
  );
  const free = load.samples.map((s) =>
    s.used === null || s.capacity === null ? null : Math.max(0, s.capacity - s.used),
  );
  const last = load.samples.at(-1);
  const slotData: uPlot.AlignedData = [xs, ours, others, free];
  const slotSeries: uPlot.Series[] = [
    { label: "segops", stroke: PALETTE[0], width: 2, fill: `${PALETTE[0]}33` },
    { label: "others", stroke: PALETTE[1], width: 2, dash: [6, 3] },
    { label: "free", stroke: PALETTE[2], width: 2, dash: [2, 3] },
  ];
  const bytesOf = new Map(load.bytesPerMinute.map((b) => [b.endpoint, b.values]));
  // Each value is a rate over one sample: times the sample's length in minutes, its bytes.
  const totalOf = (perMinute: readonly number[]) =>
    perMinute.reduce((a, b) => a + b, 0) * (load.sampleMs / 60_000);
  const reqData: uPlot.AlignedData = [xs, ...load.requestsPerMinute.map((r) => r.values)];
  const reqSeries: uPlot.Series[] = load.requestsPerMinute.map((r, i) => ({
    label: r.endpoint,
    stroke: PALETTE[i % PALETTE.length],
    width: 2,
    dash: i >= PALETTE.length ? [4, 2] : undefined,
  }));

  return (
    <section aria-labelledby="druid-title">
      <h1 id="druid-title">Druid load</h1>
      <p class="sub">
        What this host saw: {load.samples.length} samples, one every {load.sampleMs / 1000} s.
      </p>
      {load.blocked && (
        <p class="blocked" role="status" data-testid="blocked">
          <strong>Blocked by the cluster</strong> since{" "}
          <time dateTime={load.blocked.since}>{new Date(load.blocked.since).toLocaleString()}</time>:{" "}
          {load.blocked.reason}
        </p>
      )}
      <div class="panels">
        <div class="panel">
          <Chart title="Worker slots" data={slotData} series={slotSeries} />
          <table class="figures" data-testid="slots">
            <caption>Now</caption>
            <tbody>
              <tr>
                <th scope="row">segops</th>
                <td>{last?.ours ?? "–"}</td>
              </tr>
              <tr>
                <th scope="row">others</th>
                <td>{others.at(-1) ?? "–"}</td>
              </tr>
              <tr>
                <th scope="row">free</th>
                <td>{free.at(-1) ?? "–"}</td>
              </tr>
              <tr>
                <th scope="row">capacity</th>
                <td>{last?.capacity ?? "–"}</td>
              </tr>
            </tbody>
          </table>
        </div>
        <div class="panel">
          <Chart
            title="Requests to Druid per minute, by endpoint"
            data={reqData}
            series={reqSeries}
            legend={false}
          />
          <table class="figures" data-testid="requests">
            <caption>Per minute in the last sample, and the bytes Druid sent over the samples shown</caption>
            <thead>
              <tr>
                <td />
                <th scope="col">requests / min</th>
                <th scope="col">bytes / min</th>
                <th scope="col">bytes in all</th>
              </tr>
            </thead>
            <tbody>
              {load.requestsPerMinute.map((r, i) => (
                <tr data-endpoint={r.endpoint}>
                  <th scope="row" class="mono">
                    <span
                      class={`key${i >= PALETTE.length ? " dashed" : ""}`}
                      style={{ "--k": PALETTE[i % PALETTE.length] }}
                      aria-hidden="true"
                    />
                    {r.endpoint}
                  </th>
                  <td>{r.values.at(-1) ?? 0}</td>
                  <td>{formatBytes(bytesOf.get(r.endpoint)?.at(-1) ?? 0)}</td>
                  <td data-testid="bytes">{formatBytes(totalOf(bytesOf.get(r.endpoint) ?? []))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
      <h2>Latency</h2>
      <div class="table-wrap">
        <table class="figures" data-testid="latency">
          <thead>
            <tr>
              <th scope="col">From → to</th>
              <th scope="col">p50</th>
              <th scope="col">p90</th>
              <th scope="col">p99</th>
              <th scope="col">count</th>
            </tr>
          </thead>
          <tbody>
            <QuantileRow name="Druid task ended → segops saw it (detection)" q={load.latency.detection} />
            <QuantileRow name="SUCCESS → served (handoff)" q={load.latency.handoff} />
          </tbody>
        </table>
      </div>
    </section>
  );
}
