import { ConvertError, isObject, type JsonObject, type Notes } from "./notes.js";

/**
 * `ioConfig.inputSpec` (Hadoop's `static`, `granularity`, `dataSource`, `multi` path specs) → a native
 * `inputSource`, chosen by each path's URI scheme. Pure. A path without a scheme is resolved the way Hadoop
 * resolves it: against `fs.defaultFS` (or `fs.default.name`) of the spec's jobProperties, else the local file
 * system. Time-based paths (`granularity`) become `{{start:FORMAT}}` placeholders, rendered per partition.
 */

export interface SourceContext {
  /** `fs.defaultFS` of the job, if the spec set one. */
  readonly defaultFs: string | null;
  /** The segment granularity of the spec (a segops partition is one such chunk), lower case. */
  readonly segmentGranularity: string;
}

type Scheme = "local" | "s3" | "hdfs" | "google" | "azure";

function schemeOf(path: string): { scheme: Scheme; uri: string } {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(path);
  const s = m?.[1]?.toLowerCase();
  if (!m || s === "file")
    return { scheme: "local", uri: s === "file" ? path.replace(/^file:\/\//i, "") : path };
  if (s === "s3" || s === "s3n" || s === "s3a")
    return { scheme: "s3", uri: path.replace(/^s3[na]?:\/\//i, "s3://") };
  if (s === "hdfs" || s === "viewfs") return { scheme: "hdfs", uri: path };
  if (s === "gs") return { scheme: "google", uri: path };
  if (s === "wasb" || s === "wasbs" || s === "abfs" || s === "abfss") {
    // wasbs://container@account.blob.core.windows.net/path → azureStorage://account/container/path
    const az = /^[a-z]+:\/\/([^@/]+)@([^./]+)\.[^/]*\/?(.*)$/i.exec(path);
    if (!az)
      throw new ConvertError(
        "spec.ioConfig.inputSpec.paths",
        `cannot read the Azure path "${path}": expected wasbs://container@account.blob.core.windows.net/path`,
      );
    return { scheme: "azure", uri: `azureStorage://${az[2]}/${az[1]}/${az[3]}` };
  }
  throw new ConvertError(
    "spec.ioConfig.inputSpec.paths",
    `no native input source for the scheme "${s}" of "${path}" (local, s3, hdfs, gs, wasb/abfs convert)`,
  );
}

/** Resolves a scheme-less path against the job's default file system, as Hadoop does. */
function resolve(path: string, ctx: SourceContext): string {
  if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(path) || ctx.defaultFs === null) return path;
  return `${ctx.defaultFs.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

function splitPaths(paths: unknown, at: string): string[] {
  const list = typeof paths === "string" ? paths.split(",") : Array.isArray(paths) ? paths : null;
  const out = list?.map((p) => String(p).trim()).filter((p) => p !== "") ?? [];
  if (out.length === 0)
    throw new ConvertError(at, "expected one or more input paths (a comma-separated string or a list)");
  return out;
}

/** One input source for a list of URIs of one scheme. */
function sourceFor(scheme: Scheme, uris: string[]): JsonObject {
  switch (scheme) {
    case "local":
      return { type: "local", files: uris };
    case "s3":
    case "google":
    case "azure": {
      const type = scheme === "azure" ? "azureStorage" : scheme;
      const prefixes = uris.filter((u) => u.endsWith("/"));
      const files = uris.filter((u) => !u.endsWith("/"));
      return {
        type,
        ...(files.length > 0 ? { uris: files } : {}),
        ...(prefixes.length > 0 ? { prefixes } : {}),
      };
    }
    case "hdfs":
      return { type: "hdfs", paths: uris };
  }
}

/** Several sources: one, or a `combining` source over them. */
function combine(sources: JsonObject[]): JsonObject {
  return sources.length === 1 ? (sources[0] as JsonObject) : { type: "combining", delegates: sources };
}

function staticSource(spec: JsonObject, at: string, ctx: SourceContext, notes: Notes): JsonObject {
  const paths = splitPaths(spec.paths, `${at}.paths`);
  const byScheme = new Map<Scheme, string[]>();
  for (const raw of paths) {
    const resolved = resolve(raw, ctx);
    if (resolved !== raw)
      notes.mapped(
        `${at}.paths`,
        `"${raw}" has no scheme: resolved against fs.defaultFS ${ctx.defaultFs} as Hadoop does`,
      );
    const { scheme, uri } = schemeOf(resolved);
    byScheme.set(scheme, [...(byScheme.get(scheme) ?? []), uri]);
  }
  if (spec.inputFormat !== undefined)
    notes.dropped(`${at}.inputFormat`, "a Hadoop InputFormat class: the native inputFormat replaces it");
  return combine([...byScheme.entries()].map(([scheme, uris]) => sourceFor(scheme, uris)));
}

/** Granularities from finest to coarsest, and the Joda letters below each (finer letters vary inside it). */
const ORDER = ["second", "minute", "hour", "day", "week", "month", "quarter", "year"] as const;
const LETTER_UNIT: Record<string, (typeof ORDER)[number]> = {
  s: "second",
  m: "minute",
  H: "hour",
  k: "hour",
  d: "day",
  D: "day",
  e: "day",
  E: "day",
  w: "week",
  W: "week",
  M: "month",
  y: "year",
  Y: "year",
  x: "year",
};
const rank = (g: string) => ORDER.indexOf(g.toLowerCase() as (typeof ORDER)[number]);

/** The Joda letters of a path component (quoted text skipped). */
function letters(component: string): string[] {
  return [...component.replace(/'[^']*'/g, "").matchAll(/[A-Za-z]/g)].map((m) => m[0]);
}

/**
 * A `granularity` inputSpec: `inputPath/<pathFormat of each dataGranularity bucket>/<files matching filePattern>`.
 * A segops partition is one segment-granularity chunk, so the path keeps the pathFormat's components down to
 * that granularity (`{{start:FORMAT}}`), and the finer ones become part of the file match.
 */
function granularitySource(spec: JsonObject, at: string, ctx: SourceContext, notes: Notes): JsonObject {
  const inputPath = typeof spec.inputPath === "string" ? spec.inputPath : null;
  if (!inputPath)
    throw new ConvertError(`${at}.inputPath`, "expected the base path the dated directories are under");
  const dataGranularity =
    typeof spec.dataGranularity === "string" ? spec.dataGranularity.toLowerCase() : null;
  if (!dataGranularity || rank(dataGranularity) < 0)
    throw new ConvertError(`${at}.dataGranularity`, `expected one of ${ORDER.join(", ")}`);
  const pathFormat = typeof spec.pathFormat === "string" ? spec.pathFormat : "'y'=yyyy/'m'=MM/'d'=dd/'H'=HH";
  const segment = rank(ctx.segmentGranularity);
  if (segment < 0)
    throw new ConvertError(
      "spec.dataSchema.granularitySpec.segmentGranularity",
      `expected one of ${ORDER.join(", ")} for a granularity inputSpec`,
    );
  const components = pathFormat.split("/").filter((c) => c !== "");
  const kept: string[] = [];
  for (const c of components) {
    const ls = letters(c);
    const unknown = ls.find((l) => LETTER_UNIT[l] === undefined);
    if (unknown)
      throw new ConvertError(
        `${at}.pathFormat`,
        `the letter "${unknown}" in "${c}" has no segops date format: write the inputSource by hand`,
      );
    // A component finer than a partition varies inside it: from there on, every file under the prefix is read.
    if (ls.some((l) => rank(LETTER_UNIT[l] as string) < segment)) break;
    kept.push(c);
  }
  const finer = components.length - kept.length;
  if (rank(dataGranularity) > segment)
    notes.check(
      `${at}.dataGranularity`,
      `the data is in ${dataGranularity} directories but segments are ${ctx.segmentGranularity}: each partition reads its whole ${dataGranularity} directory and keeps its own rows`,
    );
  const dated = kept.length > 0 ? `{{start:${kept.join("/")}}}` : "";
  const base = resolve(inputPath, ctx).replace(/\/+$/, "");
  const prefix = dated === "" ? `${base}/` : `${base}/${dated}/`;
  const { scheme, uri } = schemeOf(prefix);
  const pattern = typeof spec.filePattern === "string" ? spec.filePattern : ".*";
  const glob = globOf(pattern);
  notes.mapped(
    at,
    `granularity inputSpec → ${scheme} input under ${uri} per partition (pathFormat "${pathFormat}" rendered with the partition's start${finer > 0 ? `; the ${finer} finer director${finer === 1 ? "y" : "ies"} read recursively` : ""})`,
  );
  if (glob === null)
    notes.check(
      `${at}.filePattern`,
      `the regular expression "${pattern}" has no glob equivalent: every file under the prefix is read; narrow it with the source's filter`,
    );
  if (spec.inputFormat !== undefined)
    notes.dropped(`${at}.inputFormat`, "a Hadoop InputFormat class: the native inputFormat replaces it");
  const name = glob ?? "*";
  switch (scheme) {
    case "local":
      return { type: "local", baseDir: uri.replace(/\/$/, ""), filter: name };
    case "hdfs":
      return { type: "hdfs", paths: `${uri}${"*/".repeat(finer)}${name}` };
    default: {
      const type = scheme === "azure" ? "azureStorage" : scheme;
      return {
        type,
        prefixes: [uri],
        ...(name !== "*" ? { objectGlob: name.startsWith("*") ? `*${name}` : `**/${name}` } : {}),
      };
    }
  }
}

/** A Java regex of file names as a glob, for the simple forms (`.*\.gz`, `.*`, `part-.*`); null otherwise. */
export function globOf(regex: string): string | null {
  const body = regex.replace(/^\^/, "").replace(/\$$/, "");
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c === "." && body[i + 1] === "*") {
      out += "*";
      i++;
    } else if (c === "\\" && i + 1 < body.length && /[.\-_/]/.test(body[i + 1] as string)) {
      out += body[i + 1];
      i++;
    } else if (/[A-Za-z0-9_\-=]/.test(c)) out += c;
    else return null;
  }
  // A leading .* matches directories too in Hadoop's full-path match; a glob of names needs only the name.
  return out === "" ? null : out.replace(/^\*+/, "*");
}

function dataSourceSource(spec: JsonObject, at: string, notes: Notes): JsonObject {
  const ingestion = isObject(spec.ingestionSpec) ? spec.ingestionSpec : null;
  if (!ingestion || typeof ingestion.dataSource !== "string")
    throw new ConvertError(`${at}.ingestionSpec.dataSource`, "expected the datasource to read");
  const source: JsonObject = { type: "druid", dataSource: ingestion.dataSource, interval: "{{interval}}" };
  if (ingestion.filter !== undefined) source.filter = ingestion.filter;
  if (Array.isArray(ingestion.dimensions)) source.dimensions = ingestion.dimensions;
  if (Array.isArray(ingestion.metrics)) source.metrics = ingestion.metrics;
  notes.mapped(
    at,
    `dataSource inputSpec → druid input source over each partition's interval (its intervals ${JSON.stringify(ingestion.intervals ?? null)} come from --interval now)`,
  );
  for (const key of ["segments", "ignoreWhenNoSegments"]) {
    if (ingestion[key] !== undefined)
      notes.dropped(
        `${at}.ingestionSpec.${key}`,
        "the druid input source reads the segments used when the task starts",
      );
  }
  for (const key of ["maxSplitSize", "useNewAggs"]) {
    if (spec[key] !== undefined) notes.dropped(`${at}.${key}`, "Hadoop-only (splits and aggregator reuse)");
  }
  return source;
}

/** The native input source of a Hadoop inputSpec, and whether it reads Druid segments (no inputFormat then). */
export function convertInputSpec(
  inputSpec: unknown,
  ctx: SourceContext,
  notes: Notes,
  at = "spec.ioConfig.inputSpec",
): { source: JsonObject; readsDruid: boolean } {
  if (!isObject(inputSpec))
    throw new ConvertError(at, "expected the Hadoop inputSpec (static, granularity, dataSource or multi)");
  switch (inputSpec.type) {
    case "static":
      return { source: staticSource(inputSpec, at, ctx, notes), readsDruid: false };
    case "granularity":
      return { source: granularitySource(inputSpec, at, ctx, notes), readsDruid: false };
    case "dataSource":
      return { source: dataSourceSource(inputSpec, at, notes), readsDruid: true };
    case "multi": {
      const children = Array.isArray(inputSpec.children) ? inputSpec.children : [];
      if (children.length === 0) throw new ConvertError(`${at}.children`, "expected one or more inputSpecs");
      const converted = children.map((c, i) => convertInputSpec(c, ctx, notes, `${at}.children[${i}]`));
      notes.mapped(at, "multi inputSpec → combining input source over its children");
      return {
        source: combine(converted.map((c) => c.source)),
        readsDruid: converted.every((c) => c.readsDruid),
      };
    }
    default:
      throw new ConvertError(
        `${at}.type`,
        `expected static, granularity, dataSource or multi, found ${JSON.stringify(inputSpec.type)}`,
      );
  }
}
