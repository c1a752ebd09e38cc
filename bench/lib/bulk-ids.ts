import { Agent, type Dispatcher } from "undici";

/**
 * An undici dispatcher for a benchmark's `DruidClient` that counts the task ids each bulk status request
 * (`POST …/taskStatus`, a JSON array of ids) asks, attempt by attempt — what the response bytes a `RequestMeter`
 * counts for that route were spent on, so a bulk answer's cost per task asked can be measured.
 */
export interface CountingDispatcher {
  readonly dispatcher: Dispatcher;
  /** Ids asked over every bulk status attempt so far. */
  idsAsked(): number;
  close(): Promise<void>;
}

/** Ids in a bulk status request body (a JSON array), or 0 when the body is not one. */
export function bulkStatusIds(method: string, path: string, body: unknown): number {
  if (method !== "POST" || !path.split("?")[0]?.endsWith("/taskStatus")) return 0;
  const text = typeof body === "string" ? body : Buffer.isBuffer(body) ? body.toString("utf8") : null;
  if (text === null) return 0;
  try {
    const ids: unknown = JSON.parse(text);
    return Array.isArray(ids) ? ids.length : 0;
  } catch {
    return 0;
  }
}

/** `connections` as `DruidClient`'s own agent would have them (the benchmark's client sets 16). */
export function countingDispatcher(connections: number): CountingDispatcher {
  let ids = 0;
  const agent = new Agent({ connections, keepAliveTimeout: 4000 });
  const dispatcher = agent.compose((dispatch) => (opts, handler) => {
    ids += bulkStatusIds(opts.method, opts.path, opts.body);
    return dispatch(opts, handler);
  });
  return { dispatcher, idsAsked: () => ids, close: () => agent.close() };
}
