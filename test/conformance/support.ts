import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { request } from "undici";

/** One HTTP exchange, with the body read as text (Druid mixes JSON, plain text and HTML error pages). */
export interface Exchange {
  status: number;
  contentType: string;
  text: string;
}

/**
 * Base URL of the service under test: a Druid Router (or Coordinator/Overlord) or the segops emulator. Required:
 * this suite only runs when asked for, and a missing target is an error, not a skip.
 */
export function conformanceBaseUrl(): string {
  const url = process.env.SEGOPS_CONFORMANCE_URL;
  if (!url) {
    throw new Error(
      "SEGOPS_CONFORMANCE_URL is not set: point it at a Druid (e.g. http://127.0.0.1:8888 from scripts/druid/start) " +
        "or at the emulator",
    );
  }
  return url.replace(/\/+$/, "");
}

export async function call(
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
  const res = await request(`${conformanceBaseUrl()}${path}`, init);
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
 * Polls until `probe` returns a value other than undefined. Only for this opt-in suite against a live service,
 * where ingestion and handoff take real time; the default suites use injected clocks instead.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 180_000,
  intervalMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`,
      );
    }
    await delay(intervalMs);
  }
}

/** A fresh task id; Druid keeps every id forever, so each run needs new ones. */
export function freshId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * Writes JSON-lines input files for a `local` inputSource; a string row is written as is (to make bad input). The directory must be readable by the service under
 * test, so this suite assumes it runs on the same machine (SEGOPS_CONFORMANCE_DATA_DIR overrides the location).
 */
export function writeInput(files: Record<string, readonly (object | string)[]>): string {
  const root = process.env.SEGOPS_CONFORMANCE_DATA_DIR ?? tmpdir();
  const dir = mkdtempSync(join(root, "segops-conformance-"));
  for (const [name, rows] of Object.entries(files)) {
    writeFileSync(
      join(dir, name),
      `${rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n")}\n`,
    );
  }
  return dir;
}

export interface SpecOptions {
  id: string;
  dataSource: string;
  baseDir: string;
  dropExisting?: boolean;
  intervals?: string[];
  maxParseExceptions?: number;
}

/** A minimal `index_parallel` spec with a `local` inputSource (api-contract §5 skeleton). */
export function indexParallelSpec(o: SpecOptions): object {
  return {
    type: "index_parallel",
    id: o.id,
    spec: {
      dataSchema: {
        dataSource: o.dataSource,
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
        type: "index_parallel",
        inputSource: { type: "local", baseDir: o.baseDir, filter: "*.json" },
        inputFormat: { type: "json" },
        ...(o.dropExisting ? { dropExisting: true } : {}),
      },
      tuningConfig: {
        type: "index_parallel",
        partitionsSpec: { type: "dynamic" },
        ...(o.maxParseExceptions !== undefined ? { maxParseExceptions: o.maxParseExceptions } : {}),
      },
    },
  };
}
