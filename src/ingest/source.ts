import { createHash } from "node:crypto";
import { canonicalJson, type JsonValue } from "../core/canonical-json.js";
import type { JsonObject } from "../ledger/types.js";

/**
 * The source version of a partition: what makes a rerun over changed input new work. Given by the user
 * (`--source-version`, the API's `sourceVersion`, an orchestrator's run) or fingerprinted here from what
 * segops can see of the input: a `local` input source's files (name, size, modification time) and an
 * `http` source's URIs (ETag, Last-Modified, length). Where segops cannot see the input (a cloud bucket,
 * a directory that exists only on Druid's hosts) there is no fingerprint and the spec alone names the work.
 *
 * The probe that reads files and URIs is injected; everything here is pure over its answers.
 */

/** One input file or URI as fingerprinted. */
export interface SourceEntry {
  /** The file's path under its base directory, or the URI without credentials. */
  name: string;
  /** Bytes, when known. */
  bytes: number | null;
  /** Modification time (ms since the epoch) or an ETag / Last-Modified text. */
  stamp: string;
}

/** A partition's source version, stored in its payload. */
export interface SourceVersion {
  /** Hashed into the Druid task id: changed input, new id. */
  version: string;
  /** `given`: the user's; `local`/`http`: fingerprinted by segops. */
  origin: "given" | "local" | "http";
  /** How many files or URIs the input has (fingerprinted sources). */
  count?: number;
  /** Their total size in bytes, when known. */
  bytes?: number;
  /** The first entries, for saying what changed. */
  entries?: SourceEntry[];
}

/** What a fingerprint needs from the world; `null` = cannot be seen from here. */
export interface SourceProbe {
  /** Every file under `baseDir`, recursively, with paths relative to it. */
  listFiles(baseDir: string): Promise<SourceEntry[] | null>;
  /** One file named by its path. */
  statFile(path: string): Promise<SourceEntry | null>;
  /** One URI's validators (a HEAD request). */
  head(uri: string): Promise<SourceEntry | null>;
}

/** Entries kept in the payload for the "source changed" message. */
const KEPT_ENTRIES = 20;
/** URIs fingerprinted at most per partition (a HEAD each); past it the spec alone names the work. */
export const MAX_FINGERPRINTED_URIS = 100;

/** The given version as a partition's source version. */
export function givenSource(version: string): SourceVersion {
  return { version, origin: "given" };
}

/**
 * Apache commons-io `WildcardFileFilter` as Druid's `LocalInputSource` applies it to file names: `*` any
 * run of characters, `?` one, case-sensitive.
 */
export function wildcardMatches(pattern: string, name: string): boolean {
  return wildcard(pattern).test(name);
}

