import { useEffect, useState } from "preact/hooks";
import { api, type DruidReachability } from "./api";
import { clock, num } from "./format";

/**
 * Druid's reachability on every page: the state the service's `/readyz` reports, asked every few seconds
 * (the answer costs the service no Druid request). While Druid does not answer, a banner says since when
 * and that the work waits with nothing lost; the job list's live indicator reads it too.
 */

/** How often the pages ask (the service logs each request: not more often than this). */
const EVERY_MS = 5000;

/** Druid's state as the service last said it; null until the first answer. */
export function useDruidReachability(): DruidReachability | null {
  const [state, setState] = useState<DruidReachability | null>(null);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const read = async () => {
      try {
        const s = await api.get("/api/v1/druid/reachability");
        if (!stopped) setState(s);
      } catch {
        // The service itself did not answer: the pages' own reads say so; keep the last state.
      }
      if (!stopped) timer = setTimeout(read, EVERY_MS);
    };
    void read();
    const again = () => {
      if (document.visibilityState !== "visible") return;
      clearTimeout(timer);
      void read();
    };
    document.addEventListener("visibilitychange", again);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", again);
    };
  }, []);
  return state;
}

export function DruidBanner({ state }: { state: DruidReachability | null }) {
  if (!state || state.reachable) return null;
  const since = state.since;
  return (
    <div class="outage" role="alert" data-testid="druid-unreachable">
      <strong>
        Druid unreachable
        {since && (
          <>
            {" "}
            since{" "}
            <time dateTime={since} title={since}>
              {clock(since)}
            </time>
          </>
        )}
      </strong>{" "}
      — work paused, nothing lost.
      <small class="outage-detail">
        {state.workerPaused
          ? " Partitions were handed back; they are claimed again once Druid answers."
          : " Partitions wait where they are; no retry is counted."}
        {state.nextProbeAt && (
          <>
            {" "}
            Next try at <time dateTime={state.nextProbeAt}>{clock(state.nextProbeAt)}</time>
          </>
        )}
        {state.refused !== undefined && state.refused > 0 && <>; {num(state.refused)} calls held back</>}
        {state.lastError && (
          <>
            . Last error: <span class="mono">{state.lastError}</span>
          </>
        )}
      </small>
    </div>
  );
}
