import { useEffect, useMemo, useState } from "preact/hooks";
import { type DashboardJob, enc, type JobState, messageData, streamUrl } from "./api";
import { duration, JOB_STATE_GLYPH, time } from "./format";

/**
 * The job list, live: one event stream (`/api/v1/stream`) sends the newest jobs, then each job again
 * whenever one of its partitions changes — no request per row. Filters by state and datasource. Below
 * 760 px wide each job is a card (style.css, "Jobs on a phone"): the name on one line, its progress bar
 * across the card, the other columns labelled beneath.
 */

const STATES: JobState[] = ["open", "done", "failed"];

function total(j: DashboardJob): number {
  const c = j.counts;
  return c.new + c.running + c.suspended + c.done + c.failed + c.dead;
}

function Progress({ job }: { job: DashboardJob }) {
  const n = Math.max(1, total(job));
  const c = job.counts;
  const pct = (v: number) => `${(v / n) * 100}%`;
  const ended = c.done + c.failed + c.dead;
  return (
    <div
      class="progress"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={total(job)}
      aria-valuenow={ended}
      aria-label={`${job.id}: ${ended} of ${total(job)} partitions ended`}
    >
      <span class="bar s-done" style={{ width: pct(c.done) }} />
      <span class="bar s-failed" style={{ width: pct(c.failed) }} />
      <span class="bar s-dead" style={{ width: pct(c.dead) }} />
      <span class="bar s-running" style={{ width: pct(c.running) }} />
    </div>
  );
}

/**
 * The job list. `druidReachable` is Druid's state as the service reports it (null: not known yet): the
 * list may be live while the work is not, so the indicator is green only while Druid answers.
 */
export function JobsView({
  query,
  druidReachable,
}: {
  query: URLSearchParams;
  druidReachable: boolean | null;
}) {
  const [state, setState] = useState(query.get("state") ?? "");
  const [datasource, setDatasource] = useState(query.get("datasource") ?? "");
  const [jobs, setJobs] = useState<Map<string, DashboardJob>>(new Map());
  const [ready, setReady] = useState(false);
  const [live, setLive] = useState<"connecting" | "live" | "idle">("connecting");
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    const params = new URLSearchParams();
    if (state) params.set("state", state);
    if (datasource) params.set("datasource", datasource);
    // Only while the address still shows the job list: a navigation made just as the list renders (to a
    // job, the timeline) must not be overwritten by it.
    if (/^(#\/?(jobs)?(\?.*)?)?$/.test(location.hash))
      history.replaceState(null, "", `#/jobs${params.size ? `?${params}` : ""}`);
    // A snapshot arrives before `ready`; it replaces the list, later `job` messages update it in place.
    let snapshot = new Map<string, DashboardJob>();
    let inSnapshot = true;
    let idle = false;
    const es = new EventSource(
      streamUrl("/api/v1/stream", {
        query: { state: STATES.find((s) => s === state), datasource: datasource || undefined },
      }),
    );
    es.addEventListener("open", () => {
      snapshot = new Map();
      inSnapshot = true;
      idle = false;
    });
    es.addEventListener("job", (e) => {
      const job = messageData<DashboardJob>(e);
      if (inSnapshot) snapshot.set(job.id, job);
      else setJobs((old) => new Map(old).set(job.id, job));
      setLive("live");
    });
    es.addEventListener("ready", () => {
      inSnapshot = false;
      setJobs(snapshot);
      setReady(true);
      setLive("live");
    });
    // No job has work left: the service ends the stream and the EventSource reconnects by itself.
    es.addEventListener("end", () => {
      idle = true;
      setLive("idle");
    });
    // After an `end` the service closes the stream: that error is the expected reconnect, not an outage.
    es.addEventListener("error", () => !idle && setLive("connecting"));

    return () => es.close();
  }, [state, datasource]);

  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);

  const rows = useMemo(
    () =>
      [...jobs.values()]
        .filter((j) => (!state || j.state === state) && (!datasource || j.datasource === datasource))
        .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1)),
    [jobs, state, datasource],
  );
  const datasources = useMemo(
    () => [...new Set([...jobs.values()].map((j) => j.datasource).filter((d): d is string => !!d))].sort(),
    [jobs],
  );

  return (
    <section aria-labelledby="jobs-title">
      <div class="heading">
        <h1 id="jobs-title">Jobs</h1>
        {druidReachable === false && live !== "connecting" ? (
          <span class="live-paused" role="status">
            ‖ paused: Druid unreachable
          </span>
        ) : (
          <span class={`live-${live}`} role="status">
            {live === "live" ? "● live" : live === "idle" ? "○ nothing running" : "… connecting"}
          </span>
        )}
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          State{" "}
          <select value={state} onChange={(e) => setState((e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {STATES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Datasource{" "}
          <select value={datasource} onChange={(e) => setDatasource((e.target as HTMLSelectElement).value)}>
            <option value="">any</option>
            {[...new Set([...datasources, ...(datasource ? [datasource] : [])])].map((d) => (
              <option value={d}>{d}</option>
            ))}
          </select>
        </label>
      </form>
      {!ready ? (
        <p class="loading">Loading jobs…</p>
      ) : rows.length === 0 ? (
        <p class="empty">No jobs{state || datasource ? " match these filters" : " yet"}.</p>
      ) : (
        <div class="table-wrap">
          <table class="jobs">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Kind</th>
                <th scope="col">State</th>
                <th scope="col">Progress</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
                <th scope="col">
                  <abbr title="partitions done / failed / dead-lettered, of all">Done / failed / dead</abbr>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((j) => {
                const ended = j.state !== "open";
                const ms = (ended ? Date.parse(j.updatedAt) : now) - Date.parse(j.createdAt);
                return (
                  <tr key={j.id} data-job={j.id} data-state={j.state}>
                    <td class="id">
                      {/* On a phone the name and range keep one line each, cut with an ellipsis: the title has them whole. */}
                      <a href={`#/jobs/${enc(j.id)}`} title={j.id}>
                        {j.datasource ?? j.id}
                      </a>
                      <small title={j.range ?? j.id}>
                        {j.range ? j.range.replace(/T00:00:00\.000Z/g, "") : j.id}
                      </small>
                    </td>
                    <td class="kind" data-label="Kind">
                      {j.kind}
                    </td>
                    <td class="state" data-label="State">
                      <span class={`badge j-${j.state}`}>
                        <span aria-hidden="true">{JOB_STATE_GLYPH[j.state]} </span>
                        {j.state}
                        {j.canceled ? " (canceled)" : ""}
                      </span>
                    </td>
                    <td class="progress-cell">
                      <Progress job={j} />
                    </td>
                    <td class="started" data-label="Started">
                      {time(j.createdAt)}
                    </td>
                    <td class="duration" data-label="Duration">
                      {duration(ms)}
                    </td>
                    <td class="counts" data-label="Done / failed / dead">
                      {j.counts.done} / {j.counts.failed} / {j.counts.dead}
                      <small> of {total(j)}</small>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
