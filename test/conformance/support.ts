import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";

/** One HTTP exchange, with the body read as text (Druid mixes JSON, plain text and HTML error pages). */
export interface Exchange {
  status: number;
  contentType: string;
  text: string;
}

/**
 * The service the conformance cases run against: a real Druid (scripts/druid/start) or the segops emulator.
 * Everything that differs between the two is here; the cases themselves are shared (cases.ts).
 */
export interface ConformanceTarget {
  /** Label in test names, e.g. "real Druid" or "emulator (druidVersion 33)". */
  name: string;
  /** Base URL (Router-like: every Druid path on one port); read lazily, after the target's own setup. */
  url(): string;
  /**
   * Lets time pass between two polls: a real delay against Druid, a sim-clock step against the emulator (so the
   * emulator's suite never sleeps).
   */
  pause(): Promise<void>;
  /** Polls before `eventually` gives up. */
  maxPolls: number;
  /**
   * Wall-clock patience of one `eventually` against a live service, kept below the test timeout so that a wait
   * that never ends fails with the last answer it saw instead of a bare "Test timed out". Unset for the
   * emulator, whose clock is stepped.
   */
  giveUpAfterMs?: number;
  /** Parent directory for input files; the target must be able to read it (same machine). */
  dataDir(): string;
}

/** HTTP against a target; the body is always read as text. */
export async function call(
  target: ConformanceTarget,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<Exchange> {
  const init =
    body === undefined
      ? { method }
      : {
          method,
          headers: { "content-type": contentType },
          body: typeof body === "string" ? body : JSON.stringify(body),
        };
  const res = await request(`${target.url()}${path}`, init);
  const text = await res.body.text();
  const header = res.headers["content-type"];
  return { status: res.statusCode, contentType: (Array.isArray(header) ? header[0] : header) ?? "", text };
}

export function json(ex: Exchange): unknown {
  try {
    return JSON.parse(ex.text);
  } catch {
    throw new Error(`expected a JSON body, got ${ex.status} ${ex.contentType}: ${ex.text.slice(0, 300)}`);
  }
}

/**
 * Polls until `probe` returns a value other than undefined, pausing the target between polls. On timeout it
 * throws with the last value or error seen, so a failure shows what the service answered.
 */
export async function eventually<T>(
  target: ConformanceTarget,
  what: string,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  let last: unknown;
  const started = Date.now();
  for (let poll = 0; ; poll++) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      last = undefined;
    } catch (err) {
      last = err;
    }
    const waited = Date.now() - started;
    if (poll >= target.maxPolls || (target.giveUpAfterMs !== undefined && waited >= target.giveUpAfterMs)) {
      throw new Error(
        `gave up after ${poll + 1} polls (${Math.round(waited / 1000)} s) waiting for ${what}${last ? `: ${String(last)}` : ""}`,
      );
    }
    await target.pause();
  }
}

/**
 * Submits an ingestion task to the Overlord and waits until Druid serves it: the task's SUCCESS (a FAILED one
 * is the error `eventually` reports, with Druid's errorMsg), then the Coordinator's load status of `interval`
 * at 100 %. The Broker may see the rows a moment later.
 */
export async function ingestServed(
  target: ConformanceTarget,
  task: Record<string, unknown>,
  dataSource: string,
  interval: string,
): Promise<void> {
  const id = task.id as string;
  const submit = await call(target, "POST", "/druid/indexer/v1/task", task);
  if (submit.status !== 200) throw new Error(`submit: ${submit.status} ${submit.text}`);
  await eventually(target, `task ${id} to succeed`, async () => {
    const ex = await call(target, "GET", `/druid/indexer/v1/task/${id}/status`);
    const { statusCode, errorMsg } = (
      json(ex) as { status: { statusCode: string; errorMsg?: string | null } }
    ).status;
    if (statusCode === "FAILED") throw new Error(`task ${id} failed: ${errorMsg ?? "no errorMsg"}`);
    return statusCode === "SUCCESS" ? true : undefined;
  });
  const load = `/druid/coordinator/v1/datasources/${dataSource}/loadstatus?forceMetadataRefresh=true&interval=${interval.replace("/", "_")}`;
  await eventually(target, `the segments of ${dataSource} to load`, async () => {
    const ex = await call(target, "GET", load);
    return ex.status === 200 && (json(ex) as Record<string, number>)[dataSource] === 100 ? true : undefined;
  });
}