function wildcard(pattern: string): RegExp {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${re}$`, "s");
}

/** A listing's files by name, built once per listing: a backfill's partitions each look up their day's file. */
const byNameOf = new WeakMap<readonly SourceEntry[], Map<string, SourceEntry[]>>();

function byName(listed: readonly SourceEntry[]): Map<string, SourceEntry[]> {
  let index = byNameOf.get(listed);
  if (!index) {
    index = new Map();
    for (const e of listed) {
      const name = baseName(e.name);
      const same = index.get(name);
      if (same) same.push(e);
      else index.set(name, [e]);
    }
    byNameOf.set(listed, index);
  }
  return index;
}

/**
 * The files of a listing that Druid's filter matches: a plain name is looked up (a backfill of 10,000 days
 * over 10,000 files would otherwise test every file for every day), a wildcard is compiled once.
 */
function matching(listed: readonly SourceEntry[], pattern: string): readonly SourceEntry[] {
  if (!/[*?]/.test(pattern)) return byName(listed).get(pattern) ?? [];
  const re = wildcard(pattern);
  return listed.filter((e) => re.test(baseName(e.name)));
}

function baseName(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? path : path.slice(i + 1);
}

function summarise(origin: "local" | "http", entries: SourceEntry[]): SourceVersion {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const body = canonicalJson(sorted as unknown as JsonValue);
  const version = `${origin}:${createHash("sha256").update(body).digest("hex").slice(0, 16)}`;
  const known = sorted.every((e) => e.bytes !== null);
  return {
    version,
    origin,
    count: sorted.length,
    ...(known ? { bytes: sorted.reduce((n, e) => n + (e.bytes ?? 0), 0) } : {}),
    entries: sorted.slice(0, KEPT_ENTRIES),
  };
}

/** The input source of a native spec (`spec.ioConfig.inputSource`), if it has one. */
export function inputSourceOf(spec: JsonObject): JsonObject | null {
  const io = (spec.spec as JsonObject | undefined)?.ioConfig as JsonObject | undefined;
  const source = io?.inputSource;
  return source && typeof source === "object" && !Array.isArray(source) ? (source as JsonObject) : null;
}

/**
 * Fingerprints an input source through the probe, or null where segops cannot see it (another type,
 * a directory or URI it cannot read, more URIs than {@link MAX_FINGERPRINTED_URIS}).
 */
export async function fingerprintSource(
  source: JsonObject,
  probe: SourceProbe,
): Promise<SourceVersion | null> {
  if (source.type === "local") return fingerprintLocal(source, probe);
  if (source.type === "http") return fingerprintHttp(source, probe);
  return null;
}

/**
 * Druid's `LocalInputSource` reads the files under `baseDir` whose name matches `filter` (recursively) and
 * the files it lists in `files`; empty files are skipped by Druid, so they are left out here too.
 */
async function fingerprintLocal(source: JsonObject, probe: SourceProbe): Promise<SourceVersion | null> {
  const entries: SourceEntry[] = [];
  const { baseDir, filter, files } = source;
  if (typeof baseDir === "string" && baseDir.length > 0) {
    const listed = await probe.listFiles(baseDir);
    if (listed === null) return null;
    const pattern = typeof filter === "string" ? filter : "*";
    for (const e of matching(listed, pattern)) if (e.bytes !== 0) entries.push(e);
  }
  if (Array.isArray(files)) {
    for (const f of files) {
      if (typeof f !== "string") return null;
      const e = await probe.statFile(f);
      if (e === null) return null;
      if (e.bytes !== 0) entries.push(e);
    }
  }
  if (entries.length === 0 && typeof baseDir !== "string" && !Array.isArray(files)) return null;
  return summarise("local", entries);
}

async function fingerprintHttp(source: JsonObject, probe: SourceProbe): Promise<SourceVersion | null> {
  const uris = source.uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_FINGERPRINTED_URIS) return null;
  const entries = await Promise.all(uris.map((u) => (typeof u === "string" ? probe.head(u) : null)));
  if (entries.some((e) => e === null)) return null;
  return summarise("http", entries as SourceEntry[]);
}

/**
 * What changed between two source versions of one partition, in a line: "wikipedia-2016-06-27.jsonl
 * 1,204 → 612 bytes", "1 file added (3 → 4)", or the two versions where nothing finer is known.
 */
export function describeSourceChange(before: SourceVersion | undefined, after: SourceVersion): string {
  if (!before) return `source now versioned ${after.version}`;
  if (before.origin === "given" || after.origin === "given")
    return `source version ${before.version} → ${after.version}`;
  const old = new Map((before.entries ?? []).map((e) => [e.name, e]));
  const now = new Map((after.entries ?? []).map((e) => [e.name, e]));
  const parts: string[] = [];
  for (const [name, e] of now) {
    const o = old.get(name);
    if (!o) parts.push(`${name} added`);
    else if (o.bytes !== e.bytes) parts.push(`${name} ${formatBytes(o.bytes)} → ${formatBytes(e.bytes)}`);
    else if (o.stamp !== e.stamp) parts.push(`${name} rewritten`);
  }
  for (const name of old.keys()) if (!now.has(name)) parts.push(`${name} removed`);
  if (parts.length === 0 && before.count !== after.count)
    parts.push(`${before.count ?? "?"} → ${after.count ?? "?"} file(s)`);
  if (parts.length === 0) return `source ${before.version} → ${after.version}`;
  const shown = parts.slice(0, 3).join(", ");
  return parts.length > 3 ? `${shown} (and ${parts.length - 3} more)` : shown;
}

function formatBytes(n: number | null): string {
  return n === null ? "? bytes" : `${n.toLocaleString("en-US")} bytes`;
}
