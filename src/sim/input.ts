import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { readJson } from "./json-value.js";

/**
 * Reads the raw records of an input source the emulator can really read: `local` (baseDir + filter glob, or
 * files) and `inline`, in `json` (one object per line, as Druid's JsonLineReader reads a batch input), `csv` and `tsv` formats. Other sources return null and
 * get a synthetic row count instead (documented in docs/emulator.md).
 */
export interface RawInput {
  /** One entry per record: the parsed object, or the raw text when it could not be parsed. */
  records: Array<{ value: Record<string, unknown> | null; raw: string; bytes: number }>;
}

export class InputError extends Error {}

type Obj = Record<string, unknown>;

export function readInput(source: Obj, format: Obj | null): RawInput | null {
  let texts: string[];
  if (source.type === "inline") {
    texts = [typeof source.data === "string" ? source.data : ""];
  } else if (source.type === "local") {
    texts = localFiles(source).map((file) => readFileSync(file, "utf8"));
  } else {
    return null;
  }
  const records: RawInput["records"] = [];
  for (const t of texts) records.push(...parseText(t, format ?? { type: "json" }));
  return { records };
}

/** LocalInputSource: `files` and/or every file under `baseDir` (recursively) whose name matches `filter`. */
function localFiles(source: Obj): string[] {
  const files: string[] = Array.isArray(source.files) ? source.files.map(String) : [];
  if (typeof source.baseDir === "string") {
    const baseDir = source.baseDir;
    const filter = typeof source.filter === "string" ? source.filter : "*";
    const re = globToRegExp(filter);
    let found: string[];
    try {
      found = walk(baseDir).filter((f) => re.test(f.slice(f.lastIndexOf("/") + 1)));
    } catch {
      throw new InputError(`Cannot read baseDir[${baseDir}]: directory does not exist or is not readable`);
    }
    files.push(...found.sort());
  }
  for (const f of files) {
    try {
      statSync(f);
    } catch {
      throw new InputError(`File[${f}] does not exist`);
    }
  }
  return files;
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Commons-IO `WildcardFileFilter` semantics: `*` any run, `?` one character. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`);
}

function parseText(text: string, format: Obj): RawInput["records"] {
  // Druid counts each record's bytes including its line terminator.
  const lines = text
    .split(/(?<=\n)/)
    .map((l) => ({ raw: l.replace(/\r?\n$/, ""), bytes: Buffer.byteLength(l) }))
    .filter((l) => l.raw.trim() !== "");
  const type = String(format.type ?? "json");
  if (type === "json") {
    return lines.map(({ raw, bytes }) => {
      try {
        // Druid's JsonLineReader reads each line with Jackson's `readValue`, which stops after the first value
        // and ignores what follows it (`FAIL_ON_TRAILING_TOKENS` is off): `{…},` is a record.
        const v = JSON.parse(raw.slice(0, readJson(raw).end)) as unknown;
        return { value: v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : null, raw, bytes };
      } catch {
        return { value: null, raw, bytes };
      }
    });
  }
  if (type === "csv" || type === "tsv") {
    const delimiter = type === "csv" ? "," : typeof format.delimiter === "string" ? format.delimiter : "\t";
    const listDelimiter = typeof format.listDelimiter === "string" ? format.listDelimiter : "\u0001";
    let rows = lines.map(({ raw, bytes }) => ({ raw, bytes, cells: splitDelimited(raw, delimiter) }));
    const skip = typeof format.skipHeaderRows === "number" ? format.skipHeaderRows : 0;
    rows = rows.slice(skip);
    let columns: string[] = Array.isArray(format.columns) ? format.columns.map(String) : [];
    if (format.findColumnsFromHeader === true) {
      const header = rows.shift();
      columns = header ? header.cells : [];
    }
    return rows.map(({ raw, bytes, cells }) => {
      const value: Obj = {};
      columns.forEach((c, i) => {
        const cell = cells[i];
        if (cell === undefined || cell === "") value[c] = null;
        else value[c] = cell.includes(listDelimiter) ? cell.split(listDelimiter) : cell;
      });
      return { value, raw, bytes };
    });
  }
  throw new InputError(`inputFormat type[${type}] is not supported by the emulator`);
}

/** RFC 4180-ish splitting: quotes group delimiters, doubled quotes escape a quote. */
function splitDelimited(line: string, delimiter: string): string[] {
  const cells: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (line.startsWith(delimiter, i)) {
      cells.push(cur);
      cur = "";
      i += delimiter.length - 1;
    } else cur += c;
  }
  cells.push(cur);
  return cells;
}

/** A file the sampler cannot open (Druid's `FileEntity.open` failing): its sample fails as a whole. */
export class EntityOpenError extends InputError {}

/** One input entity as the sampler reads it: a local file (`path`) or the inline data (`path` null). */
export interface InputEntity {
  path: string | null;
  /** Read and parse on demand: Druid opens an entity only when its reader gets to it. */
  records(): RawInput["records"];
}

/**
 * The entities of an input source as Druid 33's sampler sees them (`LocalInputSource#getFileIterator`): files
 * under `baseDir` whose name matches `filter` (recursively), then `files`, keeping only files of non-zero length
 * (so a missing or empty file is skipped). A `baseDir` that does not exist lists nothing: Druid 33 lists it with
 * commons-io 2.17, whose `FileUtils.listFiles` continues past a failed visit (`visitFileFailed` → CONTINUE)
 * instead of throwing. Null for sources the emulator does not read.
 */
export function readEntities(source: Obj, format: Obj | null): InputEntity[] | null {
  const fmt = format ?? { type: "json" };
  if (source.type === "inline") {
    const data = typeof source.data === "string" ? source.data : "";
    return [{ path: null, records: () => parseText(data, fmt) }];
  }
  if (source.type !== "local") return null;
  const listed: string[] = [];
  if (typeof source.baseDir === "string") {
    const re = globToRegExp(typeof source.filter === "string" ? source.filter : "*");
    const matches = (f: string) => re.test(f.slice(f.lastIndexOf("/") + 1));
    let stat: ReturnType<typeof statSync> | undefined;
    try {
      stat = statSync(source.baseDir);
    } catch {
      stat = undefined;
    }
    // A file as baseDir is the walk's only entry, kept when its name matches.
    if (stat?.isDirectory()) listed.push(...walk(source.baseDir).filter(matches).sort());
    else if (stat?.isFile() && matches(source.baseDir)) listed.push(source.baseDir);
  }
  if (Array.isArray(source.files)) listed.push(...source.files.map(String));
  return listed.filter(nonEmpty).map((path) => ({
    path,
    records: () => {
      if (statSync(path).isDirectory()) {
        // FileEntity.open → new FileInputStream(dir); the reader wraps it in a RuntimeException.
        throw new EntityOpenError(`java.io.FileNotFoundException: ${path} (Is a directory)`);
      }
      return parseText(readFileSync(path, "utf8"), fmt);
    },
  }));
}

/** `File#length() > 0`: 0 also for a path that does not exist. */
function nonEmpty(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}
