import { memo } from "preact/compat";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import {
  type Action,
  ApiError,
  type ApiEvent,
  api,
  type Cell,
  enc,
  type JobEvent,
  messageData,
  type PartitionDetail,
  type PartitionGrid,
  streamUrl,
} from "./api";
import { bytes, duration, GRID_STATES, gridState, interval, num, time } from "./format";

/**
 * One job: its partitions as a heat grid laid out like a calendar for its granularity (hours by day,
 * days by month, weeks and months by year), one cell per partition, coloured by state and marked with a
 * glyph and a pattern too; hover or focus shows the partition, Enter or a click opens it in a drawer with
 * its steps, Druid's errors, its events and the actions the API allows. Live from the job's event stream.
 */

type Layout = "hour" | "day" | "week" | "month";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const COLUMNS: Record<Layout, number> = { hour: 24, day: 7, week: 13, month: 12 };

function layoutOf(items: readonly Cell[]): Layout {
  const lengths = items
    .map((c) => Date.parse(c.end) - Date.parse(c.start))
    .filter((n) => Number.isFinite(n))
    .sort((a, b) => a - b);
  const median = lengths[Math.floor(lengths.length / 2)] ?? 86_400_000;
  if (median <= 3_600_000) return "hour";
  if (median <= 86_400_000) return "day";
  if (median <= 7 * 86_400_000) return "week";
  return "month";
}

interface Group {
  label: string;
  /** Blank cells before the first one, so columns line up (weekday, hour). */
  offset: number;
  cells: { cell: Cell; index: number }[];
}

function groupsOf(items: readonly Cell[], layout: Layout): Group[] {
  const groups: Group[] = [];
  let current: Group | null = null;
  let key = "";
  items.forEach((cell, index) => {
    const d = new Date(cell.start || 0);
    const y = d.getUTCFullYear();
    const m = d.getUTCMonth();
    const k = layout === "hour" ? cell.start.slice(0, 10) : layout === "day" ? `${y}-${m}` : String(y);
    if (!current || k !== key) {
      key = k;
      const label =
        layout === "hour" ? cell.start.slice(0, 10) : layout === "day" ? `${MONTHS[m]} ${y}` : String(y);
      const offset =
        layout === "hour"
          ? d.getUTCHours()
          : layout === "day"
            ? (d.getUTCDay() + 6) % 7
            : layout === "month"
              ? m
              : 0;
      current = { label, offset, cells: [] };
      groups.push(current);
    }
    current.cells.push({ cell, index });
  });
  return groups;
}

/** What segops decided for a partition that ended without being done, in words. */
const OUTCOMES: Record<string, string> = {
  "rolled-back": "rolled back: the replace was undone, the data live before is served again",
  "refused-empty": "refused: its input yields no rows, the live data was left as it was",
};

/** The state in words, with segops' outcome where it decided one. */
function stateText(c: Cell): string {
  const state = GRID_STATES.find((s) => s.state === gridState(c.state))?.label ?? c.state;
  const outcome = c.outcome ? (OUTCOMES[c.outcome] ?? c.outcome) : null;
  return outcome ? `${state} (${outcome})` : state;
}

function cellLabel(c: Cell): string {
  return `${interval(c.interval)}: ${stateText(c)}, ${c.attempts} attempt${c.attempts === 1 ? "" : "s"}`;
}

interface GridProps {
  items: Cell[];
  layout: Layout;
  active: number;
  onActive(i: number): void;
  onOpen(i: number): void;
  onHover(i: number | null, el: HTMLElement | null): void;
}

