import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { Agent, type Dispatcher, request } from "undici";
import { nextRetry, type RetryPolicy } from "../core/backoff.js";
import { type Clock, systemClock } from "../core/clock.js";
import { UsageError } from "../core/errors.js";
import { classify, classifyResponse, type HttpResponseLike } from "./classify.js";
import { type DruidError, TransientError, UnavailableError, UnexpectedResponseError } from "./errors.js";
import { redact, secretVariants } from "./redact.js";
import { type BudgetClass, RequestBudget } from "./request-budget.js";
import { routeOf } from "./routes.js";

/** Which Druid service a call is for; each may have its own base URL, or all share the Router's. */
export type DruidService = "overlord" | "coordinator" | "broker";

export type DruidAuth =
  | { type: "basic"; username: string; password: string }
  | { type: "bearer"; token: string };

export interface DruidTlsOptions {
  /** Extra CA certificate(s), PEM. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Path of a PEM CA file, read once when the client is created. */
  caFile?: string;
  /**
   * Verify the server certificate. Turn off only for throwaway test clusters.
   * @default true
   */
  rejectUnauthorized?: boolean;
}

/** The pino-compatible subset the client logs through. Entries never contain credentials. */
export interface DruidClientLogger {
  debug?(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

export interface DruidHttpOptions {
  /** One base URL for everything: the Router, or a single-server Druid. */
  url?: string;
  /** Overlord base URL; defaults to `url`. */
  overlordUrl?: string;
  /** Coordinator base URL; defaults to `url`. */
  coordinatorUrl?: string;
  /** Broker base URL (SQL); defaults to `url`. */
  brokerUrl?: string;
  /** Basic (user/password) or bearer-token authentication. Credentials never appear in logs or errors. */
  auth?: DruidAuth;
  /** TLS options for `https:` URLs. */
  tls?: DruidTlsOptions;
  /**
   * Maximum open (keep-alive) connections per origin.
   * @default 16
   */
  connections?: number;
  /**
   * Ask for gzip-compressed answers (`Accept-Encoding: gzip`). Druid's Jetty servers compress every GET and POST
   * answer a client accepts gzip for (`JettyServerInitUtils.wrapWithDefaultGzipHandler`, `druid.server.http.compressionLevel`;
   * seen on Druid 33: `Content-Encoding: gzip` on `/workers` and `POST /taskStatus`): a bulk status answer shrinks
   * about tenfold, at some CPU on both sides.
   * @default true
   */
  compression?: boolean;
  /**
   * At most this many requests a second per Druid host (`--druid-request-budget`): calls past it wait their turn,
   * status lookups first, then handoff checks, then the rest, admission reads last (request-budget.ts); each attempt
   * (retries included) takes a token. A `RequestBudget` to share one between clients. @default none
   */
  requestBudget?:
    | { perSecond: number; onWait?: (cls: BudgetClass, waitedMs: number) => void }
    | RequestBudget;
  /**
   * How long an idle keep-alive connection is kept, in milliseconds.
   * @default 4000
   */
  keepAliveTimeoutMs?: number;
  /**
   * Connect timeout, in milliseconds.
   * @default 10000
   */
  connectTimeoutMs?: number;
  /**
   * Time to wait for response headers, in milliseconds; exceeding it is a `Transient` error.
   * @default 30000
   */
  headersTimeoutMs?: number;
  /**
   * Maximum gap between body chunks, in milliseconds; exceeding it is a `Transient` error.
   * @default 60000
   */
  bodyTimeoutMs?: number;
  /**
   * Backoff curve and retry budget for retryable errors (see `src/core/backoff.ts` for the defaults).
   * @default { baseMs: 250, capMs: 30000, multiplier: 2, maxAttempts: 5, maxTotalWaitMs: 60000 }
   */
  retry?: RetryPolicy;
  /**
   * Leader redirects (307/308) followed per attempt before giving up with `Unavailable`.
   * @default 5
   */
  maxRedirects?: number;
  /** Time source for retry waits. @default systemClock */
  clock?: Clock;
  /** Random source for jitter, in [0, 1). @default Math.random */
  random?: () => number;
  /** Use this undici dispatcher instead of creating an Agent (`connections`/`tls` are then ignored). */
  dispatcher?: Dispatcher;
  /** Where retries and give-ups are reported. */
  logger?: DruidClientLogger;
  /**
   * Told about every attempt: whether Druid answered (any status it decided on, 4xx included) or not
   * (connection failures, timeouts, 5xx, 429/503). Lets a long run notice and bound an outage.
   */
  onAttempt?: (attempt: DruidAttempt) => void;
  /**
   * Asked before every attempt whether it may be sent (`OutageMonitor`: while a host does not answer, one
   * probe per backoff step); it refuses by throwing, and the call fails at once without retrying.
   */
  gate?: DruidGate;
}

/** Decides before each attempt whether it is sent; refuses by throwing (a `DruidUnreachableError`). */
export interface DruidGate {
  admit(attempt: { origin: string; endpoint: string; route: string }): void;
  /** The error a call that gives up leaves with (a host found down meanwhile says so); default: its own. */
  giveUp?(attempt: { origin: string; endpoint: string; route: string }, error: DruidError): DruidError;
}

/**
 * One attempt, as `onAttempt` sees it: whether Druid answered, the endpoint (`METHOD /path`), its route
 * pattern (`METHOD /druid/indexer/v1/task/:taskId/status`, for metrics), the HTTP status (null: no answer)
 * and the origin it was sent to (`http://host:port`).
 */
export type DruidAttempt =
  | {
      readonly reachable: true;
      readonly endpoint: string;
      readonly route: string;
      readonly status: number | null;
      readonly origin?: string;
      /** Bytes of the response body (0: no body, or no answer); what the call cost Druid to send, for metrics. */
      readonly bytes?: number;
    }
  | {
      readonly reachable: false;
      readonly endpoint: string;
      readonly route: string;
      readonly status: number | null;
      readonly error: DruidError;
      readonly origin?: string;
      readonly bytes?: number;
    };

export type QueryValue = string | number | boolean | undefined;

/** One logical call; the transport adds base URL, auth, redirects, timeouts and retries. */
export interface DruidRequest {
  service: DruidService;
  method: "GET" | "POST" | "DELETE";
  /** Path from the service root, segments already encoded, e.g. `/druid/indexer/v1/task/abc/status`. */
  path: string;
  /** `true` sends a bare flag (`?simple`); `undefined` is skipped. */
  query?: Record<string, QueryValue>;
  /** JSON body. */
  json?: unknown;
  /**
   * Whether resending after an ambiguous failure (the request may have reached Druid) is safe.
   * Non-idempotent requests are still retried on 429/503 and on failures before the request was sent.
   */
  idempotent: boolean;
  /** Non-2xx statuses handed back to the caller instead of thrown. */
  passStatuses?: readonly number[];
  /** Checks a received response inside the retry loop; throw a DruidError to reject it (and maybe retry). */
  validate?: (response: DruidResponse) => void;
  signal?: AbortSignal | undefined;
}

export interface DruidResponse extends HttpResponseLike {
  headers: Record<string, string | string[] | undefined>;
  /** `METHOD /path` as used in errors. */
  endpoint: string;
  /** Bytes of the body as sent (compressed, when it was); absent: the body's own length. */
  wireBytes?: number;
}

const gunzipAsync = promisify(gunzip);

interface BaseUrl {
  origin: string;
  /** Path prefix without trailing slash ("" for none). */
  prefix: string;
  protocol: string;
}

const SERVICE_NAMES: Record<DruidService, string> = {
  overlord: "Overlord",
  coordinator: "Coordinator",
  broker: "Broker",
};

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1) {
    throw new UsageError(`Expected \`${name}\` to be an integer from 1 and up, got ${String(value)}`, {
      option: name,
    });
  }
  return v;
}

