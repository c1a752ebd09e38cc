import { afterEach } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { type SimHandle, type SimOptions, startSim } from "../../src/sim/index.js";

/** An in-process emulator on a `ManualClock` (sim time moves only with `advance`), closed after each test. */
export interface TestSim {
  sim: SimHandle;
  clock: ManualClock;
  url: string;
  get(path: string): Promise<HttpResult>;
  post(path: string, body: unknown, contentType?: string): Promise<HttpResult>;
  /** Moves sim time forward by `ms`. */
  advance(ms: number): Promise<void>;
}

export interface HttpResult {
  status: number;
  contentType: string | null;
  text: string;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience for reading arbitrary JSON bodies
  json: any;
}

const open: SimHandle[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()?.close();
});

/** Start time of every test sim: 2026-03-01T00:00:00Z. */
export const T0 = Date.UTC(2026, 2, 1);

export async function startTestSim(options: SimOptions = {}): Promise<TestSim> {
  const clock = new ManualClock(T0);
  const sim = await startSim({ clock, ...options });
  open.push(sim);
  const call = async (
    method: string,
    path: string,
    body?: string,
    contentType?: string,
  ): Promise<HttpResult> => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      redirect: "manual",
      ...(body !== undefined ? { body, headers: { "Content-Type": contentType ?? "application/json" } } : {}),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return {
      status: res.status,
      contentType: res.headers.get("content-type"),
      text,
      headers: res.headers,
      json,
    };
  };
  return {
    sim,
    clock,
    url: sim.url,
    get: (path) => call("GET", path),
    post: (path, body, contentType) =>
      call("POST", path, typeof body === "string" ? body : JSON.stringify(body), contentType),
    advance: (ms) => clock.advance(ms),
  };
}

/** A valid `index_parallel` task; `over` patches spec parts shallowly. */
export function parallelTask(
  opts: {
    id?: string;
    dataSource?: string;
    intervals?: string[] | null;
    inputSource?: Record<string, unknown>;
    inputFormat?: Record<string, unknown> | null;
    ioConfig?: Record<string, unknown>;
    tuningConfig?: Record<string, unknown>;
    dataSchema?: Record<string, unknown>;
    granularitySpec?: Record<string, unknown>;
    context?: Record<string, unknown>;
    type?: string;
  } = {},
): Record<string, unknown> {
  const intervals = opts.intervals === undefined ? ["2026-01-01/2026-01-02"] : opts.intervals;
  const type = opts.type ?? "index_parallel";
  return {
    type,
    ...(opts.id !== undefined ? { id: opts.id } : {}),
    spec: {
      dataSchema: {
        dataSource: opts.dataSource ?? "wiki",
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: { dimensions: ["page", "user"] },
        metricsSpec: [{ type: "count", name: "count" }],
        granularitySpec: {
          segmentGranularity: "day",
          queryGranularity: "none",
          rollup: false,
          ...(intervals ? { intervals } : {}),
          ...opts.granularitySpec,
        },
        ...opts.dataSchema,
      },
      ioConfig: {
        type,
        inputSource: opts.inputSource ?? { type: "s3", uris: ["s3://bucket/x.json"] },
        ...(opts.inputFormat === null ? {} : { inputFormat: opts.inputFormat ?? { type: "json" } }),
        ...opts.ioConfig,
      },
      tuningConfig: { type, partitionsSpec: { type: "dynamic" }, ...opts.tuningConfig },
    },
    context: { simRows: 1000, ...opts.context },
  };
}
