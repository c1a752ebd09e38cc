import { PLAIN_HTTP_CODES } from "../druid/classify.js";
import { isDruidError } from "../druid/errors.js";

/**
 * What to do when the start-up check fails, by why it failed (pure). A 404 there is never "Druid is not
 * running": something answered, but not Druid's API at that path.
 */

const UNREACHABLE_HINT = "is Druid running there? (try `segops sim` for a local emulator)";

/** The hint after `cannot reach Druid at <url>: <why>`; `url` is the base URL as given. */
export function startupHint(error: unknown, url: string | undefined): string {
  if (!isDruidError(error)) return UNREACHABLE_HINT;
  if (error.code === "Unauthorized" || error.code === "Forbidden")
    return "check --user / SEGOPS_DRUID_PASSWORD or SEGOPS_DRUID_TOKEN";
  if (error.code === "Tls") {
    if (PLAIN_HTTP_CODES.has(error.druidErrorCode ?? ""))
      return url?.startsWith("https://")
        ? `pass ${url.replace(/^https:/, "http:")}, or enable TLS on the server`
        : "use an http:// URL, or enable TLS on the server";
    return "the server's certificate is not trusted: pass the CA that signed it with --ca-file (PEM), or --insecure for a throwaway test cluster only";
  }
  // A Router without the management proxy hands those paths to the console, which may answer 404 or 405.
  if (error.status === 404 || error.status === 405) {
    const prefix = url === undefined ? "" : pathOf(url);
    const causes = [
      ...(prefix ? [`the URL's path ${prefix}, sent before every API path (drop it)`] : []),
      "a Router without druid.router.managementProxy.enabled=true, which then does not serve the Overlord's and Coordinator's APIs (set it, or pass --overlord and --coordinator)",
    ];
    return `something answered, but Druid's API is not at that path: ${causes.join(", or ")}`;
  }
  return UNREACHABLE_HINT;
}

function pathOf(url: string): string {
  try {
    const path = new URL(url).pathname.replace(/\/+$/, "");
    return path;
  } catch {
    return "";
  }
}
