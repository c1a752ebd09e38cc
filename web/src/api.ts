import type { components, JsonText, paths } from "./generated/api";

/**
 * The dashboard's view of the API: a small fetch client typed by generated/api.d.ts, which
 * `npm run gen:client` generates from the service's OpenAPI document (a test fails while it is stale),
 * and names for the shapes the views read, all taken from it. The session is the HttpOnly cookie the
 * login set (the page never sees the token after the login form); a 401 anywhere sends the page back to
 * the login.
 */

type Method = "get" | "post";
/** The paths that have an operation for `method`. */
type PathOf<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type Operation = { parameters: { path?: unknown; query?: unknown }; requestBody?: unknown };
/** What a request of an operation takes: its path and query parameters and its JSON body, where it has them. */
type Init<O extends Operation> = Pick<O["parameters"], "path" | "query"> &
  (undefined extends O["requestBody"] ? { body?: JsonBody<O> } : { body: JsonBody<O> });
type JsonBody<O extends { requestBody?: unknown }> = [NonNullable<O["requestBody"]>] extends [never]
  ? never
  : NonNullable<O["requestBody"]> extends { content: { "application/json": infer B } }
    ? B
    : never;
/** The init argument, left out where nothing in it is required. */
type InitArg<O extends Operation> = Record<never, never> extends Init<O> ? [init?: Init<O>] : [init: Init<O>];

type Success = 200 | 201 | 202 | 204;
/** The JSON an operation answers on success (undefined for a 204). */
type Answer<O> = O extends { responses: infer R }
  ? {
      [S in keyof R & Success]: R[S] extends { content: { "application/json": infer T } } ? T : undefined;
    }[keyof R & Success]
  : never;

/** The JSON body of a GET's successful answer. */
type Got<P extends PathOf<"get">> = Answer<Op<P, "get">>;

export type PartitionGrid = Got<"/api/v1/jobs/{id}/grid">;
export type Cell = PartitionGrid["items"][number];
export type TaskState = Cell["state"];
export type PartitionDetail = Got<"/api/v1/partitions/{taskId}">;
export type ApiEvent = PartitionDetail["events"][number];
export type Action = PartitionDetail["actions"][number];
export type Timeline = Got<"/api/v1/datasources/{datasource}/timeline">;
export type TimelineSegment = Timeline["segments"][number];
/** A part of the interval with no live data, with Druid's reason or the ledger's where it knows one. */
export type TimelineGap = Timeline["gaps"][number];
export type GapReason = TimelineGap["reason"];
export type DruidLoad = Got<"/api/v1/druid/load">;
/** Whether the service reaches Druid: the state its `/readyz` reports, shown on every page. */
export type DruidReachability = Got<"/api/v1/druid/reachability">;
export type Quantiles = DruidLoad["latency"]["detection"];
type Problem = components["schemas"]["Problem"];

/** The paths whose GET answers an event stream (read with an EventSource, not with the client). */
type StreamPath = {
  [P in PathOf<"get">]: Op<P, "get"> extends {
    responses: { 200: { content: { "text/event-stream": unknown } } };
  }
    ? P
    : never;
}[PathOf<"get">];
/** What a stream's message of type E carries, decoded, as the stream's schema says. */
export type StreamData<P extends StreamPath, E extends string> =
  Extract<
    Op<P, "get">["responses"][200]["content"]["text/event-stream"],
    { event: E }
  >["data"] extends JsonText<infer T>
    ? T
    : never;

/** A job as the job list's stream sends it. A cancel is its `canceled` flag (it ends `failed`), not a state. */
export type DashboardJob = StreamData<"/api/v1/stream", "job">;
export type JobState = DashboardJob["state"];
/** A job's event as its stream sends it. */
export type JobEvent = StreamData<"/api/v1/jobs/{id}/stream", "event">;

/** A stream message's data, decoded (T is one of the `StreamData` types). */
export function messageData<T>(message: Event): T {
  return JSON.parse((message as MessageEvent<string>).data) as T;
}

interface AnyInit {
  path?: Record<string, string | number>;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
}

/** The path with its parameters filled in (each one encoded whole: a task id's `/` is sent as `%2F`). */
function url(path: string, init: AnyInit): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => enc(String(init.path?.[name] ?? "")));
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(init.query ?? {}))
    if (value !== undefined) query.set(name, String(value));
  return query.size > 0 ? `${filled}?${query}` : filled;
}

/** An event stream's URL, its path and parameters checked against the document. */
export function streamUrl<P extends StreamPath>(path: P, ...init: InitArg<Op<P, "get">>): string {
  return url(path, (init[0] ?? {}) as AnyInit);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Called on a 401: the session ended (or never began). */
let onUnauthorized: () => void = () => {};
export function whenUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

async function request(method: Method, path: string, init: AnyInit): Promise<unknown> {
  const headers = new Headers();
  let body: string | null = null;
  if (init.body !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.body);
  }
  const res = await fetch(url(path, init), {
    method: method.toUpperCase(),
    headers,
    body,
    credentials: "same-origin",
  });
  // The login's own 401 is a wrong token, shown on its form, not an ended session.
  if (res.status === 401 && path !== "/api/v1/login") onUnauthorized();
  if (!res.ok) {
    let detail = `${res.status} ${res.statusText}`;
    try {
      const problem = (await res.json()) as Partial<Problem>;
      detail = problem.detail ?? problem.title ?? detail;
    } catch {
      // not a problem document
    }
    throw new ApiError(res.status, detail);
  }
  if (res.status === 204) return undefined;
  return await res.json();
}

/**
 * The API, by the document's paths: `api.get("/api/v1/jobs/{id}/grid", { path: { id } })` answers the
 * operation's JSON; a failure throws an ApiError with the problem document's detail (or title).
 */
export const api = {
  get<P extends Exclude<PathOf<"get">, StreamPath>>(
    path: P,
    ...init: InitArg<Op<P, "get">>
  ): Promise<Answer<Op<P, "get">>> {
    return request("get", path, (init[0] ?? {}) as AnyInit) as Promise<Answer<Op<P, "get">>>;
  },
  post<P extends PathOf<"post">>(path: P, ...init: InitArg<Op<P, "post">>): Promise<Answer<Op<P, "post">>> {
    return request("post", path, (init[0] ?? {}) as AnyInit) as Promise<Answer<Op<P, "post">>>;
  },
};

export const enc = encodeURIComponent;
