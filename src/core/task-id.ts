import { createHash } from "node:crypto";
import { canonicalJson, type JsonPath, type JsonValue } from "./canonical-json.js";
import { SegopsError } from "./errors.js";
import { type Interval, intervalSlug } from "./interval.js";

/**
 * Deterministic Druid task ids: `<prefix>_<datasource>_<interval-slug>_<hash12>_a<attempt>`.
 *
 * The hash is SHA-256 over the spec version and the canonical JSON of the spec with its volatile
 * fields left out, so the same work gets the same id (a resubmit after a crash is recognised by Druid as
 * a duplicate and reattached — docs/druid-api.md §2.2), while any change to what the task would produce, or to
 * the spec version, gives a new id. FAILED ids can never be reused in Druid, so each attempt has its own.
 */

export class TaskIdError extends SegopsError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("TaskId", message, details);
  }
}

/**
 * Fields that do not change the segments a task produces, so changing them must not change its id:
 * the id itself, scheduling hints (`resource`) and lock/queue context (`priority`, `taskLockTimeout`).
 * Anything not listed is hashed — erring towards a new id is safe, a wrongly shared id is not.
 */
export const VOLATILE_PATHS: readonly JsonPath[] = [
  ["id"],
  ["resource"],
  ["context", "priority"],
  ["context", "taskLockTimeout"],
];

/** Bumped only if the hashing scheme itself changes; part of the hashed text. */
const SCHEME = "segops-task-id/1";
const MAX_VERBATIM_DATASOURCE = 64;
const SHORTENED_DATASOURCE_HEAD = 40;
/** Upper bound on the length of every id we make (Druid uses ids in paths and znodes). */
export const MAX_TASK_ID_LENGTH = 200;

const PREFIX_RE = /^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/;
const VERBATIM_DATASOURCE_RE = /^[A-Za-z0-9_.-]+$/;
const SLUG_RE = /^\d{8}(?:T\d{2,9})?-\d{8}(?:T\d{2,9})?$/;

/** Inputs of {@link deriveTaskId}. */
export interface TaskIdInput {
  /** The rendered task spec (any `id` in it is ignored). */
  readonly spec: unknown;
  /** The partition interval the task covers; becomes the readable slug. */
  readonly interval: Interval;
  /** A user-chosen version; changing it forces new ids for identical specs. */
  readonly specVersion: string;
  /** 1 for the first Druid task of a ledger task, then 2, 3… @default 1 */
  readonly attempt?: number;
  /** Leading id part, letters/digits/`-`, at most 32 chars. @default "segops" */
  readonly prefix?: string;
  /** The datasource shown in the id. @default the spec's `spec.dataSchema.dataSource` or `dataSource` */
  readonly datasource?: string;
  /** Extra volatile paths on top of {@link VOLATILE_PATHS}. */
  readonly volatilePaths?: readonly JsonPath[];
  /**
   * The version of the input the task reads (given by the user or fingerprinted): the same spec over
   * changed input is new work, so it gets a new id. @default none (the id of the spec alone)
   */
  readonly sourceVersion?: string;
  /**
   * What decides whether the task's result is kept (the data gates, whether an empty input may replace
   * data): a task undone under one set of terms must never be reattached as done under another, so the
   * same spec under other terms is other work. @default none (ids of work planned without terms stay as
   * they were)
   */
  readonly terms?: JsonValue;
}

/** The 64-hex SHA-256 of the spec's identity (spec version + canonical spec without volatile fields). */
export function specHash(
  spec: unknown,
  specVersion: string,
  volatilePaths: readonly JsonPath[] = VOLATILE_PATHS,
  sourceVersion?: string,
  terms?: JsonValue,
): string {
  const body = canonicalJson(spec, { exclude: volatilePaths });
  // Length-prefix the versions so ("a", "1{...") can never collide with ("a1", "{..."); no source
  // version and no terms hash as before, so ids of work planned without them stay as they were.
  const source = sourceVersion === undefined ? "" : `source ${sourceVersion.length}:${sourceVersion}\n`;
  const termsText = terms === undefined ? "" : canonicalJson(terms);
  const termsLine = terms === undefined ? "" : `terms ${termsText.length}:${termsText}\n`;
  return createHash("sha256")
    .update(`${SCHEME}\n${specVersion.length}:${specVersion}\n${source}${termsLine}${body}`)
    .digest("hex");
}

/**
 * The id part for a datasource: verbatim when short and made of `[A-Za-z0-9_.-]`; otherwise a
 * sanitised head, `~` and 8 hex of the full name's hash (`~` never appears verbatim, so parsers can tell).
 */
export function datasourcePart(datasource: string): string {
  if (datasource.length <= MAX_VERBATIM_DATASOURCE && VERBATIM_DATASOURCE_RE.test(datasource))
    return datasource;
  const head = datasource.replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, SHORTENED_DATASOURCE_HEAD);
  const tag = createHash("sha256").update(datasource).digest("hex").slice(0, 8);
  return `${head}~${tag}`;
}

function datasourceField(spec: unknown): unknown {
  if (!spec || typeof spec !== "object") return undefined;
  const s = spec as Record<string, unknown>;
  const inner = s.spec as Record<string, unknown> | undefined;
  const schema =
    inner && typeof inner === "object" ? (inner.dataSchema as Record<string, unknown>) : undefined;
  return schema && typeof schema === "object" ? schema.dataSource : s.dataSource;
}

function datasourceOf(spec: unknown): string | undefined {
  const ds = datasourceField(spec);
  return typeof ds === "string" && ds.length > 0 ? ds : undefined;
}

