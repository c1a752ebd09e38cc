import type { DruidAttempt } from "../../src/druid/http.js";

/**
 * Requests and response bytes per Druid endpoint (route template, `POST /druid/indexer/v1/taskStatus`), as a
 * client's `onAttempt` sees them: every attempt the client sent and the body Druid answered with. What a poller
 * costs Druid, whichever poller it is, as long as it talks through a `DruidClient`.
 */
export interface EndpointCost {
  requests: number;
  bytes: number;
}

export class RequestMeter {
  readonly #by = new Map<string, EndpointCost>();

  readonly record = (attempt: DruidAttempt): void => {
    const cost = this.#by.get(attempt.route) ?? { requests: 0, bytes: 0 };
    cost.requests += 1;
    cost.bytes += attempt.bytes ?? 0;
    this.#by.set(attempt.route, cost);
  };

  /** Per endpoint, the most requested first. */
  byEndpoint(): Array<[endpoint: string, cost: EndpointCost]> {
    return [...this.#by].sort((a, b) => b[1].requests - a[1].requests || (a[0] < b[0] ? -1 : 1));
  }

  total(match: (endpoint: string) => boolean = () => true): EndpointCost {
    const t = { requests: 0, bytes: 0 };
    for (const [e, c] of this.#by)
      if (match(e)) {
        t.requests += c.requests;
        t.bytes += c.bytes;
      }
    return t;
  }
}
