import {
  BadRequestError,
  CapacityError,
  type DruidError,
  type DruidErrorInit,
  DuplicateTaskError,
  ForbiddenError,
  isDruidError,
  NotFoundError,
  SpecRejectedError,
  TlsError,
  TransientError,
  UnauthorizedError,
  UnavailableError,
  UnexpectedResponseError,
  UnsupportedError,
} from "./errors.js";
import { redact } from "./redact.js";

/** A received HTTP response, reduced to what classification needs. */
export interface HttpResponseLike {
  status: number;
  /** Lower-case header names, as undici and node:http give them. */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
  body: string;
}

export interface ClassifyOptions {
  /** `METHOD /path` of the request, used in messages. */
  endpoint: string;
  /** Current time in ms, to turn an HTTP-date `Retry-After` into a delay. Without it only seconds are read. */
  now?: number;
  /** Secret strings (and their encodings) to mask out of every message. */
  secrets?: readonly string[];
}

/** Druid's error, pulled out of whichever envelope it came in (docs/druid-api.md §1). */
export interface ParsedErrorBody {
  message?: string;
  /** `errorCode` of an ErrorResponse (`entryAlreadyExists`, `invalidInput`, ...) or a legacy query error code. */
  errorCode?: string;
  /** `category` of an ErrorResponse (`INVALID_INPUT`, `CAPACITY_EXCEEDED`, ...). */
  category?: string;
}

const MAX_MESSAGE = 2000;

