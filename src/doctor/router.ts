import type { Finding, RouterVerdict } from "./report.js";

/**
 * Whether the URL segops was given serves Druid's management APIs. A Router forwards `/druid/coordinator/*`
 * and `/druid/indexer/*` only with `druid.router.managementProxy.enabled=true` (off by default); without it
 * those paths fall through to the web console's servlet and answer 404 or 405, while `/status` still answers
 * (docs/druid-api.md, "Router"). Pure: it reads the statuses the doctor got.
 */
export interface RouterAnswers {
  /** Whether the Overlord and Coordinator are reached through the one `--druid` URL. */
  readonly throughOneUrl: boolean;
  /** HTTP status of `GET /status` (null: no answer). */
  readonly status: number | null;
  /** HTTP status of `GET /druid/coordinator/v1/leader`. */
  readonly coordinatorLeader: number | null;
  /** HTTP status of `GET /druid/indexer/v1/leader`. */
  readonly overlordLeader: number | null;
}

const missing = (s: number | null) => s === 404 || s === 405;
const ok = (s: number | null) => s !== null && s >= 200 && s < 300;

export function routerVerdict(a: RouterAnswers): {
  verdict: RouterVerdict;
  detail: string;
  finding?: Finding;
} {
  if (!a.throughOneUrl) {
    return {
      verdict: "direct",
      detail: "the Overlord and Coordinator are addressed directly (--overlord/--coordinator)",
    };
  }
  if (ok(a.coordinatorLeader) && ok(a.overlordLeader)) {
    return {
      verdict: "management-proxy",
      detail:
        "the URL serves the Coordinator's and Overlord's APIs (a Router with its management proxy, or a single server)",
    };
  }
  if (missing(a.status) && missing(a.coordinatorLeader) && missing(a.overlordLeader)) {
    const detail = `/status and both leader paths answer ${a.status}: this URL (its path prefix included) does not serve Druid`;
    return {
      verdict: "not-druid",
      detail,
      finding: {
        severity: "blocker",
        code: "druid-not-found",
        message: `${detail}. Check --druid: the Router's base URL, e.g. http://router:8888, or the prefix a gateway serves Druid under`,
      },
    };
  }
  if (ok(a.status) && (missing(a.coordinatorLeader) || missing(a.overlordLeader))) {
    const which = [
      missing(a.coordinatorLeader) ? `/druid/coordinator/v1/leader → ${a.coordinatorLeader}` : null,
      missing(a.overlordLeader) ? `/druid/indexer/v1/leader → ${a.overlordLeader}` : null,
    ].filter(Boolean);
    const detail = `/status answers but ${which.join(", ")}: a Router without its management proxy`;
    return {
      verdict: "no-management-proxy",
      detail,
      finding: {
        severity: "blocker",
        code: "router-without-proxy",
        message: `${detail}. segops needs the Overlord and Coordinator APIs: set druid.router.managementProxy.enabled=true on the Router, or pass --overlord and --coordinator URLs`,
      },
    };
  }
  return {
    verdict: "unknown",
    detail: `could not tell (/status → ${a.status ?? "no answer"}, coordinator leader → ${a.coordinatorLeader ?? "no answer"}, overlord leader → ${a.overlordLeader ?? "no answer"})`,
  };
}