/** Derives the task id for one attempt of one partition (see the module comment for the format). */
export function deriveTaskId(input: TaskIdInput): string {
  const prefix = input.prefix ?? "segops";
  if (!PREFIX_RE.test(prefix)) {
    throw new TaskIdError(
      `invalid task id prefix "${prefix}": expected 1–32 letters, digits or "-", starting with a letter or digit`,
      { prefix },
    );
  }
  const attempt = input.attempt ?? 1;
  if (!Number.isSafeInteger(attempt) || attempt < 1) {
    throw new TaskIdError(`invalid attempt ${String(attempt)}: expected a whole number from 1 up`, {
      attempt,
    });
  }
  const datasource = input.datasource ?? datasourceOf(input.spec);
  if (datasource === undefined) {
    // Said as the field to fix, not as the id it blocks: the user edits the template, not the id.
    const path = "spec.dataSchema.dataSource";
    const empty = datasourceField(input.spec) === "";
    throw new TaskIdError(
      `${path} is ${empty ? "empty" : "missing"}: set ${path} in the template to the datasource to write (e.g. "wikipedia")`,
      { path },
    );
  }
  const slug = intervalSlug(input.interval);
  // An instant outside years 0000–9999 is written with a sign and six digits ("-000001-12-31"), which the
  // slug's fixed slices turned into a plausible one ("00000112T31"): check the years themselves too.
  const years = [input.interval.start, input.interval.end].map((ms) => new Date(ms).toISOString());
  if (!SLUG_RE.test(slug) || years.some((iso) => !/^\d{4}-/.test(iso))) {
    throw new TaskIdError(`interval ${years.join("/")} is outside years 0000–9999`, { slug });
  }
  const hash = specHash(
    input.spec,
    input.specVersion,
    [...VOLATILE_PATHS, ...(input.volatilePaths ?? [])],
    input.sourceVersion,
    input.terms,
  );
  const id = `${prefix}_${datasourcePart(datasource)}_${slug}_${hash.slice(0, 12)}_a${attempt}`;
  // By construction every part is [A-Za-z0-9_.~-] and bounded; keep the invariant checked anyway.
  const problem = druidIdProblem("Task ID", id);
  if (problem !== null || id.length > MAX_TASK_ID_LENGTH) {
    throw new TaskIdError(`derived task id "${id}" is not a valid Druid task id: ${problem ?? "too long"}`);
  }
  return id;
}

/** What {@link parseTaskId} recovers from one of our ids. */
export interface ParsedTaskId {
  readonly prefix: string;
  /** The datasource, when the id carries it verbatim (undefined when it was shortened). */
  readonly datasource: string | undefined;
  /** The datasource part exactly as it appears in the id. */
  readonly datasourcePart: string;
  readonly slug: string;
  /** The 12 hex characters of the spec hash. */
  readonly hash: string;
  readonly attempt: number;
}

const ID_RE =
  /^([A-Za-z0-9][A-Za-z0-9-]{0,31})_(.+)_(\d{8}(?:T\d{2,9})?-\d{8}(?:T\d{2,9})?)_([0-9a-f]{12})_a(\d+)$/;

/** Parses an id made by {@link deriveTaskId}; returns null for any other id (e.g. Druid's random ones). */
export function parseTaskId(id: string): ParsedTaskId | null {
  const m = ID_RE.exec(id);
  if (!m) return null;
  const [, prefix, part, slug, hash, attempt] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const n = Number(attempt);
  if (!Number.isSafeInteger(n) || n < 1 || attempt.startsWith("0")) return null;
  return {
    prefix,
    datasource: part.includes("~") ? undefined : part,
    datasourcePart: part,
    slug,
    hash,
    attempt: n,
  };
}

/**
 * Druid's `IdUtils.validateId` (docs/druid-api.md §2.2), used for task ids and datasource names: returns the
 * reason the value would be rejected, worded like Druid's message, or null when it is acceptable.
 */
export function druidIdProblem(field: string, value: string): string | null {
  if (value.length === 0) return `Invalid value for field [${field}]: must not be null`;
  if (value.startsWith("."))
    return `Invalid value for field [${field}]: Value [${value}] cannot start with '.'.`;
  if (value.includes("/")) return `Invalid value for field [${field}]: Value [${value}] cannot contain '/'.`;
  // Java's \s is [ \t\n\x0B\f\r]; every one of them but the space is refused.
  if (/[\t\n\v\f\r]/.test(value)) {
    return `Invalid value for field [${field}]: Value [${value}] contains illegal whitespace characters.  Only space is allowed.`;
  }
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // Druid's exact (Curator-derived) ranges, including their odd open bounds.
    if (
      (c > 0 && c < 31) ||
      (c > 127 && c < 159) ||
      (c > 0xd800 && c < 0xf8ff) ||
      (c > 0xfff0 && c < 0xffff)
    ) {
      return `Invalid value for field [${field}]: Value [${value}] contains illegal UTF8 character [#${c}] at position [${i}]`;
    }
  }
  return null;
}

/**
 * Checks a task id given by a user (`segops wait ID`, `segops poll`) by Druid's own rule, so an id Druid
 * could never have accepted is bad input (exit code 2) instead of a task that never turns up.
 * `where` says where the id came from (e.g. `--file ids.txt line 3`).
 */
export function checkTaskId(id: string, where = "task id"): string {
  const problem = druidIdProblem("Task ID", id);
  if (problem !== null) {
    throw new TaskIdError(`${where} ${JSON.stringify(id)} can never be a Druid task id: ${problem}`, {
      taskId: id,
    });
  }
  return id;
}