function nonNegativeInteger(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0) {
    throw new UsageError(`Expected \`${name}\` to be an integer from 0 and up, got ${String(value)}`, {
      option: name,
    });
  }
  return v;
}

/** Parses a base URL, moving any `user:password@` into basic auth so it never travels in a URL or a message. */
function parseBase(option: string, raw: string): { base: BaseUrl; auth?: DruidAuth } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The raw text may embed credentials: do not echo it.
    throw new UsageError(`Expected \`${option}\` to be an http(s) URL`, { option });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`Expected \`${option}\` to be an http(s) URL, got protocol ${url.protocol}`, {
      option,
    });
  }
  const auth: DruidAuth | undefined =
    url.username !== ""
      ? {
          type: "basic",
          username: decodeURIComponent(url.username),
          password: decodeURIComponent(url.password),
        }
      : undefined;
  return {
    base: { origin: url.origin, prefix: url.pathname.replace(/\/+$/, ""), protocol: url.protocol },
    ...(auth ? { auth } : {}),
  };
}

function buildQuery(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === false) continue;
    parts.push(
      value === true ? encodeURIComponent(key) : `${encodeURIComponent(key)}=${encodeURIComponent(value)}`,
    );
  }
  return parts.length === 0 ? "" : `?${parts.join("&")}`;
}