const Grid = memo(function Grid({ items, layout, active, onActive, onOpen, onHover }: GridProps) {
  const ref = useRef<HTMLFieldSetElement>(null);
  const groups = useMemo(() => groupsOf(items, layout), [items, layout]);
  const cols = COLUMNS[layout];

  useLayoutEffect(() => {
    requestAnimationFrame(() => performance.mark("segops:grid-rendered"));
  }, [items]);

  const focusCell = (i: number) => {
    const next = Math.max(0, Math.min(items.length - 1, i));
    onActive(next);
    ref.current?.querySelector<HTMLElement>(`[data-index="${next}"]`)?.focus();
  };
  const onKey = (e: KeyboardEvent) => {
    const step: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols };
    if (e.key in step) {
      e.preventDefault();
      focusCell(active + (step[e.key] ?? 0));
    } else if (e.key === "Home") {
      e.preventDefault();
      focusCell(0);
    } else if (e.key === "End") {
      e.preventDefault();
      focusCell(items.length - 1);
    }
  };
  const target = (e: Event) => (e.target as HTMLElement).closest<HTMLElement>("[data-index]");

  return (
    // biome-ignore lint/a11y/useKeyWithMouseEvents: focusin below shows the same for the keyboard
    <fieldset
      ref={ref}
      class={`grid layout-${layout}${items.length <= 200 ? " big" : ""}`}
      onKeyDown={onKey}
      onMouseOver={(e) => {
        const el = target(e);
        onHover(el ? Number(el.dataset.index) : null, el);
      }}
      onMouseLeave={() => onHover(null, null)}
      onFocusIn={(e) => {
        const el = target(e);
        if (el) onHover(Number(el.dataset.index), el);
      }}
      onFocusOut={() => onHover(null, null)}
    >
      <legend class="sr-only">
        Partitions, one cell each, laid out by {layout}; arrow keys move between them, Enter opens one
      </legend>
      {groups.map((g) => (
        <div class="month" key={g.label}>
          <div class="month-label">{g.label}</div>
          <div class="cells" style={{ gridTemplateColumns: `repeat(${cols}, var(--cell))` }}>
            {layout === "day" &&
              WEEKDAYS.map((w) => (
                <span class="wd" aria-hidden="true">
                  {w[0]}
                </span>
              ))}
            {g.offset > 0 && <span class="blank" style={{ gridColumn: `span ${g.offset}` }} />}
            {g.cells.map(({ cell, index }) => (
              <button
                type="button"
                key={cell.task}
                class={`cell s-${gridState(cell.state)}`}
                data-index={index}
                data-state={gridState(cell.state)}
                data-task={cell.task}
                tabIndex={index === active ? 0 : -1}
                aria-label={cellLabel(cell)}
                onClick={() => {
                  onActive(index);
                  onOpen(index);
                }}
              />
            ))}
          </div>
        </div>
      ))}
    </fieldset>
  );
});

function Tooltip({ cell, anchor }: { cell: Cell; anchor: HTMLElement }) {
  const r = anchor.getBoundingClientRect();
  const left = Math.min(r.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - 320);
  const stats = cell.rowStats;
  return (
    <div
      class="tooltip"
      role="tooltip"
      style={{ left: `${Math.max(4, left)}px`, top: `${r.bottom + window.scrollY + 6}px` }}
    >
      <strong>{interval(cell.interval)}</strong>
      <dl>
        <dt>State</dt>
        <dd>{stateText(cell)}</dd>
        <dt>Attempts</dt>
        <dd>{cell.attempts}</dd>
        <dt>Druid tasks</dt>
        <dd class="mono">{cell.druidTaskIds.length ? cell.druidTaskIds.join(", ") : "–"}</dd>
        <dt>Rows</dt>
        <dd>{num(cell.rows)}</dd>
        {stats && (
          <>
            <dt>Row counters</dt>
            <dd>
              {num(stats.processed)} processed, {num(stats.processedWithError)} with errors,{" "}
              {num(stats.unparseable)} unparseable, {num(stats.thrownAway)} thrown away
            </dd>
          </>
        )}
        <dt>Duration</dt>
        <dd>{duration(cell.durationMs)}</dd>
        {cell.error && (
          <>
            <dt>Error</dt>
            <dd class="err">{cell.error}</dd>
          </>
        )}
      </dl>
    </div>
  );
}

const ACTION_LABEL: Record<Action, string> = {
  retry: "Retry",
  cancel: "Cancel",
  "dead-letter-retry": "Retry dead letter",
  "dead-letter-drop": "Drop dead letter",
};

function runAction(a: Action, taskId: string): Promise<unknown> {
  const init = { path: { taskId } };
  switch (a) {
    case "retry":
      return api.post("/api/v1/partitions/{taskId}/retry", init);
    case "cancel":
      return api.post("/api/v1/partitions/{taskId}/cancel", init);
    case "dead-letter-retry":
      return api.post("/api/v1/dead-letters/{taskId}/retry", init);
    case "dead-letter-drop":
      return api.post("/api/v1/dead-letters/{taskId}/drop", init);
  }
}

