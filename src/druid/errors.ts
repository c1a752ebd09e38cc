import type { DruidErrorCode } from "../core/errors.js";
import { SegopsError } from "../core/errors.js";

/**
 * The Druid error taxonomy. Every failed call to Druid surfaces as exactly one of these classes, decided by
 * `classify()` from the HTTP status and Druid's error body (docs/druid-api.md §1), or from the transport failure.
 *
 * | code                 | retryable | meaning                                                          |
 * |----------------------|-----------|------------------------------------------------------------------|
 * | `DuplicateTask`      | no        | a task with this id already exists (400, §2.2 / §8)              |
 * | `SpecRejected`       | no        | Druid rejected the spec or query (400 Jackson / invalidInput)    |
 * | `NotFound`           | no        | 404 (or pre-0.23 400 "Cannot find any task with id")             |
 * | `Unauthorized`       | no        | 401: missing or wrong credentials                                |
 * | `Forbidden`          | no        | 403: authenticated but not allowed                               |
 * | `BadRequest`         | no        | any other 4xx (405, 409, 415, plain-text 400s, ...)              |
 * | `Capacity`           | yes       | 429: task queue full or query capacity exceeded                  |
 * | `Unavailable`        | yes       | 503: no leader / leader not ready / Router has no destination    |
 * | `Transient`          | yes       | other 5xx, resets, timeouts, socket errors                       |
 * | `Unsupported`        | no        | 501: Druid does not do this (a DruidException UNSUPPORTED)       |
 * | `Tls`                | no        | TLS failed (certificate, or plain HTTP): a configuration problem |
 * | `UnexpectedResponse` | no        | a 2xx/3xx the client cannot use (bad JSON, redirect without URL) |
 */
export type { DruidErrorCode };

/** What every Druid error knows about the failed exchange. Never holds credentials. */
export interface DruidErrorInit {
  /** `METHOD /path` of the request (no host, no query string, no credentials). */
  endpoint: string;
  /** HTTP status, when Druid answered at all. */
  status?: number;
  /** Druid's own message, extracted from whichever envelope it used. */
  druidMessage?: string;
  /** Druid's machine code when the body had one (`errorCode` of an ErrorResponse, or a legacy `error` code). */
  druidErrorCode?: string;
  /** The server's `Retry-After` hint, in milliseconds. */
  retryAfterMs?: number;
  /** The underlying transport error, kept for debugging (non-enumerable, so not serialized). */
  cause?: unknown;
}

const SUMMARY: Record<DruidErrorCode, string> = {
  DuplicateTask: "Druid already has a task with this id",
  SpecRejected: "Druid rejected the spec",
  NotFound: "Druid does not know this resource",
  Unauthorized: "Druid did not accept the credentials",
  Forbidden: "Druid denied access",
  BadRequest: "Druid rejected the request",
  Capacity: "Druid is at capacity",
  Unavailable: "Druid is unavailable",
  Transient: "Druid request failed",
  Unsupported: "Druid does not support this request",
  // Not only verification: a plain-HTTP server behind an https:// URL fails the handshake too.
  Tls: "TLS failed talking to Druid",
  UnexpectedResponse: "Druid sent a response the client cannot use",
};

function describe(code: DruidErrorCode, init: DruidErrorInit): string {
  const where = init.status === undefined ? init.endpoint : `${init.endpoint}, HTTP ${init.status}`;
  const what = init.druidMessage ? `: ${init.druidMessage}` : "";
  return `${SUMMARY[code]}${what} (${where})`;
}

/** Base class of every error raised for a failed Druid call. */
export abstract class DruidError extends SegopsError {
  declare readonly code: DruidErrorCode;
  /** Whether trying the same request again may succeed. */
  abstract readonly retryable: boolean;
  readonly endpoint: string;
  readonly status: number | undefined;
  readonly druidMessage: string | undefined;
  readonly druidErrorCode: string | undefined;
  readonly retryAfterMs: number | undefined;
  /** Attempts made before giving up (set by the client's retry loop). */
  attempts = 1;