/** A fresh task id or datasource name; Druid keeps every task id forever, so each run needs new ones. */
export function freshId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Writes JSON-lines input files for a `local` inputSource into a new directory under `root`; a string row is
 * written as is (to make bad input).
 */
export function writeInput(root: string, files: Record<string, readonly (object | string)[]>): string {
  const dir = mkdtempSync(join(root, "segops-conformance-"));
  for (const [name, rows] of Object.entries(files)) {
    writeFileSync(
      join(dir, name),
      `${rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n")}\n`,
    );
  }
  return dir;
}

/** Input files go under os.tmpdir() unless SEGOPS_CONFORMANCE_DATA_DIR says otherwise. */
export function defaultDataDir(): string {
  return process.env.SEGOPS_CONFORMANCE_DATA_DIR ?? tmpdir();
}

export interface SpecOptions {
  id: string;
  dataSource: string;
  baseDir: string;
  dropExisting?: boolean;
  appendToExisting?: boolean;
  intervals?: string[];
  maxParseExceptions?: number;
  /**
   * Parallel mode with one file per sub-task: on a real Druid every sub-task is a task of its own (about a
   * second each), so many files make a slow task without much data.
   */
  subTasks?: number;
  /** @default ["page", { type: "long", name: "added" }] */
  dimensions?: readonly unknown[];
  /** @default "day" */
  segmentGranularity?: string;
}

/** A minimal `index_parallel` spec with a `local` inputSource (docs/druid-api.md §5 skeleton). */
export function indexParallelSpec(o: SpecOptions): Record<string, unknown> {
  return {
    type: "index_parallel",
    id: o.id,
    spec: {
      dataSchema: {
        dataSource: o.dataSource,
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: { dimensions: o.dimensions ?? ["page", { type: "long", name: "added" }] },
        granularitySpec: {
          segmentGranularity: o.segmentGranularity ?? "day",
          queryGranularity: "none",
          rollup: false,
          ...(o.intervals ? { intervals: o.intervals } : {}),
        },
      },
      ioConfig: {
        type: "index_parallel",
        inputSource: { type: "local", baseDir: o.baseDir, filter: "*.json" },
        inputFormat: { type: "json" },
        ...(o.dropExisting ? { dropExisting: true } : {}),
        ...(o.appendToExisting ? { appendToExisting: true } : {}),
      },
      tuningConfig: {
        type: "index_parallel",
        partitionsSpec: { type: "dynamic" },
        ...(o.maxParseExceptions !== undefined ? { maxParseExceptions: o.maxParseExceptions } : {}),
        ...(o.subTasks !== undefined
          ? { maxNumConcurrentSubTasks: o.subTasks, splitHintSpec: { type: "maxSize", maxNumFiles: 1 } }
          : {}),
      },
    },
  };
}

export interface SamplerSpecOptions {
  /** The `local` inputSource: `baseDir` + `filter` (default `*.json`) and/or `files`. */
  inputSource: { baseDir?: string; filter?: string; files?: string[] } | null;
  /** Leave `inputFormat` out (a `local` source needs one). */
  noInputFormat?: boolean;
  intervals?: string[];
  numRows?: number;
}

/**
 * A sampler request (`IndexTaskSamplerSpec`, docs/druid-api.md §2.12) over the same dataSchema as
 * `indexParallelSpec`, shaped as Druid's web console sends it (`index_parallel` types throughout).
 */
export function samplerSpec(o: SamplerSpecOptions): Record<string, unknown> {
  const source = o.inputSource;
  return {
    type: "index",
    spec: {
      dataSchema: {
        dataSource: "segops_conformance_sample",
        timestampSpec: { column: "time", format: "iso" },
        dimensionsSpec: { dimensions: ["page", { type: "long", name: "added" }] },
        granularitySpec: {
          segmentGranularity: "day",
          queryGranularity: "none",
          rollup: false,
          ...(o.intervals ? { intervals: o.intervals } : {}),
        },
      },
      ioConfig: {
        type: "index",
        ...(source
          ? {
              inputSource: {
                type: "local",
                ...(source.baseDir !== undefined
                  ? { baseDir: source.baseDir, filter: source.filter ?? "*.json" }
                  : {}),
                ...(source.files ? { files: source.files } : {}),
              },
            }
          : {}),
        ...(o.noInputFormat ? {} : { inputFormat: { type: "json" } }),
      },
      tuningConfig: { type: "index", partitionsSpec: { type: "dynamic" } },
    },
    ...(o.numRows !== undefined ? { samplerConfig: { numRows: o.numRows } } : {}),
  };
}