function Drawer({
  task,
  version,
  onClose,
  onAction,
}: {
  task: string;
  version: number;
  onClose(): void;
  onAction(): void;
}) {
  const [detail, setDetail] = useState<PartitionDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLElement>(null);

  useEffect(() => {
    let stale = false;
    api
      .get("/api/v1/partitions/{taskId}", { path: { taskId: task } })
      .then((d) => !stale && setDetail(d))
      .catch((e) => !stale && setError(String(e.message ?? e)));
    return () => {
      stale = true;
    };
  }, [task, version]);

  useEffect(() => {
    ref.current?.focus();
  }, [task]);

  // Escape closes it wherever focus is (an action's button may have gone while it was pressed).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && onClose();
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [onClose]);

  const act = async (a: Action) => {
    setBusy(true);
    setError(null);
    try {
      await runAction(a, task);
      onAction();
    } catch (e) {
      setError(String((e as Error).message));
    } finally {
      setBusy(false);
    }
  };

  const d = detail;
  return (
    <aside
      class="drawer"
      ref={ref}
      tabIndex={-1}
      role="dialog"
      aria-modal="false"
      aria-labelledby="drawer-title"
    >
      <div class="drawer-head">
        <h2 id="drawer-title">{d ? interval(d.interval) : "Partition"}</h2>
        <button type="button" class="quiet" onClick={onClose} aria-label="Close the partition">
          ✕
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!d ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          <p>
            <span class={`badge s-${gridState(d.state)}`} data-testid="drawer-state">
              <span aria-hidden="true">
                {GRID_STATES.find((s) => s.state === gridState(d.state))?.glyph}{" "}
              </span>
              {GRID_STATES.find((s) => s.state === gridState(d.state))?.label}
            </span>{" "}
            attempt {d.attempts}
            {d.step ? `, step ${d.step}` : ""}
          </p>
          {d.outcome && <p data-testid="drawer-outcome">{OUTCOMES[d.outcome] ?? d.outcome}</p>}
          {d.actions.length > 0 && (
            <div class="actions">
              {d.actions.map((a) => (
                <button
                  type="button"
                  disabled={busy}
                  onClick={() => act(a)}
                  class={a.endsWith("drop") ? "danger" : ""}
                >
                  {ACTION_LABEL[a]}
                </button>
              ))}
            </div>
          )}
          <h3>Steps</h3>
          <ol class="steps">
            {d.steps.map((s) => (
              <li class={s.at ? "reached" : ""}>
                <span class="dot" aria-hidden="true">
                  {s.at ? "●" : "○"}
                </span>
                <span class="name">{s.name}</span>
                <span class="at">{s.at ? time(s.at) : "not yet"}</span>
              </li>
            ))}
          </ol>
          {d.error && (
            <>
              <h3>Error</h3>
              <p class="err" data-testid="drawer-error">
                {d.error}
              </p>
            </>
          )}
          {d.failures.length > 0 && (
            <>
              <h3>Druid's report</h3>
              <ul class="failures">
                {d.failures.map((f) => (
                  <li>
                    <span class="mono">{String(f.taskId ?? "")}</span> ({String(f.failureClass ?? "")}
                    {f.deterministic ? ", deterministic" : ""})
                    <pre class="report">{String(f.errorMsg ?? "no error message")}</pre>
                  </li>
                ))}
              </ul>
            </>
          )}
          {d.parseErrors.length > 0 && (
            <>
              <h3>First parse errors</h3>
              <ul>
                {d.parseErrors.slice(0, 5).map((p) => (
                  <li class="mono">{p}</li>
                ))}
              </ul>
            </>
          )}
          <h3>Details</h3>
          <dl class="details">
            <dt>Druid tasks</dt>
            <dd class="mono">{d.druidTaskIds.join(", ") || "–"}</dd>
            <dt>Druid state</dt>
            <dd>{d.druidState ?? "–"}</dd>
            <dt>Version</dt>
            <dd class="mono">{d.version ?? "–"}</dd>
            <dt>Rows</dt>
            <dd>{num(d.rows)}</dd>
            <dt>Segments</dt>
            <dd>
              {num(d.segments)} ({bytes(d.bytes)})
            </dd>
            <dt>Duration</dt>
            <dd>{duration(d.durationMs)}</dd>
          </dl>
          <h3>Events</h3>
          <ol class="events">
            {d.events.map((e: ApiEvent) => (
              <li>
                <span class="at">{time(e.at)}</span> {e.fromState ?? "–"} → {e.toState}: {e.reason}{" "}
                <small>({e.actor})</small>
              </li>
            ))}
          </ol>
        </>
      )}
    </aside>
  );
}