  protected constructor(code: DruidErrorCode, init: DruidErrorInit, extra: Record<string, unknown> = {}) {
    super(
      code,
      describe(code, init),
      {
        endpoint: init.endpoint,
        status: init.status,
        druidMessage: init.druidMessage,
        druidErrorCode: init.druidErrorCode,
        ...extra,
      },
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.endpoint = init.endpoint;
    this.status = init.status;
    this.druidMessage = init.druidMessage;
    this.druidErrorCode = init.druidErrorCode;
    this.retryAfterMs = init.retryAfterMs;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      attempts: this.attempts,
      ...this.details,
    };
  }
}

/** 400 "Task[<id>] already exists" in any of its historic shapes; `taskId` is the id Druid named. */
export class DuplicateTaskError extends DruidError {
  readonly retryable = false;
  readonly taskId: string | undefined;
  constructor(init: DruidErrorInit & { taskId?: string }) {
    super("DuplicateTask", init, { taskId: init.taskId });
    this.taskId = init.taskId;
  }
}

/** 400 from spec/query validation: Jackson mapping errors, unknown types, `invalidInput`. */
export class SpecRejectedError extends DruidError {
  readonly retryable = false;
  constructor(init: DruidErrorInit) {
    super("SpecRejected", init);
  }
}

/** 404 (and the pre-0.23 400 for unknown task ids); `taskId` is set when Druid named one. */
export class NotFoundError extends DruidError {
  readonly retryable = false;
  readonly taskId: string | undefined;
  constructor(init: DruidErrorInit & { taskId?: string }) {
    super("NotFound", init, { taskId: init.taskId });
    this.taskId = init.taskId;
  }
}

export class UnauthorizedError extends DruidError {
  readonly retryable = false;
  constructor(init: DruidErrorInit) {
    super("Unauthorized", init);
  }
}

export class ForbiddenError extends DruidError {
  readonly retryable = false;
  constructor(init: DruidErrorInit) {
    super("Forbidden", init);
  }
}

/** Any 4xx without a more specific class. Never retried: the same request will fail the same way. */
export class BadRequestError extends DruidError {
  readonly retryable = false;
  constructor(init: DruidErrorInit) {
    super("BadRequest", init);
  }
}

/** 429. Druid refused before doing anything, so even a non-idempotent request may be resent. */
export class CapacityError extends DruidError {
  readonly retryable = true;
  constructor(init: DruidErrorInit) {
    super("Capacity", init);
  }
}

/** 503. Druid refused before doing anything, so even a non-idempotent request may be resent. */
export class UnavailableError extends DruidError {
  readonly retryable = true;
  constructor(init: DruidErrorInit) {
    super("Unavailable", init);
  }
}

/**
 * Other 5xx and transport failures. `requestSent` is false only when the connection was never
 * established (refused, DNS, connect timeout): only then is resending a non-idempotent request safe.
 */
export class TransientError extends DruidError {
  readonly retryable = true;
  readonly requestSent: boolean;
  constructor(init: DruidErrorInit & { requestSent: boolean }) {
    super("Transient", init, { requestSent: init.requestSent });
    this.requestSent = init.requestSent;
  }
}

/**
 * 501: a `DruidException` of category `UNSUPPORTED` (docs/druid-api.md §1) — Druid does not do what was asked, so
 * the same request fails the same way: never retried, unlike the other 5xx.
 */
export class UnsupportedError extends DruidError {
  readonly retryable = false;
  constructor(init: DruidErrorInit) {
    super("Unsupported", init);
  }
}

export class TlsError extends DruidError {
  readonly retryable = false;
  constructor(init: DruidErrorInit) {
    super("Tls", init);
  }
}

export class UnexpectedResponseError extends DruidError {
  readonly retryable = false;
  constructor(init: DruidErrorInit) {
    super("UnexpectedResponse", init);
  }
}

/** True for any Druid error, also across duplicated module copies (checks the shape, not the prototype). */
export function isDruidError(value: unknown): value is DruidError {
  return (
    value instanceof DruidError ||
    (value instanceof Error &&
      typeof (value as { code?: unknown }).code === "string" &&
      typeof (value as { retryable?: unknown }).retryable === "boolean" &&
      typeof (value as { endpoint?: unknown }).endpoint === "string")
  );
}