function isAbort(signal: AbortSignal | undefined): signal is AbortSignal {
  return signal?.aborted === true;
}

/**
 * The HTTP layer of the Druid client: one undici Agent (keep-alive, bounded pool), auth headers,
 * 307 leader redirects, per-request timeouts, and the retry loop. Every failure leaves as a DruidError.
 */
export class DruidHttp {
  readonly #bases: Partial<Record<DruidService, BaseUrl>>;
  readonly #onAttempt: ((attempt: DruidAttempt) => void) | undefined;
  readonly #gate: DruidGate | undefined;
  readonly #authHeader: string | undefined;
  readonly #secrets: string[];
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #headersTimeoutMs: number;
  readonly #bodyTimeoutMs: number;
  readonly #maxRedirects: number;
  readonly #retry: RetryPolicy;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #logger: DruidClientLogger | undefined;
  readonly #compression: boolean;
  readonly #budget: RequestBudget | undefined;

  constructor(options: DruidHttpOptions) {
    const bases: Partial<Record<DruidService, BaseUrl>> = {};
    let urlAuth: DruidAuth | undefined;
    const entries: Array<[DruidService, string, string | undefined]> = [
      ["overlord", "overlordUrl", options.overlordUrl ?? options.url],
      ["coordinator", "coordinatorUrl", options.coordinatorUrl ?? options.url],
      ["broker", "brokerUrl", options.brokerUrl ?? options.url],
    ];
    for (const [service, name, raw] of entries) {
      if (raw === undefined) continue;
      const optionName = raw === options.url ? "url" : name;
      const parsed = parseBase(optionName, raw);
      bases[service] = parsed.base;
      urlAuth ??= parsed.auth;
    }
    if (Object.keys(bases).length === 0) {
      throw new UsageError(
        "Expected `url` (Router) or at least one of `overlordUrl`, `coordinatorUrl`, `brokerUrl`",
      );
    }
    this.#bases = bases;
    this.#onAttempt = options.onAttempt;
    this.#gate = options.gate;

    const auth = options.auth ?? urlAuth;
    const secrets: string[] = [];
    if (auth?.type === "basic") {
      const encoded = Buffer.from(`${auth.username}:${auth.password}`).toString("base64");
      this.#authHeader = `Basic ${encoded}`;
      secrets.push(auth.password, encoded, `${auth.username}:${auth.password}`);
    } else if (auth?.type === "bearer") {
      this.#authHeader = `Bearer ${auth.token}`;
      secrets.push(auth.token);
    }
    this.#secrets = secretVariants(secrets);

    this.#headersTimeoutMs = positiveInteger("headersTimeoutMs", options.headersTimeoutMs, 30_000);
    this.#bodyTimeoutMs = positiveInteger("bodyTimeoutMs", options.bodyTimeoutMs, 60_000);
    this.#maxRedirects = nonNegativeInteger("maxRedirects", options.maxRedirects, 5);
    this.#retry = options.retry ?? {};
    // Validate the policy eagerly: a bad option should fail at construction, not on the first error.
    nextRetry({ attemptsMade: 1, waitedMs: 0 }, this.#retry, () => 0);
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#logger = options.logger;
    this.#compression = options.compression ?? true;
    const budget = options.requestBudget;
    this.#budget =
      budget === undefined || budget instanceof RequestBudget
        ? budget
        : new RequestBudget({
            perSecond: budget.perSecond,
            clock: this.#clock,
            ...(budget.onWait ? { onWait: budget.onWait } : {}),
          });

    if (options.dispatcher) {
      this.#dispatcher = options.dispatcher;
      this.#ownsDispatcher = false;
    } else {
      const tls = options.tls ?? {};
      const ca = [...(tls.ca === undefined ? [] : Array.isArray(tls.ca) ? tls.ca : [tls.ca])];
      if (tls.caFile !== undefined) ca.push(readFileSync(tls.caFile));
      this.#dispatcher = new Agent({
        connections: positiveInteger("connections", options.connections, 16),
        keepAliveTimeout: positiveInteger("keepAliveTimeoutMs", options.keepAliveTimeoutMs, 4000),
        connect: {
          timeout: positiveInteger("connectTimeoutMs", options.connectTimeoutMs, 10_000),
          ...(ca.length > 0 ? { ca } : {}),
          ...(tls.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
        },
      });
      this.#ownsDispatcher = true;
    }
  }