export function BackfillView({ jobId }: { jobId: string }) {
  const [grid, setGrid] = useState<PartitionGrid | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const [openVersion, setOpenVersion] = useState(0);
  const [hover, setHover] = useState<{ i: number; el: HTMLElement } | null>(null);
  const [streamGen, setStreamGen] = useState(0);
  const openRef = useRef<string | null>(null);
  openRef.current = open;
  const lastEvent = useRef(0);

  // One fetch at a time; a change during one fetches once more after it. A failed fetch (the service
  // restarting, a proxy's 502) is tried again with a growing pause: an ended job sends no more events,
  // so without it the page would keep the error until reloaded.
  const fetcher = useRef({ busy: false, again: false, failures: 0, timer: 0 });
  useEffect(() => () => clearTimeout(fetcher.current.timer), []);
  const refresh = useCallback(async () => {
    const f = fetcher.current;
    if (f.busy) {
      f.again = true;
      return;
    }
    f.busy = true;
    clearTimeout(f.timer);
    try {
      do {
        f.again = false;
        const g = await api.get("/api/v1/jobs/{id}/grid", { path: { id: jobId } });
        performance.mark("segops:grid-data");
        setGrid(g);
        setError(null);
        f.failures = 0;
      } while (f.again);
    } catch (e) {
      setError(String((e as Error).message));
      const status = e instanceof ApiError ? e.status : 0;
      if (status !== 401 && status !== 404) {
        f.failures += 1;
        f.timer = window.setTimeout(() => void refresh(), Math.min(15_000, 500 * 2 ** f.failures));
      }
    } finally {
      f.busy = false;
    }
  }, [jobId]);

  useEffect(() => {
    void refresh();
    const es = new EventSource(
      streamUrl("/api/v1/jobs/{id}/stream", { path: { id: jobId }, query: { after: lastEvent.current } }),
    );
    es.addEventListener("event", (e) => {
      const ev = messageData<JobEvent>(e);
      lastEvent.current = Math.max(lastEvent.current, ev.id);
      if (ev.taskId && ev.taskId === openRef.current) setOpenVersion((v) => v + 1);
      void refresh();
    });
    // The job ended: nothing more will come until an action opens it again.
    es.addEventListener("end", () => {
      es.close();
      void refresh();
      setOpenVersion((v) => v + 1);
    });
    return () => es.close();
  }, [jobId, streamGen, refresh]);

  const items = grid?.items ?? [];
  const layout = useMemo(() => layoutOf(items), [items]);
  const onOpen = useCallback((i: number) => setOpen(items[i]?.task ?? null), [items]);
  const onHover = useCallback(
    (i: number | null, el: HTMLElement | null) => setHover(i === null || !el ? null : { i, el }),
    [],
  );
  const counts = useMemo(() => {
    const c: Record<string, number> = {};
    for (const cell of items) c[gridState(cell.state)] = (c[gridState(cell.state)] ?? 0) + 1;
    return c;
  }, [items]);

  const jobAction = async (what: "retry" | "cancel") => {
    try {
      const init = { path: { id: jobId } };
      await (what === "retry"
        ? api.post("/api/v1/jobs/{id}/retry", init)
        : api.post("/api/v1/jobs/{id}/cancel", init));
      setStreamGen((g) => g + 1);
    } catch (e) {
      setError(String((e as Error).message));
    }
  };

  const closeDrawer = () => {
    setOpen(null);
    document.querySelector<HTMLElement>(`.grid [data-index="${active}"]`)?.focus();
  };
  const hovered = hover ? items[hover.i] : undefined;

  return (
    <section aria-labelledby="job-title" class={open ? "with-drawer" : ""}>
      <div class="heading">
        <h1 id="job-title">{grid?.job.datasource ?? "Job"}</h1>
        {grid && (
          <span class={`badge j-${grid.job.state}`} data-testid="job-state">
            {grid.job.state}
          </span>
        )}
      </div>
      <p class="sub mono">{jobId}</p>
      {grid && (
        <p class="sub">
          {[
            grid.job.kind,
            grid.job.range ? interval(grid.job.range) : null,
            `${items.length} partitions by ${layout}`,
          ]
            .filter(Boolean)
            .join(" · ")}
          {grid.job.datasource && (
            <>
              {" "}
              ·{" "}
              <a href={`#/datasources/${enc(grid.job.datasource)}?interval=${enc(grid.job.range ?? "")}`}>
                segment timeline
              </a>
            </>
          )}
        </p>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {grid && (
        <>
          <div class="toolbar">
            <ul class="legend" aria-label="Legend">
              {GRID_STATES.map((s) => (
                <li>
                  <span class={`swatch s-${s.state}`} aria-hidden="true" />
                  {s.label}{" "}
                  <span class="count" data-legend={s.state}>
                    {counts[s.state] ?? 0}
                  </span>
                </li>
              ))}
            </ul>
            <div class="actions">
              {(counts.failed ?? 0) + (counts.dead ?? 0) > 0 && (
                <button type="button" onClick={() => jobAction("retry")}>
                  Retry failed partitions
                </button>
              )}
              {grid.job.state === "open" && !grid.job.canceled && (
                <button type="button" class="danger" onClick={() => jobAction("cancel")}>
                  Cancel job
                </button>
              )}
            </div>
          </div>
          <Grid
            items={items}
            layout={layout}
            active={active}
            onActive={setActive}
            onOpen={onOpen}
            onHover={onHover}
          />
        </>
      )}
      {!grid && !error && <p class="loading">Loading partitions…</p>}
      {hovered && hover && !open && <Tooltip cell={hovered} anchor={hover.el} />}
      {open && (
        <Drawer
          task={open}
          version={openVersion}
          onClose={closeDrawer}
          onAction={() => {
            setOpenVersion((v) => v + 1);
            setStreamGen((g) => g + 1);
          }}
        />
      )}
    </section>
  );
}
