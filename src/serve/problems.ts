import { STATUS_CODES } from "node:http";
import { z } from "zod";
import { SegopsError } from "../core/errors.js";
import { isDruidError } from "../druid/errors.js";
import { InvalidSpecError } from "../spec/issues.js";

/**
 * Errors as RFC 9457 problem details (`application/problem+json`): a stable `type` per kind of problem,
 * the HTTP status, a sentence for people, and for bad input every field at fault with its path. Never a
 * stack trace, never a secret: only messages segops wrote on purpose reach a client.
 */

/** Where a faulty field is: the request body, query string or path, or the spec a template rendered to. */
export type FieldLocation = "body" | "query" | "path" | "header" | "spec";

export const FieldError = z.object({
  in: z.enum(["body", "query", "path", "header", "spec"]),
  /** Dotted JSON path of the field, e.g. `vars.day` or `spec.ioConfig.inputSource`. */
  path: z.string(),
  message: z.string(),
});
export type FieldError = z.infer<typeof FieldError>;

export const Problem = z.object({
  /** A URI naming the kind of problem (relative: resolved against the service). */
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  instance: z.string().optional(),
  /** segops' error code (`ErrorCode`), when a segops error caused it. */
  code: z.string().optional(),
  errors: z.array(FieldError).optional(),
});
export type Problem = z.infer<typeof Problem>;

/** The kinds of problem the API answers with: slug → [status, title]. */
export const PROBLEMS = {
  "invalid-request": [400, "The request is invalid"],
  "invalid-spec": [400, "The template does not render to a spec Druid accepts"],
  unauthorized: [401, "A valid bearer token is required"],
  "not-found": [404, "No such resource"],
  "method-not-allowed": [405, "Method not allowed"],
  "request-timeout": [408, "The request took too long to arrive"],
  conflict: [409, "The request conflicts with the ledger's state"],
  "idempotency-key-reused": [409, "The Idempotency-Key was used with another request"],
  "partitions-busy": [409, "Partitions whose input changed are running on the old input"],
  "payload-too-large": [413, "The request body is too large"],
  "unsupported-media-type": [415, "The request body must be JSON"],
  "headers-too-large": [431, "The request's header fields (or its URL) are too large"],
  unavailable: [503, "A dependency (ledger or Druid) is unavailable"],
  internal: [500, "Internal error"],
} as const satisfies Record<string, readonly [number, string]>;
export type ProblemKind = keyof typeof PROBLEMS;

/**
 * A request Node's HTTP parser refuses before the app sees it (`clientError`: headers or URL over the
 * header size limit, or not HTTP at all), answered as a problem too rather than a bare status line: the
 * whole response, to write to the socket before closing it.
 */
export function parserProblemResponse(error: NodeJS.ErrnoException): string {
  const p =
    error.code === "HPE_HEADER_OVERFLOW"
      ? problem("headers-too-large", "the request line and headers are over the limit (16 KiB unless set)")
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? problem("request-timeout", "the request did not arrive in time")
        : problem("invalid-request", "the request is not valid HTTP/1.1");
  const body = JSON.stringify(p);
  return [
    `HTTP/1.1 ${p.status} ${STATUS_CODES[p.status] ?? ""}`,
    "content-type: application/problem+json",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
    "",
    body,
  ].join("\r\n");
}

/** A problem the handlers throw: the error middleware answers with it as it is. */
export class ProblemError extends Error {
  readonly problem: Problem;
  constructor(kind: ProblemKind, detail?: string, extra: Partial<Problem> = {}) {
    super(detail ?? PROBLEMS[kind][1]);
    this.problem = problem(kind, detail, extra);
  }
}

export function problem(kind: ProblemKind, detail?: string, extra: Partial<Problem> = {}): Problem {
  const [status, title] = PROBLEMS[kind];
  return { type: `/problems/${kind}`, title, status, ...(detail !== undefined ? { detail } : {}), ...extra };
}

/** The problem a zod failure of the request is: every issue with its location and path. */
export function invalidRequest(location: FieldLocation, error: z.ZodError): ProblemError {
  const errors = error.issues.map((issue) => ({
    in: location,
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const first = errors[0];
  const detail = first ? `${first.path || location}: ${first.message}` : "invalid request";
  return new ProblemError("invalid-request", detail, { errors });
}

/**
 * The deepest nesting a request body may have (the body itself is level 1). The deepest spec in Druid's
 * own documentation and tests is 7 levels and a template sits one level down in a run or backfill
 * request, so no real request comes near it; the validation after it recurses per level and must
 * never meet a body deep enough to overflow the stack.
 */
export const MAX_BODY_DEPTH = 100;

/** The problem a body nested deeper than {@link MAX_BODY_DEPTH} is, at the first place it is. */
export function bodyTooDeep(path: readonly (string | number)[]): ProblemError {
  const message = `nested deeper than ${MAX_BODY_DEPTH} levels`;
  const where = path.map(String).join(".");
  // The path is as long as the limit: shown clipped, so the answer stays small.
  const shown = where.length > 120 ? `${where.slice(0, 80)}…${where.slice(-30)}` : where;
  return new ProblemError("invalid-request", `body: ${message} at ${shown}`, {
    errors: [{ in: "body", path: shown, message }],
  });
}

/**
 * The problem for an error a handler let through. segops errors carry messages written for users; any
 * other error is a bug whose message may quote internals, so the client gets a generic 500.
 */
export function problemFor(error: unknown): { problem: Problem; internal: boolean } {
  if (error instanceof ProblemError) return { problem: error.problem, internal: false };
  if (error instanceof InvalidSpecError) {
    return {
      problem: problem("invalid-spec", error.message, {
        code: error.code,
        errors: error.errors.map((e) => ({ in: "spec" as const, path: e.path, message: e.message })),
      }),
      internal: false,
    };
  }
  if (isDruidError(error))
    return {
      problem: problem("unavailable", `Druid: ${error.message}`, { code: error.code }),
      internal: false,
    };
  if (error instanceof SegopsError) {
    if (error.code === "Ledger" || error.code === "Unreachable")
      return { problem: problem("unavailable", error.message, { code: error.code }), internal: false };
    // The jobs library marks a missing resource and a state conflict (NotFoundError, StateConflictError).
    if (error.details.notFound === true)
      return { problem: problem("not-found", error.message, { code: error.code }), internal: false };
    if (error.details.conflict === true)
      return { problem: problem("conflict", error.message, { code: error.code }), internal: false };
    const path = typeof error.details.path === "string" ? error.details.path : undefined;
    const message = typeof error.details.problem === "string" ? error.details.problem : error.message;
    return {
      problem: problem("invalid-request", error.message, {
        code: error.code,
        ...(path !== undefined ? { errors: [{ in: "body" as const, path, message }] } : {}),
      }),
      internal: false,
    };
  }
  return { problem: problem("internal", "an unexpected error; see the service log"), internal: true };
}
