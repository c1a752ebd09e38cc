import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, whenUnauthorized } from "./api";
import { BackfillView } from "./backfill";
import { DruidView } from "./druid";
import { JobsView } from "./jobs";
import { Login } from "./login";
import { DruidBanner, useDruidReachability } from "./outage";
import "./style.css";
import { TimelineView } from "./timeline";

/**
 * The dashboard: a hash router over four views (jobs, one job's partitions, a datasource's segment
 * timeline, Druid's load), behind the login when the service has a token; every view under a banner
 * while Druid does not answer.
 */

interface Route {
  view: "jobs" | "job" | "datasource" | "druid";
  arg: string;
  query: URLSearchParams;
}

function parseHash(): Route {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path = "", q = ""] = hash.split("?");
  const [head = "", ...rest] = path.split("/");
  const arg = decodeURIComponent(rest.join("/"));
  const query = new URLSearchParams(q);
  if (head === "jobs" && arg) return { view: "job", arg, query };
  if (head === "datasources") return { view: "datasource", arg, query };
  if (head === "druid") return { view: "druid", arg, query };
  return { view: "jobs", arg: "", query };
}

function useRoute(): Route {
  const [route, setRoute] = useState(parseHash);
  useEffect(() => {
    const on = () => setRoute(parseHash());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

type Session = "unknown" | "login" | "in";

function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session>("unknown");
  const [authRequired, setAuthRequired] = useState(false);

  useEffect(() => {
    whenUnauthorized(() => setSession("login"));
    api
      .get("/api/v1/session")
      .then((s) => {
        setAuthRequired(s.authRequired);
        setSession(s.authenticated ? "in" : "login");
      })
      .catch(() => setSession("login"));
  }, []);

  useEffect(() => {
    const titles = { jobs: "Jobs", job: "Job", datasource: "Segment timeline", druid: "Druid load" };
    document.title = `${titles[route.view]} · segops`;
  }, [route.view]);

  if (session === "unknown") return <p class="loading">Loading…</p>;
  if (session === "login") return <Login onDone={() => setSession("in")} />;
  return <Pages route={route} authRequired={authRequired} onLogout={() => setSession("login")} />;
}

/** The pages behind the login: the header, Druid's banner when it does not answer, the current view. */
function Pages({
  route,
  authRequired,
  onLogout,
}: {
  route: Route;
  authRequired: boolean;
  onLogout: () => void;
}) {
  const druid = useDruidReachability();

  const logout = async () => {
    await api.post("/api/v1/logout");
    onLogout();
  };
  const nav = (view: Route["view"], href: string, label: string) => (
    <a
      href={href}
      aria-current={route.view === view || (view === "jobs" && route.view === "job") ? "page" : undefined}
    >
      {label}
    </a>
  );
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">segops</span>
        <nav aria-label="Views">
          {nav("jobs", "#/jobs", "Jobs")}
          {nav("datasource", "#/datasources/", "Segment timeline")}
          {nav("druid", "#/druid", "Druid load")}
        </nav>
        {authRequired && (
          <button type="button" class="quiet" onClick={logout}>
            Log out
          </button>
        )}
      </header>
      <DruidBanner state={druid} />
      <main id="main" tabIndex={-1}>
        {route.view === "jobs" && <JobsView query={route.query} druidReachable={druid?.reachable ?? null} />}
        {route.view === "job" && <BackfillView jobId={route.arg} />}
        {route.view === "datasource" && <TimelineView datasource={route.arg} query={route.query} />}
        {route.view === "druid" && <DruidView />}
      </main>
    </>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