function clip(text: string): string {
  const t = text.trim();
  return t.length > MAX_MESSAGE ? `${t.slice(0, MAX_MESSAGE)}…` : t;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

function fromJson(value: unknown): ParsedErrorBody | undefined {
  if (typeof value === "string") return { message: value };
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const o = value as Record<string, unknown>;
  // MSQ wraps an ErrorResponse in a SqlTaskStatus: {"taskId","state":"FAILED","error":{...}} (§6).
  if (o.error !== null && typeof o.error === "object") return fromJson(o.error);
  const str = (k: string) => (typeof o[k] === "string" ? (o[k] as string) : undefined);
  const parsed: ParsedErrorBody = {};
  const errorMessage = str("errorMessage");
  const error = str("error");
  if (str("errorCode") !== undefined) {
    // New-style ErrorResponse (§1). For a wrapped legacy QueryException `error` holds the legacy code.
    parsed.errorCode = str("errorCode");
    parsed.category = str("category");
    parsed.message = errorMessage ?? error;
  } else if (errorMessage !== undefined) {
    // Legacy QueryException: {"error": code, "errorMessage": text, "errorClass", "host"}.
    parsed.errorCode = error;
    parsed.message = errorMessage;
  } else if (error !== undefined) {
    parsed.message = error; // {"error": "..."} from CustomExceptionMapper and friends.
  } else if (str("Access-Check-Result") !== undefined) {
    parsed.message = str("Access-Check-Result");
  } else {
    return undefined;
  }
  return parsed;
}

/** Extracts Druid's message from any of its error envelopes: ErrorResponse, `{"error"}`, Jetty HTML, text. */
export function parseErrorBody(body: string): ParsedErrorBody {
  const text = body.trim();
  if (text === "") return {};
  if (text.startsWith("{") || text.startsWith('"')) {
    try {
      const parsed = fromJson(JSON.parse(text));
      if (parsed)
        return { ...parsed, ...(parsed.message !== undefined ? { message: clip(parsed.message) } : {}) };
    } catch {
      // Not JSON after all: fall through to text handling.
    }
  }
  if (/^<(!doctype|html)/i.test(text)) {
    // Jetty's error page: <tr><th>MESSAGE:</th><td>Unauthorized</td></tr> (§1, BasicHTTPAuthenticator).
    const cell = /<th>MESSAGE:<\/th>\s*<td>([\s\S]*?)<\/td>/i.exec(text)?.[1];
    const title = /<title>([\s\S]*?)<\/title>/i.exec(text)?.[1];
    const found = cell ?? title;
    return found === undefined ? {} : { message: clip(decodeEntities(found.replace(/<[^>]*>/g, ""))) };
  }
  return { message: clip(text) };
}

// ≤26 "Task[id] already exists!", 27–29 "Task [id] already exists.", ≥30 "Task[id] already exists",
// and the DB-insert race "Task [id] already exists" (docs/druid-api.md §2.2, §8). Greedy, so ids may contain "]".
const DUPLICATE_TASK = /^Task ?\[(.+)\] already exists[.!]?$/;
const UNKNOWN_TASK = /^Cannot find any task with id: \[(.+)\]$/;
// Jackson mapping failures surfaced by CustomExceptionMapper (§2.2): constructor validation (two wordings),
// unknown polymorphic type, missing type id, unconvertible values.
const JACKSON_MAPPING =
  /^(Cannot construct instance of |Instantiation of |Please make sure to load all the necessary extensions|Could not resolve type id|Missing type id|missing type id|Cannot deserialize|Unrecognized field|Invalid type definition)/;

/** Reads `Retry-After` (delta-seconds or HTTP-date) as milliseconds. */
export function parseRetryAfter(value: string | undefined, now?: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (now === undefined) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function header(response: HttpResponseLike, name: string): string | undefined {
  const v = response.headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Maps a non-success Druid response to its error class (docs/druid-api.md §1, §2, §7, §8). */
export function classifyResponse(response: HttpResponseLike, options: ClassifyOptions): DruidError {
  const parsed = parseErrorBody(response.body);
  const secrets = options.secrets ?? [];
  const message = parsed.message === undefined ? undefined : redact(parsed.message, secrets);
  const status = response.status;
  const init: DruidErrorInit = { endpoint: options.endpoint, status };
  if (message !== undefined && message !== "") init.druidMessage = message;
  if (parsed.errorCode !== undefined) init.druidErrorCode = parsed.errorCode;
  const retryAfterMs = parseRetryAfter(header(response, "retry-after"), options.now);
  if (retryAfterMs !== undefined) init.retryAfterMs = retryAfterMs;

  if (status === 400 || status === 404) {
    const unknownTask = message === undefined ? null : UNKNOWN_TASK.exec(message);
    // Before Druid 0.23 an unknown task id was a 400 with this same text (§8).
    if (unknownTask) return new NotFoundError({ ...init, taskId: unknownTask[1] });
  }
  if (status === 400) {
    const duplicate = message === undefined ? null : DUPLICATE_TASK.exec(message);
    if (duplicate || parsed.errorCode === "entryAlreadyExists") {
      return new DuplicateTaskError({ ...init, ...(duplicate?.[1] ? { taskId: duplicate[1] } : {}) });
    }
    if (
      parsed.errorCode === "invalidInput" ||
      parsed.category === "INVALID_INPUT" ||
      (message !== undefined && JACKSON_MAPPING.test(message))
    ) {
      return new SpecRejectedError(init);
    }
    return new BadRequestError(init);
  }
  if (status === 401) return new UnauthorizedError(init);
  if (status === 403) return new ForbiddenError(init);
  if (status === 404) return new NotFoundError(init);
  if (status === 429) return new CapacityError(init);
  if (status === 503) return new UnavailableError(init);
  if (status === 501) return new UnsupportedError(init);
  if (status >= 400 && status < 500) return new BadRequestError(init);
  if (status >= 500 && status < 600) return new TransientError({ ...init, requestSent: true });
  return new UnexpectedResponseError(init);
}

// Failures before any byte was sent: resending even a POST cannot create a second task.
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

// The server accepted the connection and then dropped it: something listens there (a Router restarting,
// a proxy whose backend is not up yet), unlike a refusal or a name that does not resolve.
const DROPPED_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/** True for a connection that was taken and then reset or hung up (`socket hang up`, "other side closed"). */
export function isConnectionDropped(error: DruidError): boolean {
  return error.status === undefined && DROPPED_CODES.has(error.druidErrorCode ?? "");
}

const TLS_CODES =
  /^(CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH|ERR_SSL_)/;

const DESCRIPTION: Record<string, string> = {
  UND_ERR_HEADERS_TIMEOUT: "timed out waiting for response headers",
  UND_ERR_BODY_TIMEOUT: "timed out reading the response body",
  UND_ERR_CONNECT_TIMEOUT: "timed out connecting",
  UND_ERR_SOCKET: "the connection failed",
  ECONNRESET: "the connection was reset",
  ECONNREFUSED: "the connection was refused",
  EPIPE: "the connection was closed while sending",
  ETIMEDOUT: "the connection timed out",
  ENOTFOUND: "the host name did not resolve",
  EAI_AGAIN: "the host name did not resolve (temporary DNS failure)",
  // OpenSSL read an HTTP answer where a TLS record belongs: an https:// URL for a plain-HTTP port.
  ERR_SSL_WRONG_VERSION_NUMBER: "the server answered plain HTTP to a TLS handshake: use http:// for this URL",
  ERR_SSL_PACKET_LENGTH_TOO_LONG:
    "the server answered plain HTTP to a TLS handshake: use http:// for this URL",
};

/** Transport codes of an https:// URL whose server speaks plain HTTP (no certificate is involved). */
export const PLAIN_HTTP_CODES: ReadonlySet<string> = new Set([
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_SSL_PACKET_LENGTH_TOO_LONG",
]);

function errorCodeOf(error: unknown): string | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") return code;
  // Node's happy-eyeballs connect can reject with an AggregateError of per-address failures.
  const nested = (error as { errors?: unknown }).errors;
  if (Array.isArray(nested)) return errorCodeOf(nested[0]);
  const cause = (error as { cause?: unknown }).cause;
  return cause === undefined ? undefined : errorCodeOf(cause);
}

/** Maps a transport failure (no HTTP response) to its error class. */
export function classifyFailure(error: unknown, options: ClassifyOptions): DruidError {
  if (isDruidError(error)) return error;
  const code = errorCodeOf(error);
  const secrets = options.secrets ?? [];
  const raw = error instanceof Error ? error.message : String(error);
  const detail = redact(code !== undefined ? (DESCRIPTION[code] ?? `${code}: ${raw}`) : raw, secrets);
  const init: DruidErrorInit = { endpoint: options.endpoint, druidMessage: detail, cause: error };
  if (code !== undefined) init.druidErrorCode = code;
  if (code !== undefined && TLS_CODES.test(code)) return new TlsError(init);
  return new TransientError({ ...init, requestSent: code === undefined || !NOT_SENT_CODES.has(code) });
}

function isResponseLike(value: unknown): value is HttpResponseLike {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { status?: unknown }).status === "number" &&
    typeof (value as { body?: unknown }).body === "string"
  );
}

/** `classify(response | error)`: the one entry point; a DruidError passes through unchanged. */
export function classify(input: HttpResponseLike | unknown, options: ClassifyOptions): DruidError {
  if (isDruidError(input)) return input;
  return isResponseLike(input) ? classifyResponse(input, options) : classifyFailure(input, options);
}