  /** Base URL per service (origin and path prefix, never credentials); null where none is configured. */
  endpoints(): Record<DruidService, string | null> {
    const of = (service: DruidService) => {
      const b = this.#bases[service];
      return b ? `${b.origin}${b.prefix}` : null;
    };
    return { overlord: of("overlord"), coordinator: of("coordinator"), broker: of("broker") };
  }

  /** The per-host request budget, when one is set (its counters feed `/metrics`). */
  get requestBudget(): RequestBudget | undefined {
    return this.#budget;
  }

  /** Masks every credential (and its encodings) in a text. */
  redact(text: string): string {
    return redact(text, this.#secrets);
  }

  /** Sends a request, following leader redirects and retrying retryable failures within the budget. */
  async send(req: DruidRequest): Promise<DruidResponse> {
    const endpoint = `${req.method} ${req.path}`;
    const route = `${req.method} ${routeOf(req.path)}`;
    // A missing base URL is a configuration error: raise it before the retry loop could mistake it.
    const base = this.#base(req.service);
    const origin = base.origin;
    // Errors say the path as sent, with the base URL's prefix: a 404 for `/druid/druid/indexer/…` shows
    // why (a prefix in --druid), which `/druid/indexer/…` hid.
    const sent = base.prefix ? `${req.method} ${base.prefix}${req.path}` : endpoint;
    let attemptsMade = 0;
    let waitedMs = 0;
    for (;;) {
      // Outside the try: a refusal is the gate's own error, neither classified nor retried.
      this.#gate?.admit({ origin, endpoint, route });
      if (this.#budget) await this.#budget.take({ origin, route, signal: req.signal });
      attemptsMade += 1;
      let error: DruidError;
      let bytes = 0;
      try {
        const response = await this.#attempt(req, base, sent);
        bytes = response.wireBytes ?? Buffer.byteLength(response.body);
        const passed = req.passStatuses?.includes(response.status) ?? false;
        if ((response.status >= 200 && response.status < 300) || passed) {
          req.validate?.(response);
          this.#onAttempt?.({ reachable: true, endpoint, route, status: response.status, origin, bytes });
          return response;
        }
        error = classifyResponse(response, {
          endpoint: sent,
          now: this.#clock.now(),
          secrets: this.#secrets,
        });
      } catch (caught) {
        if (isAbort(req.signal)) throw req.signal.reason;
        error = classify(caught, { endpoint: sent, now: this.#clock.now(), secrets: this.#secrets });
      }
      error.attempts = attemptsMade;
      const status = error.status ?? null;
      this.#onAttempt?.(
        error.retryable
          ? { reachable: false, endpoint, route, status, error, origin, bytes }
          : { reachable: true, endpoint, route, status, origin, bytes },
      );
      if (!this.#mayRetry(error, req.idempotent)) throw error;
      const decision = nextRetry(
        {
          attemptsMade,
          waitedMs,
          ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
        },
        this.#retry,
        this.#random,
      );
      if (!decision.retry) {
        const settled = this.#gate?.giveUp?.({ origin, endpoint, route }, error) ?? error;
        // A host found down is said once by the gate, not once per call that gave up on it.
        if (settled !== error) throw settled;
        this.#logger?.warn(
          {
            endpoint,
            code: error.code,
            status: error.status,
            attempts: attemptsMade,
            waitedMs,
            budget: decision.reason,
          },
          "druid call failed; retry budget exhausted",
        );
        throw error;
      }
      this.#logger?.debug?.(
        {
          endpoint,
          code: error.code,
          status: error.status,
          attempt: attemptsMade,
          delayMs: decision.delayMs,
        },
        "druid call failed; retrying",
      );
      await this.#clock.sleep(decision.delayMs, req.signal);
      waitedMs += decision.delayMs;
    }
  }

  #mayRetry(error: DruidError, idempotent: boolean): boolean {
    if (!error.retryable) return false;
    if (idempotent) return true;
    // 429/503 mean Druid refused before acting; a transport failure before sending reached nobody.
    return !(error instanceof TransientError) || !error.requestSent;
  }

  #base(service: DruidService): BaseUrl {
    const base = this.#bases[service];
    if (!base) {
      const name = SERVICE_NAMES[service];
      throw new UsageError(`No ${name} URL configured: set \`url\` (the Router) or \`${service}Url\``, {
        option: `${service}Url`,
      });
    }
    return base;
  }

