import type { IncomingMessage, ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";
import { jacksonParseError } from "./jackson-parse.js";

/**
 * What a route handler answers. Handlers are pure-ish functions returning a `Reply`; the server writes it.
 * `body` undefined means an empty body (e.g. 204, or Druid's `sendError(503)` with no entity).
 */
export interface Reply {
  status: number;
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export function json(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return {
    status,
    body: JSON.stringify(value),
    contentType: "application/json",
    ...(headers ? { headers } : {}),
  };
}

export function text(status: number, body: string, contentType = "text/plain"): Reply {
  return { status, body, contentType };
}

export function empty(status: number): Reply {
  return { status };
}

/** Druid's `ErrorResponse` (docs/druid-api.md §1); keys in Druid's order. */
export interface DruidErrorResponse {
  error: "druidException";
  errorCode: string;
  persona: "USER" | "ADMIN" | "OPERATOR" | "DEVELOPER";
  category: string;
  errorMessage: string;
  context: Record<string, string>;
}

const CATEGORY_STATUS: Record<string, number> = {
  INVALID_INPUT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  CAPACITY_EXCEEDED: 429,
  DEFENSIVE: 500,
  RUNTIME_FAILURE: 500,
  UNCATEGORIZED: 500,
  UNSUPPORTED: 501,
  SERVICE_UNAVAILABLE: 503,
  TIMEOUT: 504,
};

/** A new-style `DruidException` answer: status from the category (docs/druid-api.md §1). */
export function druidError(
  errorCode: string,
  persona: DruidErrorResponse["persona"],
  category: string,
  errorMessage: string,
  context: Record<string, string> = {},
): Reply {
  const body: DruidErrorResponse = {
    error: "druidException",
    errorCode,
    persona,
    category,
    errorMessage,
    context,
  };
  return json(CATEGORY_STATUS[category] ?? 500, body);
}

export function invalidInput(message: string, context: Record<string, string> = {}): Reply {
  return druidError("invalidInput", "USER", "INVALID_INPUT", message, context);
}

/** Jackson mapping failure in a `@JsonCreator` (docs/druid-api.md §2.2): `{"error":"Cannot construct instance of …"}`. */
export function constructError(className: string, message: string): Reply {
  return json(400, { error: `Cannot construct instance of \`${className}\`, problem: ${message}` });
}

/** The body of a POST, capped so a huge upload cannot exhaust memory. */
export async function readBody(req: IncomingMessage, limit = 64 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) throw new Error(`request body larger than ${limit} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function writeReply(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string | number> = { ...(reply.headers ?? {}) };
  let body: string | Buffer | undefined = reply.body;
  if (body !== undefined) {
    headers["Content-Type"] = reply.contentType ?? "application/json";
    // As Druid's Jetty servers do (`JettyServerInitUtils.wrapWithDefaultGzipHandler`: GET and POST, no minimum
    // size; seen on Druid 33): a body is gzipped for a client that accepts gzip.
    if (acceptsGzip(res.req) && res.req.method !== "HEAD") {
      body = gzipSync(body);
      headers["Content-Encoding"] = "gzip";
      headers.Vary = "Accept-Encoding, User-Agent";
    }
    headers["Content-Length"] = Buffer.byteLength(body);
  } else {
    headers["Content-Length"] = 0;
  }
  res.writeHead(reply.status, headers);
  res.end(body);
}

function acceptsGzip(req: IncomingMessage | undefined): req is IncomingMessage {
  const accepted = String(req?.headers["accept-encoding"] ?? "").toLowerCase();
  return accepted.split(",").some((e) => {
    const [name, ...params] = e.trim().split(";");
    return name?.trim() === "gzip" && !params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p));
  });
}

/** Whether a request declares a JSON body (`@Consumes(APPLICATION_JSON)` → 415 otherwise). */
export function isJson(req: IncomingMessage): boolean {
  const type = String(req.headers["content-type"] ?? "")
    .split(";")[0]
    ?.trim()
    .toLowerCase();
  return type === "application/json" || (type?.endsWith("+json") ?? false);
}

/** Jetty's error page for an exception thrown inside a resource (what a real Druid 33 sent for a bad body). */
export function jettyError(message: string): Reply {
  const escaped = message
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/'/g, "&apos;")
    .replace(/"/g, "&quot;");
  return text(
    500,
    `<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html;charset=ISO-8859-1"/>\n<title>Error 500 ${escaped}</title>\n</head>\n<body><h2>HTTP ERROR 500 ${escaped}</h2>\n</body>\n</html>\n`,
    "text/html;charset=iso-8859-1",
  );
}

/** A body Jackson cannot parse, as Jetty's 500 page with Jackson's exception (docs/druid-api.md §2.2). */
export function jsonParseError(raw: string): Reply {
  const e = jacksonParseError(raw) ?? {
    exception: "com.fasterxml.jackson.core.JsonParseException",
    message: "Unexpected character in request body",
  };
  return jettyError(`javax.servlet.ServletException: ${e.exception}: ${e.message}`);
}
