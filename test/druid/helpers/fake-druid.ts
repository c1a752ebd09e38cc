/**
 * A tiny scripted HTTP server standing in for Druid in client tests: each route answers from a list of
 * replies (the last one repeats), and every request is recorded so tests can assert exactly how many
 * requests the client made and what they carried.
 */
import { readFileSync } from "node:fs";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";

export type FakeReply =
  | { status: number; headers?: Record<string, string>; body?: string | object | unknown[] }
  | { reset: true }
  | { hang: true };

export interface RecordedRequest {
  method: string;
  path: string;
  /** Raw query string without "?" ("" when none). */
  query: string;
  headers: IncomingMessage["headers"];
  body: string;
  socket: Socket;
}

type Responder = (req: RecordedRequest) => FakeReply;

interface Route {
  method: string;
  path: string;
  replies?: FakeReply[];
  fn?: Responder;
  served: number;
}

const TLS_DIR = new URL("../fixtures/tls/", import.meta.url);

export class FakeDruid {
  readonly requests: RecordedRequest[] = [];
  #routes: Route[] = [];
  #server: Server | undefined;
  #sockets = new Set<Socket>();
  #inFlight = 0;
  /** Highest number of requests being handled at the same time. */
  maxInFlight = 0;
  url = "";

  /** Answers `method path` with these replies in order; the last one repeats. Replaces an earlier script. */
  on(method: string, path: string, ...replies: FakeReply[]): this {
    this.#routes = this.#routes.filter((r) => !(r.method === method && r.path === path));
    this.#routes.push({ method, path, replies, served: 0 });
    return this;
  }

  /** Answers `method path` with a function of the request. */
  handle(method: string, path: string, fn: Responder): this {
    this.#routes = this.#routes.filter((r) => !(r.method === method && r.path === path));
    this.#routes.push({ method, path, fn, served: 0 });
    return this;
  }

  /** Requests received, optionally only for one method and path. */
  count(method?: string, path?: string): number {
    return this.requests.filter((r) => (!method || r.method === method) && (!path || r.path === path)).length;
  }

  async start(options: { tls?: boolean } = {}): Promise<string> {
    const listener = (req: IncomingMessage, res: ServerResponse) => void this.#serve(req, res);
    this.#server = options.tls
      ? createHttpsServer(
          {
            key: readFileSync(new URL("localhost.key", TLS_DIR)),
            cert: readFileSync(new URL("localhost.crt", TLS_DIR)),
          },
          listener,
        )
      : createHttpServer(listener);
    this.#server.on("connection", (s: Socket) => {
      this.#sockets.add(s);
      s.on("close", () => this.#sockets.delete(s));
    });
    this.#server.on("secureConnection", (s: Socket) => {
      this.#sockets.add(s);
      s.on("close", () => this.#sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, "127.0.0.1", resolve));
    const { port } = this.#server.address() as AddressInfo;
    this.url = `${options.tls ? "https" : "http"}://${options.tls ? "localhost" : "127.0.0.1"}:${port}`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.#inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.#inFlight);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const [path = "", query = ""] = (req.url ?? "").split("?");
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path,
      query,
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
      socket: req.socket,
    };
    this.requests.push(recorded);
    const route = this.#routes.find((r) => r.method === recorded.method && r.path === recorded.path);
    let reply: FakeReply;
    if (!route) {
      reply = { status: 404, headers: { "content-type": "text/plain" }, body: `no fixture route ${path}` };
    } else if (route.fn) {
      reply = route.fn(recorded);
    } else {
      const replies = route.replies ?? [];
      reply = replies[Math.min(route.served, replies.length - 1)] ?? { status: 500, body: "empty script" };
    }
    if (route) route.served += 1;
    // Let concurrent requests pile up before answering, so pool limits are observable.
    await new Promise((resolve) => setImmediate(resolve));
    this.#inFlight -= 1;
    if ("reset" in reply) {
      req.socket.destroy();
      return;
    }
    if ("hang" in reply) return;
    const body =
      reply.body === undefined
        ? ""
        : typeof reply.body === "string"
          ? reply.body
          : JSON.stringify(reply.body);
    const headers = {
      ...(typeof reply.body === "object" ? { "content-type": "application/json" } : {}),
      ...reply.headers,
    };
    res.writeHead(reply.status, headers);
    res.end(body);
  }
}

/** A clock whose sleeps return at once (advancing `now`) and are recorded, so retry waits cost no real time. */
export class InstantClock {
  readonly sleeps: number[] = [];
  #now: number;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    this.#now += ms;
    return Promise.resolve();
  }
}

/** A logger that keeps every entry, to check what the client writes (and that secrets are absent). */
export class MemoryLogger {
  readonly entries: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  debug(obj: Record<string, unknown>, msg: string): void {
    this.entries.push({ level: "debug", obj, msg });
  }
  warn(obj: Record<string, unknown>, msg: string): void {
    this.entries.push({ level: "warn", obj, msg });
  }
}

/** A port on which nothing listens (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createHttpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