  async #attempt(req: DruidRequest, base: BaseUrl, endpoint: string): Promise<DruidResponse> {
    let url = new URL(`${base.origin}${base.prefix}${req.path}${buildQuery(req.query)}`);
    const headers: Record<string, string> = { accept: "application/json", "user-agent": "segops" };
    if (this.#compression) headers["accept-encoding"] = "gzip";
    if (this.#authHeader !== undefined) headers.authorization = this.#authHeader;
    let body: string | undefined;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers["content-type"] = "application/json";
    }
    // A non-leader Overlord/Coordinator answers 307 to the leader (docs/druid-api.md §2.1): resend the same
    // method and body there. Each attempt starts from the configured URL, so a leader change is just
    // another redirect, and a dead old leader is a connection error for the retry loop.
    for (let hops = 0; ; hops++) {
      const response = await request(url, {
        method: req.method,
        headers,
        body: body ?? null,
        dispatcher: this.#dispatcher,
        headersTimeout: this.#headersTimeoutMs,
        bodyTimeout: this.#bodyTimeoutMs,
        signal: req.signal ?? null,
      });
      const status = response.statusCode;
      const responseHeaders = response.headers as Record<string, string | string[] | undefined>;
      if (status === 307 || status === 308) {
        await response.body.dump();
        const location = responseHeaders.location;
        const target = Array.isArray(location) ? location[0] : location;
        if (!target) {
          throw new UnexpectedResponseError({
            endpoint,
            status,
            druidMessage: "redirect without a Location header",
          });
        }
        if (hops >= this.#maxRedirects) {
          throw new UnavailableError({
            endpoint,
            status,
            druidMessage: `still redirected after ${this.#maxRedirects} hops (leader election in progress?)`,
          });
        }
        const next = new URL(target, url);
        if (next.protocol !== "http:" && next.protocol !== "https:") {
          throw new UnexpectedResponseError({ endpoint, status, druidMessage: "redirect to a non-HTTP URL" });
        }
        if (url.protocol === "https:" && next.protocol === "http:" && this.#authHeader !== undefined) {
          throw new UnexpectedResponseError({
            endpoint,
            status,
            druidMessage: "refusing to send credentials over a redirect from https to http",
          });
        }
        next.username = "";
        next.password = "";
        url = next;
        continue;
      }
      if (String(responseHeaders["content-encoding"] ?? "").toLowerCase() === "gzip") {
        const raw = Buffer.from(await response.body.arrayBuffer());
        let text: string;
        try {
          text = (await gunzipAsync(raw)).toString("utf8");
        } catch (error) {
          throw new UnexpectedResponseError({
            endpoint,
            status,
            druidMessage: `a gzip body that does not decompress (${error instanceof Error ? error.message : String(error)})`,
          });
        }
        return { status, headers: responseHeaders, body: text, endpoint, wireBytes: raw.length };
      }
      const text = await response.body.text();
      return { status, headers: responseHeaders, body: text, endpoint };
    }
  }

  /** Closes the connection pool this client created (a passed-in dispatcher is left alone). */
  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }
}
