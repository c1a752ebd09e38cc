import { readdir, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import type { SourceEntry, SourceProbe } from "../ingest/source.js";

/**
 * The real `SourceProbe`: this host's file system and HEAD requests. One probe per planning: a backfill's
 * partitions share a base directory, which is listed once. Anything unreadable is `null` ("cannot see it
 * from here"), never an error: a directory that exists only on Druid's hosts is normal.
 */

/** Files listed at most under one base directory; past it the spec alone names the work. */
const MAX_FILES = 100_000;
/** A HEAD that takes longer says nothing about the source. @default 5 s */
const HEAD_TIMEOUT_MS = 5_000;

export function fileSystemProbe(options: { headTimeoutMs?: number } = {}): SourceProbe {
  const listings = new Map<string, Promise<SourceEntry[] | null>>();
  return {
    listFiles(baseDir) {
      let listing = listings.get(baseDir);
      if (!listing) {
        listing = listFiles(baseDir).catch(() => null);
        listings.set(baseDir, listing);
      }
      return listing;
    },
    async statFile(path) {
      try {
        const s = await stat(path);
        return s.isFile() ? { name: path, bytes: s.size, stamp: String(Math.trunc(s.mtimeMs)) } : null;
      } catch {
        return null;
      }
    },
    head: (uri) => head(uri, options.headTimeoutMs ?? HEAD_TIMEOUT_MS),
  };
}

async function listFiles(baseDir: string): Promise<SourceEntry[] | null> {
  const out: SourceEntry[] = [];
  const pending = [baseDir];
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    for (const d of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, d.name);
      if (d.isDirectory()) pending.push(path);
      else if (d.isFile()) {
        const s = await stat(path);
        out.push({ name: relative(baseDir, path), bytes: s.size, stamp: String(Math.trunc(s.mtimeMs)) });
        if (out.length > MAX_FILES) return null;
      }
    }
  }
  return out;
}

/** A URI's validators; its name keeps no credentials and no query (which may hold a signature). */
async function head(uri: string, timeoutMs: number): Promise<SourceEntry | null> {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  try {
    const res = await fetch(url, {
      method: "HEAD",
      signal: AbortSignal.timeout(timeoutMs),
      redirect: "follow",
    });
    if (!res.ok) return null;
    const etag = res.headers.get("etag");
    const modified = res.headers.get("last-modified");
    const length = res.headers.get("content-length");
    if (!etag && !modified) return null;
    return {
      name: `${url.protocol}//${url.host}${url.pathname}`,
      bytes: length !== null && /^\d+$/.test(length) ? Number(length) : null,
      stamp: etag ?? modified ?? "",
    };
  } catch {
    return null;
  }
}
